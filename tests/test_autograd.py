"""Autograd engine semantics against torch: accumulation, retain_graph, create_graph, inputs=, hooks,
version counters, in-place writes into views (CopySlices), grad modes, anomaly mode, graph lifetime."""
import gc
import threading
import warnings
import weakref

import numpy as np
import pytest
import torch

import ember


def arr(t):
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach()._a)


def same(fn, **kw):
    """Run ``fn(lib)`` with torch and ember; compare the (nested) tensors it returns."""
    t, e = fn(torch), fn(ember)
    _cmp(e, t, **kw)
    return e, t


def _cmp(e, t, rtol=1e-6, atol=1e-6):
    if isinstance(t, (list, tuple)):
        assert isinstance(e, (list, tuple)) and len(e) == len(t), (e, t)
        for a, b in zip(e, t):
            _cmp(a, b, rtol, atol)
    elif isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f'expected a tensor, got {e!r}'
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(arr(e), arr(t), rtol=rtol, atol=atol)
    else:
        assert e == t, (e, t)


def data(lib, *shape, seed=0, rg=True):
    t = lib.tensor(np.random.default_rng(seed).uniform(-2, 2, shape))
    return t.requires_grad_(rg)


# --- graph recording ----------------------------------------------------------------------------------

def test_node_names_next_functions_and_accumulate_grad():
    def f(lib):
        x = data(lib, 3)
        y = (x * x).sin()
        n = y.grad_fn
        acc = n.next_functions[0][0].next_functions[0][0]
        return [n.name(), type(n).__name__, n.next_functions[0][0].name(), acc.name(), acc.variable is x,
                len(n.next_functions[0][0].next_functions), y.is_leaf, x.is_leaf, y.requires_grad]
    same(f)


def test_saved_tensor_introspection():
    def f(lib):
        x, w = data(lib, 3), data(lib, 3, seed=1)
        y = x * w
        z = y.exp()
        v = x.view(3, 1)
        return [y.grad_fn._saved_self, y.grad_fn._saved_other, z.grad_fn._saved_result,
                tuple(v.grad_fn._saved_self_sym_sizes), y.grad_fn._saved_self is not None]
    same(f)
    x = ember.ones(3, requires_grad=True)
    z = x.exp()
    assert z.grad_fn._saved_result.grad_fn is z.grad_fn
    with pytest.raises(AttributeError):
        z.grad_fn._saved_nothing
    z.backward(ember.ones(3))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.grad_fn._saved_result


def test_raw_saved_tensor_hooks():
    for lib in (torch, ember):
        x = data(lib, 3)
        y = x * x
        calls = []
        y.grad_fn._raw_saved_self.register_hooks(lambda t: (calls.append('pack'), t * 2)[1],
                                                 lambda t: (calls.append('unpack'), t)[1])
        y.backward(lib.ones(3))
        # the saved self is doubled: grad = other * 1 + 2x * 1... self's gradient uses saved other, other's uses self
        calls_lib = list(calls)
        assert calls_lib[0] == 'pack' and 'unpack' in calls_lib
        if lib is torch:
            tg = arr(x.grad)
        else:
            np.testing.assert_allclose(arr(x.grad), tg)


# --- engine -------------------------------------------------------------------------------------------

def test_accumulation_across_calls_and_zero_grad_to_none():
    def f(lib):
        x = data(lib, 4)
        (x * x).sum().backward()
        g1 = x.grad.clone()
        first = x.grad
        (x * 3).sum().backward()
        same_obj = x.grad is first          # accumulated in place
        x.grad = None
        (x * x * x).sum().backward()
        return [g1, x.grad, same_obj]
    same(f)


def test_backward_errors():
    for lib in (torch, ember):
        x = data(lib, 3)
        y = x.exp()
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
            y.backward()
        s = y.sum()
        s.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            s.backward()
        with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
            lib.ones(2).sum().backward()


def test_nodes_without_saved_tensors_can_run_twice():
    def f(lib):
        x = data(lib, 3)
        s = (x + 1).sum()
        s.backward()
        s.backward()
        return x.grad
    same(f)


def test_retain_graph_and_gradient_argument():
    def f(lib):
        x = data(lib, 3)
        y = (x * x).exp()
        g = lib.tensor([1., 2., 3.], dtype=y.dtype)
        y.backward(g, retain_graph=True)
        y.backward(g)
        return x.grad
    same(f)


