"""Sparse COO tensors against torch: construction, conversions, coalescing, operators, gradients,
errors, printing, the SparseCPU dispatch key, and a GCN layer (sparse adjacency @ features @ weight).

Covers the sparse operators declared in ember/_ops/sparse.py: _sparse_coo_tensor_with_dims_and_tensors,
_sparse_values_at, to_sparse, to_dense, coalesce, sparse_mask, _values, _indices.
"""
import numpy as np
import pytest
import torch

import ember

IDX = [[1, 0, 1, 2], [2, 0, 2, 1]]      # (1, 2) appears twice: uncoalesced
VAL = [1., 2., 3., -4.]


def pair(indices=IDX, values=VAL, size=(3, 3), **kw):
    t = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), size, **kw)
    e = ember.sparse_coo_tensor(ember.tensor(indices), ember.tensor(values), size, **kw)
    return e, t


def np_(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else x.detach().numpy()


def same_sparse(e, t):
    assert e.is_sparse and t.is_sparse
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    assert e.sparse_dim() == t.sparse_dim() and e.dense_dim() == t.dense_dim()
    np.testing.assert_allclose(np_(e.to_dense()), np_(t.to_dense()), rtol=1e-6)
    ec, tc = e.coalesce(), t.coalesce()
    np.testing.assert_array_equal(np_(ec.indices()), np_(tc.indices()))
    np.testing.assert_allclose(np_(ec.values()), np_(tc.values()), rtol=1e-6)
    assert ec._nnz() == tc._nnz()


def same_dense(e, t):
    assert not e.is_sparse and not t.is_sparse
    assert str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(np_(e), np_(t), rtol=1e-5, atol=1e-6)


# --- construction, metadata -------------------------------------------------------------

def test_construct_and_metadata():
    e, t = pair()
    same_sparse(e, t)
    assert e._nnz() == t._nnz() == 4
    assert e.is_coalesced() == t.is_coalesced() is False
    np.testing.assert_array_equal(np_(e._indices()), np_(t._indices()))
    np.testing.assert_array_equal(np_(e._values()), np_(t._values()))
    assert e.numel() == t.numel() and e.dim() == t.dim()
    assert repr(e.layout) == 'ember.sparse_coo' and e.layout is ember.sparse_coo
    assert ember.ones(2).layout is ember.strided and ember.ones(2).layout == 'strided'
    assert not ember.ones(2).is_sparse


def test_size_inferred_dense_dims_dtype_and_numpy_indices():
    e = ember.sparse_coo_tensor([[0, 3]], [[1., 2.], [3., 4.]])
    t = torch.sparse_coo_tensor([[0, 3]], [[1., 2.], [3., 4.]])
    same_sparse(e, t)
    ni = np.array([[0, 1], [2, 0]], dtype=np.int32)      # the GCN example's int32 edge list
    e = ember.sparse_coo_tensor(ni, ember.ones(2), (3, 3), dtype=ember.int64)
    t = torch.sparse_coo_tensor(ni, torch.ones(2), (3, 3), dtype=torch.int64)
    same_sparse(e, t)
    assert e._indices().dtype == ember.int64


def test_is_coalesced_flag_and_coalesce_order():
    e, t = pair(is_coalesced=False)
    assert e.coalesce().is_coalesced() and t.coalesce().is_coalesced()
    same_sparse(e.coalesce(), t.coalesce())
    e2 = ember.sparse_coo_tensor([[0, 1]], [1., 2.], (2,), is_coalesced=True)
    assert e2.is_coalesced() and e2.coalesce() is e2


def test_to_sparse_to_dense_roundtrip():
    d = np.array([[0., 1., 0.], [2., 0., 3.]], np.float32)
    e, t = ember.tensor(d).to_sparse(), torch.tensor(d).to_sparse()
    same_sparse(e, t)
    assert e.is_coalesced() and t.is_coalesced()
    same_sparse(ember.tensor(d).to_sparse_coo(), torch.tensor(d).to_sparse_coo())
    same_sparse(ember.tensor(d).to_sparse(1), torch.tensor(d).to_sparse(1))     # one sparse dim, dense rows
    same_dense(ember.tensor(d).to_dense(), torch.tensor(d).to_dense())          # dense: itself


def test_indices_values_require_coalesced():
    e, t = pair()
    for fn in (lambda x: x.indices(), lambda x: x.values()):
        with pytest.raises(RuntimeError) as te:
            fn(t)
        with pytest.raises(RuntimeError, match='uncoalesced') as ee:
            fn(e)
        assert str(ee.value) == str(te.value)


def test_empty_sparse():
    e = ember.sparse_coo_tensor(ember.zeros(1, 0, dtype=ember.int64), ember.zeros(0), (3,))
    t = torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.int64), torch.zeros(0), (3,))
    same_sparse(e, t)


