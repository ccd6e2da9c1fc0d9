"""ember.utils.data in the main process: datasets, samplers, collation and DataLoader, compared with torch's."""
import collections
import math
import random
import re
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
import ember.utils.data as eud

Point = collections.namedtuple('Point', ['x', 'y'])


def to_py(obj):
    """A library-neutral picture of a (collated) object: tensors become (dtype name, array)."""
    if isinstance(obj, (ember.Tensor, torch.Tensor)):
        return ('tensor', str(obj.dtype).split('.')[-1], obj.detach().numpy() if isinstance(obj, torch.Tensor)
                else obj.numpy(), tuple(obj.shape))
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: to_py(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [to_py(v) for v in obj])
    if isinstance(obj, np.ndarray):
        return ('ndarray', obj)
    return obj


def assert_same(a, b):
    pa, pb = to_py(a), to_py(b)
    _cmp(pa, pb)


def _cmp(a, b):
    if isinstance(a, tuple) and a and a[0] == 'tensor':
        assert isinstance(b, tuple) and b[0] == 'tensor', (a, b)
        assert a[1] == b[1] and a[3] == b[3], (a, b)
        np.testing.assert_array_equal(a[2], b[2])
    elif isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], (dict, list)):
        assert a[0] == b[0], (a[0], b[0])
        if isinstance(a[1], dict):
            assert list(a[1]) == list(b[1])
            for k in a[1]:
                _cmp(a[1][k], b[1][k])
        else:
            assert len(a[1]) == len(b[1])
            for x, y in zip(a[1], b[1]):
                _cmp(x, y)
    elif isinstance(a, tuple) and a and a[0] == 'ndarray':
        np.testing.assert_array_equal(a[1], b[1])
    else:
        assert type(a) is type(b) and a == b, (a, b)


def nested_sample(lib, i):
    arr = np.arange(6, dtype=np.float32).reshape(2, 3) + i
    return {
        'img': lib.from_numpy(arr.copy()),
        'arr': arr.astype(np.int16),
        'f': 0.5 * i, 'i': i, 'flag': bool(i % 2), 's': f's{i}', 'b': b'x',
        'npf': np.float32(i), 'npi': np.int32(i),
        'pt': Point(np.array([i, i + 1]), i * 2),
        'lst': [i, 1.5], 'tup': (lib.tensor([i, i]), 'a'),
        'nested': {'deep': [np.array(i, dtype=np.float64)]},
    }


def test_default_collate_nested_matches_torch():
    batch_e = [nested_sample(ember, i) for i in range(3)]
    batch_t = [nested_sample(torch, i) for i in range(3)]
    out_e, out_t = eud.default_collate(batch_e), tud.default_collate(batch_t)
    assert_same(out_e, out_t)
    assert isinstance(out_e['pt'], Point) and isinstance(out_e['tup'], list)


@pytest.mark.parametrize('sample', [3, 2.5, True, 'text', np.float64(1.5), np.array([1, 2], np.uint8),
                                    (np.zeros(2), 1), [np.ones(1), 'a'], Point(np.ones(2), 3)])
def test_default_collate_leaves_match_torch(sample):
    batch = [sample, sample]
    assert_same(eud.default_collate(batch), tud.default_collate(batch))


def test_default_convert_matches_torch():
    for data in (np.arange(4), np.float32(2.0), {'a': np.ones(2), 'b': 'x'}, Point(np.array(0), np.array(1)),
                 (np.zeros(1), 2), [np.zeros(1), 'y'], 5, 'z', np.array(['a'])):
        assert_same(eud.default_convert(data), tud.default_convert(data))


def test_default_collate_mixed_dtypes_promote_like_torch():
    e = eud.default_collate([ember.tensor([1, 2]), ember.tensor([0.5, 1.0])])
    t = tud.default_collate([torch.tensor([1, 2]), torch.tensor([0.5, 1.0])])
    assert_same(e, t)


