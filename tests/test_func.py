"""ember.func against torch.func: the same functions and modules, values, shapes and errors."""
import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef


def _t(a, lib, **kw):
    return lib.tensor(np.asarray(a, dtype=np.float64), **kw)


def close(e, t, tol=1e-8):
    """Compare nested results (tuples, lists, dicts of tensors) of the two libraries, structure included."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
        return
    if isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t)
        for k in t:
            close(e[k], t[k], tol)
        return
    if isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t) > 0, (type(e), type(t))
        for a, b in zip(e, t):
            close(a, b, tol)
        return
    assert e == t


RNG = np.random.default_rng(0)
X = RNG.standard_normal(5)
Y = RNG.standard_normal(5)
M = RNG.standard_normal((3, 5))

# (name, fn(lib, x, y) -> scalar)
SCALAR_FNS = [
    ('sin_sum', lambda L, x, y: L.sin(x).sum()),
    ('poly', lambda L, x, y: (x ** 3 * y - x * y.exp()).sum()),
    ('softmax_dot', lambda L, x, y: (L.softmax(x, 0) * y).sum()),
    ('norm', lambda L, x, y: (x * x + y).pow(2).sum().sqrt()),
    ('tanh_mean', lambda L, x, y: L.tanh(x * y).mean()),
]


@pytest.mark.parametrize('name,fn', SCALAR_FNS, ids=[n for n, _ in SCALAR_FNS])
@pytest.mark.parametrize('argnums', [0, 1, (0, 1)])
def test_grad_matches_torch(name, fn, argnums):
    e = ef.grad(lambda x, y: fn(ember, x, y), argnums=argnums)(_t(X, ember), _t(Y, ember))
    t = tf.grad(lambda x, y: fn(torch, x, y), argnums=argnums)(_t(X, torch), _t(Y, torch))
    close(e, t)
    assert not any(g.requires_grad for g in (e if isinstance(e, tuple) else (e,)))


@pytest.mark.parametrize('name,fn', SCALAR_FNS, ids=[n for n, _ in SCALAR_FNS])
def test_grad_of_grad_and_hessian(name, fn):
    e = ef.grad(lambda x, y: ef.grad(lambda a: fn(ember, a, y))(x).sum())(_t(X, ember), _t(Y, ember))
    t = tf.grad(lambda x, y: tf.grad(lambda a: fn(torch, a, y))(x).sum())(_t(X, torch), _t(Y, torch))
    close(e, t)
    close(ef.hessian(lambda x: fn(ember, x, _t(Y, ember)))(_t(X, ember)),
          tf.hessian(lambda x: fn(torch, x, _t(Y, torch)))(_t(X, torch)))
    close(ef.jacrev(ef.jacrev(lambda x, y: fn(ember, x, y)), argnums=(0, 1))(_t(X, ember), _t(Y, ember)),
          tf.jacrev(tf.jacrev(lambda x, y: fn(torch, x, y)), argnums=(0, 1))(_t(X, torch), _t(Y, torch)))


def test_grad_and_value_has_aux_and_pytree_args():
    def f(L, d, m):
        out = (d['a'] * d['b'][0] + d['b'][1]).matmul(m.T).sum()
        return out, {'double': out * 2, 'list': [d['a'].sum()]}
    mk = lambda L: ({'a': _t(X, L), 'b': (_t(Y, L), _t(X * 2, L))}, _t(M, L))
    e = ef.grad_and_value(lambda d, m: f(ember, d, m), argnums=(0, 1), has_aux=True)(*mk(ember))
    t = tf.grad_and_value(lambda d, m: f(torch, d, m), argnums=(0, 1), has_aux=True)(*mk(torch))
    close(e, t)
    e = ef.grad(lambda d, m: f(ember, d, m), has_aux=True)(*mk(ember))
    t = tf.grad(lambda d, m: f(torch, d, m), has_aux=True)(*mk(torch))
    close(e, t)


def test_grad_captures_outer_variable():
    """A tensor an outer transform differentiates is a constant to the inner one, yet the outer one sees through
    the inner computation (NOTE [func levels])."""
    def outer(L, F, c):
        return F.grad(lambda x: (c * x ** 2).sum())(_t(Y, L)).pow(2).sum()
    close(ef.grad(lambda c: outer(ember, ef, c))(_t(X, ember)), tf.grad(lambda c: outer(torch, tf, c))(_t(X, torch)))
    # an input already requiring grad: the result is differentiable by ordinary autograd
    x = _t(X, ember, requires_grad=True)
    g = ef.grad(lambda a: (a ** 3).sum())(x)
    assert g.requires_grad
    (h,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * X)


def test_grad_under_no_grad_and_unused_input():
    with ember.no_grad():
        g = ef.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(_t(X, ember), _t(Y, ember))
    with torch.no_grad():
        t = tf.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(_t(X, torch), _t(Y, torch))
    close(g, t)


def test_grad_errors():
    x = _t(X, ember)
    with pytest.raises(RuntimeError, match='Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 dims'):
        ef.grad(lambda x: x * 2)(x)
    with pytest.raises(RuntimeError):
        tf.grad(lambda x: x * 2)(_t(X, torch))
    with pytest.raises(RuntimeError, match='to return a Tensor'):
        ef.grad(lambda x: 1.0)(x)
    with pytest.raises(RuntimeError, match='output of function f should be a tuple'):
        ef.grad(lambda x: x.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match='Got argnum=2, but only 1 positional inputs'):
        ef.grad(lambda x: x.sum(), argnums=2)(x)
    with pytest.raises(RuntimeError, match='Got argnum=2, but only 1 positional inputs'):
        tf.grad(lambda x: x.sum(), argnums=2)(_t(X, torch))
    with pytest.raises(RuntimeError, match='floating point'):
        ef.grad(lambda x: x.sum())(ember.tensor([1, 2]))


def test_vjp_matches_torch():
    def f(L, x, y):
        return (x.sin() * y, {'m': L.tensordot(x, y, dims=0)})
    e_out, e_fn = ef.vjp(lambda x, y: f(ember, x, y), _t(X, ember), _t(Y, ember))
    t_out, t_fn = tf.vjp(lambda x, y: f(torch, x, y), _t(X, torch), _t(Y, torch))
    close(e_out, t_out)
    ct = (RNG.standard_normal(5), {'m': RNG.standard_normal((5, 5))})
    close(e_fn((_t(ct[0], ember), {'m': _t(ct[1]['m'], ember)})), t_fn((_t(ct[0], torch), {'m': _t(ct[1]['m'], torch)})))
    # twice (the graph is kept), and has_aux
    close(e_fn((_t(ct[0], ember), {'m': _t(ct[1]['m'], ember)})), t_fn((_t(ct[0], torch), {'m': _t(ct[1]['m'], torch)})))
    e = ef.vjp(lambda x: (x.exp(), x.sum()), _t(X, ember), has_aux=True)
    t = tf.vjp(lambda x: (x.exp(), x.sum()), _t(X, torch), has_aux=True)
    close((e[0], e[2]), (t[0], t[2]))
    close(e[1](_t(Y, ember)), t[1](_t(Y, torch)))
    with pytest.raises(RuntimeError, match='Mismatch in shape'):
        e[1](ember.ones(3))
    with pytest.raises(RuntimeError, match='pytree structure of cotangents'):
        e_fn(_t(Y, ember))


@pytest.mark.parametrize('argnums', [0, 1, (0, 1)])
@pytest.mark.parametrize('chunk_size', [None, 1, 3])
def test_jacrev_matches_torch(argnums, chunk_size):
    def f(L, x, m):
        return (m.matmul(x).tanh(), (x * x).sum())
    e = ef.jacrev(lambda x, m: f(ember, x, m), argnums=argnums, chunk_size=chunk_size)(_t(X, ember), _t(M, ember))
    t = tf.jacrev(lambda x, m: f(torch, x, m), argnums=argnums, chunk_size=chunk_size)(_t(X, torch), _t(M, torch))
    close(e, t)


def test_jacrev_has_aux_and_errors():
    e = ef.jacrev(lambda x: (x.exp(), x.max()), has_aux=True)(_t(X, ember))
    t = tf.jacrev(lambda x: (x.exp(), x.max()), has_aux=True)(_t(X, torch))
    close(e, t)
    with pytest.raises(ValueError, match='chunk_size'):
        ef.jacrev(ember.sin, chunk_size=0)
    with pytest.raises(ValueError, match='chunk_size'):
        tf.jacrev(torch.sin, chunk_size=0)


class _Net:
    @staticmethod
    def make(L, seed=0):
        L.manual_seed(seed)
        return L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.BatchNorm1d(8), L.nn.Linear(8, 2)).double()


def _copy_params(src, dst):
    with torch.no_grad():
        for (_, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
            b.copy_(torch.from_numpy(a.numpy().copy()))


def test_functional_call_and_grad_of_params():
    em, tm = _Net.make(ember), _Net.make(torch)
    _copy_params(em, tm)
    xe, xt = _t(RNG.standard_normal((6, 4)), ember), None
    xt = torch.from_numpy(xe.numpy().copy())
    pe = {k: v.detach() for k, v in em.named_parameters()}
    pt = {k: v.detach() for k, v in tm.named_parameters()}
    be = {k: v.clone() for k, v in em.named_buffers()}
    bt = {k: v.clone() for k, v in tm.named_buffers()}
    close(ef.functional_call(em, (pe, be), (xe,)), tf.functional_call(tm, (pt, bt), (xt,)))
    # buffers given to the call are updated by batch norm, the module's own are not
    close(be, bt)
    em.eval(), tm.eval()     # torch.func refuses batch norm's in-place update of a captured buffer in training
    loss = lambda F, m, x: lambda p: F.functional_call(m, p, x).pow(2).sum()
    close(ef.grad(loss(ef, em, xe))(pe), tf.grad(loss(tf, tm, xt))(pt))
    # the module's own parameters are back
    assert all(a is b for a, b in zip(em.parameters(), [em[0].weight, em[0].bias, em[2].weight, em[2].bias,
                                                          em[3].weight, em[3].bias]))
    close(ef.functional_call(em, {}, xe, strict=False), tf.functional_call(tm, {}, xt, strict=False))


def test_functional_call_errors_and_tied_weights():
    class Tied(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = ember.nn.Linear(2, 2, bias=False)
            self.b = ember.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    m = Tied()
    x = ember.ones(1, 2)
    w = ember.eye(2) * 2
    assert ef.functional_call(m, {'a.weight': w}, (x,)).tolist() == [[4.0, 4.0]]
    r = ef.functional_call(m, {'a.weight': w}, (x,), tie_weights=False)
    assert r.tolist() != [[4.0, 4.0]]
    with pytest.raises(ValueError, match='tied'):
        ef.functional_call(m, {'a.weight': w, 'b.weight': w * 3}, (x,))
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'b.weight'"):
        ef.functional_call(m, {'a.weight': w}, (x,), strict=True, tie_weights=False)
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'c'"):
        ef.functional_call(m, {'a.weight': w, 'c': w}, (x,), strict=True)
    with pytest.raises(ValueError, match='multiple dictionaries'):
        ef.functional_call(m, ({'a.weight': w}, {'a.weight': w}), (x,))


def test_stack_module_state_matches_torch():
    ems = [_Net.make(ember, s) for s in range(3)]
    tms = [_Net.make(torch, s) for s in range(3)]
    for a, b in zip(ems, tms):
        _copy_params(a, b)
    (pe, be), (pt, bt) = ef.stack_module_state(ems), tf.stack_module_state(tms)
    close(pe, pt)
    close(be, bt)
    assert all(v.requires_grad and v.is_leaf for v in pe.values())
    assert pe['0.weight'].shape == (3, 8, 4)
    with pytest.raises(RuntimeError, match='at least one model'):
        ef.stack_module_state([])
    ems[0].eval()
    with pytest.raises(RuntimeError, match='training/eval mode'):
        ef.stack_module_state(ems)


def test_torch_func_under_ember_run(tmp_path):
    import subprocess
    import sys
    import os
    script = tmp_path / 's.py'
    script.write_text('import torch\nfrom torch.func import grad\nprint(grad(lambda x: (x * x).sum())(torch.ones(2)).tolist(),'
                      ' torch.func.jacrev.__module__)\n')
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], cwd=root, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ['[2.0,', '2.0]', 'ember.func._reverse']


# --- forward mode: ember.autograd.forward_ad and the forward transforms ----------------------------------------

import torch.autograd.forward_ad as tfw  # noqa: E402
import ember.autograd.forward_ad as efw  # noqa: E402


def test_forward_ad_api():
    with efw.dual_level() as lvl, tfw.dual_level():
        assert lvl == 0
        x = efw.make_dual(_t(X, ember), _t(Y, ember))
        tx = tfw.make_dual(_t(X, torch), _t(Y, torch))
        u = efw.unpack_dual(x.exp() * x)
        tu = tfw.unpack_dual(tx.exp() * tx)
        assert type(u).__name__ == 'UnpackedDualTensor' and u._fields == ('primal', 'tangent')
        close((u.primal, u.tangent), (tu.primal, tu.tangent))
        assert efw.unpack_dual(_t(X, ember)).tangent is None
        # views share the tangent; an in-place change of a dual tensor changes its tangent
        v = x[1:3]
        close(efw.unpack_dual(v).tangent, tfw.unpack_dual(tx[1:3]).tangent)
        y = _t(X, ember).clone()
        ty = _t(X, torch).clone()
        y.mul_(x)
        ty.mul_(tx)
        close(efw.unpack_dual(y).tangent, tfw.unpack_dual(ty).tangent)
        z = ember.zeros(5, dtype=ember.float64)
        z.copy_(x)
        close(efw.unpack_dual(z).tangent, _t(Y, torch))
        assert efw.unpack_dual(x.detach()).tangent is None
        with pytest.raises(RuntimeError, match='different size'):
            efw.make_dual(_t(X, ember), ember.ones(3, dtype=ember.float64))
        kept = x * 2
    # leaving the level drops its tangents
    assert efw.unpack_dual(kept).tangent is None
    with pytest.raises(RuntimeError, match='dual level'):
        efw.make_dual(_t(X, ember), _t(Y, ember))
    lvl = efw.enter_dual_level()
    d = efw.make_dual(_t(X, ember), _t(Y, ember), level=lvl)
    assert efw.unpack_dual(d.sin(), level=lvl).tangent is not None
    efw.exit_dual_level(level=lvl)


def test_forward_ad_inplace_through_views_reaches_the_base():
    res = []
    for L, fw in ((ember, efw), (torch, tfw)):
        with fw.dual_level():
            base = L.zeros(4, dtype=L.float64)
            v = base[1:3]
            v.copy_(fw.make_dual(L.ones(2, dtype=L.float64), L.tensor([2., 3.], dtype=L.float64)))
            w = base[2:]
            w.mul_(fw.make_dual(L.ones(2, dtype=L.float64) * 2, L.tensor([1., 1.], dtype=L.float64)))
            res.append((fw.unpack_dual(base).tangent, fw.unpack_dual(v).tangent, fw.unpack_dual(w).tangent))
    close(res[0], res[1])


def test_forward_ad_not_implemented_error():
    with efw.dual_level():
        x = efw.make_dual(ember.ones(3), ember.ones(3))
        with pytest.raises(NotImplementedError, match='Trying to use forward AD with heaviside that does not support it'):
            ember.heaviside(x, ember.zeros(3))


def test_forward_ad_and_autograd_together():
    """A dual tensor that requires grad: backward differentiates the primal, and the tangent is differentiable."""
    p = _t(X, ember, requires_grad=True)
    tp = _t(X, torch, requires_grad=True)
    with efw.dual_level(), tfw.dual_level():
        out = efw.unpack_dual((efw.make_dual(p, _t(Y, ember)).sin() ** 2).sum())
        tout = tfw.unpack_dual((tfw.make_dual(tp, _t(Y, torch)).sin() ** 2).sum())
        close(ember.autograd.grad(out.tangent, p), torch.autograd.grad(tout.tangent, tp))


@pytest.mark.parametrize('name,fn', SCALAR_FNS, ids=[n for n, _ in SCALAR_FNS])
def test_jvp_jacfwd_hessian_match_torch(name, fn):
    args_e, args_t = (_t(X, ember), _t(Y, ember)), (_t(X, torch), _t(Y, torch))
    tan_e, tan_t = (_t(Y, ember), _t(X, ember)), (_t(Y, torch), _t(X, torch))
    close(ef.jvp(lambda x, y: fn(ember, x, y), args_e, tan_e), tf.jvp(lambda x, y: fn(torch, x, y), args_t, tan_t))
    close(ef.jacfwd(lambda x, y: fn(ember, x, y), argnums=(0, 1))(*args_e),
          tf.jacfwd(lambda x, y: fn(torch, x, y), argnums=(0, 1))(*args_t))
    h = ef.hessian(lambda x, y: fn(ember, x, y), argnums=(0, 1))(*args_e)
    close(h, tf.hessian(lambda x, y: fn(torch, x, y), argnums=(0, 1))(*args_t))
    assert not h[0][0].requires_grad
    # compositions: jvp of jvp, jacrev of jacfwd, jacfwd of jacfwd, grad of a jvp
    jj = lambda F, L: F.jvp(lambda x: F.jvp(lambda a: fn(L, a, a * 2), (x,), (x * 0 + 1,))[1], (args_e[0] if L is ember else args_t[0],),
                            (tan_e[0] if L is ember else tan_t[0],))
    close(jj(ef, ember), jj(tf, torch))
    close(ef.jacrev(ef.jacfwd(lambda x: fn(ember, x, args_e[1])))(args_e[0]),
          tf.jacrev(tf.jacfwd(lambda x: fn(torch, x, args_t[1])))(args_t[0]))
    close(ef.jacfwd(ef.jacfwd(lambda x: fn(ember, x, args_e[1])))(args_e[0]),
          tf.jacfwd(tf.jacfwd(lambda x: fn(torch, x, args_t[1])))(args_t[0]))
    close(ef.grad(lambda x: ef.jvp(lambda a: fn(ember, a, args_e[1]), (x,), (tan_e[0],))[1])(args_e[0]),
          tf.grad(lambda x: tf.jvp(lambda a: fn(torch, a, args_t[1]), (x,), (tan_t[0],))[1])(args_t[0]))


def test_jvp_has_aux_linearize_and_errors():
    e = ef.jvp(lambda x: (x.exp(), x.sum()), (_t(X, ember),), (_t(Y, ember),), has_aux=True)
    t = tf.jvp(lambda x: (x.exp(), x.sum()), (_t(X, torch),), (_t(Y, torch),), has_aux=True)
    close(e, t)
    out, fn = ef.linearize(lambda x: x.sin() * x, _t(X, ember))
    tout, tfn = tf.linearize(lambda x: x.sin() * x, _t(X, torch))
    close(out, tout)
    close(fn(_t(Y, ember)), tfn(_t(Y, torch)))
    with pytest.raises(RuntimeError, match='Expected primals to be a tuple'):
        ef.jvp(ember.sin, _t(X, ember), _t(Y, ember))
    with pytest.raises(RuntimeError, match='same python structure'):
        ef.jvp(ember.sin, (_t(X, ember),), (_t(Y, ember), _t(Y, ember)))
    with pytest.raises(RuntimeError, match='same shape'):
        ef.jvp(ember.sin, (_t(X, ember),), (ember.ones(2, dtype=ember.float64),))


def _mlp_and_cnn(L):
    L.manual_seed(0)
    mlp = L.nn.Sequential(L.nn.Linear(6, 8), L.nn.ReLU(), L.nn.LayerNorm(8), L.nn.Linear(8, 3),
                          L.nn.LogSoftmax(-1)).double()
    cnn = L.nn.Sequential(L.nn.Conv2d(2, 3, 3, padding=1), L.nn.Tanh(), L.nn.AvgPool2d(2), L.nn.Flatten(),
                          L.nn.Linear(12, 4), L.nn.Softmax(-1)).double()
    return mlp, cnn


def test_jvp_through_mlp_and_cnn_modules_matches_torch():
    """Forward-mode through whole models, with respect to the input and to every parameter (functional_call)."""
    (em, ec), (tm, tc) = _mlp_and_cnn(ember), _mlp_and_cnn(torch)
    _copy_params(em, tm)
    _copy_params(ec, tc)
    rng = np.random.default_rng(3)
    for e_mod, t_mod, shape in ((em, tm, (5, 6)), (ec, tc, (2, 2, 4, 4))):
        x = rng.standard_normal(shape)
        pe = {k: v.detach() for k, v in e_mod.named_parameters()}
        pt = {k: v.detach() for k, v in t_mod.named_parameters()}
        tang = {k: rng.standard_normal(tuple(v.shape)) for k, v in pe.items()}
        tx = rng.standard_normal(shape)
        loss = lambda F, m: lambda p, x: F.functional_call(m, p, (x,)).pow(2).sum()
        e = ef.jvp(lambda p, x: F_call(ef, e_mod, p, x), (pe, _t(x, ember)),
                   ({k: _t(v, ember) for k, v in tang.items()}, _t(tx, ember)))
        t = tf.jvp(lambda p, x: F_call(tf, t_mod, p, x), (pt, _t(x, torch)),
                   ({k: _t(v, torch) for k, v in tang.items()}, _t(tx, torch)))
        close(e, t, tol=1e-7)
        # forward-over-reverse: the Hessian-vector product of a loss in the parameters
        hv = lambda F, L, mod, p, x, tg: F.jvp(lambda q: F.grad(loss(F, mod))(q, x), (p,), (tg,))[1]
        close(hv(ef, ember, e_mod, pe, _t(x, ember), {k: _t(v, ember) for k, v in tang.items()}),
              hv(tf, torch, t_mod, pt, _t(x, torch), {k: _t(v, torch) for k, v in tang.items()}), tol=1e-7)


def F_call(F, mod, p, x):
    return F.functional_call(mod, p, (x,))


def test_autograd_functional_forward_mode_strategy():
    f = lambda x, y: (x.sin() * y, (x * y).sum())
    args_e, args_t = (_t(X, ember), _t(Y, ember)), (_t(X, torch), _t(Y, torch))
    close(ember.autograd.functional.jacobian(f, args_e, vectorize=True, strategy='forward-mode'),
          torch.autograd.functional.jacobian(f, args_t, vectorize=True, strategy='forward-mode'))
    g = lambda x: (x.sin() * x).sum()
    close(ember.autograd.functional.hessian(g, args_e[0], vectorize=True, outer_jacobian_strategy='forward-mode'),
          torch.autograd.functional.hessian(g, args_t[0], vectorize=True, outer_jacobian_strategy='forward-mode'))
    with pytest.raises(NotImplementedError, match='vectorize=True'):
        ember.autograd.functional.jacobian(f, args_e, strategy='forward-mode')


# --- functionalize --------------------------------------------------------------------------------------------

def _fn_intermediate(lib, x):
    y = x.clone()
    y.add_(1)
    return y * 2


def _fn_view_of_intermediate(lib, x):
    y = x.clone()
    v = y[0]
    v.mul_(2)
    return y


def _fn_input(lib, x):
    x.add_(1)
    return x * 2


def _fn_view_of_input(lib, x):
    v = x.view(-1)
    v.add_(1)
    return x * 3


def _fn_chain_of_views(lib, x):
    y = x + 1
    v = y.transpose(0, 1)
    w = v[1]
    w.mul_(0.5)
    return y, v


def _fn_view_of_input_then_read(lib, x):
    x[1].sub_(x[0])
    return x.transpose(0, 1).sin(), x[2]


def _fn_slice_out_of_place_and_copy(lib, x):
    y = x.new_zeros(x.shape)
    y[1:].copy_(x[:-1] * 2)
    z = lib.mul(x, 2, out=lib.empty(x.shape, dtype=x.dtype))
    return y + z


_FUNCTIONALIZE_CASES = [_fn_intermediate, _fn_view_of_intermediate, _fn_input, _fn_view_of_input, _fn_chain_of_views,
                        _fn_view_of_input_then_read, _fn_slice_out_of_place_and_copy]


def _targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == 'call_function']


@pytest.mark.parametrize('remove', ['mutations', 'mutations_and_views'])
@pytest.mark.parametrize('fn', _FUNCTIONALIZE_CASES, ids=lambda f: f.__name__[4:])
def test_functionalize_values_and_input_mutation(fn, remove):
    """functionalize(f) returns what f returns and leaves the inputs as f leaves them."""
    a = np.random.default_rng(0).standard_normal((3, 4))
    xt, xe = _t(a, torch), _t(a, ember)
    expect = tf.functionalize(lambda x: fn(torch, x), remove=remove)(xt)
    got = ef.functionalize(lambda x: fn(ember, x), remove=remove)(xe)
    close(got, expect)
    close(xe, xt)
    plain = _t(a, ember)
    close(fn(ember, plain), expect)      # and what the unfunctionalized function gives


@pytest.mark.parametrize('remove', ['mutations', 'mutations_and_views'])
@pytest.mark.parametrize('fn', _FUNCTIONALIZE_CASES[:6], ids=lambda f: f.__name__[4:])
def test_functionalize_under_make_fx_matches_torch(fn, remove):
    """make_fx(functionalize(f)): the same operators as torch's graph, in the same order: the out-of-place
    variants, ``*_scatter`` to write a view's new value into its base, ``*_copy`` for views under
    'mutations_and_views', and ``copy_`` into a mutated input at the end."""
    from torch.fx.experimental.proxy_tensor import make_fx as tmake_fx
    from ember.fx.experimental.proxy_tensor import make_fx
    a = np.random.default_rng(1).standard_normal((3, 4))

    def f_t(x):
        return fn(torch, x)

    def f_e(x):
        return fn(ember, x)
    expect = _targets(tmake_fx(tf.functionalize(f_t, remove=remove))(_t(a, torch)))
    gm = make_fx(ef.functionalize(f_e, remove=remove))(_t(a, ember))
    got = _targets(gm)
    assert got == expect
    inplace = [t for t in got if t.split('.')[1].endswith('_')]
    assert inplace in ([], ['aten.copy_.default']) and (not inplace or got[-1] == 'aten.copy_.default'), got
    if remove == 'mutations_and_views':
        views = {'aten.select.int', 'aten.view.default', 'aten.transpose.int', 'aten.slice.Tensor'}
        assert not views & set(got), got
    fake = _targets(make_fx(ef.functionalize(f_e, remove=remove), tracing_mode='fake')(_t(a, ember)))
    assert fake == got      # the same graph from fake tensors
    # the graph computes what the function does, the input's mutation included
    xg, xf = _t(a, ember), _t(a, ember)
    close(gm(xg), f_t(_t(a, torch)))
    f_e(xf)
    close(xg, torch.tensor(xf.numpy()))


def test_functionalize_out_and_copy_under_make_fx():
    """``out=`` and ``copy_`` into a view become their functional forms (torch has ember's graph here but for its
    ``zeros``/``empty`` factories, which ember's composites call differently)."""
    from ember.fx.experimental.proxy_tensor import make_fx
    gm = make_fx(ef.functionalize(lambda x: _fn_slice_out_of_place_and_copy(ember, x)))(ember.randn(3, 4))
    got = _targets(gm)
    assert 'aten.copy.default' in got and 'aten.slice_scatter.default' in got and 'aten.mul.Tensor' in got, got
    assert not [t for t in got if t.split('.')[1].endswith('_') or 'out' in t.split('.')[-1]], got


def test_functionalize_gradients_and_errors():
    a = np.random.default_rng(2).standard_normal((3, 4))
    xt, xe = _t(a, torch, requires_grad=True), _t(a, ember, requires_grad=True)
    tf.functionalize(lambda x: _fn_view_of_intermediate(torch, x))(xt).sin().sum().backward()
    ef.functionalize(lambda x: _fn_view_of_intermediate(ember, x))(xe).sin().sum().backward()
    close(xe.grad, xt.grad)
    with pytest.raises(RuntimeError, match='invalid argument for remove'):
        ef.functionalize(lambda x: x, remove='views')
    with pytest.raises(RuntimeError, match='invalid argument for remove'):
        tf.functionalize(lambda x: x, remove='views')


def test_functionalize_composes_with_vmap_jvp_and_grad():
    """The *_copy operators and copy have batching rules, tangents and gradients (made of operators that do):
    vmap, jvp and grad of a functionalized function give torch.func's values, with no per-sample fallback (ember
    also differentiates through copy, which torch does not; checked against the unfunctionalized function)."""
    import warnings

    def f(lib, x, copy=True):
        y = x.clone()
        v = y.transpose(0, 1)[1]
        v.mul_(2)
        if copy:        # torch has no derivative for aten.copy, either way: jvp and grad run without it
            y[0].copy_(x[1])
        return y.reshape(-1)[1:5].sin()
    a, t = np.random.default_rng(3).standard_normal((2, 3, 4)), np.random.default_rng(4).standard_normal((3, 4))

    def run(lib, F):
        g = F.functionalize(lambda x: f(lib, x), remove='mutations_and_views')
        g_nocopy = F.functionalize(lambda x: f(lib, x, False), remove='mutations_and_views')
        x, tt = _t(a[0], lib), _t(t, lib)
        return [F.vmap(g)(_t(a, lib)), F.jvp(g_nocopy, (x,), (tt,))[1],
                F.grad(lambda x: g_nocopy(x).sum())(x)]
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        got = run(ember, ef)
        x = _t(a[0], ember)
        with_copy = ef.grad(lambda x: ef.functionalize(lambda x: f(ember, x))(x).sum())(x)
    close(got, run(torch, tf))
    close(with_copy, tf.grad(lambda x: f(torch, x).sum())(_t(a[0], torch)))