def test_third_derivative_create_graph():
    def f(lib):
        x = data(lib, 4)
        y = (x * x * x).sin()
        g1, = lib.autograd.grad(y.sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return [g1, g2, g3, g1.requires_grad, g3.requires_grad]
    same(f)


def test_backward_create_graph_accumulates_differentiable_grad():
    def f(lib):
        x = data(lib, 3)
        (x * x * x).sum().backward(create_graph=True)
        g = x.grad
        g2, = lib.autograd.grad(g.sum(), x)
        return [g, g2, g.requires_grad]
    same(f)


def test_grad_inputs_and_allow_unused():
    def f(lib):
        x, y, z = data(lib, 3), data(lib, 3, seed=1), data(lib, 3, seed=2)
        h = x * y
        out = (h * h).sum()
        gx, gh = lib.autograd.grad(out, [x, h], retain_graph=True)
        gz = lib.autograd.grad(out, [x, z], allow_unused=True, retain_graph=True)
        gm = lib.autograd.grad(out, [z], allow_unused=True, materialize_grads=True)
        return [gx, gh, gz[0], gz[1] is None, gm[0], x.grad is None]
    same(f)
    for lib in (torch, ember):
        x, z = data(lib, 3), data(lib, 3, seed=2)
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad((x * x).sum(), [x, z])
        with pytest.raises(RuntimeError, match="does not require grad"):
            lib.autograd.grad((x * x).sum(), [lib.ones(3)])


def test_grad_is_grads_batched():
    def f(lib):
        x = data(lib, 3)
        y = (x * x).sin()
        eye = lib.tensor(np.eye(3), dtype=y.dtype)
        return lib.autograd.grad(y, x, eye, is_grads_batched=True)      # the Jacobian, row by row
    same(f)


def test_backward_inputs_only_accumulates_there():
    def f(lib):
        x, y = data(lib, 3), data(lib, 3, seed=1)
        (x * y).sum().backward(inputs=[y])
        h = x * 2
        (h * h).sum().backward(inputs=[h, y])     # a non-leaf input gets .grad as well
        return [x.grad is None, y.grad, h.grad]
    same(f)


def test_grad_outputs_shape_mismatch():
    for lib in (torch, ember):
        x = data(lib, 3)
        with pytest.raises(RuntimeError, match="Mismatch in shape"):
            lib.autograd.grad(x * 2, x, lib.ones(4, dtype=x.dtype))


def test_non_leaf_grad_warns_and_retain_grad():
    def f(lib):
        x = data(lib, 3)
        y = x * 2
        z = y * y
        y.retain_grad()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            z2 = z.sum()
            _ = z.grad
        z2.backward()
        return [y.grad, y.retains_grad, any('non-leaf' in str(m.message) for m in w)]
    same(f)


def test_broadcast_gradients_are_summed_to_input_shape():
    def f(lib):
        a, b = data(lib, 3, 1), data(lib, 4, seed=1)
        ((a * b).sin() + b).sum().backward()
        return [a.grad, b.grad]
    same(f)


# --- hooks --------------------------------------------------------------------------------------------

def test_tensor_hooks_order_replacement_and_removal():
    def f(lib):
        x = data(lib, 3)
        y = x * 2
        order = []
        h1 = y.register_hook(lambda g: (order.append(1), g * 10)[1])
        y.register_hook(lambda g: (order.append(2), None)[1])
        x.register_hook(lambda g: (order.append(3), g + 1)[1])
        (y * y).sum().backward()
        first = x.grad.clone()
        h1.remove()
        x.grad = None
        (x * 2 * 1).sum().backward()
        return [first, x.grad, order]
    same(f)


def test_post_accumulate_grad_hook_and_node_hooks():
    def f(lib):
        x = data(lib, 3)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        y = x.exp()
        events = []
        y.grad_fn.register_prehook(lambda go: (events.append('pre'), (go[0] * 2,))[1])
        y.grad_fn.register_hook(lambda gi, go: (events.append('post'), (gi[0] + 1,))[1])
        y.sum().backward()
        return [x.grad, seen[0], events]
    same(f)
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_hook_sees_grad_captured_by_autograd_grad():
    same(lambda lib: lib.autograd.grad((_hooked(lib) * 3).sum(), _LEAF[lib]))


_LEAF = {}


def _hooked(lib):
    x = data(lib, 2)
    x.register_hook(lambda g: g * 2)
    _LEAF[lib] = x
    return x


def test_saved_tensors_hooks_and_save_on_cpu():
    def f(lib):
        x = data(lib, 3)
        packed = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (packed.append(1), t)[1], lambda t: t * 1):
            y = (x * x).exp()
        with lib.autograd.graph.save_on_cpu():
            z = (x * x).sin()
        (y + z).sum().backward()
        return [x.grad, len(packed)]
    same(f)


