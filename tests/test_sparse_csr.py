"""Sparse compressed (CSR, CSC) tensors against torch: construction and its checks, conversions from and to
dense and COO, accessors, printing, products (sparse.mm, mm, matmul, addmm, mv, @), pointwise operators,
transposition, gradients (dense operand, CSR leaf, values through the constructor), errors, the SparseCsrCPU
dispatch key, and save/load.

Covers the operators declared in ember/_ops/sparse_compressed.py: sparse_compressed_tensor,
_convert_indices_from_csr_to_coo, _to_sparse_csr, _to_sparse_csc, values, crow_indices, col_indices,
ccol_indices, row_indices.
"""
import io
import warnings

import numpy as np
import pytest
import torch

import ember
from test_sparse import _both_raise     # one helper for both sparse layouts' error tests

warnings.filterwarnings('ignore', message='Sparse CSR tensor support is in beta state')
warnings.filterwarnings('ignore', message='Sparse invariant checks are implicitly disabled')

# a 4 x 5 matrix with an empty row (1) and an empty last row, the all-zero matrix, a single row, a tall one
MATS = [
    np.array([[0., 1., 0., 0., 2.], [0., 0., 0., 0., 0.], [3., 0., 4., 0., 0.], [0., 0., 0., 0., 0.]], np.float32),
    np.zeros((3, 4), np.float32),
    np.array([[0., 5., 0., 6.]], np.float32),
    np.array([[1.], [0.], [2.], [0.], [3.]], np.float32),
]
IDS = ['empty-rows', 'all-zero', 'one-row', 'tall']


def norm(s):
    return s.replace('torch.', 'ember.')


def np_(x):
    return x.detach().numpy()


def same_compressed(e, t):
    """Same layout, shape, dtype, nnz, index arrays (and their dtype), values and repr."""
    assert e.layout is getattr(ember, str(t.layout).split('.')[-1])
    assert e.is_sparse_csr == t.is_sparse_csr and e.is_sparse == t.is_sparse is False
    assert tuple(e.shape) == tuple(t.shape) and e._nnz() == t._nnz() and e.numel() == t.numel()
    assert str(e.dtype) == norm(str(t.dtype))
    if t.layout is torch.sparse_csr:
        pairs = [(e.crow_indices(), t.crow_indices()), (e.col_indices(), t.col_indices())]
    else:
        pairs = [(e.ccol_indices(), t.ccol_indices()), (e.row_indices(), t.row_indices())]
    for ei, ti in pairs + [(e.values(), t.values())]:
        assert str(ei.dtype) == norm(str(ti.dtype))
        np.testing.assert_allclose(np_(ei), np_(ti), rtol=1e-6)
        assert ei.shape == ti.shape
    assert repr(e) == norm(repr(t))


def same_dense(e, t, rtol=1e-5):
    assert e.layout is ember.strided and t.layout is torch.strided
    assert str(e.dtype) == norm(str(t.dtype)) and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(np_(e), np_(t), rtol=rtol, atol=1e-6)


def both(m, layout='csr'):
    e, t = ember.tensor(m), torch.tensor(m)
    return getattr(e, f'to_sparse_{layout}')(), getattr(t, f'to_sparse_{layout}')()


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --- construction and conversions ------------------------------------------------------------------

@pytest.mark.parametrize('m', MATS, ids=IDS)
@pytest.mark.parametrize('layout', ['csr', 'csc'])
def test_from_dense_and_back(m, layout):
    e, t = both(m, layout)
    same_compressed(e, t)
    same_dense(e.to_dense(), t.to_dense())
    el, tl = getattr(ember, f'sparse_{layout}'), getattr(torch, f'sparse_{layout}')
    same_compressed(ember.tensor(m).to_sparse(layout=el), torch.tensor(m).to_sparse(layout=tl))


