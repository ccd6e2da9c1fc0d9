"""How a view was made (torch's CreationMeta: DEFAULT, NO_GRAD_MODE, INFERENCE_MODE, IN_CUSTOM_FUNCTION,
MULTI_OUTPUT_NODE) and what it allows later, compared with torch case by case: the view's autograd properties,
which operations raise (class and message), and the gradients where torch lets the program go on."""
import numpy as np
import pytest
import torch

import ember


def observe(fn):
    """What ``fn()`` gives, comparable across libraries: a value (tensors as lists, nodes by name) or the
    exception's class name and message."""
    try:
        return ('ok', _plain(fn()))
    except Exception as e:      # noqa: BLE001 - the error is what is compared
        return (type(e).__name__, str(e))


def _plain(v):
    if isinstance(v, (tuple, list)):
        return tuple(_plain(x) for x in v)
    if isinstance(v, np.ndarray):
        return ('array', v.tolist())
    if hasattr(v, 'tolist') and hasattr(v, 'requires_grad'):
        return ('tensor', np.round(np.array(v.detach().tolist(), dtype=float), 5).tolist())
    if hasattr(v, 'next_functions'):        # a node: its class name
        return ('node', type(v).__name__)
    return v


def props(v, x):
    return (v.requires_grad, _plain(v.grad_fn), v.is_leaf, v._is_view(), v._base is x)


def both(scenario):
    """Run ``scenario(lib)`` (a list of observations) with torch and with ember."""
    return scenario(torch), scenario(ember)


def assert_same(scenario):
    t, e = both(scenario)
    assert len(t) == len(e)
    for i, (a, b) in enumerate(zip(t, e)):
        assert a == b, f"observation {i}: torch {a!r}, ember {b!r}"


def _base(lib, kind, shape=(3, 4)):
    leaf = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
    return leaf, (leaf if kind == 'leaf' else leaf * 1)


VIEWS = {
    'slice': lambda x: x[:2],
    'view': lambda x: x.view(-1),
    't': lambda x: x.t(),
    'unsqueeze': lambda x: x.unsqueeze(0),
    'diagonal': lambda x: x.diagonal(),
    'select': lambda x: x[0],
    'view_as': lambda x: x.view_as(x),
    'split_piece': lambda x: x.split(2)[0],
    'unbind_piece': lambda x: x.unbind()[1],
    'permute_reshape': lambda x: x.permute(1, 0)[1:],
}


@pytest.mark.parametrize('base_kind', ['leaf', 'nonleaf'])
@pytest.mark.parametrize('view', sorted(VIEWS))
def test_no_grad_view(view, base_kind):
    def scenario(lib):
        leaf, x = _base(lib, base_kind)
        with lib.no_grad():
            v = VIEWS[view](x)
        obs = [props(v, x), observe(lambda: v.numpy()), observe(lambda: v.mul_(2))]
        with lib.no_grad():
            obs.append(observe(lambda: v.mul_(2)))          # allowed inside no_grad ...
        obs += [observe(lambda: v.grad_fn), observe(lambda: v.is_leaf),    # ... but the view is unusable after
                observe(lambda: v * 2), observe(lambda: v.requires_grad), observe(lambda: v.detach() * 1)]
        with lib.no_grad():
            obs.append(observe(lambda: v * 2))
        return obs
    assert_same(scenario)


def test_detach_under_no_grad_is_not_a_view():
    def scenario(lib):
        leaf, x = _base(lib, 'nonleaf')
        with lib.no_grad():
            d = x.detach()
        return [props(d, x), observe(lambda: d.mul_(2)), observe(lambda: (d * 2).requires_grad)]
    assert_same(scenario)


@pytest.mark.parametrize('base_kind', ['leaf', 'nonleaf'])
def test_no_grad_view_gives_no_gradient_path(base_kind):
    """Ops on the view record a node (the result requires grad) whose edge to the view is empty."""
    def scenario(lib):
        leaf, x = _base(lib, base_kind)
        with lib.no_grad():
            v = x[:2]
        y = (v * 2).sum() + (x * 3).sum()
        y.backward()
        return [y.requires_grad, _plain(y.grad_fn), _plain(leaf.grad), v.grad, observe(lambda: v.retain_grad())]
    assert_same(scenario)


def test_base_written_in_grad_mode_then_view_used():
    def scenario(lib):
        leaf, x = _base(lib, 'nonleaf')
        with lib.no_grad():
            v = x[:2]
        x.add_(1)                       # allowed: the base is no leaf
        obs = [observe(lambda: v.requires_grad), observe(lambda: v.grad_fn), observe(lambda: v * 2),
               observe(lambda: v.numpy())]
        with lib.no_grad():
            obs += [observe(lambda: v.grad_fn), observe(lambda: (v * 2).requires_grad)]
        x.sum().backward()              # the base's own history is unaffected
        return obs + [_plain(leaf.grad)]
    assert_same(scenario)


