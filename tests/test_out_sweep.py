"""``out=`` of functions that lacked it or wrote into out without resizing it, torch's *_copy functions and
nuclear_norm, einsum of operands of several dtypes, and einsum's cached contraction paths, each compared with
torch 2.13: values, shapes, dtypes, the returned object (``is out``), the resize warning, and the errors for an
out of the wrong dtype (NOTE [out= of Python-written functions], NOTE [einsum dtypes])."""
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
X = (RNG.random((3, 3)) + 0.5).astype(np.float32)
V = RNG.random(3).astype(np.float32)
C = np.array([True, False, True])


def _silence_deprecations():
    """torch.ger, chain_matmul and nuclear_norm warn (some once per process); those warnings are not under test."""
    warnings.filterwarnings('ignore', message='.*(deprecated|is deprecated).*')


# name -> fn(L, x, v, out): the call, with L the library (torch or ember) and x (3x3), v (3) its tensors
CASES = {
    'addr': lambda L, x, v, o: L.addr(x, v, v, alpha=0.5, beta=2, out=o),
    'outer': lambda L, x, v, o: L.outer(v, v, out=o),
    'ger': lambda L, x, v, o: L.ger(v, v, out=o),
    'kron': lambda L, x, v, o: L.kron(x, x, out=o),
    'inner': lambda L, x, v, o: L.inner(x, x, out=o),
    'inner_1d': lambda L, x, v, o: L.inner(v, v, out=o),
    'diag': lambda L, x, v, o: L.diag(x, out=o),
    'diag_1d': lambda L, x, v, o: L.diag(v, 1, out=o),
    'diff': lambda L, x, v, o: L.diff(x, out=o),
    'diff_prepend': lambda L, x, v, o: L.diff(x, n=2, dim=0, prepend=x, out=o),
    'msort': lambda L, x, v, o: L.msort(x, out=o),
    'nanmean': lambda L, x, v, o: L.nanmean(x, out=o),
    'nanmean_dim': lambda L, x, v, o: L.nanmean(x, 1, keepdim=True, out=o),
    'inverse': lambda L, x, v, o: L.inverse(x, out=o),
    'hardshrink': lambda L, x, v, o: L.hardshrink(x - 1, 0.3, out=o),
    'cross': lambda L, x, v, o: L.cross(x, x.flip(0), dim=1, out=o),
    'conj_physical': lambda L, x, v, o: L.conj_physical(x, out=o),
    'special.entr': lambda L, x, v, o: L.special.entr(x, out=o),
    'special.erfcx': lambda L, x, v, o: L.special.erfcx(x, out=o),
    'special.gammainc': lambda L, x, v, o: L.special.gammainc(x, x, out=o),
    'special.gammaincc': lambda L, x, v, o: L.special.gammaincc(x, x, out=o),
    'special.i0e': lambda L, x, v, o: L.special.i0e(x, out=o),
    'special.i1': lambda L, x, v, o: L.special.i1(x, out=o),
    'special.i1e': lambda L, x, v, o: L.special.i1e(x, out=o),
    'special.ndtr': lambda L, x, v, o: L.special.ndtr(x, out=o),
    'special.log_ndtr': lambda L, x, v, o: L.special.log_ndtr(x - 2, out=o),
    'special.round': lambda L, x, v, o: L.special.round(x * 10, decimals=1, out=o),
    'special.xlog1py': lambda L, x, v, o: L.special.xlog1py(x, x, out=o),
    'igamma': lambda L, x, v, o: L.igamma(x, x, out=o),
    'nuclear_norm': lambda L, x, v, o: L.nuclear_norm(x, out=o),
    'nuclear_norm_keepdim': lambda L, x, v, o: L.nuclear_norm(x, True, out=o),
    'nuclear_norm_dim': lambda L, x, v, o: L.nuclear_norm(x[None], (1, 2), out=o),
    't_copy': lambda L, x, v, o: L.t_copy(x, out=o),
    'squeeze_copy': lambda L, x, v, o: L.squeeze_copy(x[None, :, None], out=o),
    'squeeze_copy_dim': lambda L, x, v, o: L.squeeze_copy(x[None, :, None], 2, out=o),
    'squeeze_copy_dims': lambda L, x, v, o: L.squeeze_copy(x[None, :, None], (0, 2), out=o),
    'diagonal_copy': lambda L, x, v, o: L.diagonal_copy(x, 1, out=o),
    'tensordot': lambda L, x, v, o: L.tensordot(x, x, dims=1, out=o),
    'tensordot_0d': lambda L, x, v, o: L.tensordot(x, x, dims=2, out=o),
    'chain_matmul': lambda L, x, v, o: L.chain_matmul(x, x, x, out=o),
    'where': lambda L, x, v, o: L.where(v > 0.5, v, v * 2, out=o),
    'solve_triangular': lambda L, x, v, o: L.linalg.solve_triangular(x, x[:, :2], upper=True, out=o),
    'cholesky_solve': lambda L, x, v, o: L.cholesky_solve(x[:, :2], x.tril() + 2 * L.eye(3), out=o),
    'index_reduce': lambda L, x, v, o: L.index_reduce(x, 0, L.tensor([0, 2]), x[:2], 'prod', out=o),
    'fft.ihfftn': lambda L, x, v, o: L.fft.ihfftn(x, out=o),
    'fft.ihfft2': lambda L, x, v, o: L.fft.ihfft2(x, out=o),
}
COMPLEX_OUT = {'fft.ihfftn', 'fft.ihfft2'}