@pytest.mark.parametrize('m', MATS, ids=IDS)
def test_between_coo_csr_csc(m):
    ec, tc = ember.tensor(m).to_sparse(), torch.tensor(m).to_sparse()
    same_compressed(ec.to_sparse_csr(), tc.to_sparse_csr())
    same_compressed(ec.to_sparse_csc(), tc.to_sparse_csc())
    for layout in ('csr', 'csc'):
        e, t = both(m, layout)
        for ef, tf in ((lambda x: x.to_sparse(), lambda x: x.to_sparse()),
                       (lambda x: x.to_sparse_coo(), lambda x: x.to_sparse_coo())):
            eo, to = ef(e), tf(t)
            assert eo.layout is ember.sparse_coo and to.layout is torch.sparse_coo
            np.testing.assert_array_equal(np_(eo.coalesce().indices()), np_(to.coalesce().indices()))
            np.testing.assert_allclose(np_(eo.coalesce().values()), np_(to.coalesce().values()))
        same_compressed(e.to_sparse_csr(), t.to_sparse_csr())
        same_compressed(e.to_sparse_csc(), t.to_sparse_csc())
    e, t = both(m)
    assert e.to_sparse_csr() is e and t.to_sparse_csr() is t


def test_constructors_match_torch():
    crow, col, val = [0, 2, 2, 3], [0, 3, 1], [1., 2., 3.]
    cases = [
        lambda L: L.sparse_csr_tensor(L.tensor(crow), L.tensor(col), L.tensor(val), (3, 4)),
        lambda L: L.sparse_csr_tensor(L.tensor(crow), L.tensor(col), L.tensor(val)),          # size inferred
        lambda L: L.sparse_csr_tensor(crow, col, [1, 2, 3]),                                  # lists: int64 values
        lambda L: L.sparse_csr_tensor(crow, col, val, (3, 4), dtype=L.float64),
        lambda L: L.sparse_csr_tensor(L.tensor(crow, dtype=L.int32), L.tensor(col, dtype=L.int32), L.tensor(val)),
        lambda L: L.sparse_csr_tensor(crow_indices=L.tensor(crow), col_indices=L.tensor(col), values=L.tensor(val),
                                      size=(3, 5)),                                           # PyG's keywords
        lambda L: L.sparse_csr_tensor([0, 0, 0], L.tensor([], dtype=L.int64), L.tensor([]), (2, 5)),
        lambda L: L.sparse_csr_tensor([0, 0, 0], L.tensor([], dtype=L.int64), L.tensor([])),
        lambda L: L.sparse_csr_tensor(crow, col, val, (3, 4), requires_grad=True),
        lambda L: L.sparse_csc_tensor(L.tensor(crow), L.tensor(col), L.tensor(val), (4, 3)),
        lambda L: L.sparse_csc_tensor(L.tensor(crow), L.tensor(col), L.tensor(val)),
        lambda L: L.sparse_compressed_tensor(L.tensor(crow), L.tensor(col), L.tensor(val), (3, 4),
                                             layout=L.sparse_csr),
        lambda L: L.sparse_compressed_tensor(L.tensor(crow), L.tensor(col), L.tensor(val), (4, 3),
                                             layout=L.sparse_csc),
    ]
    for make in cases:
        e, t = make(ember), make(torch)
        same_compressed(e, t)
        assert e.requires_grad == t.requires_grad
        same_dense(e.detach().to_dense(), t.detach().to_dense())


