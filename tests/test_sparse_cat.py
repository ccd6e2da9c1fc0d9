"""torch.cat / stack / hstack / vstack / dstack of sparse COO tensors against torch (cat_sparse_impl): along a
sparse dimension the indices are shifted, along a dense one the values are zero-padded; the result's entries (its
raw _indices/_values order, not only the coalesced form), is_coalesced(), dtype promotion, torch's errors for
dense inputs and mismatched shapes, and gradients. Also select/unsqueeze of a sparse tensor, which stack and
its backward use."""
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings('ignore', 'Sparse invariant checks')
IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]      # (0, 2) twice: uncoalesced
VAL = [3., 4., 5., 1.]
HYB = np.arange(24.).reshape(2, 3, 4)
HYB[0, 1] = 0


def both(fn):
    """``fn(lib)`` with lib = torch and ember."""
    return fn(ember), fn(torch)


def coo(lib, indices=IDX, values=VAL, size=(2, 3), scale=1, dtype=None):
    t = lib.sparse_coo_tensor(lib.tensor(indices, dtype=lib.int64), lib.tensor(values) * scale, size)
    return t if dtype is None else t.to(getattr(lib, dtype))


def hyb(lib, scale=1, sparse_dim=2, shape=None):
    a = HYB if shape is None else np.arange(np.prod(shape), dtype=float).reshape(shape)
    return lib.tensor(a * scale, dtype=lib.float32).to_sparse(sparse_dim)


def same_raw(e, t):
    """Same layout, shape, dtype, sparse/dense dims, is_coalesced, and the same entries in the same order."""
    assert e.is_sparse and t.is_sparse
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    assert e.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_array_equal(e._values().numpy(), t._values().numpy())
    np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())
    ec, tc = e.coalesce(), t.coalesce()
    np.testing.assert_array_equal(ec.indices().numpy(), tc.indices().numpy())
    np.testing.assert_array_equal(ec.values().numpy(), tc.values().numpy())


CASES = {
    'sparse dim 0': lambda L: L.cat([coo(L), coo(L, scale=2)]),
    'sparse dim 1': lambda L: L.cat([coo(L), coo(L, scale=2)], 1),
    'dim -1': lambda L: L.cat([coo(L).coalesce(), coo(L, scale=2)], -1),
    'coalesced inputs': lambda L: L.cat([coo(L).coalesce(), coo(L, scale=2).coalesce()]),
    'one coalesced input': lambda L: L.cat([coo(L).coalesce()]),
    'three, different sizes': lambda L: L.cat([coo(L), coo(L, size=(2, 5)), coo(L, scale=3)], 1),
    'no entries': lambda L: L.cat([coo(L, [[], []], [], (2, 3)), coo(L)]),
    'one entry in all': lambda L: L.cat([coo(L, [[0], [1]], [2.], (2, 3)), coo(L, [[], []], [], (2, 3))]),
    'hybrid, sparse dim': lambda L: L.cat([hyb(L), hyb(L, 2)], 1),
    'hybrid, dense dim': lambda L: L.cat([hyb(L), hyb(L, 2)], 2),
    'hybrid, dense dim, sizes differ': lambda L: L.cat([hyb(L), hyb(L, shape=(2, 3, 5))], -1),
    'hybrid, two dense dims': lambda L: L.cat([hyb(L, sparse_dim=1), hyb(L, 3, sparse_dim=1)], 2),
    'float32 + float64': lambda L: L.cat([coo(L), coo(L, dtype='float64')]),
    'int32 + float32': lambda L: L.cat([coo(L, dtype='int32'), coo(L)]),
    'int32 + int64': lambda L: L.cat([coo(L, dtype='int32'), coo(L, dtype='int64')]),
    'bool': lambda L: L.cat([coo(L, dtype='bool'), coo(L, dtype='bool')]),
    'float16 + int64, dense dim': lambda L: L.cat([hyb(L).half(), hyb(L).long()], 2),
    'complex64 + float32': lambda L: L.cat([coo(L, dtype='complex64'), coo(L)], 1),
    '0-d nonzero (to_sparse)': lambda L: L.tensor(2.).to_sparse(),
    'concat': lambda L: L.concat([coo(L), coo(L)], 1),
    'stack 0': lambda L: L.stack([coo(L), coo(L, scale=2)]),
    'stack 1': lambda L: L.stack([coo(L), coo(L, scale=2)], 1),
    'stack at sparse_dim (new sparse dim)': lambda L: L.stack([coo(L), coo(L, scale=2)], 2),
    'stack hybrid, new dense dim': lambda L: L.stack([hyb(L), hyb(L, 2)], 3),
    'stack hybrid -1': lambda L: L.stack([hyb(L), hyb(L, 2)], -1),
    'stack empty': lambda L: L.stack([coo(L, [[], []], [], (2, 3))] * 2),
    'hstack': lambda L: L.hstack([coo(L), coo(L, scale=2)]),
    'hstack 1-D': lambda L: L.hstack([L.tensor([1., 0, 2]).to_sparse(), L.tensor([0., 3]).to_sparse()]),
    'vstack': lambda L: L.vstack([coo(L), coo(L, scale=2)]),
    'vstack 1-D': lambda L: L.vstack([L.tensor([1., 0, 2]).to_sparse(), L.tensor([0., 3, 0]).to_sparse()]),
    'dstack': lambda L: L.dstack([coo(L), coo(L, scale=2)]),
    'unsqueeze sparse': lambda L: L.tensor([0., 2, 3]).to_sparse().unsqueeze(0),
    'unsqueeze dense': lambda L: hyb(L).unsqueeze(-1),
    'select sparse': lambda L: coo(L).select(1, 2),
    'select sparse -1': lambda L: hyb(L).select(0, -1),
    'select dense': lambda L: hyb(L).select(2, 1),
}