def _inputs(L, dtype=np.float32):
    return L.tensor(X.astype(dtype)), L.tensor(V.astype(dtype))


def _dt(L, name):
    return getattr(L, name)


def _check_same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-6, equal_nan=True)


def _run(L, name, out_dtype, in_dtype=np.float32, out_shape=(0,)):
    """(result or exception, out, warnings' messages) of one call with an out of ``out_dtype`` and shape."""
    x, v = _inputs(L, in_dtype)
    o = L.empty(out_shape, dtype=_dt(L, out_dtype))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        _silence_deprecations()
        try:
            r = CASES[name](L, x, v, o)
        except Exception as e:      # noqa: BLE001  compared with torch's below
            r = e
    return r, o, [str(m.message) for m in w if 'resized' in str(m.message)]


@pytest.mark.parametrize('name', sorted(CASES))
def test_out_empty_is_resized_and_returned(name):
    od = 'complex64' if name in COMPLEX_OUT else 'float32'
    (rt, ot, wt), (re, oe, we) = _run(torch, name, od), _run(ember, name, od)
    assert not isinstance(rt, Exception), rt
    assert not isinstance(re, Exception), re
    assert rt is ot and re is oe
    _check_same(oe, ot)
    assert wt == we == []       # an empty out is resized silently


@pytest.mark.parametrize('name', sorted(CASES))
def test_out_of_wrong_shape_warns_as_torch(name):
    od = 'complex64' if name in COMPLEX_OUT else 'float32'
    (rt, ot, wt), (re, oe, we) = _run(torch, name, od, out_shape=(7,)), _run(ember, name, od, out_shape=(7,))
    assert rt is ot and re is oe
    _check_same(oe, ot)
    assert bool(wt) == bool(we), (wt, we)
    if wt:
        assert we[0] == wt[0]


@pytest.mark.parametrize('name', sorted(CASES))
def test_out_of_the_right_shape_is_written_in_place(name):
    od = 'complex64' if name in COMPLEX_OUT else 'float32'
    rt, ot, _ = _run(torch, name, od)
    re, oe, we = _run(ember, name, od, out_shape=tuple(ot.shape))
    assert re is oe and we == []
    _check_same(oe, ot)


_DTYPE_PAIRS = [(np.float32, 'float64'), (np.float64, 'float32'), (np.float32, 'int64'), (np.float32, 'complex64'),
                (np.float64, 'complex128')]


@pytest.mark.parametrize('name', sorted(set(CASES) - {'nanmean', 'nanmean_dim', 'special.gammainc',
                                                     'special.gammaincc', 'igamma'}))
@pytest.mark.parametrize('in_dtype,out_dtype', _DTYPE_PAIRS)
def test_out_dtype_rules_as_torch(name, in_dtype, out_dtype):
    """torch's out= dtype checks: can_cast for TensorIterator functions; equality, with each function's own message,
    for the others (diag, msort, inverse, cross, the *_copy functions, tensordot/inner, multi_dot, where,
    hardshrink/round/conj_physical)."""
    (rt, ot, _), (re, oe, _) = _run(torch, name, out_dtype, in_dtype), _run(ember, name, out_dtype, in_dtype)
    if isinstance(rt, Exception):
        assert isinstance(re, Exception), f'torch raised {rt!r}, ember returned'
        assert type(re) is type(rt) and str(re) == str(rt).split('\n')[0], (re, rt)
    else:
        assert not isinstance(re, Exception), re
        assert re is oe
        _check_same(oe, ot)