# --- version counter ---------------------------------------------------------------------------------

def test_modified_saved_tensor_raises_naming_versions():
    for lib in (torch, ember):
        x = data(lib, 3)
        a = x * 1
        y = a.sin()      # saves its input
        a.mul_(2)
        with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*is at version 1; expected "
                                               r"version 0 instead"):
            y.sum().backward()
        b = x.exp()      # saves its result; then the result is changed
        b.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            b.sum().backward()


def test_inplace_on_leaf_errors():
    for lib in (torch, ember):
        x = data(lib, 3)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            x.mul_(2)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x.narrow(0, 0, 2).mul_(2)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            x.copy_(lib.ones(3, dtype=x.dtype))
        with lib.no_grad():
            x.mul_(2)       # allowed without grad mode
        assert x._version == 1


def test_inplace_op_history():
    def f(lib):
        x, w = data(lib, 3), data(lib, 3, seed=1)
        y = x * 1
        y.mul_(w)
        y.add_(x)
        name = y.grad_fn.name()
        y.sum().backward()
        return [x.grad, w.grad, name, y._version]
    same(f)


# --- in-place on views (CopySlices) -----------------------------------------------------------------

def test_inplace_on_view_rebases_base():
    def f(lib):
        a, y = data(lib, 4), data(lib, 2, seed=1)
        b = a * 2
        v = b.narrow(0, 1, 2)
        v.mul_(y)
        names = [b.grad_fn.name(), v.grad_fn.name(), v.grad_fn.next_functions[0][0] is b.grad_fn]
        (b * lib.tensor([1., 2., 3., 4.], dtype=b.dtype)).sum().backward()
        return [a.grad, y.grad, names, b]
    same(f)


def test_copy_into_view_and_select():
    def f(lib):
        a, y = data(lib, 4), data(lib, 2, seed=1)
        b = a * 2
        b.select(0, 0).copy_(y.select(0, 1))
        b.narrow(0, 2, 2).copy_(y * y)
        (b * b).sum().backward()
        z = lib.zeros(3, dtype=a.dtype)
        z.select(0, 1).copy_(y.select(0, 0))
        gz, = lib.autograd.grad((z * z).sum(), y)
        return [a.grad, y.grad, gz, z.requires_grad]
    same(f)


def test_setitem_into_tensor_in_graph():
    def f(lib):
        a, y = data(lib, 4), data(lib, 2, seed=1)
        b = a * 2
        b[0] = y[1]
        b[2:] = y * y
        b[1:3] *= y
        x = lib.zeros(2, 3, dtype=a.dtype)
        x[:, 1] = y
        x[0] += y.sum()
        return [lib.autograd.grad((b * b).sum(), [a, y]), lib.autograd.grad((x * x).sum(), y), b.grad_fn.name()]
    same(f)


def test_copy_backwards_whole_tensor():
    def f(lib):
        a, s = data(lib, 4), data(lib, 1, seed=3)
        x = a * 1
        x.copy_(s.to(lib.float32).expand(4))
        return [x.grad_fn.name(), x.grad_fn.next_functions[0][0].name(), lib.autograd.grad(x.sum(), [a, s])]
    same(f, rtol=1e-5)


def test_view_of_view_and_stale_views_and_double_backward():
    def f(lib):
        a, y = data(lib, 4), data(lib, 2, seed=1)
        m = (a * 1).view(2, 2)
        mt = m.t()
        mt.select(0, 1).mul_(y)             # writes column 1 of m through a view of a view
        g = lib.autograd.grad((m * m).sum(), [a, y], create_graph=True)
        gg = lib.autograd.grad((g[0] * g[0]).sum() + g[1].sum(), [a, y])
        b = a * 1
        v1, v2 = b.narrow(0, 0, 3), b.narrow(0, 1, 3)
        v1.mul_(y.select(0, 0))
        w = b.narrow(0, 2, 2)
        v2.mul_(y.select(0, 1))              # v2 was made before v1's write: its history is regenerated
        assert w.grad_fn.name() == 'AsStridedBackward0'   # so is that of w, made before v2's write
        return [g, gg, lib.autograd.grad((b * b).sum(), [a, y])]
    same(f, rtol=1e-5)