@pytest.mark.parametrize('batch', [
    [np.zeros(2), np.zeros(3)],
    [[1, 2], [1]],
    [object(), object()],
    [np.array(['a']), np.array(['b'])],
])
def test_default_collate_errors_match_torch(batch):
    with pytest.raises(Exception) as te:
        tud.default_collate(batch)
    with pytest.raises(type(te.value)) as ee:
        eud.default_collate(batch)
    first = str(te.value).split(',')[0].split(' but')[0]
    assert first in str(ee.value)


class NumpyDataset:
    """(row, label) from preallocated arrays; usable by both libraries' loaders."""

    def __init__(self, n=23):
        self.x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
        self.y = np.arange(n) % 5

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i])


class GetitemsDataset(NumpyDataset):
    def __init__(self, n=23):
        super().__init__(n)
        self.calls = 0

    def __getitems__(self, indices):
        self.calls += 1
        return [(self.x[i], int(self.y[i])) for i in indices]


@pytest.mark.parametrize('kw', [dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=1),
                                dict(batch_size=None), dict(batch_size=30),
                                dict(batch_size=3, collate_fn=lambda b: [len(b), b[0][1]]),
                                dict(sampler=[5, 1, 3], batch_size=2),
                                dict(batch_sampler=[[0, 2], [4], [1, 3, 5]])])
def test_loader_matches_torch(kw):
    ds = NumpyDataset()
    ember_batches, torch_batches = list(eud.DataLoader(ds, **kw)), list(tud.DataLoader(ds, **kw))
    assert len(ember_batches) == len(torch_batches) == len(eud.DataLoader(ds, **kw)) == len(tud.DataLoader(ds, **kw))
    for e, t in zip(ember_batches, torch_batches):
        assert_same(e, t)


def test_loader_uses_getitems_once_per_batch():
    ds = GetitemsDataset()
    batches = list(eud.DataLoader(ds, batch_size=5))
    assert ds.calls == len(batches) == 5
    for e, t in zip(batches, tud.DataLoader(NumpyDataset(), batch_size=5)):
        assert_same(e, t)


def test_shuffle_same_multiset_as_torch_and_reproducible():
    ds = NumpyDataset(50)

    def rows(batches):
        return sorted(tuple(r) for x in batches for r in x)
    e1 = [x.tolist() for x, _ in eud.DataLoader(ds, batch_size=8, shuffle=True,
                                                 generator=ember.Generator().manual_seed(3))]
    e2 = [x.tolist() for x, _ in eud.DataLoader(ds, batch_size=8, shuffle=True,
                                                 generator=ember.Generator().manual_seed(3))]
    t = [x.tolist() for x, _ in tud.DataLoader(ds, batch_size=8, shuffle=True)]
    assert rows(e1) == rows(t) and e1 == e2
    ember.manual_seed(11)
    a = [x.tolist() for x, _ in eud.DataLoader(ds, batch_size=8, shuffle=True)]
    ember.manual_seed(11)
    b = [x.tolist() for x, _ in eud.DataLoader(ds, batch_size=8, shuffle=True)]
    assert a == b and a != [x.tolist() for x, _ in eud.DataLoader(ds, batch_size=8)]
    loader = eud.DataLoader(ds, batch_size=50, shuffle=True, generator=ember.Generator().manual_seed(0))
    assert [x.tolist() for x, _ in loader] != [x.tolist() for x, _ in loader]   # a new order each epoch


@pytest.mark.parametrize('kw', [dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
                                dict(persistent_workers=True), dict(shuffle=True, sampler=[0]),
                                dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
                                dict(multiprocessing_context='fork')])
def test_loader_argument_errors_match_torch(kw):
    ds = NumpyDataset()
    with pytest.raises(Exception) as te:
        tud.DataLoader(ds, **kw)
    with pytest.raises(type(te.value)) as ee:
        eud.DataLoader(ds, **kw)
    assert str(ee.value) == str(te.value)


