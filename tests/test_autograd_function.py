"""Custom autograd Functions, gradcheck/gradgradcheck, autograd.functional, checkpointing and graph
export, against torch."""
import numpy as np
import pytest
import torch

import ember
from test_autograd import same, data, arr


def _cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g * ctx.k, None
    return Cube


def _cube_setup_context(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * x * x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x, output)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            x, out = ctx.saved_tensors
            return 3 * x * x * g * ctx.k, None
    return Cube


@pytest.mark.parametrize('make', [_cube, _cube_setup_context])
def test_custom_function_forward_backward_and_double_backward(make):
    def f(lib):
        Cube = make(lib)
        x = data(lib, 3)
        y = Cube.apply(x, 2.0)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        x2 = data(lib, 3)
        Cube.apply(x2, 2.0).sum().backward()
        return [y, type(y.grad_fn).__name__, y.grad_fn.name(), len(y.grad_fn.next_functions), g, gg, x2.grad]
    same(f)


def test_needs_input_grad_materialize_and_non_differentiable():
    def f(lib):
        record = {}

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, scale):
                record['nig'] = ctx.needs_input_grad
                idx = (a > 0)
                ctx.mark_non_differentiable(idx)
                return a * scale, b * scale, idx

            @staticmethod
            def backward(ctx, ga, gb, gidx):
                record['gb_is_zero'] = not arr(gb).any()
                return ga * 2, gb * 3, None

        a, b = data(lib, 3), data(lib, 3, seed=1, rg=False)
        ya, yb, idx = Split.apply(a, b, 2.0)
        ya.sum().backward()      # yb unused: its gradient is materialized as zeros
        return [a.grad, record['nig'], record['gb_is_zero'], idx.requires_grad, yb.requires_grad]
    same(f)

    class NoMat(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is None
            return g1
    a = ember.ones(2, requires_grad=True)
    NoMat.apply(a)[0].sum().backward()
    assert arr(a.grad).tolist() == [1, 1]


def test_mark_dirty_and_input_returned_as_is():
    def f(lib):
        class AddOneInplace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5
        a = data(lib, 3)
        b = a * 1
        out = AddOneInplace.apply(b)
        same_obj = out is b
        name = b.grad_fn.name()
        out.sum().backward()
        c = data(lib, 2)
        d = Identity.apply(c)
        d.sum().backward()
        return [a.grad, same_obj, name, b._version, d is c, c.grad]
    same(f)
    for lib in (torch, ember):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            Bad.apply(data(lib, 2))


def test_saved_tensors_version_check_and_freed():
    for lib in (torch, ember):
        Cube = _cube(lib)
        x = data(lib, 3)
        a = x * 1
        y = Cube.apply(a, 1.0)
        a.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        y = Cube.apply(x, 1.0)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.grad_fn.saved_tensors


def test_wrong_number_of_gradients_and_bad_shape():
    for lib in (torch, ember):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g
        x, y = data(lib, 2), data(lib, 2, seed=1)
        with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
            Bad.apply(x, y).sum().backward()

        class BadShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return lib.ones(5, dtype=g.dtype)
        with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
            BadShape.apply(x).sum().backward()


def test_once_differentiable():
    for lib in (torch, ember):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g
        x, v = data(lib, 3), data(lib, 3, seed=1)      # v requires grad: so does the first derivative
        g, = lib.autograd.grad(Sq.apply(x), x, v, create_graph=True)
        assert g.requires_grad and g.grad_fn.name() == 'torch::autograd::Error'
        np.testing.assert_allclose(arr(g), 2 * arr(x) * arr(v))
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                               "@once_differentiable"):
            g.sum().backward()


def test_function_ctx_names():
    assert ember.autograd.function.FunctionCtx is ember.autograd.FunctionCtx
    assert issubclass(_cube(ember)._backward_cls, ember.autograd.function.FunctionCtx)
    assert ember.autograd.Function.apply is not None


# --- gradcheck -----------------------------------------------------------------------------------------