def test_constructor_errors_as_torch_with_invariant_checks():
    """Both check the index order when asked (check_sparse_tensor_invariants)."""
    c, p, v = [0, 1, 1, 3], [1, 0, 2], [1., 2., 3.]
    bad = [
        ('csr', [1, 1, 1, 3], p, v, (3, 3)), ('csr', [0, 1, 1, 2], p, v, (3, 3)), ('csr', [0, 2, 1, 3], p, v, (3, 3)),
        ('csr', c, [1, 0, 5], v, (3, 3)), ('csr', c, [1, 2, 0], v, (3, 3)), ('csr', c, [1, 0, 0], v, (3, 3)),
        ('csr', c, p, v, (3, 2)), ('csr', c, p, v, (3, 3, 3)), ('csr', c, p, v, (3,)), ('csr', c, p, v[:2], (3, 3)),
        ('csr', c, p[:2], v, (3, 3)), ('csr', c[:3], p, v, (3, 3)), ('csr', [0, 3, 3, 3], [0, 1, 2], v, (3, 2)),
        ('csc', [1, 1, 1, 3], p, v, (3, 3)), ('csc', [0, 1, 1, 2], p, v, (3, 3)), ('csc', c, [1, 0, 5], v, (3, 3)),
        ('csc', c, [1, 2, 0], v, (3, 3)), ('csc', c[:3], p, v, (3, 3)), ('csc', [0, 2, 1, 3], [0, 1, 2], v, (3, 3)),
    ]
    for layout, ci, pi, vals, size in bad:
        def make(L):
            return getattr(L, f'sparse_{layout}_tensor')(L.tensor(ci), L.tensor(pi), L.tensor(vals), size)
        with torch.sparse.check_sparse_tensor_invariants(), ember.sparse.check_sparse_tensor_invariants():
            e_msg, t_msg = _both_raise(lambda: make(ember), lambda: make(torch))
        assert e_msg == t_msg, (layout, ci, pi, size)
    dtype_cases = [(lambda L: L.tensor(c).float(), lambda L: L.tensor(p)),
                   (lambda L: L.tensor(c).float(), lambda L: L.tensor(p).float()),
                   (lambda L: L.tensor(c).short(), lambda L: L.tensor(p).short()),
                   (lambda L: L.tensor(c), lambda L: L.tensor(p).int()),
                   (lambda L: L.tensor(c).reshape(1, 4), lambda L: L.tensor(p))]
    for fc, fp in dtype_cases:
        with torch.sparse.check_sparse_tensor_invariants(), ember.sparse.check_sparse_tensor_invariants():
            e_msg, t_msg = _both_raise(lambda: ember.sparse_csr_tensor(fc(ember), fp(ember), ember.tensor(v), (3, 3)),
                                       lambda: torch.sparse_csr_tensor(fc(torch), fp(torch), torch.tensor(v), (3, 3)))
        assert e_msg == t_msg
    for layout in (None, 'strided', 'sparse_coo'):
        e_msg, t_msg = _both_raise(
            lambda: ember.sparse_compressed_tensor(c, p, v, (3, 3), layout=layout and getattr(ember, layout)),
            lambda: torch.sparse_compressed_tensor(c, p, v, (3, 3), layout=layout and getattr(torch, layout)))
        assert e_msg == t_msg


def test_accessor_errors_as_torch():
    e, t = both(MATS[0])
    ecsc, tcsc = both(MATS[0], 'csc')
    for name in ('crow_indices', 'col_indices', 'ccol_indices', 'row_indices', 'values', 'indices', 'is_coalesced'):
        for ex, tx in ((e, t), (ecsc, tcsc), (ember.ones(2), torch.ones(2)), (ember.eye(2).to_sparse(),
                                                                             torch.eye(2).to_sparse())):
            try:
                expect = getattr(tx, name)()
            except RuntimeError as err:
                with pytest.raises(RuntimeError) as ee:
                    getattr(ex, name)()
                assert str(ee.value) == str(err), name
            else:
                got = getattr(ex, name)()
                assert got.tolist() == expect.tolist() if not isinstance(expect, bool) else got == expect
    e_msg, t_msg = _both_raise(lambda: e.stride(), lambda: t.stride())
    assert e_msg == t_msg


def test_metadata():
    e, t = both(MATS[0])
    assert e.layout is ember.sparse_csr and repr(e.layout) == 'ember.sparse_csr'
    assert (e.dim(), e.sparse_dim(), e.dense_dim()) == (t.dim(), t.sparse_dim(), t.dense_dim())
    assert tuple(e.size()) == tuple(t.size()) and e.size(0) == t.size(0) and len(e) == len(t)
    assert e.device.type == t.device.type == 'cpu'
    assert not e.is_sparse and not t.is_sparse and e.is_sparse_csr and t.is_sparse_csr
    ecsc, tcsc = both(MATS[0], 'csc')
    assert ecsc.is_sparse_csr == tcsc.is_sparse_csr is False
    assert ecsc.layout is ember.sparse_csc


def test_printing():
    for m in MATS:
        for layout in ('csr', 'csc'):
            e, t = both(m, layout)
            assert repr(e) == norm(repr(t))
            assert repr(e.double()) == norm(repr(t.double()))
    e, t = both(MATS[0])
    assert repr(e.requires_grad_()) == norm(repr(t.requires_grad_()))
    e = ember.sparse_csr_tensor([0, 1, 2], [0, 1], [1, 2])
    t = torch.sparse_csr_tensor([0, 1, 2], [0, 1], [1, 2])
    assert repr(e) == norm(repr(t))         # int64 values: no dtype, so layout fits on the values line


