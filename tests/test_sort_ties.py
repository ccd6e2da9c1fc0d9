"""Equal elements come out of sort/argsort/msort/topk/kthvalue in torch's order (NOTE [tie order of torch's sort]
in ember/_backends/cpu/_torch_sort.py): torch's CPU sort with stable=False is an introsort that permutes ties,
topk a partial sort or nth_element, kthvalue a quickselect. Every test compares indices with torch 2.13 on inputs
with many ties (and NaNs, -0.0), where a stable order differs from torch's in most rows."""
import numpy as np
import pytest
import torch

import ember

SIZES = list(range(1, 201, 3)) + [1000, 5000]
DTYPES = ['float32', 'float64', 'int64', 'int32', 'bool', 'float16']

# McIlroy's "killer adversary" input for libstdc++'s introsort (halved, so that it has ties): it drives the
# recursion past 2*log2(n) and into the heapsort fallback
DEEP = [93, 1, 71, 3, 85, 5, 69, 7, 99, 9, 67, 11, 83, 13, 65, 15, 91, 17, 63, 19, 81, 21, 24, 23, 98, 96, 94, 92,
        90, 88, 86, 84, 82, 80, 78, 76, 74, 72, 70, 68, 66, 64, 95, 79, 89, 77, 97, 75, 87, 73, 0, 2, 4, 6, 8, 10, 12,
        14, 16, 18, 20, 22, 62, 59, 60, 57, 58, 55, 56, 53, 54, 51, 52, 49, 50, 47, 48, 45, 46, 43, 44, 41, 42, 39, 40,
        37, 38, 35, 36, 33, 34, 31, 32, 29, 30, 27, 28, 25, 26, 61]