def test_loader_attributes_frozen_and_iterable_errors():
    loader = eud.DataLoader(NumpyDataset())
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3

    class It(eud.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        eud.DataLoader(It(), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        eud.DataLoader(It(), sampler=[0])


class Range(eud.IterableDataset, tud.IterableDataset):
    def __init__(self, n, reported=None):
        self.n, self.reported = n, reported

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n if self.reported is None else self.reported


def test_iterable_dataset_batches_and_len_match_torch():
    for kw in (dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=None)):
        e, t = eud.DataLoader(Range(10), **kw), tud.DataLoader(Range(10), **kw)
        assert len(e) == len(t)
        for a, b in zip(list(e), list(t)):
            assert_same(a, b)


def test_iterable_dataset_longer_than_len_warns_like_torch():
    loader = eud.DataLoader(Range(5, reported=3), batch_size=None)
    assert len(loader) == 3
    with pytest.warns(UserWarning) as rec:
        list(loader)
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 2   # samples 4 and 5, as torch warns
    assert re.search(r"Length of IterableDataset .* was reported to be 3 \(when accessing len\(dataloader\)\), "
                     r"but 4 samples have been fetched", msgs[0])


def test_pin_memory_is_accepted_with_torchs_warning():
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        batches = list(eud.DataLoader(NumpyDataset(), batch_size=10, pin_memory=True))
    assert len(batches) == 3


# --- datasets ---------------------------------------------------------------------------------------------------------
def test_tensor_dataset():
    x, y = np.arange(12.).reshape(6, 2), np.arange(6)
    e, t = eud.TensorDataset(ember.tensor(x), ember.tensor(y)), tud.TensorDataset(torch.tensor(x), torch.tensor(y))
    assert len(e) == len(t) == 6
    assert_same(e[4], t[4])
    for a, b in zip(eud.DataLoader(e, batch_size=4), tud.DataLoader(t, batch_size=4)):
        assert_same(a, b)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        eud.TensorDataset(ember.tensor(x), ember.tensor(y[:3]))


def test_concat_chain_subset_stack_match_torch():
    a, b = list(range(3)), list(range(10, 15))
    ce, ct = eud.ConcatDataset([a, b]), tud.ConcatDataset([a, b])
    assert len(ce) == len(ct) and ce.cumulative_sizes == ct.cumulative_sizes
    assert [ce[i] for i in range(-len(ce), len(ce))] == [ct[i] for i in range(-len(ct), len(ct))]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ce[-9]
    plus = eud.Dataset.__add__(eud.Subset(a, [0, 1]), eud.Subset(b, [4]))
    assert isinstance(plus, eud.ConcatDataset) and [plus[i] for i in range(3)] == [0, 1, 14]
    assert list(eud.ChainDataset([Range(2), Range(3)])) == list(tud.ChainDataset([Range(2), Range(3)]))
    assert len(eud.ChainDataset([Range(2), Range(3)])) == 5
    assert list(Range(2) + Range(1)) == [0, 1, 0]
    s = eud.Subset(b, [4, 0, 2])
    assert [s[i] for i in range(3)] == [14, 10, 12] and s.__getitems__([2, 0]) == [12, 14] and len(s) == 3
    se, st = eud.StackDataset(a, [x * 2 for x in a]), tud.StackDataset(a, [x * 2 for x in a])
    assert se[1] == st[1] and se.__getitems__([0, 2]) == st.__getitems__([0, 2]) and len(se) == len(st)
    de, dt = eud.StackDataset(p=a, q=a), tud.StackDataset(p=a, q=a)
    assert de[2] == dt[2] and de.__getitems__([1, 0]) == dt.__getitems__([1, 0])
    for args, kw in (((a, b), {}), ((), {})):
        with pytest.raises(ValueError) as te:
            tud.StackDataset(*args, **kw)
        with pytest.raises(ValueError, match=str(te.value)):
            eud.StackDataset(*args, **kw)


@pytest.mark.parametrize('lengths', [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [1.0], [10]])
def test_random_split_sizes_match_torch(lengths):
    es = eud.random_split(range(10), lengths, generator=ember.Generator().manual_seed(0))
    ts = tud.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in es] == [len(s) for s in ts]
    assert sorted(i for s in es for i in s) == list(range(10))
    again = eud.random_split(range(10), lengths, generator=ember.Generator().manual_seed(0))
    assert [list(s) for s in es] == [list(s) for s in again]