def test_nanmean_out_of_another_float_dtype():
    for in_dtype, od in ((np.float32, 'float64'), (np.float64, 'float32')):
        (rt, ot, _), (re, oe, _) = _run(torch, 'nanmean', od, in_dtype), _run(ember, 'nanmean', od, in_dtype)
        assert re is oe
        _check_same(oe, ot)


def test_addr_out_as_torchmin_bfgs():
    """pytorch-minimize's BFGS inverse-Hessian update writes torch.addr(..., out=H)."""
    for L in (torch, ember):
        M = L.eye(3, dtype=L.float64)
        s = L.tensor([1., 2., 3.], dtype=L.float64)
        H = L.empty(3, 3, dtype=L.float64)
        assert L.addr(M, s, s, alpha=0.5, out=H) is H
        assert H.sum().item() == 21.0


def test_new_copy_functions_exist_where_torch_has_them():
    for n in ('nuclear_norm', 't_copy', 'squeeze_copy', 'diagonal_copy'):
        assert hasattr(torch, n) and hasattr(ember, n)
    for L in (torch, ember):
        x = L.tensor(X)
        r = L.t_copy(x)
        assert r.is_contiguous() and r.data_ptr() != x.data_ptr()
        with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
            L.t_copy(x[None])
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            L.nuclear_norm(L.tensor(V))


def test_out_requires_grad_still_refused():
    for L in (torch, ember):
        o = L.zeros(3, 3, requires_grad=True)
        with pytest.raises(RuntimeError):
            L.outer(L.tensor(V), L.tensor(V), out=o)


def test_range_and_narrow_copy_out_dtype_checks():
    for L in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter \(Double\)"):
                L.range(0, 3, dtype=L.float32, out=L.empty(0, dtype=L.float64))
            o = L.empty(0, dtype=L.int64)
            L.range(0, 3, out=o)
            assert o.tolist() == [0, 1, 2, 3]
        with pytest.raises(RuntimeError, match=r"Expected self.dtype\(\) == output.dtype\(\)"):
            L.narrow_copy(L.tensor(X), 0, 0, 2, out=L.empty(0, dtype=L.float64))


# --- einsum of operands of several dtypes (NOTE [einsum dtypes]) ---------------------------------------------
_EINSUM = [
    ('lk,k,l->lk', [(2, 3), (3,), (2,)], ['float64', 'float64', 'float32']),
    ('l,lk,k->lk', [(2,), (2, 3), (3,)], ['float32', 'float64', 'float64']),
    ('lk,l->lk', [(2, 3), (2,)], ['float64', 'float32']),
    ('lk,l->k', [(2, 3), (2,)], ['float64', 'float32']),
    ('lk,l->k', [(2, 3), (2,)], ['float32', 'float64']),
    ('ij,jk->ik', [(2, 3), (3, 4)], ['float32', 'float64']),
    ('ij,kj->ki', [(2, 3), (4, 3)], ['float64', 'float32']),
    ('ij,kj->ik', [(2, 3), (4, 3)], ['float64', 'float32']),
    ('ij,jk,k->i', [(2, 3), (3, 4), (4,)], ['float32', 'float32', 'float64']),
    ('ij,j,k->ik', [(2, 3), (3,), (4,)], ['float32', 'float32', 'float64']),
    ('i,i->', [(3,), (3,)], ['int64', 'float32']),
    ('i,i->i', [(3,), (3,)], ['int32', 'float32']),
    ('i,i->i', [(3,), (3,)], ['int32', 'int64']),
    ('ij,j->i', [(2, 1), (1,)], ['float64', 'float32']),
    ('ij,ij->', [(2, 3), (2, 3)], ['float64', 'float32']),
    ('ij->', [(2, 3)], ['int32']),
    ('ij->i', [(2, 3)], ['uint8']),
    ('ij,k->', [(2, 3), (4,)], ['int32', 'float32']),
    ('ij,k->', [(2, 3), (4,)], ['float32', 'float64']),
    ('ij,kl->ik', [(2, 3), (4, 5)], ['float32', 'float64']),
    ('bij,bjk->bik', [(2, 3, 4), (2, 4, 5)], ['float32', 'float16']),
    ('i,i->i', [(3,), (3,)], ['bool', 'float32']),
    ('i,i->', [(3,), (3,)], ['bool', 'bool']),
    ('i,i->', [(3,), (3,)], ['float32', 'complex64']),
    ('ij,jk->', [(2, 3), (3, 4)], ['int32', 'int32']),
    ('ij,jk->ik', [(2, 3), (3, 4)], ['int32', 'int32']),
    ('...i,...i->...', [(2, 3), (3,)], ['float32', 'float64']),
    ('ii->i', [(3, 3)], ['int32']),
    ('ij,j->ij', [(2, 3), (3,)], ['bfloat16', 'float32']),
]


