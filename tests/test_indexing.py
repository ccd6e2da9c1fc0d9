"""Tensor.__getitem__ / __setitem__ against torch, views sharing memory and version counters, data-dependent
index errors of the indexing operators, and autograd through indexing."""
import warnings

import numpy as np
import pytest
import torch

import ember

A = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)


def _pair(a=A):
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _idx(i, lib):
    """The same index expression for each library (tensors converted, everything else as is)."""
    if isinstance(i, tuple):
        return tuple(_idx(x, lib) for x in i)
    if isinstance(i, np.ndarray):
        return lib.from_numpy(i.copy())
    return i


def _same(e, t, what):
    assert tuple(e.shape) == tuple(t.shape), f'{what}: shape {tuple(e.shape)} vs {tuple(t.shape)}'
    assert e.dtype.name == str(t.dtype)[6:], what
    np.testing.assert_array_equal(np.asarray(e.detach()._a), t.detach().numpy(), err_msg=what)


BASIC = [0, -1, 1, slice(None), slice(1, 3), slice(None, None, 2), slice(-3, None), slice(5, 10), slice(3, 1),
         (0, 1), (0, -1, 2), (0, 1, 2, 3), (slice(None), 1), (Ellipsis, 1), (1, Ellipsis), (Ellipsis,),
         (None,), (None, 0), (0, None, slice(1, 3)), (slice(None), None, 1, None), (Ellipsis, None),
         (slice(0, 1), slice(None, None, 3), 0), (1, slice(None), slice(1, None, 2), -2), (), (None, Ellipsis, None),
         (slice(-100, 100),), (0, 0, slice(2, 2))]


@pytest.mark.parametrize('idx', BASIC, ids=[repr(i) for i in BASIC])
def test_basic_indexing_is_a_view_like_torch(idx):
    e, t = _pair()
    er, tr = e[idx], t[idx]
    _same(er, tr, repr(idx))
    assert er.stride() == tr.stride(), f'{idx!r}: strides {er.stride()} vs {tr.stride()}'
    assert er.storage_offset() == tr.storage_offset()
    assert er._base is e                       # a view of the indexed tensor, sharing its storage
    if er.numel():
        assert np.shares_memory(er._a, e._a)


ADVANCED = [np.array([0, 1, 0]), np.array([[1], [0]]), (slice(None), np.array([2, 0])),
            (0, np.array([1, 2]), slice(1, 3)), (np.array([0, 1]), slice(None), np.array([1, 2])),
            (np.array([0, 1]), np.array([2, 0])), (Ellipsis, np.array([4, 0])), (slice(None), np.array([[0, 1], [2, 2]]), 0),
            (np.array([True, False]),), (slice(None), np.array([True, False, True])),
            (slice(None), A[0, :, :, 0] > 20), (0, A[0, :, :, 0] > 20), (np.array([-1, -2]),), (None, np.array([1])),
            (np.array([1]), None, slice(None), np.array([0])), (np.array([0, 1], dtype=np.int32),),
            (np.array(1),), (slice(None), np.array(2)), (np.array(True),), (0, np.array(False)),
            (True,), (False,), (0, True, 1), ([0, 1],), (slice(None), [2, 0, 1]), ([[0, 1], [1, 0]],),
            ([True, False],), (np.array([0, 1]), 1, np.array([2, 3])), (1, slice(None), np.array([3, 1]), slice(1, 4)),
            (np.array([], dtype=np.int64),), (slice(None), np.zeros(3, bool))]


@pytest.mark.parametrize('idx', ADVANCED, ids=[f'adv{k}' for k in range(len(ADVANCED))])
def test_advanced_indexing_matches_torch(idx):
    e, t = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        er, tr = e[_idx(idx, ember)], t[_idx(idx, torch)]
    _same(er, tr, repr(idx))


def test_list_of_slices_is_a_tuple_with_torch_warning():
    e, t = _pair()
    with pytest.warns(UserWarning, match='non-tuple sequence'):
        er = e[[0, slice(None)]]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        _same(er, t[[0, slice(None)]], 'list with slice')


