"""ember.func against torch.func: jvp under vmap with batched tangents laid out unlike the primal (NOTE [batched
tangent layout]), vmap's error for copy_ into an unbatched tensor, and transforms under no_grad (NOTE [func under
no_grad])."""
import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef


def _pair(a, requires_grad=False):
    a = np.asarray(a, dtype=np.float64)
    return (ember.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad))


def _close(e, t):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-12)


RNG = np.random.default_rng(6)


# --- vmap over jvp with a batched tangent laid out unlike the primal ---------------------------------------

def _jv(lib, W, f):
    fn = ef if lib is ember else tf
    return lambda v: fn.jvp(f, (W,), (v,))[1]


@pytest.mark.parametrize('case', ['movedim', 'trailing_columns', 'size1_dim', 'nested', 'strided_primal'])
def test_vmap_jvp_tangent_layout(case):
    results = []
    for lib in (ember, torch):
        fn = ef if lib is ember else tf
        if case == 'movedim':           # repro 03: tangents (2, 3, 4) from a (3, 4, 2) array
            W = lib.tensor(results_in['W'])
            V = lib.tensor(results_in['V']).movedim(2, 0)
            out = fn.vmap(_jv(lib, W, lambda w: w * 2))(V)
        elif case == 'trailing_columns':    # curvlinops: a batch of tangents as trailing columns
            W = lib.tensor(results_in['W'])
            V = lib.tensor(results_in['V'])
            out = fn.vmap(_jv(lib, W, lambda w: (w.sin() * 3) @ lib.ones(4, 2, dtype=w.dtype)), in_dims=2,
                          out_dims=2)(V)
        elif case == 'size1_dim':           # repro 05: strides differ in a size-1 dim only
            F = lib.tensor(results_in['F'])
            M = lib.tensor(results_in['M'])
            out = fn.vmap(_jv(lib, F, lambda f: f * 2), in_dims=2, out_dims=2)(M)
        elif case == 'nested':
            W = lib.tensor(results_in['W'])
            V = lib.tensor(results_in['V4']).permute(3, 2, 0, 1)
            out = fn.vmap(fn.vmap(_jv(lib, W, lambda w: w.exp() * w)))(V)
        else:                               # the primal a transposed view, the tangents contiguous
            W = lib.tensor(results_in['W']).t().contiguous().t()
            V = lib.tensor(results_in['V']).movedim(2, 0)
            out = fn.vmap(_jv(lib, W, lambda w: w.tanh()))(V)
        results.append(out)
    _close(*results)


results_in = {'W': RNG.standard_normal((3, 4)), 'V': RNG.standard_normal((3, 4, 2)),
              'F': RNG.standard_normal((8, 1)), 'M': RNG.standard_normal((8, 1, 3)),
              'V4': RNG.standard_normal((3, 4, 2, 5))}


def test_vmap_jvp_noncontiguous_matches_contiguous():
    W = ember.tensor(results_in['W'])
    V = ember.tensor(results_in['V']).movedim(2, 0)
    jv = _jv(ember, W, lambda w: w * 2)
    _close(ef.vmap(jv)(V), torch.tensor(2 * np.moveaxis(results_in['V'], 2, 0)))
    _close(ef.vmap(jv)(V.contiguous()), torch.tensor(2 * np.moveaxis(results_in['V'], 2, 0)))


def test_make_dual_batched_tangent_under_vmap():
    """forward_ad.make_dual itself (what jvp calls; torch has no batching rule for it, so the expected values are
    computed by hand): a batched tangent on an unbatched primal stays batched."""
    import ember.autograd.forward_ad as efw
    W = ember.tensor(results_in['W'])

    def f(v):
        with efw.dual_level():
            return efw.unpack_dual(efw.make_dual(W, v).cos()).tangent
    V = np.moveaxis(results_in['V'], 2, 0)
    _close(ef.vmap(f)(ember.tensor(results_in['V']).movedim(2, 0)), torch.tensor(-np.sin(results_in['W']) * V))


def _copy_into_unbatched(lib, V, view):
    def f(v):
        out = lib.zeros(12, dtype=v.dtype).as_strided((3, 4), (4, 1), 0) if view else lib.zeros(3, 4, dtype=v.dtype)
        out.copy_(v)
        return out * 1
    return (ef if lib is ember else tf).vmap(f)(V)


@pytest.mark.parametrize('view', [True, False])
def test_vmap_copy_into_unbatched_raises(view):
    """repro 09: torch refuses, ember used to loop and keep one sample."""
    msgs = []
    for lib in (ember, torch):
        V = lib.arange(24.).reshape(3, 4, 2).movedim(2, 0)
        with pytest.raises(RuntimeError) as ei:
            _copy_into_unbatched(lib, V, view)
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("vmap: inplace arithmetic(self, *extra_args) is not possible")