def test_detach_is_not_a_differentiable_view():
    def f(lib):
        a, w = data(lib, 3), data(lib, 3, seed=1)
        d = a.detach()
        d.mul_(w)       # writes a's data, but a keeps no history
        n = lib.ones(3, dtype=a.dtype)
        e = n.detach()
        e.copy_(w)      # the same without grad mode having seen n
        return [d._base is None, a.grad_fn is None, d.grad_fn.name(), lib.autograd.grad(d.sum(), w),
                e._base is None, n.requires_grad, e.grad_fn.name()]
    same(f)


# --- grad modes ----------------------------------------------------------------------------------------

def test_no_grad_enable_grad_set_grad_enabled():
    def f(lib):
        x = data(lib, 2)
        with lib.no_grad():
            a = x * 2
            with lib.enable_grad():
                b = x * 2
            c = x * 2

        @lib.no_grad()
        def g1(t):
            return t * 2

        @lib.enable_grad()
        def g2(t):
            return t * 2
        lib.set_grad_enabled(False)
        d = x * 2
        lib.set_grad_enabled(True)
        with lib.set_grad_enabled(False):
            e = x * 2
        with lib.no_grad():
            h = g2(x)
        return [a.requires_grad, b.requires_grad, c.requires_grad, g1(x).requires_grad, d.requires_grad,
                e.requires_grad, h.requires_grad, lib.is_grad_enabled()]
    same(f)


def test_grad_mode_is_thread_local():
    res = {}

    def worker():
        x = ember.ones(2, requires_grad=True)
        res['enabled'] = ember.is_grad_enabled()
        res['req'] = (x * 2).requires_grad

    with ember.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not ember.is_grad_enabled()
    assert res == {'enabled': True, 'req': True}
    with ember.inference_mode():
        t = threading.Thread(target=lambda: res.__setitem__('inf', ember.is_inference_mode_enabled()))
        t.start()
        t.join()
    assert res['inf'] is False


def test_inference_mode():
    def f(lib):
        x = data(lib, 3)
        with lib.inference_mode():
            y = x * 2
            z = lib.ones(2, requires_grad=True)
            w = lib.ones(2)
            n = lib.ones(3)
            n.add_(1)
            inside = [lib.is_inference_mode_enabled(), lib.is_grad_enabled(), y.is_inference(), y.requires_grad,
                      z.requires_grad, z.is_inference()]
        normal = x * 1
        normal_out = lib.ones(2)
        with lib.inference_mode():
            normal_out.add_(1)       # an in-place op inside the mode keeps a normal tensor normal
        with lib.inference_mode(False):
            off = [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]

        @lib.inference_mode()
        def g(t):
            return t * 2
        return inside + off + [lib.is_inference_mode_enabled(), w.view(2).is_inference(), (w * 1).is_inference(),
                               normal.is_inference(), normal_out.is_inference(), g(x).is_inference(),
                               n.is_inference()]
    same(f)
    for lib in (torch, ember):
        with lib.inference_mode():
            w = lib.ones(3)
        x = data(lib, 3)
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            w.add_(1)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            x * w
        with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside"):
            w.requires_grad_()


def test_detach_detach_requires_grad():
    def f(lib):
        x = data(lib, 3)
        y = x * 2
        d = y.detach()
        y2 = x * 3
        y2.detach_()
        z = lib.ones(2)
        z.requires_grad_()
        return [d.requires_grad, d.is_leaf, y2.requires_grad, y2.grad_fn is None, z.requires_grad, d]
    same(f)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="only Tensors of floating point"):
            lib.ones(2, dtype=lib.int64).requires_grad_()
        with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
            (data(lib, 2) * 2).requires_grad_(False)


# --- anomaly mode --------------------------------------------------------------------------------------

def _forward_for_anomaly(x):
    return x.sqrt()          # the line the report must name