# --- products ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('m', MATS, ids=IDS)
def test_products_with_dense(m):
    e, t = both(m)
    k = m.shape[1]
    d = rnd(k, 3)
    for ef, tf in ((ember.sparse.mm, torch.sparse.mm), (ember.mm, torch.mm), (ember.matmul, torch.matmul),
                   (lambda a, b: a @ b, lambda a, b: a @ b), (lambda a, b: a.matmul(b), lambda a, b: a.matmul(b)),
                   (ember.spmm, torch.spmm)):
        same_dense(ef(e, ember.tensor(d)), tf(t, torch.tensor(d)))
    v = rnd(k)
    same_dense(e.matmul(ember.tensor(v)), t.matmul(torch.tensor(v)))
    same_dense(e @ ember.tensor(v), t @ torch.tensor(v))
    same_dense(ember.mv(e, ember.tensor(v)), torch.mv(t, torch.tensor(v)))
    bias = rnd(m.shape[0], 3, seed=1)
    same_dense(ember.addmm(ember.tensor(bias), e, ember.tensor(d)), torch.addmm(torch.tensor(bias), t, torch.tensor(d)))
    same_dense(ember.addmm(ember.tensor(bias), e, ember.tensor(d), beta=0.5, alpha=2),
               torch.addmm(torch.tensor(bias), t, torch.tensor(d), beta=0.5, alpha=2))
    left = rnd(2, m.shape[0], seed=2)
    same_dense(ember.tensor(left) @ e, torch.tensor(left) @ t)                  # dense @ CSR
    ecsc, tcsc = both(m, 'csc')
    same_dense(ecsc @ ember.tensor(d), tcsc @ torch.tensor(d))                  # CSC @ dense
    same_dense(ember.tensor(left) @ ecsc, torch.tensor(left) @ tcsc)


def test_csr_at_csr_gives_csr():
    a = MATS[0]
    e1, t1 = both(a)
    e2, t2 = both(np.ascontiguousarray(a.T))
    same_compressed(e1 @ e2, t1 @ t2)


def test_product_errors_as_torch():
    """Shape errors as torch's (torch's dtype-mismatch messages for compressed operands differ from op to op; ember
    gives the dense product's)."""
    e, t = both(MATS[0])
    for fe, ft in ((lambda: ember.mm(e, ember.ones(4, 2)), lambda: torch.mm(t, torch.ones(4, 2))),
                   (lambda: ember.sparse.mm(e, ember.ones(4, 2)), lambda: torch.sparse.mm(t, torch.ones(4, 2))),
                   (lambda: e.matmul(ember.ones(2)), lambda: t.matmul(torch.ones(2)))):
        e_msg, t_msg = _both_raise(fe, ft)
        assert e_msg == t_msg


# --- pointwise, conversion of dtype, transposition ---------------------------------------------------

def test_pointwise_and_dtype():
    e, t = both(MATS[0])
    same_compressed(e * 2, t * 2)
    same_compressed(2.5 * e, 2.5 * t)
    same_compressed(e * ember.tensor(3.), t * torch.tensor(3.))
    same_compressed(-e, -t)
    same_compressed(e.neg(), t.neg())
    same_compressed(e * e, t * t)
    same_compressed(e + e, t + t)
    same_dense(e + ember.ones(4, 5), t + torch.ones(4, 5))
    same_dense(ember.ones(4, 5) + e, torch.ones(4, 5) + t)
    same_compressed(e.double(), t.double())
    same_compressed(e.to(ember.int32), t.to(torch.int32))
    same_compressed(e.clone(), t.clone())
    same_compressed(e.detach(), t.detach())
    ei = ember.sparse_csr_tensor([0, 1, 2], [0, 1], [1, 2])
    ti = torch.sparse_csr_tensor([0, 1, 2], [0, 1], [1, 2])
    same_compressed(ei * 1.5, ti * 1.5)                       # int * float: promoted as torch's
    same_dense(e.sum(), t.sum())
    e_msg, t_msg = _both_raise(lambda: e.sum(0), lambda: t.sum(0))
    assert e_msg == t_msg


@pytest.mark.parametrize('m', MATS, ids=IDS)
def test_transpose_swaps_csr_and_csc(m):
    e, t = both(m)
    same_compressed(e.t(), t.t())
    same_compressed(e.transpose(0, 1), t.transpose(0, 1))
    same_compressed(e.t().t(), t.t().t())
    same_compressed(e.transpose(1, 1), t.transpose(1, 1))


# --- gradients ----------------------------------------------------------------------------------------