# --- operators ------------------------------------------------------------------------------

def test_mm_spmm_matmul_at_sparse_dense():
    e, t = pair()
    rd = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for ef, tf in ((ember.mm, torch.mm), (ember.spmm, torch.spmm), (ember.sparse.mm, torch.sparse.mm),
                   (ember.matmul, torch.matmul), (lambda a, b: a @ b, lambda a, b: a @ b)):
        same_dense(ef(e, ember.tensor(rd)), tf(t, torch.tensor(rd)))
    same_dense(ember.mm(ember.tensor(rd.T), e), torch.mm(torch.tensor(rd.T), t))    # dense @ sparse


def test_transpose_t():
    e, t = pair()
    same_sparse(e.t(), t.t())
    same_sparse(e.transpose(0, 1), t.transpose(0, 1))
    assert e.t().is_coalesced() == t.t().is_coalesced()


def test_mul_div_neg_scalar_and_broadcast():
    e, t = pair()
    same_sparse(e * 2, t * 2)
    same_sparse(e * ember.tensor(0.5), t * torch.tensor(0.5))
    row = np.array([1., 2., 3.], np.float32)
    same_sparse(e * ember.tensor(row), t * torch.tensor(row))
    same_sparse(e / 2, t / 2)
    same_sparse(-e, -t)
    same_sparse(e * e, t * t)           # sparse * sparse: the common pattern


def test_add_sparse_sparse_and_dense():
    e, t = pair()
    e2, t2 = pair([[0, 2], [1, 1]], [5., 6.])
    same_sparse(e + e2, t + t2)
    assert (e + e2).is_coalesced() == (t + t2).is_coalesced()
    same_sparse(e.add(e2, alpha=2), t.add(t2, alpha=2))
    same_dense(ember.eye(3) + e, torch.eye(3) + t)
    same_dense(ember.eye(3).add(e, alpha=2), torch.eye(3).add(t, alpha=2))
    e_msg, t_msg = _both_raise(lambda: e + ember.eye(3), lambda: t + torch.eye(3))     # torch: dense + sparse only
    assert e_msg == t_msg


def test_sum():
    e, t = pair()
    same_dense(e.sum(), t.sum())
    same_dense(ember.sparse.sum(e), torch.sparse.sum(t))
    same_sparse(ember.sparse.sum(e, 0), torch.sparse.sum(t, 0))
    same_sparse(ember.sparse.sum(e, 1), torch.sparse.sum(t, 1))
    same_dense(ember.sparse.sum(e, (0, 1)), torch.sparse.sum(t, (0, 1)))
    ed = ember.sparse_coo_tensor([[0, 2]], [[1., 2.], [3., 4.]], (3, 2))
    td = torch.sparse_coo_tensor([[0, 2]], [[1., 2.], [3., 4.]], (3, 2))
    same_sparse(ember.sparse.sum(ed, 1), torch.sparse.sum(td, 1))      # a dense dimension: still sparse
    same_dense(ember.sparse.sum(ed, 0), torch.sparse.sum(td, 0))       # every sparse dim: dense


def test_to_dtype_double_float_sparse_mask():
    e, t = pair()
    same_sparse(e.to(ember.float64), t.to(torch.float64))
    same_sparse(e.double(), t.double())
    same_sparse(e.double().float(), t.double().float())
    assert e.double().layout is ember.sparse_coo
    d = np.arange(9, dtype=np.float32).reshape(3, 3)
    same_sparse(ember.tensor(d).sparse_mask(e.coalesce()), torch.tensor(d).sparse_mask(t.coalesce()))


def test_legacy_sparse_float_tensor():
    i, v = [[0, 1], [1, 0]], [1., 2.]
    e = ember.sparse.FloatTensor(ember.tensor(i), ember.tensor(v), (2, 2))
    t = torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), (2, 2))
    same_sparse(e, t)


# --- gradients ----------------------------------------------------------------------------------

def test_mm_gradients_dense_operand_and_sparse_leaf():
    rd = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    e, t = pair(requires_grad=True)
    ed, td = ember.tensor(rd, requires_grad=True), torch.tensor(rd, requires_grad=True)
    (ember.sparse.mm(e, ed) ** 2).sum().backward()
    (torch.sparse.mm(t, td) ** 2).sum().backward()
    same_dense(ed.grad, td.grad)
    same_sparse(e.grad, t.grad)               # the sparse operand's gradient keeps its pattern
    assert e.grad.layout is ember.sparse_coo