def test_anomaly_mode_names_node_and_forward_trace():
    x = ember.tensor([0., 1.], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        with ember.autograd.detect_anomaly():
            assert ember.autograd.is_anomaly_enabled()
            y = _forward_for_anomaly(x)
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output"):
                y.backward(ember.zeros(2))
    assert not ember.autograd.is_anomaly_enabled()
    msgs = [str(m.message) for m in w]
    report = next(m for m in msgs if m.startswith('Error detected in SqrtBackward0'))
    assert '_forward_for_anomaly' in report and 'return x.sqrt()' in report
    # without anomaly mode: no check, nan flows through
    y = x.sqrt()
    y.backward(ember.zeros(2))
    assert np.isnan(arr(x.grad)[0])


def test_anomaly_mode_reports_errors_in_backward_and_set_detect_anomaly():
    class Boom(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")
    x = ember.ones(2, requires_grad=True)
    ember.autograd.set_detect_anomaly(True)
    try:
        y = Boom.apply(x)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            with pytest.raises(ValueError, match='boom'):
                y.sum().backward()
        assert any('Error detected in BoomBackward' in str(m.message) for m in w)
    finally:
        ember.autograd.set_detect_anomaly(False)
    assert not ember.autograd.is_anomaly_enabled()


# --- lifetime ------------------------------------------------------------------------------------------

def test_no_reference_cycles_after_backward():
    gc.collect()
    gc.disable()
    try:
        x = ember.ones(5, requires_grad=True)
        mid = x * 2
        out_saved = mid.exp()          # saves its result
        w_mid = weakref.ref(mid)
        w_node = weakref.ref(mid.grad_fn)
        saved = out_saved.grad_fn._saved_result
        w_saved_arr = weakref.ref(saved)
        del saved
        loss = (out_saved * mid).sum()
        del mid, out_saved
        loss.backward()
        del loss
        assert w_mid() is None, 'intermediate kept alive'
        assert w_node() is None, 'node kept alive'
        assert w_saved_arr() is None, 'saved tensor kept alive'
        assert x.grad is not None
    finally:
        gc.enable()


def test_graph_freed_by_refcount_without_backward():
    gc.collect()
    gc.disable()
    try:
        x = ember.ones(5, requires_grad=True)
        y = (x * x).exp()
        w = weakref.ref(y.grad_fn)
        del y
        assert w() is None
    finally:
        gc.enable()


def test_saved_bytes_zero_after_backward():
    from ember.autograd.graph import saved_tensors_nbytes
    x = ember.ones(10, requires_grad=True)
    y = (x * x).exp().sin()
    # mul saves x twice, exp its result, sin its input (exp's result again): two distinct buffers
    assert saved_tensors_nbytes(y) == 10 * 4 * 2
    assert saved_tensors_nbytes(y, distinct=False) == 10 * 4 * 4
    y.sum().backward()
    assert saved_tensors_nbytes(y) == 0


def test_custom_function_and_checkpoint_graphs_free_by_refcount():
    from ember.utils.checkpoint import checkpoint

    class Sq(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * x
            ctx.save_for_backward(x, out)      # saving an output must not make a cycle
            return out

        @staticmethod
        def backward(ctx, g):
            x, out = ctx.saved_tensors
            return 2 * x * g
    gc.collect()
    gc.disable()
    try:
        x = ember.ones(4, requires_grad=True)
        y = Sq.apply(x)
        wy, wn = weakref.ref(y), weakref.ref(y.grad_fn)
        z = checkpoint(lambda t: (t * t).sin(), y, use_reentrant=False)
        wz = weakref.ref(z.grad_fn)
        z.sum().backward()
        del y, z
        assert wy() is None and wn() is None and wz() is None
        np.testing.assert_allclose(arr(x.grad), 2 * np.cos(1.0) * 2 * 1.0, rtol=1e-6)
    finally:
        gc.enable()


# --- functions returning several views: one node for all the pieces, as in torch ---------------------

@pytest.mark.parametrize('make,name', [(lambda y: y.split(2, 1), 'SplitBackward0'),
                                       (lambda y: y.split([1, 4], 1), 'SplitWithSizesBackward0'),
                                       (lambda y: y.chunk(3, 0), 'SplitBackward0'),
                                       (lambda y: y.unbind(1), 'UnbindBackward0')])
def test_multi_view_functions_share_one_node_like_torch(make, name):
    a = np.random.default_rng(0).standard_normal((4, 5))
    res = {}
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x * x
        pieces = make(y)
        assert {p.grad_fn.name() for p in pieces} == {name}
        assert all(p._base is y for p in pieces)
        loss = (pieces[-1] ** 3).sum() + (pieces[0] * 2).sum()       # the middle pieces get no gradient
        g, = lib.autograd.grad(loss, x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        with pytest.raises(RuntimeError, match='is a view and is being modified inplace'):
            pieces[0].mul_(2)
        res[lib] = (g.detach().numpy(), gg.numpy())
    np.testing.assert_allclose(res[ember][0], res[torch][0], rtol=1e-12)
    np.testing.assert_allclose(res[ember][1], res[torch][1], rtol=1e-12)


def test_multi_view_pieces_without_grad_stay_plain_views():
    x = ember.arange(6.).reshape(2, 3)
    a, b = x.split(2, 1)
    a.mul_(10)                                  # no autograd: writing through a piece is fine
    assert x.tolist() == [[0., 10., 2.], [30., 40., 5.]]
    for lib in (torch, ember):       # a no_grad view of a tensor that requires grad requires grad, with no history
        with lib.no_grad():
            p, q = lib.ones(4, requires_grad=True).split(2)
        assert p.grad_fn is None and p.requires_grad and p.is_leaf


def test_grad_of_several_outputs_of_one_node():
    """autograd.grad from two pieces of one split (and twice the same output) sums both, as torch."""
    res = {}
    for lib in (torch, ember):
        x = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        a, b = x.chunk(2)
        y = x * 2
        res[lib] = (lib.autograd.grad([a, b], [x], [lib.ones(1, 2), lib.full((1, 2), 3.)])[0],
                    lib.autograd.grad([y, y], [x], [lib.ones(2, 2), lib.full((2, 2), 3.)])[0])
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e.numpy(), t.numpy())


def test_grad_inputs_anywhere_in_a_random_graph():
    """autograd.grad for inputs picked at random among the nodes of a random graph (shared operands, inputs
    behind other inputs, unused ones): which nodes run (engine._needed) decides every captured gradient."""
    import random
    res = {}
    for lib in (torch, ember):
        random.seed(0)
        lib.manual_seed(0)
        nodes = [lib.rand(3, requires_grad=True) for _ in range(4)]
        for _ in range(60):
            a, b = random.sample(nodes, 2)
            op = random.choice('mas')
            nodes.append(a * b if op == 'm' else a + b if op == 'a' else a.sin() + b)
        loss = sum(o.sum() for o in nodes[-3:])
        res[lib] = [[None if g is None else g.tolist() for g in
                     lib.autograd.grad(loss, random.sample(nodes[:-3], 5), allow_unused=True, retain_graph=True)]
                    for _ in range(20)]
    assert any(g is None for r in res[ember] for g in r) and any(g is not None for r in res[ember] for g in r)
    for e, t in zip(res[ember], res[torch]):
        assert [g is None for g in e] == [g is None for g in t]
        for ge, gt in zip(e, t):
            if gt is not None:
                np.testing.assert_allclose(ge, gt, rtol=1e-5)


def test_grad_computes_only_the_gradients_asked_for():
    """autograd.grad(out, x) through linear layers computes no weight gradient (torch's
    task_should_compute_output): no operator computes a tensor of a weight's shape during it."""
    from ember.utils._python_dispatch import TorchDispatchMode as EmberMode
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    def shapes_made(lib, Mode, wrt):
        class Shapes(Mode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                for o in (out if isinstance(out, (tuple, list)) else (out,)):
                    if isinstance(o, lib.Tensor) and o.untyped_storage().data_ptr() not in params:
                        seen.append(tuple(o.shape))     # computed, not a view of a parameter
                return out
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(128, 256), lib.nn.Tanh(), lib.nn.Linear(256, 128))
        x = lib.randn(4, 128, requires_grad=True)
        out = net(x).pow(2).sum()
        seen, params = [], {p.untyped_storage().data_ptr() for p in net.parameters()}
        with Shapes():
            g = lib.autograd.grad(out, x if wrt == 'x' else net[2].weight)
        return seen, g[0]

    for wrt in ('x', 'w'):
        (se, ge), (st, gt) = shapes_made(ember, EmberMode, wrt), shapes_made(torch, TorchMode, wrt)
        for shapes in (se, st):     # a weight's gradient (either layer's, or its transpose) is computed for w only
            assert ((128, 256) in shapes or (256, 128) in shapes) == (wrt == 'w'), shapes
        np.testing.assert_allclose(ge.numpy(), gt.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_grad_through_an_in_place_write_into_a_view():
    """autograd.grad to either input of ``v.mul_(q)`` on a view: the in-place node runs inside CopySlices, whose
    first edge (the base's) is not the in-place node's (the view's old value)."""
    res = {}
    for lib in (torch, ember):
        w = lib.tensor([1., 2., 3.], requires_grad=True)
        q = lib.tensor([4., 5.], requires_grad=True)
        base = w * 1
        base[:2].mul_(q)
        out = (base * lib.tensor([1., 10., 100.])).sum()
        res[lib] = [[g.tolist() for g in lib.autograd.grad(out, ins, retain_graph=True)] for ins in (w, q, (q, w))]
    assert res[ember] == res[torch]