def test_gradient_of_dense_operand():
    d = rnd(5, 3)
    for ef, tf in ((ember.sparse.mm, torch.sparse.mm), (lambda a, b: a @ b, lambda a, b: a @ b),
                   (ember.mm, torch.mm), (lambda a, b: ember.addmm(ember.ones(4, 3), a, b),
                                          lambda a, b: torch.addmm(torch.ones(4, 3), a, b))):
        e, t = both(MATS[0])
        ed, td = ember.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
        eo, to = ef(e, ed), tf(t, td)
        assert eo.grad_fn.name() == to.grad_fn.name()
        (eo ** 2).sum().backward()
        (to ** 2).sum().backward()
        same_dense(ed.grad, td.grad)


def test_gradient_of_csr_leaf_layout_as_torch():
    """torch.sparse.mm (SparseAddmmBackward0) and to_dense give a CSR leaf a CSR gradient on its pattern; mm,
    matmul, addmm and mv give it a dense one."""
    d, v = rnd(5, 2), rnd(5)
    cases = [(lambda L, c: L.sparse.mm(c, L.tensor(d))), (lambda L, c: c @ L.tensor(d)),
             (lambda L, c: L.mm(c, L.tensor(d))), (lambda L, c: L.addmm(L.zeros(4, 2), c, L.tensor(d))),
             (lambda L, c: c.matmul(L.tensor(v))), (lambda L, c: c.to_dense() * L.tensor(MATS[0] + 1)),
             (lambda L, c: (c * 2).to_dense())]
    for f in cases:
        e, t = both(MATS[0])
        e.requires_grad_()
        t.requires_grad_()
        eo, to = f(ember, e), f(torch, t)
        assert eo.grad_fn.name() == to.grad_fn.name()
        eo.pow(2).sum().backward()
        to.pow(2).sum().backward()
        if t.grad.layout is torch.strided:
            same_dense(e.grad, t.grad)
        else:
            same_compressed(e.grad, t.grad)


def test_gradient_to_values_through_constructor():
    crow, col = [0, 1, 1, 3, 3], [1, 0, 4]
    d = rnd(5, 2)
    cases = [lambda L, c: c @ L.tensor(d), lambda L, c: L.sparse.mm(c, L.tensor(d)),
             lambda L, c: c.to_dense() * L.tensor(MATS[0] + 1), lambda L, c: (c * 3).to_dense(),
             lambda L, c: c.values() * 2, lambda L, c: L.addmm(L.ones(4, 2), c, L.tensor(d))]
    for f in cases:
        grads = []
        for L in (ember, torch):
            v = L.tensor([1., 2., 3.], requires_grad=True)
            c = L.sparse_csr_tensor(L.tensor(crow), L.tensor(col), v, (4, 5))
            out = f(L, c)
            out.pow(2).sum().backward()
            grads.append((v.grad.numpy().copy(), c.grad_fn.name()))
        np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-5)
        assert grads[0][1] == grads[1][1] == 'SparseCompressedTensorBackward0'


def test_gcn_propagation_as_pyg():
    """PyG's message passing with a CSR adjacency: ``torch.sparse.mm(adj_t, x)`` after ``to_sparse_csr``."""
    rng = np.random.default_rng(4)
    n, f, h = 7, 4, 3
    edges = np.array([[0, 1, 1, 2, 3, 5, 6, 6], [1, 0, 2, 1, 4, 6, 5, 0]])
    x, w = rng.standard_normal((n, f)).astype(np.float32), rng.standard_normal((f, h)).astype(np.float32)

    def run(L):
        adj = L.sparse_coo_tensor(L.tensor(edges), L.ones(edges.shape[1]), (n, n)).coalesce()
        deg = adj.to_dense().sum(1).clamp(min=1) ** -0.5
        adj_t = (L.diag(deg) @ adj.to_dense() @ L.diag(deg)).to_sparse_csr()
        weight = L.tensor(w, requires_grad=True)
        out = L.sparse.mm(adj_t, L.tensor(x) @ weight).relu()
        out.sum().backward()
        return adj_t, out, weight.grad

    (ea, eo, eg), (ta, to, tg) = run(ember), run(torch)
    same_compressed(ea, ta)
    same_dense(eo.detach(), to.detach())
    same_dense(eg, tg)


# --- dispatch, errors, serialization -------------------------------------------------------------------