ERRORS = [(5,), (-3,), (0, 7), (slice(None), slice(None), slice(None), 9), (0, 0, 0, 0, 0), (1.5,), ('a',),
          (slice(None, None, -1),), (slice(None, None, 0),), (np.array([2]),), (slice(None), np.array([-4])),
          (np.array([0.5]),), (np.array([True, False, True]),), (np.array([0, 1]), np.array([0, 1, 2])),
          (0, 0, 0, 0, Ellipsis, 0)]


@pytest.mark.parametrize('idx', ERRORS, ids=[repr(i) for i in ERRORS])
def test_getitem_errors_match_torch(idx):
    e, t = _pair()
    with pytest.raises(Exception) as te:
        t[_idx(idx, torch)]
    with pytest.raises(Exception) as ee:
        e[_idx(idx, ember)]
    assert type(ee.value) is type(te.value) or (type(te.value) is TypeError and type(ee.value) is IndexError), \
        f'{idx!r}: ember {type(ee.value).__name__}({ee.value}) vs torch {type(te.value).__name__}({te.value})'


def test_out_of_range_message_names_index_dim_and_size():
    e = ember.zeros(3, 4)
    with pytest.raises(IndexError, match='index 5 is out of bounds for dimension 0 with size 3'):
        e[5]
    with pytest.raises(IndexError, match='index 4 is out of bounds for dimension 1 with size 4'):
        e[0, 4]
    with pytest.raises(ValueError, match='step must be greater than zero'):
        e[::-1]
    with pytest.raises(IndexError, match='invalid index of a 0-dim tensor'):
        ember.tensor(1.)[0]


@pytest.mark.parametrize('shape, idx, value', [((3, 4), 5, 1.0), ((3, 4), -4, None), ((), 0, 2.0), ((3,), 3, None),
                                               ((3, 4), 2, 1.0), ((3,), -1, None)])
def test_int_setitem_matches_torch(shape, idx, value):
    """x[i] = v with an int: torch's IndexError messages, and the value written (a number or a tensor)."""
    results = []
    for lib in (ember, torch):
        x = lib.arange(float(max(1, np.prod(shape, dtype=int)))).reshape(shape)
        v = value if value is not None else lib.full(x.shape[1:], 7.0)
        try:
            x[idx] = v
            results.append(x.tolist())
        except IndexError as e:
            results.append(('IndexError', str(e)))
    assert results[0] == results[1]


def test_zero_dim_tensor_indexing():
    for idx in [Ellipsis, None, (), (None, None), True, (Ellipsis, None)]:
        e, t = ember.tensor(5.), torch.tensor(5.)
        _same(e[idx], t[idx], repr(idx))


SETS = [(0, 1.5), ((0, 1), -2), ((slice(None), 1), 7), ((Ellipsis, 0), 3.0), ((None, 0), 1),
        (slice(1, 2), 'row'), ((0, slice(None), 1), 'vec4'), (np.array([1, 0]), 4.0), ((slice(None), np.array([2, 0])), 'bc'),
        ((np.array([0, 1]), np.array([2, 0])), 'two'), ((slice(None), A[0, :, :, 0] > 20), 9.0), ((0, A[0, :, :, 0] > 20), 'mask5'),
        ((0, np.array([1, 2]), slice(1, 3)), -1.0), ((True,), 2.0), ((Ellipsis,), 0.5), (([0, 1],), 6),
        ((0, np.array(1)), 8.0), ((np.array([0, 0]),), 'dup')]


def _value(kind, lib, shape_hint):
    if not isinstance(kind, str):
        return kind
    vals = {'row': np.ones((1, 3, 4, 5)) * 3, 'vec4': np.arange(5.), 'bc': np.arange(5.) - 2,
            'two': np.arange(4 * 5.).reshape(4, 5), 'mask5': np.arange(5.), 'dup': np.full((3, 4, 5), 2.)}[kind]
    return lib.from_numpy(vals.astype(np.float32))