def test_random_split_errors_and_warning_match_torch():
    for lengths in ([3, 3], [1.5, -0.5]):
        with pytest.raises(ValueError) as te:
            tud.random_split(range(10), lengths)
        with pytest.raises(ValueError, match=str(te.value).replace('!', '')):
            eud.random_split(range(10), lengths)
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        eud.random_split(range(2), [1.0, 0.0])


# --- samplers ----------------------------------------------------------------------------------------------------------
def test_sequential_and_batch_samplers_match_torch():
    assert list(eud.SequentialSampler(range(7))) == list(tud.SequentialSampler(range(7)))
    for n, bs, dl in ((10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (2, 5, True)):
        e, t = eud.BatchSampler(range(n), bs, dl), tud.BatchSampler(range(n), bs, dl)
        assert list(e) == list(t) and len(e) == len(t)
    for args in ((range(3), 0, False), (range(3), True, False), (range(3), 2, 1)):
        with pytest.raises(ValueError) as te:
            tud.BatchSampler(*args)
        with pytest.raises(ValueError, match=str(te.value)):
            eud.BatchSampler(*args)


def test_random_sampler_permutation_and_replacement():
    g = ember.Generator().manual_seed(0)
    assert sorted(eud.RandomSampler(range(20), generator=g)) == list(range(20))
    more = list(eud.RandomSampler(range(5), num_samples=12, generator=g))
    assert len(more) == 12 and sorted(more[:10]) == sorted(list(range(5)) * 2)
    draws = np.array(list(eud.RandomSampler(range(4), replacement=True, num_samples=4000, generator=g)))
    assert len(draws) == 4000 and draws.min() == 0 and draws.max() == 3
    assert np.all(np.abs(np.bincount(draws) / 4000 - 0.25) < 0.04)
    a = list(eud.RandomSampler(range(30), generator=ember.Generator().manual_seed(5)))
    assert a == list(eud.RandomSampler(range(30), generator=ember.Generator().manual_seed(5)))
    for kw, exc in ((dict(replacement=1), TypeError), (dict(num_samples=0), ValueError)):
        with pytest.raises(exc) as te:
            tud.RandomSampler(range(3), **kw)
        with pytest.raises(exc, match=str(te.value)):
            eud.RandomSampler(range(3), **kw)


def test_subset_random_sampler():
    idx = [4, 9, 2, 7]
    out = list(eud.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(1)))
    assert sorted(out) == sorted(idx) and len(eud.SubsetRandomSampler(idx)) == 4


def test_weighted_random_sampler_distribution():
    w = [1., 2., 0., 5.]
    g = ember.Generator().manual_seed(0)
    draws = np.array(list(eud.WeightedRandomSampler(w, 8000, generator=g)))
    freq = np.bincount(draws, minlength=4) / 8000
    np.testing.assert_allclose(freq, np.array(w) / sum(w), atol=0.03)
    firsts = np.array([list(eud.WeightedRandomSampler(w, 3, replacement=False, generator=g)) for _ in range(400)])
    assert all(sorted(r) == [0, 1, 3] for r in firsts.tolist())   # zero weight never drawn
    assert np.mean(firsts[:, 0] == 3) > np.mean(firsts[:, 0] == 0)   # heavier first more often
    assert len(eud.WeightedRandomSampler(w, 7)) == 7
    for args in (([1., 2.], 0), ([1., 2.], 2, 1), ([[1., 2.]], 2)):
        with pytest.raises(ValueError) as te:
            tud.WeightedRandomSampler(*args)
        with pytest.raises(ValueError, match=re_escape(str(te.value))):
            eud.WeightedRandomSampler(*args)
    with pytest.raises(RuntimeError):
        list(eud.WeightedRandomSampler([1., 0.], 2, replacement=False))


def re_escape(s):
    import re
    return re.escape(s)