def test_leaf_written_under_no_grad_then_view_used():
    """An optimizer-like step on the leaf makes a view taken under no_grad before it unusable in grad mode."""
    def scenario(lib):
        leaf, x = _base(lib, 'leaf')
        with lib.no_grad():
            v = x[:2]
            x.add_(1)
        return [observe(lambda: v.grad_fn), observe(lambda: v * 2), observe(lambda: x.mul_(2))]
    assert_same(scenario)


def test_no_grad_view_of_tensor_without_grad():
    """The creation mode is recorded whatever the base: an in-place op with an operand that requires grad
    raises, one without is plain."""
    def scenario(lib):
        x = lib.arange(3.)
        with lib.no_grad():
            v = x[:2]
        w = lib.ones(2, requires_grad=True)
        return [props(v, x), observe(lambda: v.mul_(w)), observe(lambda: v.mul_(2)),
                observe(lambda: (v * w).requires_grad), observe(lambda: (x.add_(1), v * w)[1])]
    assert_same(scenario)


def test_no_grad_view_of_a_leaf_that_is_a_view():
    """A view requires grad through its base, the tensor that owns the memory: here one without grad."""
    def scenario(lib):
        x = lib.arange(12.).reshape(3, 4).requires_grad_()
        with lib.no_grad():
            v = x[:2]
        return [props(v, x), v._base is x._base, observe(lambda: v.mul_(2)), observe(lambda: (v * 2).requires_grad)]
    assert_same(scenario)


def test_integer_no_grad_view_written_in_place():
    def scenario(lib):
        x = lib.arange(3)
        with lib.no_grad():
            v = x[:2]
        return [observe(lambda: v.mul_(2)), observe(lambda: x)]
    assert_same(scenario)


@pytest.mark.parametrize('base_kind', ['leaf', 'nonleaf'])
def test_view_of_no_grad_view_in_grad_mode(base_kind):
    def scenario(lib):
        leaf, x = _base(lib, base_kind)
        with lib.no_grad():
            v = x[:2]
        v2 = v[0]
        v3 = v2.view(-1)
        obs = [props(v2, x), props(v3, x), observe(lambda: v2.mul_(2)), observe(lambda: v3.mul_(2))]
        (v2 * 3).sum().backward()
        obs.append(_plain(leaf.grad))
        with lib.no_grad():
            x.mul_(2)
        return obs + [observe(lambda: v2.grad_fn), observe(lambda: v3 * 1), observe(lambda: v.grad_fn)]
    assert_same(scenario)


def test_no_grad_view_of_a_grad_mode_view():
    def scenario(lib):
        leaf, x = _base(lib, 'leaf')
        a = x[1:]
        with lib.no_grad():
            v = a[0]
        return [props(v, x), observe(lambda: v.mul_(2)), observe(lambda: a.mul_(2))]
    assert_same(scenario)


def test_grad_mode_views_still_rebase():
    """DEFAULT views keep torch's view+inplace handling: the base's history is rebased, gradients flow."""
    def scenario(lib):
        leaf, x = _base(lib, 'nonleaf')
        v = x[:2]
        v.mul_(lib.arange(4.))
        w = x.view(-1)
        x.sum().backward(retain_graph=True)
        g1 = _plain(leaf.grad)
        w.pow(2).sum().backward()
        return [g1, _plain(leaf.grad), _plain(v.grad_fn), _plain(w.grad_fn)]
    assert_same(scenario)


# --- inference mode ------------------------------------------------------------

def test_inference_mode_view():
    def scenario(lib):
        leaf, x = _base(lib, 'leaf')
        with lib.inference_mode():
            v = x[:2]
        obs = [props(v, x), v.is_inference(), observe(lambda: v.numpy()), observe(lambda: v * 2),
               observe(lambda: v.mul_(2))]
        with lib.no_grad():
            obs.append(observe(lambda: v.mul_(2)))
        with lib.inference_mode():
            obs.append(observe(lambda: v.mul_(2)))
        obs += [observe(lambda: v * 2), observe(lambda: v.grad_fn)]
        with lib.no_grad():
            u = v[0]        # a view of an inference-mode view stays one
        return obs + [props(u, x), observe(lambda: u.mul_(2))]
    assert_same(scenario)


def test_inference_mode_view_of_tensor_without_grad():
    def scenario(lib):
        x = lib.arange(8.).reshape(2, 4)
        with lib.inference_mode():
            v = x[:1]
            y = x * 2
        w = lib.ones(1, 4, requires_grad=True)
        return [props(v, x), v.is_inference(), y.is_inference(), observe(lambda: v.mul_(w)),
                observe(lambda: v.mul_(2))]
    assert_same(scenario)