@pytest.mark.parametrize('idx,value', SETS, ids=[f'set{k}' for k in range(len(SETS))])
def test_setitem_matches_torch(idx, value):
    e, t = _pair()
    v0 = e._version
    e[_idx(idx, ember)] = _value(value, ember, None)
    t[_idx(idx, torch)] = _value(value, torch, None)
    _same(e, t, repr(idx))
    assert e._version > v0


def test_setitem_casts_value_and_broadcasts():
    e, t = _pair(np.arange(12).reshape(3, 4))
    e[0] = 2.7
    t[0] = 2.7
    e[:, 1] = ember.tensor([1.9, 2.9, 3.9], dtype=ember.float64)
    t[:, 1] = torch.tensor([1.9, 2.9, 3.9], dtype=torch.float64)
    e[ember.tensor([1, 2])] = 5.5
    t[torch.tensor([1, 2])] = 5.5
    with pytest.raises(RuntimeError, match='Index put requires the source and destination dtypes match'):
        t[torch.tensor([1, 2])] = torch.tensor([5., 6., 7., 8.])      # torch does not cast for index_put
    with pytest.raises(RuntimeError, match='Index put requires the source and destination dtypes match'):
        e[ember.tensor([1, 2])] = ember.tensor([5., 6., 7., 8.])
    _same(e, t, 'casts')
    e[1] = ember.ones(1, 4)                 # leading size-1 dims of the value are dropped, as in torch
    t[1] = torch.ones(1, 4)
    _same(e, t, 'leading ones')
    with pytest.raises(RuntimeError):
        e[0] = ember.ones(3)
    with pytest.raises(RuntimeError):
        e[ember.tensor([0])] = ember.ones(2, 4)


def test_failed_setitem_leaves_tensor_unchanged():
    e = ember.arange(12.).reshape(3, 4)
    before = e.clone()
    with pytest.raises(IndexError):
        e[ember.tensor([0, 7])] = 1.0
    with pytest.raises(RuntimeError):
        e[ember.tensor([0, 1])] = ember.ones(3)
    assert ember.equal(e, before)


def test_view_writes_reach_base_and_share_version_counter():
    base = ember.zeros(3, 4)
    v = base[1]
    v2 = base[:, 1:3].transpose(0, 1)
    d = base.diagonal()
    v.fill_(2.0) if hasattr(v, 'fill_') else v.copy_(ember.full((4,), 2.0))
    assert base[1].tolist() == [2.0] * 4
    v2[0] = 5.0                              # writes column 1 of base
    assert base[:, 1].tolist() == [5.0] * 3
    d.mul_(10)
    assert base.tolist()[0][0] == 0.0 and base.tolist()[1][1] == 50.0
    assert base._version == v._version == v2._version == d._version
    n = base._version
    base.add_(1)
    assert v._version == n + 1 and d._version == n + 1
    base[0, 0] = 3.0
    assert v2._version == n + 2


@pytest.mark.parametrize('name,args', [('view', ((4, 3),)), ('transpose', (0, 1)), ('permute', ((1, 0),)),
                                       ('expand', ((2, 3, 4),)), ('unsqueeze', (0,)), ('select', (1, 2)),
                                       ('narrow', (1, 1, 2)), ('as_strided', ((2, 2), (1, 2), 1)), ('detach', ()),
                                       ('diagonal', ()), ('unfold', (1, 2, 1)), ('flatten', ()), ('t', ()),
                                       ('movedim', (0, 1)), ('split', (1,)), ('chunk', (2, 1)), ('unbind', (1,)),
                                       ('squeeze', ()), ('view_as', (ember.zeros(12),)), ('swapaxes', (0, 1))])