_GRADCHECK_FNS = {
    'mul_sin': lambda lib: (lambda a, b: (a * b).sin(), 2),
    'div_exp': lambda lib: (lambda a, b: (a / (b * b + 1)).exp(), 2),
    'tanh_sigmoid': lambda lib: (lambda a, b: a.tanh() * b.sigmoid(), 2),
    'broadcast_sub': lambda lib: (lambda a, b: (a.reshape(3, 1) - b).cos(), 2),
    'sum_dim': lambda lib: (lambda a, b: (a * b).sum(0, keepdim=True), 2),
    'where': lambda lib: (lambda a, b: lib.where(a > b, a * a, b), 2),
    'views': lambda lib: (lambda a, b: a.view(3, 1).expand(3, 3).t().narrow(0, 1, 2) * b.select(0, 1), 2),
    'matmul': lambda lib: (lambda a, b: a.reshape(1, 3).matmul(b.reshape(3, 1) * b.reshape(1, 3)), 2),
}


@pytest.mark.parametrize('name', sorted(_GRADCHECK_FNS))
def test_gradcheck_and_gradgradcheck_on_ops(name):
    fn, n = _GRADCHECK_FNS[name](ember)
    rng = np.random.default_rng(1)
    ins = tuple(ember.tensor(rng.uniform(0.5, 2, 3), dtype=ember.float64, requires_grad=True) for _ in range(n))
    assert ember.autograd.gradcheck(fn, ins)
    assert ember.autograd.gradgradcheck(fn, ins)


def test_gradcheck_failure_report_shows_both_jacobians():
    for lib in (torch, ember):
        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, g):
                return g
        x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"(?s)Jacobian mismatch for output 0 with respect to input 0,\s*"
                                               r"numerical:.*\n.*analytical:") as ei:
            lib.autograd.gradcheck(Wrong.apply, (x,))
        assert type(ei.value).__name__ == 'GradcheckError'
        assert lib.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    with pytest.warns(UserWarning, match="not a double precision"):
        ember.autograd.gradcheck(lambda t: t * 2, (ember.ones(2, requires_grad=True),), atol=1e-2, rtol=1e-2,
                                 eps=1e-3)