def test_gradient_to_values_through_constructor():
    rd = np.random.default_rng(2).standard_normal((3, 2)).astype(np.float32)
    ev, tv = ember.tensor(VAL, requires_grad=True), torch.tensor(VAL, requires_grad=True)
    es = ember.sparse_coo_tensor(ember.tensor(IDX), ev, (3, 3))
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), tv, (3, 3))
    (es @ ember.tensor(rd)).pow(2).sum().backward()
    (ts @ torch.tensor(rd)).pow(2).sum().backward()
    same_dense(ev.grad, tv.grad)


def test_gradient_through_to_dense_and_to_sparse():
    ev, tv = ember.tensor(VAL, requires_grad=True), torch.tensor(VAL, requires_grad=True)
    w = np.arange(9, dtype=np.float32).reshape(3, 3)
    (ember.sparse_coo_tensor(ember.tensor(IDX), ev, (3, 3)).to_dense() * ember.tensor(w)).sum().backward()
    (torch.sparse_coo_tensor(torch.tensor(IDX), tv, (3, 3)).to_dense() * torch.tensor(w)).sum().backward()
    same_dense(ev.grad, tv.grad)
    ed, td = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    (ed.to_sparse() @ ember.ones(3, 1)).sum().backward()
    (td.to_sparse() @ torch.ones(3, 1)).sum().backward()
    same_dense(ed.grad, td.grad)


def test_gcn_layer_forward_backward():
    """A GCN layer as pytorch/examples' gcn: normalized sparse adjacency @ (features @ weight)."""
    rng = np.random.default_rng(3)
    V, F, H = 6, 5, 4
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0], [0, 3]], dtype=np.int32)
    x = rng.standard_normal((V, F)).astype(np.float32)
    w = rng.standard_normal((F, H)).astype(np.float32)

    def run(lib):
        adj = lib.sparse_coo_tensor(edges.T, lib.ones(len(edges)), (V, V), dtype=lib.int64)
        adj = lib.eye(V) + adj
        deg = lib.sqrt(1 / lib.sum(adj, dim=1))
        deg = lib.diag(deg).to_sparse()
        adj = (deg @ adj @ deg).to_sparse()
        feats = lib.tensor(x).to_sparse()
        weight = lib.tensor(w, requires_grad=True)
        support = lib.mm(feats, weight)
        out = lib.spmm(adj, support)
        loss = lib.nn.functional.log_softmax(out, dim=1)[:, 0].sum()
        loss.backward()
        return out, weight.grad, adj

    (eo, eg, ea), (to, tg, ta) = run(ember), run(torch)
    same_sparse(ea, ta)
    same_dense(eo.detach(), to.detach())
    same_dense(eg, tg)


# --- errors ---------------------------------------------------------------------------------------

def _both_raise(fe, ft, exc=RuntimeError):
    with pytest.raises(exc) as te:
        ft()
    with pytest.raises(exc) as ee:
        fe()
    return str(ee.value), str(te.value)


def test_errors_match_torch():
    e_msg, t_msg = _both_raise(lambda: ember.sparse_coo_tensor(ember.tensor([[0, 1]]), ember.tensor([1., 2., 3.]), (3,)),
                               lambda: torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([1., 2., 3.]), (3,)))
    assert e_msg == t_msg
    e_msg, t_msg = _both_raise(lambda: ember.sparse_coo_tensor([[0, 1]], [1., 2.], (3, 3)),
                               lambda: torch.sparse_coo_tensor([[0, 1]], [1., 2.], (3, 3)))
    assert e_msg == t_msg
    for idx, val in (([[0, 1]], [[1., 2.], [1., 2.]]), ([0, 1], [1., 2.])):
        e_msg, t_msg = _both_raise(lambda: ember.sparse_coo_tensor(idx, val, (3, 3)),
                                   lambda: torch.sparse_coo_tensor(idx, val, (3, 3)))
        assert e_msg == t_msg
    e, t = pair()
    _both_raise(lambda: ember.mm(e, ember.ones(2, 2)), lambda: torch.mm(t, torch.ones(2, 2)))
    e2, t2 = pair([[0]], [1.], (2,))
    _both_raise(lambda: e + e2, lambda: t + t2)


def test_index_out_of_bounds_raises():
    with torch.sparse.check_sparse_tensor_invariants():      # torch checks bounds only when asked
        with pytest.raises(RuntimeError, match='size is inconsistent with indices') as te:
            torch.sparse_coo_tensor([[0, 5]], [1., 2.], (3,))
    with pytest.raises(RuntimeError, match='size is inconsistent with indices') as ee:
        ember.sparse_coo_tensor([[0, 5]], [1., 2.], (3,))
    assert 'for dim 0, size is 3 but found index 5' in str(ee.value)
    assert 'for dim 0, size is 3 but found index 5' in str(te.value)