def test_view_ops_share_storage_and_version(name, args):
    x = ember.from_numpy(np.arange(12.).reshape(3, 4))
    out = getattr(x, name)(*args)
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        assert (o._base is None if name == 'detach' else o._base is x) and o._vc is x._vc
        assert o.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    n = x._version
    outs[0].zero_()      # zero_, not mul_: torch refuses most in-place writes into an expanded view
    assert x._version == n + 1


def test_reshape_is_a_view_when_possible_and_a_copy_otherwise():
    x = ember.from_numpy(np.arange(12.).reshape(3, 4))
    assert x.reshape(4, 3)._base is x
    y = x.t().reshape(12)
    assert y.is_contiguous() and not np.shares_memory(y._a, x._a)
    assert y.tolist() == x.t().contiguous().view(12).tolist()


def test_inplace_op_failure_leaves_tensor_and_version_unchanged():
    x = ember.zeros(3, 4)
    v = x._version
    with pytest.raises(RuntimeError):
        x.index_add_(0, ember.tensor([0, 5]), ember.ones(2, 4))
    with pytest.raises(RuntimeError):
        x.scatter_(0, ember.tensor([[3]]), 1.0)
    assert x._version == v and float(x.abs().sum()) == 0.0


DATA_ERRORS = [
    ('index_select', lambda L, x: L.index_select(x, 0, L.tensor([3]))),
    ('index_select-neg', lambda L, x: L.index_select(x, 0, L.tensor([-1]))),
    ('index_add', lambda L, x: x.index_add(0, L.tensor([0, 5]), L.ones(2, 4))),
    ('gather', lambda L, x: x.gather(0, L.tensor([[5]]))),
    ('gather-neg', lambda L, x: x.gather(0, L.tensor([[-1]]))),
    ('scatter_add', lambda L, x: x.scatter_add(0, L.tensor([[7]]), L.ones(1, 1))),
    ('scatter', lambda L, x: x.scatter(0, L.tensor([[9]]), 1.0)),
    ('scatter_reduce', lambda L, x: x.scatter_reduce(0, L.tensor([[3]]), L.ones(1, 1), 'sum')),
    ('index', lambda L, x: x[L.tensor([3])]),
    ('index-neg', lambda L, x: x[:, L.tensor([-5])]),
    ('index_put', lambda L, x: x.index_put((L.tensor([9]),), L.tensor(1.))),
    ('index_copy', lambda L, x: x.index_copy(0, L.tensor([5]), L.ones(1, 4))),
    ('index_fill', lambda L, x: x.index_fill(0, L.tensor([7]), 1.)),
    ('take', lambda L, x: x.take(L.tensor([12]))),
    ('take-neg', lambda L, x: x.take(L.tensor([-13]))),
    ('put', lambda L, x: x.put(L.tensor([12]), L.ones(1))),
    ('take_along_dim', lambda L, x: L.take_along_dim(x, L.tensor([0, 12]))),
    ('masked_scatter', lambda L, x: x.masked_scatter(L.ones(3, 4, dtype=L.bool), L.ones(5))),
    ('one_hot', lambda L, x: L.nn.functional.one_hot(L.tensor([0, 3]), 3)),
    ('one_hot-neg', lambda L, x: L.nn.functional.one_hot(L.tensor([0, -1]), 3)),
    ('repeat_interleave', lambda L, x: L.repeat_interleave(L.tensor([1, -1]))),
]


@pytest.mark.parametrize('name,fn', DATA_ERRORS, ids=[d[0] for d in DATA_ERRORS])
def test_index_value_errors_match_torch(name, fn):
    with pytest.raises(Exception) as te:
        fn(torch, torch.zeros(3, 4))
    with pytest.raises(type(te.value)) as ee:
        fn(ember, ember.zeros(3, 4))
    t_msg, e_msg = str(te.value).split('\n')[0], str(ee.value).split('\n')[0]
    assert e_msg == t_msg or t_msg.startswith(e_msg) or e_msg in t_msg, f'{e_msg!r} vs {t_msg!r}'