# --- custom autograd.Function ---------------------------------------------------

def _functions(lib):
    class Slice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            r = lib.zeros(3, 4)
            r[:2] = g * 5       # not the true gradient: shows that the custom backward ran
            return r

    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 7

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1), x[0]

        @staticmethod
        def backward(ctx, g, h):
            r = g.view(3, 4).clone()
            r[0] += h
            return r
    return Slice, Identity, Two


@pytest.mark.parametrize('base_kind', ['leaf', 'nonleaf'])
def test_custom_function_views(base_kind):
    def scenario(lib):
        Slice, Identity, Two = _functions(lib)
        leaf, x = _base(lib, base_kind)
        v = Slice.apply(x)
        obs = [props(v, x), observe(lambda: v.mul_(2))]
        w = v[0]
        obs += [props(w, x), observe(lambda: w.mul_(2))]
        i = Identity.apply(x)
        obs += [props(i, x), i is x, observe(lambda: i.mul_(2))]
        a, b = Two.apply(x)
        obs += [props(a, x), props(b, x), observe(lambda: a.mul_(2)), observe(lambda: b.mul_(2))]
        (v.sum() + i.sum() + a.sum() + b.sum()).backward()
        obs.append(_plain(leaf.grad))
        with lib.no_grad():
            obs.append(observe(lambda: v.mul_(2)))
        return obs + [observe(lambda: v.grad_fn), observe(lambda: v * 2), observe(lambda: i * 2)]
    assert_same(scenario)


def test_custom_function_view_of_input_without_grad():
    def scenario(lib):
        Slice, Identity, _ = _functions(lib)
        x = lib.arange(12.).reshape(3, 4)
        v, i = Slice.apply(x), Identity.apply(x)
        w = lib.ones(2, 4, requires_grad=True)
        return [props(v, x), props(i, x), i is x, observe(lambda: v.mul_(w)), observe(lambda: v.mul_(2))]
    assert_same(scenario)


def test_custom_function_base_written_after():
    def scenario(lib):
        Slice, _, _ = _functions(lib)
        leaf, x = _base(lib, 'nonleaf')
        v = Slice.apply(x)
        x.mul_(2)
        return [observe(lambda: v.grad_fn), observe(lambda: v * 2), observe(lambda: v.is_leaf)]
    assert_same(scenario)


# --- several views from one node (split, chunk, unbind) --------------------------

@pytest.mark.parametrize('make', ['split', 'chunk', 'unbind'])
def test_views_of_multi_output_pieces(make):
    def scenario(lib):
        leaf, x = _base(lib, 'nonleaf', (4, 3))
        p = {'split': lambda: x.split(2)[0], 'chunk': lambda: x.chunk(2)[1],
             'unbind': lambda: x.unbind()[0]}[make]()
        q = p[0:1]
        r = p.view(-1)
        obs = [props(q, x), observe(lambda: p.mul_(2)), observe(lambda: q.mul_(2)), observe(lambda: r.mul_(2))]
        (q.sum() + r.sum() * 2).backward(retain_graph=True)
        obs.append(_plain(leaf.grad))
        with lib.no_grad():
            obs.append(observe(lambda: q.mul_(2)))
        return obs + [observe(lambda: q.grad_fn), observe(lambda: p.grad_fn), observe(lambda: r * 1)]
    assert_same(scenario)


def test_multi_output_pieces_of_tensor_without_grad():
    def scenario(lib):
        x = lib.arange(6.).reshape(2, 3)
        a, b = x.split(2, 1)
        w = lib.ones(2, 2, requires_grad=True)
        return [props(a, x), observe(lambda: a.mul_(10)), observe(lambda: a.mul_(w)), observe(lambda: x)]
    assert_same(scenario)


def test_multi_output_pieces_stale_after_no_grad_write():
    def scenario(lib):
        leaf, x = _base(lib, 'nonleaf', (4, 3))
        a, b = x.split(2)
        with lib.no_grad():
            x.add_(1)
        return [observe(lambda: a.grad_fn), observe(lambda: b * 1)]
    assert_same(scenario)


def test_detach_in_place_of_no_grad_view():
    def scenario(lib):
        leaf, x = _base(lib, 'leaf')
        with lib.no_grad():
            v = x[:2]
        return [observe(lambda: v.detach_()), v.requires_grad]
    t, e = both(scenario)
    assert t[1] == e[1] and t[0][0] == e[0][0] == 'RuntimeError'
    assert e[0][1] in t[0][1]       # ember's message is the first sentence of torch's (no DDP hint)
