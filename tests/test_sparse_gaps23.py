"""torch.sparse.mm(csr, dense, reduce=...) against torch (torch's _sparse_mm_reduce_impl and its backward): values
and arg_out for 'sum', 'mean', 'amax', 'amin' (empty rows, ties, NaN, -inf, int32 indices, half precision), the
gradients to the dense operand and to the CSR operand (a CSR leaf, or values through the constructor), the node's
name, and torch's errors (a COO or CSC operand, even with reduce='sum'; other's dtype, layout and size; 'prod')."""
import warnings

import numpy as np
import pytest
import torch

import ember
from _harness import both

REDUCE = ['sum', 'mean', 'amax', 'amin']
# row 1 and the last row empty; row 2 has three entries
DENSE = np.array([[0., 1.5, 0., -2.], [0., 0., 0., 0.], [3., 0., -0.5, 1.], [0., 0., 0., 0.], [0., 2., 0., 0.]],
                 np.float32)


def _csr(lib, dtype='float32', int32=False, requires_grad=False):
    a = lib.tensor(DENSE, dtype=getattr(lib, dtype)).to_sparse_csr()
    if int32:
        a = lib.sparse_csr_tensor(a.crow_indices().int(), a.col_indices().int(), a.values(), a.shape)
    return a.requires_grad_(requires_grad)


def _other(lib, dtype='float32', rows=4):
    g = np.random.default_rng(0).standard_normal((rows, 3)).astype(np.float32)
    return lib.tensor(g, dtype=getattr(lib, dtype))


def _np(t):
    return t.detach().float().numpy()


@pytest.mark.parametrize('reduce', REDUCE)
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'bfloat16'])
def test_sparse_mm_reduce_values(reduce, dtype):
    def run(lib):
        r = lib.sparse.mm(_csr(lib, dtype), _other(lib, dtype), reduce=reduce)
        return str(r.dtype).split('.')[-1], tuple(r.shape), r.layout == lib.strided, _np(r)
    (tk, t), (ek, e) = both(run)
    assert tk == ek == 'ok' and t[:3] == e[:3]
    tol = 1e-2 if dtype == 'bfloat16' else 1e-6
    np.testing.assert_allclose(e[3], t[3], rtol=tol, atol=tol)