def _grads(lib, fn, a):
    x = lib.from_numpy(a.copy()).requires_grad_(True)
    y = fn(lib, x)
    w = lib.from_numpy(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
    (g,) = lib.autograd.grad((y * w).sum(), [x], create_graph=True)
    (gg,) = lib.autograd.grad((g * g).sum() + (y * y).sum(), [x])
    return g.detach().numpy(), gg.numpy()


GRAD_CASES = [
    ('int', lambda L, x: x[1]), ('slices', lambda L, x: x[:, 1:3]), ('step', lambda L, x: x[::2, ::3]),
    ('none-ellipsis', lambda L, x: x[None, ..., 2]), ('list', lambda L, x: x[[0, 2, 0]]),
    ('tensor-repeat', lambda L, x: x[L.tensor([1, 1, 2])]), ('mask', lambda L, x: x[x > 0]),
    ('mixed', lambda L, x: x[1:, L.tensor([0, 3])]), ('two-adv', lambda L, x: x[L.tensor([0, 2]), L.tensor([1, 1])]),
    ('chain', lambda L, x: x[1:][0][1:3] * 2),
]


@pytest.mark.parametrize('name,fn', GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_autograd_through_indexing(name, fn):
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    eg, egg = _grads(ember, fn, a)
    tg, tgg = _grads(torch, fn, a)
    np.testing.assert_allclose(eg, tg, atol=1e-12)
    np.testing.assert_allclose(egg, tgg, atol=1e-12)


def test_grad_fn_names_of_indexing():
    x = ember.zeros(3, 4, requires_grad=True)
    assert type(x[0].grad_fn).__name__ == 'SelectBackward0'
    assert type(x[:, 1:].grad_fn).__name__ == 'SliceBackward0'
    assert type(x[ember.tensor([0])].grad_fn).__name__ == 'IndexBackward0'


def test_where_single_argument_and_nonzero_as_tuple():
    a = np.array([[0, 1, 0], [2, 0, 3]])
    e, t = ember.from_numpy(a), torch.from_numpy(a)
    for er, tr in zip(ember.where(e > 0), torch.where(t > 0)):
        _same(er, tr, 'where')
    for er, tr in zip(ember.nonzero(e, as_tuple=True), torch.nonzero(t, as_tuple=True)):
        _same(er, tr, 'nonzero')
    _same(e.nonzero(), t.nonzero(), 'nonzero')
    _same(ember.argwhere(e), torch.argwhere(t), 'argwhere')


def test_scatter_reduce_on_integers_and_include_self():
    s = np.array([[5, -7, 9, 4]])
    idx = np.array([[0, 0, 0, 0]])
    src = np.array([[2, 2, -3, 4]])
    for red in ('sum', 'prod', 'mean', 'amax', 'amin'):
        for inc in (True, False):
            er = ember.from_numpy(s).scatter_reduce(0, ember.from_numpy(idx), ember.from_numpy(src), red, include_self=inc)
            tr = torch.from_numpy(s).scatter_reduce(0, torch.from_numpy(idx), torch.from_numpy(src), red, include_self=inc)
            _same(er, tr, f'{red} {inc}')


def test_cat_promotes_and_skips_legacy_empty():
    e = ember.cat([ember.zeros(2, 3, dtype=ember.int32), ember.zeros(0), ember.ones(1, 3, dtype=ember.float64)])
    t = torch.cat([torch.zeros(2, 3, dtype=torch.int32), torch.zeros(0), torch.ones(1, 3, dtype=torch.float64)])
    _same(e, t, 'cat')
    with pytest.raises(RuntimeError, match='Sizes of tensors must match except in dimension 0. Expected size 3 but '
                                           'got size 4 for tensor number 1 in the list.'):
        ember.cat([ember.zeros(2, 3), ember.zeros(2, 4)])
    out = ember.empty(0)
    ember.cat([ember.ones(2), ember.ones(3)], out=out)
    assert out.tolist() == [1.0] * 5


def test_meta_indexing_is_shape_only():
    x = ember.empty(3, 4, 5, device='meta')
    assert tuple(x[0, 1:3].shape) == (2, 5) and x[0, 1:3].stride() == (5, 1)
    assert tuple(x[:, ember.tensor([0, 1], device='meta')].shape) == (3, 2, 5)
    assert tuple(ember.cat([x, x], 1).shape) == (3, 8, 5)


def test_basic_indexing_does_not_use_advanced_path(monkeypatch):
    from ember._python_functions import indexing as ix
    calls = []
    monkeypatch.setattr(ix, '_index', lambda *a: calls.append(a))
    x = ember.zeros(3, 4)
    x[0], x[:, 1:3], x[None, ..., 1], x[1, -1]
    assert calls == []


def test_setitem_records_autograd_like_torch():
    res = {}
    for L in (torch, ember):
        a = L.ones(3, 4, dtype=L.float64, requires_grad=True)
        b = L.full((4,), 2., dtype=L.float64, requires_grad=True)
        x = a * 3
        x[0] = b
        x[:, 1] = 7.
        x[L.tensor([2])] = b * 2
        (x * x).sum().backward()
        res[L] = (a.grad.numpy().copy(), b.grad.numpy().copy(), type(x.grad_fn).__name__, x._version)
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_array_equal(e, t)


def test_setitem_on_leaf_requiring_grad_raises_like_torch():
    for L in (torch, ember):
        a = L.ones(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError, match='view of a leaf Variable that requires grad'):
            a[0] = 1.
        with pytest.raises(RuntimeError, match='a leaf Variable that requires grad is being used in an in-place'):
            a[L.tensor([0])] = 1.
        with L.no_grad():
            a[0] = 5.
        assert a[0].tolist() == [5.0] * 4 and a._version == 1


def _random_index(rng, shape):
    """A random mix of ints, slices, None, Ellipsis, integer arrays and masks for a tensor of ``shape``."""
    idx, d, ell = [], 0, False
    for _ in range(rng.integers(1, 5)):
        if d >= len(shape):
            break
        n, k = shape[d], rng.integers(7)
        if k == 0:
            idx.append(int(rng.integers(-n, n)))
        elif k == 1:
            idx.append(slice([None, 0, 1, -2][rng.integers(4)], [None, 2, -1, 10][rng.integers(4)],
                             [None, 1, 2][rng.integers(3)]))
        elif k == 2:
            idx.append(None)
            continue
        elif k == 3:
            idx.append(rng.integers(-n, n, rng.integers(1, 3)))
        elif k == 4:
            idx.append(rng.integers(0, n, (2, 1)))
        elif k == 5:
            idx.append(rng.random(n) > 0.5)
        elif not ell:
            ell = True
            idx.append(Ellipsis)
            d = len(shape) - sum(1 for x in idx if x is not None and x is not Ellipsis)
            continue
        d += 1
    return tuple(idx)


def test_random_index_expressions_match_torch():
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        idx = _random_index(rng, A.shape)
        e, t = _pair()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            try:
                tr = t[_idx(idx, torch)]
            except Exception as te:
                with pytest.raises(type(te)):
                    e[_idx(idx, ember)]
                continue
            er = e[_idx(idx, ember)]
            _same(er, tr, repr(idx))
            if tr._base is not None:
                assert er.stride() == tr.stride(), repr(idx)
            value = np.random.default_rng(1).standard_normal(tuple(tr.shape)).astype(np.float32)
            try:
                t[_idx(idx, torch)] = torch.from_numpy(value.copy())
            except RuntimeError:          # repeated indices: torch's write order is unspecified
                continue
            e[_idx(idx, ember)] = ember.from_numpy(value.copy())
            if all(not isinstance(i, np.ndarray) or i.dtype == bool or len(set(i.ravel().tolist())) == i.size
                   for i in idx):
                _same(e, t, f'set {idx!r}')
        checked += 1
    assert checked > 150