@pytest.mark.parametrize('n,replicas,drop_last', [(10, 3, False), (10, 3, True), (9, 3, False), (2, 4, False),
                                                  (11, 2, True), (7, 1, False)])
def test_distributed_sampler_matches_torch(n, replicas, drop_last):
    ds = list(range(n))
    for rank in range(replicas):
        e = eud.DistributedSampler(ds, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        t = tud.DistributedSampler(ds, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(e) == list(t) and len(e) == len(t)
    shards = [list(eud.DistributedSampler(ds, num_replicas=replicas, rank=r, shuffle=True, seed=3, drop_last=drop_last))
              for r in range(replicas)]
    tshards = [list(tud.DistributedSampler(ds, num_replicas=replicas, rank=r, shuffle=True, seed=3,
                                           drop_last=drop_last)) for r in range(replicas)]
    assert [len(s) for s in shards] == [len(s) for s in tshards]
    flat = [i for s in shards for i in s]
    assert set(flat) <= set(ds) and (drop_last or set(flat) == set(ds))
    assert len(set(flat)) == min(len(flat), n)   # no repeats beyond the padding


def test_distributed_sampler_epochs_and_errors():
    ds = list(range(40))
    s = eud.DistributedSampler(ds, num_replicas=2, rank=1, seed=7)
    first = list(s)
    assert first == list(s)
    s.set_epoch(1)
    assert list(s) != first and sorted(list(s) + list(eud.DistributedSampler(ds, 2, 0, seed=7).__iter__())) != []
    other = eud.DistributedSampler(ds, num_replicas=2, rank=0, seed=7)
    other.set_epoch(1)
    assert sorted(list(s) + list(other)) == ds
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        eud.DistributedSampler(ds, num_replicas=2, rank=2)


def test_reachable_as_torch_utils_data():
    assert ember.utils.data is eud and ember.utils.data.DataLoader is eud.DataLoader
    assert set(eud.__all__) >= {'DataLoader', 'Dataset', 'TensorDataset', 'get_worker_info', 'random_split'}


def test_tensor_dataset_batched_paths_match_per_sample_path():
    x = np.random.default_rng(0).random((30, 3, 2)).astype(np.float32)
    y = np.arange(30)
    ds = eud.TensorDataset(ember.from_numpy(x), ember.from_numpy(y))
    sampler = [29, 0, 5, 5, -1, 17, 3]
    # a collate_fn other than default_collate itself sees the samples, built row by row
    per_sample = list(eud.DataLoader(ds, batch_size=3, sampler=sampler, collate_fn=lambda b: eud.default_collate(b)))
    fast = list(eud.DataLoader(ds, batch_size=3, sampler=sampler))
    torch_ds = tud.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    ref = list(tud.DataLoader(torch_ds, batch_size=3, sampler=sampler))
    for a, b, c in zip(fast, per_sample, ref):
        assert_same(a, c)
        assert_same(b, c)
    rows = ds.__getitems__([4, 2])
    assert_same(rows, torch_ds.__getitems__([4, 2]) if hasattr(torch_ds, '__getitems__') else [torch_ds[4], torch_ds[2]])
    with pytest.raises(IndexError):
        list(eud.DataLoader(ds, batch_size=2, sampler=[1, 30]))

    class Doubled(eud.TensorDataset):   # a subclass that redefines a sample is respected
        def __getitem__(self, i):
            return tuple(t[i] * 2 for t in self.tensors)
    got = next(iter(eud.DataLoader(Doubled(ember.from_numpy(y)), batch_size=3)))
    assert got[0].tolist() == [0, 2, 4]
    w = ember.ones(4, 2, requires_grad=True)
    batch = next(iter(eud.DataLoader(eud.TensorDataset(w), batch_size=2)))[0]
    assert batch.requires_grad and batch.grad_fn is not None   # rows keep autograd history, as in torch


@pytest.mark.parametrize('module', ['', '.dataset', '.sampler', '.distributed', '.dataloader', '._utils.collate',
                                    '._utils.worker'])
def test_docstring_examples_run(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module('ember.utils.data' + module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