def test_gradgradcheck_catches_wrong_second_derivative():
    class FirstOnly(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x.detach() * x.detach() * g       # right value, but not differentiable in x
    x = ember.tensor([1., 2.], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(FirstOnly.apply, (x,))
    assert ember.autograd.gradgradcheck(FirstOnly.apply, (x,), raise_exception=False) is False


# --- autograd.functional -------------------------------------------------------------------------------

def _f1(lib):
    return lambda x: (x * x * x).sin()


def _f2(lib):
    return lambda x, y: ((x * y).exp(), x.reshape(3, 1) * y)


def _scalar(lib):
    return lambda x, y: ((x * x * y).sin()).sum()


def test_functional_jacobian_and_hessian():
    def f(lib):
        F = lib.autograd.functional
        x, y = data(lib, 3, rg=False), data(lib, 3, seed=1, rg=False)
        return [F.jacobian(_f1(lib), x), F.jacobian(_f2(lib), (x, y)), F.hessian(_scalar(lib), (x, y)),
                F.hessian(lambda t: (t * t * t).sum(), x)]
    same(f)


def test_functional_products():
    def f(lib):
        F = lib.autograd.functional
        x, y = data(lib, 3, rg=False), data(lib, 3, seed=1, rg=False)
        v, u = data(lib, 3, seed=2, rg=False), data(lib, 3, seed=3, rg=False)
        return [F.vjp(_f1(lib), x, v), F.jvp(_f1(lib), x, v), F.hvp(_scalar(lib), (x, y), (v, u)),
                F.vhp(_scalar(lib), (x, y), (v, u)), F.vjp(_scalar(lib), (x, y))]
    same(f)


def test_functional_create_graph_and_strict():
    def f(lib):
        F = lib.autograd.functional
        x = data(lib, 3)
        j = F.jacobian(_f1(lib), x, create_graph=True)
        g, = lib.autograd.grad(j.sum(), x)
        return [j.requires_grad, g]
    same(f)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="independent of input"):
            lib.autograd.functional.vjp(lambda a, b: a * 2, (data(lib, 2, rg=False), data(lib, 2, rg=False)),
                                        lib.ones(2, dtype=lib.float64), strict=True)


# --- checkpoint ----------------------------------------------------------------------------------------

def _block(lib, w):
    def fn(t):
        for _ in range(4):
            t = (t * w).tanh().sin()
        return t
    return fn


@pytest.mark.parametrize('use_reentrant', [False, True])
def test_checkpoint_same_gradients_and_less_saved_memory(use_reentrant):
    from ember.autograd.graph import saved_tensors_nbytes
    from ember.utils.checkpoint import checkpoint

    def f(lib, ckpt):
        x, w = data(lib, 64), data(lib, 64, seed=1)
        fn = _block(lib, w)
        y = ckpt(fn, x, use_reentrant=use_reentrant) if ckpt else fn(x)
        nbytes = saved_tensors_nbytes(y) if lib is ember else None
        (y * y).sum().backward()
        return [y, x.grad, w.grad], nbytes

    (ref, plain_bytes), (got, ckpt_bytes) = f(ember, None), f(ember, checkpoint)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(arr(a), arr(b), rtol=1e-12)
    t_ref, _ = f(torch, None)
    t_ck, _ = f(torch, torch.utils.checkpoint.checkpoint)
    for a, b in zip(got, t_ck):
        np.testing.assert_allclose(arr(a), arr(b), rtol=1e-10)
    # plain: every mul saves x and w, tanh its result, sin its input; checkpointed: at most the inputs
    assert plain_bytes >= 8 * 64 * 8
    assert ckpt_bytes <= 64 * 8, (ckpt_bytes, plain_bytes)


def test_checkpoint_preserves_rng_state_and_sequential():
    from ember.utils.checkpoint import checkpoint, checkpoint_sequential

    def noisy(t):
        return t * ember.rand(t.shape, dtype=t.dtype)
    x = ember.ones(5, dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    y = checkpoint(noisy, x, use_reentrant=False)
    ember.rand(3)                        # move the global RNG between forward and backward
    y.sum().backward()
    np.testing.assert_allclose(arr(x.grad), arr(y))   # d(x * r)/dx = r: the same r as the forward
    w = data(ember, 4)
    fns = [lambda t: t * w, lambda t: t.sin(), lambda t: t * t, lambda t: t.exp()]
    a = data(ember, 4, seed=5)
    checkpoint_sequential(fns, 2, a, use_reentrant=False).sum().backward()
    ga, gw = a.grad.clone(), w.grad.clone()
    a.grad = w.grad = None
    out = a
    for fn in fns:
        out = fn(out)
    out.sum().backward()
    np.testing.assert_allclose(arr(ga), arr(a.grad))
    np.testing.assert_allclose(arr(gw), arr(w.grad))
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(lambda t: t * 2, a)


# --- graph export --------------------------------------------------------------------------------------

def test_to_dot_names_nodes_saved_shapes_and_leaves():
    from ember.autograd.graph import to_dot
    w = ember.ones(2, 3, requires_grad=True)
    x = ember.ones(3)
    y = (w * x).exp().sum()
    dot = to_dot(y, params={'weight': w})
    assert dot.startswith('digraph')
    for part in ('SumBackward0', 'ExpBackward0', 'MulBackward0', 'result: (2, 3)', 'other: (3,)',
                 'weight\\n(2, 3)', 'output ()'):
        assert part in dot, part
    assert dot.count('->') == 4       # leaf->mul, mul->exp, exp->sum, sum->output
    y.backward()
    assert '(saved tensors freed)' in to_dot(y)


def test_render_without_graphviz_names_the_extra(monkeypatch):
    import sys
    from ember.autograd.graph import render
    monkeypatch.setitem(sys.modules, 'graphviz', None)
    with pytest.raises(ImportError, match="graphviz"):
        render(ember.ones(2, requires_grad=True) * 2, '/tmp/never')