def test_vmap_copy_into_batched():
    outs = []
    for lib in (ember, torch):
        fn = ef if lib is ember else tf

        def f(v, w):
            o = v.clone()
            o.copy_(w)
            p = v.clone()
            p.copy_(lib.ones(4, dtype=v.dtype))     # an unbatched source broadcast into each sample
            return o + p
        outs.append(fn.vmap(f)(lib.tensor(results_in['V4'][..., 0, 0].reshape(1, 3, 4).repeat(2, 0)),
                               lib.tensor(results_in['V']).movedim(2, 0)))
    _close(*outs)


# --- transforms under no_grad --------------------------------------------------------------------------------

X = RNG.standard_normal((5, 4))
W0 = RNG.standard_normal((3, 4))


def _f(lib):
    X_ = lib.tensor(X)
    return lambda w: (X_ @ w.T).tanh()


def _loss(lib):
    f = _f(lib)
    return lambda w: f(w).pow(2).sum()


def _param(lib):
    return lib.nn.Parameter(lib.tensor(W0))


TRANSFORMS = {
    'grad': lambda lib, fn, W: fn.grad(_loss(lib))(W),
    'grad_and_value': lambda lib, fn, W: fn.grad_and_value(_loss(lib))(W)[0],
    'vjp_out': lambda lib, fn, W: fn.vjp(_f(lib), W)[0],
    'vjp_pullback': lambda lib, fn, W: fn.vjp(_f(lib), W)[1](lib.ones(5, 3, dtype=W.dtype))[0],
    'vmap_pullback': lambda lib, fn, W: fn.vmap(lambda v: fn.vjp(_f(lib), W)[1](v)[0])(lib.ones(2, 5, 3,
                                                                                              dtype=W.dtype)),
    'jacrev': lambda lib, fn, W: fn.jacrev(_f(lib))(W),
    'jacfwd': lambda lib, fn, W: fn.jacfwd(_f(lib))(W),
    'hessian': lambda lib, fn, W: fn.hessian(_loss(lib))(W),
    'jvp': lambda lib, fn, W: fn.jvp(_f(lib), (W,), (lib.ones(3, 4, dtype=W.dtype),))[1],
    'hvp': lambda lib, fn, W: fn.jvp(fn.jacrev(_loss(lib)), (W,), (lib.ones(3, 4, dtype=W.dtype),))[1],
    'hvp_primal': lambda lib, fn, W: fn.jvp(fn.jacrev(_loss(lib)), (W,), (lib.ones(3, 4, dtype=W.dtype),))[0],
    'grad_grad': lambda lib, fn, W: fn.grad(lambda w: fn.grad(_loss(lib))(w).sum())(W),
    'jacfwd_jacrev': lambda lib, fn, W: fn.jacfwd(fn.jacrev(_loss(lib)))(W),
}


@pytest.mark.parametrize('mode', ['no_grad', 'enable_grad'])
@pytest.mark.parametrize('name', list(TRANSFORMS))
def test_transform_grad_mode(name, mode):
    res = []
    for lib, fn in ((ember, ef), (torch, tf)):
        with getattr(lib, mode)():
            r = TRANSFORMS[name](lib, fn, _param(lib))
        res.append(r)
    e, t = res
    assert e.requires_grad == t.requires_grad
    assert (e.grad_fn is None) == (t.grad_fn is None)
    _close(e, t)


def test_pullback_grad_mode_at_call():
    """The pullback's graph follows the grad mode when it is called and what it was built from."""
    for lib, fn in ((ember, ef), (torch, tf)):
        W = _param(lib)
        with lib.no_grad():
            _, pull = fn.vjp(_f(lib), W)
        assert not pull(lib.ones(5, 3, dtype=W.dtype))[0].requires_grad
        c = lib.ones(5, 3, dtype=W.dtype, requires_grad=True)
        g = pull(c)[0]
        assert g.requires_grad                 # through the cotangent only: W was taken under no_grad
        g.sum().backward()
        assert W.grad is None and c.grad is not None
        _, pull = fn.vjp(_f(lib), W)
        with lib.no_grad():
            assert not pull(lib.ones(5, 3, dtype=W.dtype))[0].requires_grad


def test_no_grad_transform_inside_grad_is_constant():
    """A transform under no_grad inside another one: its result is a constant to the outer one."""
    outs = []
    for lib, fn in ((ember, ef), (torch, tf)):
        def inner(w):
            with lib.no_grad():
                g = fn.grad(_loss(lib))(w)
            return (g * w).sum()
        outs.append(fn.grad(inner)(_param(lib)))
    _close(*outs)


def test_no_grad_results_backward_once():
    """What laplace/curvlinops do: a Hessian built under no_grad enters a loss that is differentiated; no graph
    of the transform may be kept ("Trying to backward through the graph a second time")."""
    for lib, fn in ((ember, ef), (torch, tf)):
        W = _param(lib)
        with lib.no_grad():
            H = fn.vmap(lambda v: fn.jvp(fn.jacrev(_loss(lib)), (W,), (v,))[1])(lib.eye(12, dtype=W.dtype)
                                                                               .reshape(12, 3, 4))
        p = lib.tensor(1.5, dtype=W.dtype, requires_grad=True)
        for _ in range(2):
            (H.sum() * p).backward()
        assert not H.requires_grad