def tied(rng, shape, dtype):
    """Values with many ties: a few distinct values, some NaNs and -0.0 for floating dtypes."""
    n = int(np.prod(shape))
    distinct = int(rng.integers(1, max(2, n // int(rng.choice([1, 2, 4, 10, 50])) + 1)))
    v = rng.integers(0, distinct + 1, shape)
    if dtype == 'bool':
        return v % 2 == 0
    x = (v - distinct // 2).astype(dtype)
    if dtype.startswith('float'):
        if rng.random() < 0.3:
            x[rng.random(shape) < 0.1] = np.nan
        if rng.random() < 0.3:
            x[x == 0] = -0.0
    return x


def both(x):
    return torch.from_numpy(x.copy()), ember.from_numpy(x.copy())


def same(t, e):
    assert np.array_equal(e.numpy(), t.numpy(), equal_nan=True), (t, e)


@pytest.mark.parametrize('dtype', DTYPES)
def test_sort_and_argsort_1d(dtype):
    rng = np.random.default_rng(0)
    differs = 0
    for n in SIZES:
        t, e = both(tied(rng, (n,), dtype))
        for descending in (False, True):
            ti = torch.sort(t, descending=descending).indices
            same(ti, ember.sort(e, descending=descending).indices)
            same(ti, ember.argsort(e, descending=descending))
            same(ti, e.argsort(dim=0, descending=descending))
            differs += not torch.equal(ti, torch.sort(t, descending=descending, stable=True).indices)
            same(torch.sort(t, descending=descending, stable=True).indices,
                 ember.sort(e, descending=descending, stable=True).indices)
    assert differs > len(SIZES)      # the inputs do tell torch's order from a stable one


@pytest.mark.parametrize('dtype', ['float32', 'int64', 'bfloat16'])
def test_sort_rows_columns_and_strided(dtype):
    rng = np.random.default_rng(1)
    for shape in [(7, 40), (3, 5, 33), (300, 3), (1, 100)]:
        x = tied(rng, shape, 'float32' if dtype == 'bfloat16' else dtype)
        t, e = both(x)
        if dtype == 'bfloat16':
            t, e = t.to(torch.bfloat16), e.to(ember.bfloat16)
        for dim in range(len(shape)):
            for descending in (False, True):
                r, s = torch.sort(t, dim, descending), ember.sort(e, dim, descending)
                same(r.indices, s.indices)
                same(r.values.float(), s.values.float())
                same(torch.sort(t.transpose(0, -1), dim, descending).indices,
                     ember.sort(e.transpose(0, -1), dim, descending).indices)


def test_sort_deep_recursion_uses_heapsort():
    x = np.array(DEEP) // 2
    for dtype in ('float64', 'int64'):
        t, e = both(x.astype(dtype))
        same(torch.argsort(t), ember.argsort(e))


def test_large_integer_1d_ascending_is_radix_sorted_stably():
    rng = np.random.default_rng(2)
    for n in (32768, 40000):
        t, e = both(rng.integers(0, 20, n))
        same(torch.sort(t).indices, ember.sort(e).indices)
        assert torch.equal(torch.sort(t).indices, torch.sort(t, stable=True).indices)


def test_ties_follow_torch_up_to_the_budget_then_keep_the_stable_order():
    """NOTE [tie order of torch's sort]: the emulation runs while one call's tied rows hold at most BUDGET
    elements; past it the order is the stable one (where torch's differs)."""
    from ember._backends.cpu._torch_sort import BUDGET
    rng = np.random.default_rng(3)
    t, e = both(rng.integers(0, 50, BUDGET))
    for descending in (False, True):
        same(torch.sort(t, descending=descending).indices, ember.sort(e, descending=descending).indices)
    t, e = both(rng.integers(0, 50, (2, BUDGET // 2 + 1)))
    same(torch.sort(t, stable=True).indices, ember.sort(e).indices)
    assert not torch.equal(torch.sort(t).indices, torch.sort(t, stable=True).indices)


def test_expanded_input_keeps_its_order():
    t, e = torch.zeros(1).expand(50), ember.zeros(1).expand(50)
    same(torch.sort(t).indices, ember.sort(e).indices)
    t, e = torch.ones(4, 1).expand(4, 30), ember.ones(4, 1).expand(4, 30)
    same(torch.sort(t, descending=True).indices, ember.sort(e, descending=True).indices)


def test_msort_signed_zeros():
    rng = np.random.default_rng(3)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0]), (60, 3))
    t, e = both(x)
    same(torch.msort(t).signbit(), ember.msort(e).signbit())
    same(torch.sort(t, 0).values.signbit(), ember.sort(e, 0).values.signbit())


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'int64', 'int32', 'float16'])
def test_topk(dtype):
    rng = np.random.default_rng(4)
    for n in SIZES:
        t, e = both(tied(rng, (n,), dtype))
        for k in sorted({min(n, k) for k in (1, 2, max(1, n // 64), n // 64 + 1, max(1, n // 3), n)}):
            for largest in (True, False):
                for srt in (True, False):
                    r, s = torch.topk(t, k, largest=largest, sorted=srt), ember.topk(e, k, largest=largest, sorted=srt)
                    same(r.indices, s.indices)
                    same(r.values, s.values)


def test_topk_rows_and_dims():
    rng = np.random.default_rng(5)
    t, e = both(tied(rng, (20, 130), 'float32'))
    for dim, k in [(1, 2), (1, 40), (0, 3), (0, 20), (-1, 130)]:
        for srt in (True, False):
            same(torch.topk(t, k, dim, sorted=srt).indices, ember.topk(e, k, dim, sorted=srt).indices)
            same(torch.topk(t, k, dim, largest=False, sorted=srt).indices,
                 ember.topk(e, k, dim, largest=False, sorted=srt).indices)


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'int64', 'int32'])
def test_kthvalue(dtype):
    rng = np.random.default_rng(6)
    for n in SIZES:
        t, e = both(tied(rng, (n,), dtype))
        for k in sorted({1, 2 if n > 1 else 1, (n + 1) // 2, n}):
            same(torch.kthvalue(t, k).indices, ember.kthvalue(e, k).indices)
    t, e = both(tied(rng, (9, 31), dtype))
    for dim, k in [(0, 5), (1, 16), (1, 1), (0, 9)]:
        r, s = torch.kthvalue(t, k, dim, keepdim=True), ember.kthvalue(e, k, dim, keepdim=True)
        same(r.indices, s.indices)
        same(r.values, s.values)


@pytest.mark.parametrize('dtype', ['float32', 'int64'])
def test_median_dim_breaks_ties_by_index(dtype):
    """torch's median(dim) compares (value, index): the stable choice, which ember keeps."""
    rng = np.random.default_rng(7)
    for shape in [(5, 41), (40, 6), (1, 200)]:
        t, e = both(tied(rng, shape, dtype))
        for dim in (0, 1):
            same(torch.median(t, dim).indices, ember.median(e, dim).indices)
            same(torch.nanmedian(t, dim).indices, ember.nanmedian(e, dim).indices)