def test_dispatch_key_and_unsupported_operator():
    from ember._core.dispatch_key import DispatchKey as K
    assert K.SparseCPU < K.SparseCsrCPU < K.PythonSubclass < K.Autograd
    e, t = both(MATS[0])
    assert 'SparseCsrCPU' in ember._core.dispatch_key.keyset_names(e._keys)
    with ember.debug.trace_dispatch(file=None) as lines:
        ember.mm(e, ember.ones(5, 1))
    assert any('aten::mm' in l and '-> SparseCsrCPU' in l for l in lines), lines
    for fe, ft in ((lambda: e.view(-1), lambda: t.view(-1)), (lambda: e.exp(), lambda: t.exp())):
        try:
            ft()
        except (NotImplementedError, RuntimeError) as te:
            if isinstance(te, NotImplementedError):
                with pytest.raises(NotImplementedError) as ee:
                    fe()
                prefix = "Could not run 'aten::view' with arguments from the 'SparseCsrCPU' backend"
                assert str(ee.value).startswith(prefix) and str(te).startswith(prefix)
            else:
                with pytest.raises((NotImplementedError, RuntimeError), match='SparseCsr'):
                    fe()


def test_convert_indices_from_csr_to_coo_and_back():
    crow, col = [0, 2, 2, 3], [0, 3, 1]
    for kw in ({}, {'transpose': True}, {'out_int32': True}):
        e = ember._convert_indices_from_csr_to_coo(ember.tensor(crow), ember.tensor(col), **kw)
        t = torch._convert_indices_from_csr_to_coo(torch.tensor(crow), torch.tensor(col), **kw)
        assert e.tolist() == t.tolist() and str(e.dtype) == norm(str(t.dtype))
    for rows, size in (([0, 0, 2], 4), ([], 3), ([1, 1, 1], 2)):
        for kw in ({}, {'out_int32': True}):
            e = ember._convert_indices_from_coo_to_csr(ember.tensor(rows, dtype=ember.int64), size, **kw)
            t = torch._convert_indices_from_coo_to_csr(torch.tensor(rows, dtype=torch.int64), size, **kw)
            assert e.tolist() == t.tolist() and str(e.dtype) == norm(str(t.dtype))


def test_pyg_csr_adjacency_from_edge_index():
    """PyG's to_torch_csr_tensor: rowptr from sorted rows (index2ptr), then sparse_csr_tensor by keyword."""
    edge_index = [[0, 0, 1, 3, 3], [1, 2, 0, 0, 2]]
    out = []
    for L in (ember, torch):
        ei = L.tensor(edge_index)
        rowptr = L._convert_indices_from_coo_to_csr(ei[0], 4)
        adj = L.sparse_csr_tensor(crow_indices=rowptr, col_indices=ei[1], values=L.ones(5), size=(4, 4))
        out.append((adj, L.sparse.mm(adj, L.arange(8.).reshape(4, 2))))
    same_compressed(out[0][0], out[1][0])
    same_dense(out[0][1], out[1][1])


@pytest.mark.parametrize('layout', ['csr', 'csc'])
def test_save_load_round_trip_and_with_torch(layout, tmp_path):
    e, t = both(MATS[0], layout)
    buf = io.BytesIO()
    ember.save(e, buf)
    buf.seek(0)
    same_compressed(ember.load(buf), t)
    buf.seek(0)
    same_compressed(ember.load(io.BytesIO(buf.getvalue())), torch.load(io.BytesIO(buf.getvalue())))    # torch reads it
    tb = io.BytesIO()
    torch.save(t, tb)
    same_compressed(ember.load(io.BytesIO(tb.getvalue())), t)                                         # ember reads torch's
    same_compressed(ember.load(io.BytesIO(tb.getvalue()), weights_only=False), t)


def test_unchecked_duplicates_add_up_and_the_invariants_switch():
    # torch checks a compressed tensor's index order only when asked (PyG builds adjacencies with repeated edges)
    out = []
    for L in (torch, ember):
        args = (L.tensor([0, 2, 3]), L.tensor([1, 1, 0]), L.tensor([1., 2., 3.]), (2, 2))
        t = L.sparse_csr_tensor(*args)
        with pytest.raises(RuntimeError) as err:
            L.sparse_csr_tensor(*args, check_invariants=True)
        with L.sparse.check_sparse_tensor_invariants():
            inside = L.sparse.check_sparse_tensor_invariants.is_enabled()
            with pytest.raises(RuntimeError):
                L.sparse_csr_tensor(*args)
        out.append((t.to_dense().tolist(), (t @ L.ones(2)).tolist(), str(err.value), inside,
                    L.sparse.check_sparse_tensor_invariants.is_enabled()))
    assert out[0] == out[1]