def test_operator_without_sparse_kernel_raises_torch_style():
    e, t = pair()
    e_msg, t_msg = _both_raise(lambda: e.view(-1), lambda: t.view(-1), NotImplementedError)
    prefix = "Could not run 'aten::view' with arguments from the 'SparseCPU' backend"
    assert e_msg.startswith(prefix) and t_msg.startswith(prefix)


# --- dispatch and printing ------------------------------------------------------------------------

def test_dispatch_key_and_trace():
    from ember._core.dispatch_key import DispatchKey as K
    assert K.CPU < K.SparseCPU < K.Autograd         # torch: sparse above dense backends, below autograd
    e, _ = pair()
    with ember.debug.trace_dispatch(file=None) as lines:
        ember.mm(e, ember.ones(3, 1))
    assert any('aten::mm' in l and '-> SparseCPU' in l and 'sparsecpu::mm' in l for l in lines), lines
    assert 'SparseCPU' in ember.debug.dispatch_table(ember.ops.aten.mm.default)
    assert 'SparseCPU' in ember.debug.dispatch_table(ember.ops.aten.coalesce.default)


def test_printing_matches_torch():
    def norm(s):
        return s.replace('torch.', 'ember.')
    e, t = pair()
    assert repr(e) == norm(repr(t))
    e = ember.sparse_coo_tensor(ember.tensor(IDX), ember.tensor(VAL), (3, 3), dtype=ember.float64)
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), (3, 3), dtype=torch.float64)
    assert repr(e) == norm(repr(t))
    e, t = pair(requires_grad=True)
    assert repr(e) == norm(repr(t))
    assert repr(ember.eye(2).to_sparse()) == norm(repr(torch.eye(2).to_sparse()))
    e = ember.sparse_coo_tensor(ember.zeros(1, 0, dtype=ember.int64), ember.zeros(0), (3,))
    t = torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.int64), torch.zeros(0), (3,))
    assert repr(e) == norm(repr(t))


@pytest.mark.parametrize('opt', ['SGD', 'SparseAdam', 'Adagrad'])
@pytest.mark.parametrize('pad', [None, 0])
def test_sparse_embedding_gradients_train_as_torch(opt, pad):
    """nn.Embedding(sparse=True) gives a COO gradient (one row per looked-up index, padding_idx left out), and the
    optimizers that take sparse gradients follow torch's parameters step for step."""
    res = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        e = lib.nn.Embedding(10, 3, sparse=True, padding_idx=pad)
        o = getattr(lib.optim, opt)(e.parameters(), lr=0.1)
        seen = []
        for idx in ([[1, 2], [2, 0]], [[3, 1]], [[2, 2]]):
            loss = (e(lib.tensor(idx)) ** 2).sum()
            o.zero_grad()
            loss.backward()
            g = e.weight.grad
            seen.append((g.is_sparse, sorted(g.coalesce()._indices().numpy().reshape(-1).tolist())))
            o.step()
        res.append((seen, e.weight.detach().numpy().copy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-6, atol=1e-7)


def test_dense_only_optimizers_refuse_sparse_gradients_as_torch():
    for lib in (torch, ember):
        for name, msg in (('Adam', 'Adam does not support sparse gradients, please consider SparseAdam instead'),
                          ('RMSprop', 'RMSprop does not support sparse gradients')):
            e = lib.nn.Embedding(10, 3, sparse=True)
            o = getattr(lib.optim, name)(e.parameters(), lr=0.1)
            e(lib.tensor([1])).sum().backward()
            with pytest.raises(RuntimeError, match=msg):
                o.step()
        e = lib.nn.Embedding(10, 3, sparse=True)
        o = lib.optim.Adagrad(e.parameters(), weight_decay=0.1)
        e(lib.tensor([1])).sum().backward()
        with pytest.raises(RuntimeError, match='weight_decay option is not compatible with sparse gradients'):
            o.step()


def test_aten_sparse_addmm_and_the_csr_only_reduce():
    """aten._sparse_addmm (beta * self + alpha * sparse @ dense) as torch's; aten._sparse_mm_reduce_impl has a
    SparseCsrCPU kernel only (tests/test_sparse_gaps23.py compares it with torch): a dense input cannot run it."""
    got = []
    for L in (torch, ember):
        s = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([2., 3.]), (2, 2))
        got.append(L.ops.aten._sparse_addmm(L.ones(2, 2), s, L.eye(2) * 2, beta=2, alpha=0.5).tolist())
    assert got[1] == got[0]
    for L in (torch, ember):
        with pytest.raises(NotImplementedError, match="Could not run 'aten::_sparse_mm_reduce_impl' with arguments "
                                                      "from the 'CPU' backend"):
            L.ops.aten._sparse_mm_reduce_impl(L.ones(2, 2), L.ones(2, 2), 'sum')