def _einsum(L, eq, shapes, dtypes, requires_grad=False):
    ops = [(L.arange(1, 1 + int(np.prod(s))) % 5).reshape(s).to(getattr(L, d)) for s, d in zip(shapes, dtypes)]
    if requires_grad:
        ops = [o.requires_grad_() for o in ops]
    try:
        return L.einsum(eq, *ops), ops
    except Exception as e:      # noqa: BLE001  compared with torch's
        return e, ops


@pytest.mark.parametrize('eq,shapes,dtypes', _EINSUM)
def test_einsum_dtypes_as_torch(eq, shapes, dtypes):
    (rt, _), (re, _) = _einsum(torch, eq, shapes, dtypes), _einsum(ember, eq, shapes, dtypes)
    if isinstance(rt, Exception):
        assert type(re) is type(rt) and str(re) == str(rt), (re, rt)
    else:
        assert not isinstance(re, Exception), re
        _check_same(re.float() if re.dtype == ember.bfloat16 else re, rt.float() if rt.dtype == torch.bfloat16 else rt)


def test_einsum_mixed_dtypes_gradients():
    """As torch-harmonics' RealVectorSHT: float64, float64, float32 operands; each gradient in its operand's dtype."""
    eq, shapes, dtypes = 'dmlk,k,l->dmlk', [(2, 2, 3, 4), (4,), (3,)], ['float64', 'float64', 'float32']
    (rt, opt), (re, ope) = (_einsum(L, eq, shapes, dtypes, requires_grad=True) for L in (torch, ember))
    _check_same(re, rt)
    (rt * rt).sum().backward()
    (re * re).sum().backward()
    for a, b in zip(ope, opt):
        _check_same(a.grad, b.grad)


def test_einsum_path_cache_is_bounded_and_correct():
    from ember._backends.cpu import linalg as K
    K._PATHS.clear()
    x, y, z = (ember.randn(*s, dtype=ember.float64) for s in ((4, 5), (5, 6), (6, 2)))
    want = (x.numpy() @ y.numpy()) @ z.numpy()
    for _ in range(3):
        np.testing.assert_allclose(ember.einsum('ij,jk,kl->il', x, y, z).numpy(), want, rtol=1e-12)
    assert len(K._PATHS) == 1
    for n in range(2, K._PATHS_MAX + 40):
        ember.einsum('i,i,i->', *(ember.ones(n),) * 3)
    assert len(K._PATHS) <= K._PATHS_MAX
    # a different shape under the same equation gets its own path
    x2 = ember.randn(3, 5, dtype=ember.float64)
    np.testing.assert_allclose(ember.einsum('ij,jk,kl->il', x2, y, z).numpy(), (x2.numpy() @ y.numpy()) @ z.numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize('name', ['tensordot', 'chain_matmul', 'where', 'special.ndtr', 'nuclear_norm', 't_copy',
                                  'fft.ihfftn', 'outer', 'addr', 'inverse', 'kron', 'cross'])
def test_out_with_inputs_that_require_grad_as_torch(name):
    """torch refuses where its out= kernel has an autograd kernel (where, mm, the pieces of outer/addr/kron/inverse),
    and records the final copy where its function ends in ``out.copy_(result)`` (tensordot, ndtr, nuclear_norm)."""
    got = []
    for L in (torch, ember):
        x, v = (t.requires_grad_() for t in _inputs(L))
        o = L.empty(0, dtype=L.complex64 if name in COMPLEX_OUT else L.float32)
        with warnings.catch_warnings():
            _silence_deprecations()
            try:
                CASES[name](L, x, v, o)
                got.append(('ok', o.requires_grad))
            except RuntimeError as e:
                msg = str(e)
                got.append(('refused', msg[msg.index('functions with out='):]))
    assert got[0] == got[1], got