@pytest.mark.parametrize('reduce', REDUCE)
@pytest.mark.parametrize('int32', [False, True])
def test_sparse_mm_reduce_impl_arg_out(reduce, int32):
    """arg_out, the winning entry of each output (nnz for an empty row), when an input requires grad."""
    def run(lib):
        out, arg = lib.ops.aten._sparse_mm_reduce_impl(_csr(lib, int32=int32), _other(lib).requires_grad_(), reduce)
        return type(out.grad_fn).__name__, str(arg.dtype).split('.')[-1], tuple(arg.shape), arg.tolist(), _np(out)
    (tk, t), (ek, e) = both(run)
    assert tk == ek == 'ok' and t[0] == 'SparseMmReduceImplBackward0'
    assert t[:4] == e[:4]
    np.testing.assert_allclose(e[4], t[4], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('reduce', REDUCE)
@pytest.mark.parametrize('leaf', ['csr', 'values'])
def test_sparse_mm_reduce_gradients(reduce, leaf):
    """Gradients to the dense operand and to the CSR operand's values (torch's _sparse_mm_reduce_impl_backward)."""
    def run(lib):
        if leaf == 'csr':
            a = src = _csr(lib, requires_grad=True)
        else:
            c = _csr(lib)
            src = c.values().clone().requires_grad_()
            a = lib.sparse_csr_tensor(c.crow_indices(), c.col_indices(), src, c.shape)
        x = _other(lib).requires_grad_()
        out = lib.sparse.mm(a, x, reduce=reduce)
        (out * lib.arange(15.).reshape(5, 3)).sum().backward()
        g = src.grad
        sparse_g = (g.crow_indices().tolist(), g.col_indices().tolist(), _np(g.values())) if leaf == 'csr' else None
        return str(g.layout), sparse_g, _np(g) if leaf == 'values' else None, _np(x.grad)
    (tk, t), (ek, e) = both(run)
    assert tk == ek == 'ok' and t[0].split('.')[-1] == e[0].split('.')[-1]
    if leaf == 'csr':
        assert t[1][:2] == e[1][:2]
        np.testing.assert_allclose(e[1][2], t[1][2], rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(e[2], t[2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(e[3], t[3], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('reduce', ['amax', 'amin'])
def test_sparse_mm_reduce_ties_nan_and_inf(reduce):
    """Equal products: the first entry wins; a NaN: the last NaN; all -inf (amax): no entry, the output stays -inf."""
    def run(lib):
        inf, nan = float('inf'), float('nan')
        a = lib.sparse_csr_tensor(lib.tensor([0, 3, 5]), lib.tensor([0, 1, 2, 0, 2]), lib.tensor([1., 1., 2., 1., 1.]),
                                  (2, 3)).requires_grad_()
        x = lib.tensor([[1., nan, -inf], [1., 2., -inf], [.5, nan, -inf]], requires_grad=True)
        out, arg = lib.ops.aten._sparse_mm_reduce_impl(a, x, reduce)
        out.backward(lib.tensor([[1., 2., 3.], [4., 5., 6.]]))
        return arg.tolist(), str(out.detach().tolist()), str(a.grad.values().tolist()), str(x.grad.tolist())
    t, e = both(run)
    assert t[0] == 'ok' and e == t


def test_sparse_mm_reduce_of_an_all_zero_matrix():
    def run(lib):
        a = lib.zeros(3, 4).to_sparse_csr().requires_grad_()
        x = _other(lib).requires_grad_()
        out, arg = lib.ops.aten._sparse_mm_reduce_impl(a, x, 'amax')
        out.sum().backward()
        return out.tolist(), tuple(arg.shape), x.grad.tolist(), a.grad.values().tolist()
    t, e = both(run)
    assert t[0] == 'ok' and e == t


@pytest.mark.parametrize('case', ['coo_sum', 'coo_mean', 'csc', 'dense', 'dtype', 'rows', 'one_d', 'sparse_other',
                                  'prod', 'unknown', 'int'])
def test_sparse_mm_reduce_errors(case):
    def run(lib):
        a, x = _csr(lib), _other(lib)
        args = {'coo_sum': (a.to_sparse(), x, 'sum'), 'coo_mean': (a.to_sparse(), x, 'mean'),
                'csc': (a.to_sparse_csc(), x, 'mean'), 'dense': (a.to_dense(), x, 'amax'),
                'dtype': (a, x.double(), 'mean'), 'rows': (a, _other(lib, rows=5), 'sum'),
                'one_d': (a, x[:, 0], 'amin'), 'sparse_other': (a, x.to_sparse_csr(), 'mean'),
                'prod': (a, x, 'prod'), 'unknown': (a, x, 'maximum'), 'int': (a.int(), x.int(), 'sum')}[case]
        lib.sparse.mm(*args)
    (tk, t), (ek, e) = both(run)
    assert tk in ('RuntimeError', 'NotImplementedError') and ek == tk
    e = e.replace('ember.', 'torch.')
    assert e.split('. ')[0] == t.split('. ')[0] if case in ('coo_sum', 'coo_mean', 'dense') else e == t


@pytest.mark.parametrize('reduce', ['max', 'min'])
def test_sparse_mm_reduce_takes_torchs_other_names(reduce):
    def run(lib):
        a, x = _csr(lib, requires_grad=True), _other(lib).requires_grad_()
        out = lib.sparse.mm(a, x, reduce)
        out.sum().backward()
        return _np(out), _np(a.grad.values()), _np(x.grad)
    (tk, t), (ek, e) = both(run)
    assert tk == ek == 'ok'
    for u, v in zip(t, e, strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-6, atol=1e-6)


def test_sparse_mm_without_reduce_still_takes_coo():
    """Only an explicit reduce runs _sparse_mm_reduce_impl: sparse.mm(coo, dense) stays torch's _sparse_addmm."""
    def run(lib):
        a = _csr(lib).to_sparse().requires_grad_()
        out = lib.sparse.mm(a, _other(lib))
        out.sum().backward()
        return type(out.grad_fn).__name__, _np(out), str(a.grad.layout).split('.')[-1]
    (tk, t), (ek, e) = both(run)
    assert tk == ek == 'ok' and (t[0], t[2]) == (e[0], e[2])
    np.testing.assert_allclose(e[1], t[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('reduce', ['mean', 'amin'])
@pytest.mark.parametrize('mask', [(True, False), (False, True)])
def test_sparse_mm_reduce_impl_backward_called_directly(reduce, mask):
    """The fused backward leaves out (None) the gradient its output_mask does not ask for, and checks grad_out."""
    def run(lib):
        a, x = _csr(lib), _other(lib).requires_grad_()
        _, arg = lib.ops.aten._sparse_mm_reduce_impl(a, x, reduce)
        g = lib.arange(15.).reshape(5, 3)
        gs, gx = lib.ops.aten._sparse_mm_reduce_impl_backward(a, g, x.detach(), reduce, arg, list(mask))
        bad = None
        try:
            lib.ops.aten._sparse_mm_reduce_impl_backward(a, g.double(), x.detach(), reduce, arg, list(mask))
        except RuntimeError as e:
            bad = str(e).replace('ember.', 'torch.')
        return (None if gs is None else (str(gs.layout).split('.')[-1], _np(gs.values()).tolist()),
                None if gx is None else _np(gx).tolist(), bad)
    (tk, t), (ek, e) = both(run)
    assert tk == ek == 'ok' and t[2] is not None and e[2] == t[2]
    for u, v in zip(t[:2], e[:2], strict=True):
        assert (u is None) == (v is None)
        if u is not None:
            np.testing.assert_allclose(np.asarray(v[-1] if isinstance(v, tuple) else v),
                                       np.asarray(u[-1] if isinstance(u, tuple) else u), rtol=1e-6, atol=1e-6)
            if isinstance(u, tuple):
                assert u[0] == v[0]


def _coo(lib):
    a = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [1, 0, 0]]), lib.tensor([1., 2, 3]), (2, 2))
    b = lib.sparse_coo_tensor(lib.tensor([[0], [1]]), lib.tensor([-1.]), (2, 2)).coalesce()
    return a, b


@pytest.mark.parametrize('case', ['coalesced', 'uncoalesced', 'alpha', 'inplace', 'inplace_uncoalesced',
                                  'dense_minus_sparse', 'dense_sub_', 'long_minus_float'])
def test_sparse_coo_sub_as_torch(case):
    """sub of COO tensors is torch's add with -alpha: the merged (coalesced) or concatenated pattern as add's."""
    def run(lib):
        a, b = _coo(lib)
        r = {'coalesced': lambda: a.coalesce() - b, 'uncoalesced': lambda: a - b,
             'alpha': lambda: lib.sub(a.coalesce(), b, alpha=2), 'inplace': lambda: a.coalesce().clone().sub_(b),
             'inplace_uncoalesced': lambda: a.clone().sub_(b, alpha=.5), 'dense_minus_sparse': lambda: lib.ones(2, 2) - a,
             'dense_sub_': lambda: lib.ones(2, 2).sub_(a, alpha=2), 'long_minus_float': lambda: a.long() - b}[case]()
        if not r.is_sparse:
            return 'dense', r.tolist()
        return r.is_coalesced(), r._nnz(), r._indices().tolist(), r._values().tolist(), str(r.dtype).split('.')[-1]
    t, e = both(run)
    assert t[0] == 'ok' and e == t


@pytest.mark.parametrize('case', ['sizes', 'sizes_broadcastable', 'dense_sizes', 'sparse_minus_dense',
                                  'sparse_minus_number', 'bool'])
@pytest.mark.parametrize('op', ['add', 'sub'])
def test_sparse_coo_add_sub_errors(case, op):
    """torch's add_sparse checks come before any broadcasting: its messages, not the broadcast one."""
    def run(lib):
        a, b = _coo(lib)
        empty = lambda *size: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), lib.zeros(0), size)
        x, y = {'sizes': (a, empty(3, 2)), 'sizes_broadcastable': (a, empty(1, 2)), 'dense_sizes': (lib.ones(3, 2), a),
                'sparse_minus_dense': (a, lib.ones(2, 2)), 'sparse_minus_number': (a, 1),
                'bool': (a.bool(), b.bool())}[case]
        getattr(lib, op)(x, y)
    (tk, t), (ek, e) = both(run)
    assert tk == ('NotImplementedError' if (case, op) == ('bool', 'add') else 'RuntimeError') and (ek, e) == (tk, t)