@pytest.mark.parametrize('name', list(CASES))
def test_values_like_torch(name):
    same_raw(*both(CASES[name]))


def test_ptwt_repro():
    """The script that found the gap (ptwt's MatrixWavedec builds its matrices with a sparse cat)."""
    for dim in (0, 1):
        e, t = both(lambda L: L.cat([coo(L), coo(L, scale=2)], dim))
        assert e.to_dense().tolist() == t.to_dense().tolist()


def test_select_last_sparse_dim_is_dense():
    e, t = both(lambda L: L.tensor([[0., 2], [3, 0]]).to_sparse(1).select(0, 1))
    assert not e.is_sparse and not t.is_sparse and e.tolist() == t.tolist()


def errors(fn):
    try:
        fn(torch)
    except Exception as ex:
        te = ex
    else:
        raise AssertionError('torch raised nothing')
    with pytest.raises(type(te)) as ee:
        fn(ember)
    return str(ee.value), str(te)


@pytest.mark.parametrize('fn, exact', [
    (lambda L: L.cat([coo(L), L.ones(2, 3)]), True),                        # dense after sparse, sparse dim
    (lambda L: L.cat([hyb(L), L.ones(2, 3, 4)], 0), True),
    (lambda L: L.cat([L.ones(2, 3), coo(L)]), False),                       # dense first: NotImplementedError
    (lambda L: L.cat([hyb(L), L.ones(2, 3, 4)], 2), False),                 # along a dense dimension
    (lambda L: L.cat([coo(L), coo(L, size=(2, 4))]), True),
    (lambda L: L.cat([coo(L), hyb(L, sparse_dim=3)]), True),                 # rank differs
    (lambda L: L.cat([hyb(L), hyb(L, sparse_dim=1)]), True),                 # sparse_dim differs
    (lambda L: L.cat([hyb(L), hyb(L, sparse_dim=3)]), True),
    (lambda L: L.cat([hyb(L), hyb(L, shape=(2, 3, 5))], 0), True),
    (lambda L: L.cat([hyb(L), coo(L)], 2), True),                            # IndexError reading values
    (lambda L: L.cat([coo(L), coo(L)], 2), True),
    (lambda L: L.cat([L.zeros(0).to_sparse(), coo(L)]), True),              # 1-D empty is not skipped
    (lambda L: L.cat([L.tensor(1.).to_sparse()] * 2), True),               # 0-d
    (lambda L: L.cat([coo(L), coo(L)], out=L.empty(0)), False),
    (lambda L: L.stack([coo(L), coo(L, size=(2, 4))]), True),
    (lambda L: L.stack([coo(L), L.ones(2, 3)]), True),
    (lambda L: L.stack([L.ones(2, 3), coo(L)]), False),
    (lambda L: L.stack([coo(L), coo(L)], 3), True),
    (lambda L: coo(L).select(1, 3), False),
])
def test_errors_like_torch(fn, exact):
    ours, theirs = errors(fn)
    if exact:
        assert ours == theirs
    else:
        assert ours.split('.')[0] == theirs.split('.')[0]


def test_cat_grad_dense_grad_output():
    """A dense gradient of a sparse cat splits into dense gradients for the sparse inputs, as torch's."""
    def run(L):
        x, y = coo(L).coalesce().requires_grad_(), L.ones(2, 3, requires_grad=True)
        r = L.cat([x, y.to_sparse()], 1)
        assert type(r.grad_fn).__name__ == 'CatBackward0'
        r.backward(L.arange(12.).reshape(2, 6))
        return x.grad, y.grad
    (ex, ey), (tx, ty) = both(run)
    assert not ex.is_sparse and not tx.is_sparse
    assert ex.tolist() == tx.tolist() and ey.tolist() == ty.tolist()


def test_cat_grad_sparse_grad_output_unsupported_as_in_torch():
    """torch's CatBackward0 narrows the gradient, which a sparse tensor cannot do (NotImplementedError)."""
    def run(L):
        x = coo(L).coalesce().requires_grad_()
        L.cat([x, coo(L)], 0).to_dense().sum().backward()
    errors(run)


def test_stack_grad_sparse_grad_output():
    """StackBackward0 unbinds the gradient: a sparse one gives sparse gradients (select of a sparse tensor)."""
    def run(L):
        x, y = coo(L).coalesce().requires_grad_(), coo(L, scale=2).coalesce().requires_grad_()
        r = L.stack([x, y], 1)
        assert type(r.grad_fn).__name__ == 'StackBackward0'
        (r.to_dense() * L.arange(12.).reshape(2, 2, 3)).sum().backward()
        return x.grad, y.grad
    (ex, ey), (tx, ty) = both(run)
    same_raw(ex, tx)
    same_raw(ey, ty)
