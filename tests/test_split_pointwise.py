"""Large pointwise kernels and copies cut into blocks over the intra-op threads (NOTE [split pointwise] in
ember/_backends/cpu/_split.py) give bit for bit the result of one whole call: odd sizes, broadcasting,
non-contiguous and transposed inputs, Python-number operands, in-place and out= writes, transcendental
functions. The split is forced at small sizes by lowering the threshold, and each test checks that it
really was split (so a test cannot pass by running the whole call twice)."""
import numpy as np
import pytest

import ember
from ember._backends.cpu import _split


@pytest.fixture
def splits(monkeypatch):
    """Split everything from 1,000 elements on, on 2 threads; counts the parallel_for calls."""
    calls = []
    real = _split.parallel_for

    def counting(n, fn, grain):
        calls.append(n)
        return real(n, fn, grain)
    monkeypatch.setattr(_split, 'parallel_for', counting)
    monkeypatch.setattr(_split, 'ADAPTIVE', False)      # always split above the threshold
    prev = ember.get_num_threads()
    ember.set_num_threads(2)
    yield calls
    ember.set_num_threads(prev)


def _both(fn, monkeypatch, calls):
    """fn() whole (threshold out of reach) and fn() split; the second must have gone through parallel_for."""
    monkeypatch.setattr(_split, 'SPLIT_WORK', 1 << 40)
    whole = fn()
    n = len(calls)
    monkeypatch.setattr(_split, 'SPLIT_WORK', 1000)
    cut = fn()
    assert len(calls) > n, "the kernel was not split"
    return whole, cut


def _r(*shape, dtype=np.float32, seed=0):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 3)


CASES = {
    'add odd flat': lambda x, y, z: x + y,
    'add alpha': lambda x, y, z: ember.add(x, y, alpha=0.3),
    'sub broadcast row': lambda x, y, z: x - z,
    'mul number': lambda x, y, z: x * 2.5,
    'div int number': lambda x, y, z: 7 / x,
    'sin': lambda x, y, z: x.sin(),
    'exp': lambda x, y, z: x.exp(),
    'log abs': lambda x, y, z: x.abs().log(),
    'add non-contiguous slice': lambda x, y, z: x[:, 1::2] + y[:, :-1:2],
    'mul sliced rows': lambda x, y, z: x[1::3] * y[::3],
    'maximum broadcast column': lambda x, y, z: ember.maximum(x, z.reshape(-1, 1)[:1].expand(x.shape[0], 1)),
    'compare': lambda x, y, z: x > y,
    'clone contiguous': lambda x, y, z: x.clone(),
    'clone transposed, contiguous_format': lambda x, y, z: x.t().clone(memory_format=ember.contiguous_format),
    'contiguous of a slice': lambda x, y, z: x[:, 1::2].contiguous(),
    'threshold_backward': lambda x, y, z: ember.ops.aten.threshold_backward(y, x, 0.0),
    # a fallback path of the kernel (operands of different shapes) returns a new array: each block's result
    # must still land in the preallocated output (vmap(jacrev) of a ReLU net read uninitialised memory here)
    'threshold_backward broadcast': lambda x, y, z: ember.ops.aten.threshold_backward(
        (y.unsqueeze(1) * ember.tensor([[1.0], [-2.0], [0.5]])).contiguous(), x.unsqueeze(1), 0.0),
}


@pytest.mark.parametrize('name', sorted(CASES))
def test_split_equals_whole(name, splits, monkeypatch):
    x, y = _r(257, 129), _r(257, 129, seed=1)       # odd sizes: blocks end mid-row and mid-SIMD-vector
    z = _r(129, seed=2)
    fn = CASES[name]
    whole, cut = _both(lambda: fn(x, y, z), monkeypatch, splits)
    assert whole.dtype == cut.dtype and whole.shape == cut.shape
    assert whole.stride() == cut.stride()           # the same layout a whole ufunc call chooses
    assert np.array_equal(whole.numpy().view(np.uint8) if whole.dtype != ember.bool else whole.numpy(),
                          cut.numpy().view(np.uint8) if cut.dtype != ember.bool else cut.numpy())


@pytest.mark.parametrize('dtype', [np.float64, np.int32])
def test_split_other_dtypes(dtype, splits, monkeypatch):
    x = ember.tensor((np.arange(3001 * 3) % 97).astype(dtype).reshape(3001, 3) + 1)
    whole, cut = _both(lambda: x * x + x, monkeypatch, splits)
    assert whole.dtype == cut.dtype and np.array_equal(whole.numpy(), cut.numpy())


def test_split_in_place_and_out(splits, monkeypatch):
    base = _r(301, 77)
    y = _r(301, 77, seed=1)

    def inplace():
        x = base.clone()
        x.t().mul_(y.t())           # a non-contiguous destination: cut by rows of the given out
        x.add_(y, alpha=2)
        return x

    def out_arg():
        o = ember.empty(301, 77)
        ember.sin(base, out=o)
        return o
    for fn in (inplace, out_arg):
        whole, cut = _both(fn, monkeypatch, splits)
        assert np.array_equal(whole.numpy().view(np.uint8), cut.numpy().view(np.uint8))


def test_small_and_single_thread_not_split(splits, monkeypatch):
    monkeypatch.setattr(_split, 'SPLIT_WORK', 1000)
    x = _r(10, 10)
    x + x                           # 100 elements: below the threshold
    assert splits == []
    ember.set_num_threads(1)
    y = _r(100, 100)
    y + y
    assert splits == []


def test_transposed_inputs_keep_their_layout(splits, monkeypatch):
    """A ufunc lays out its result like a transposed input (as torch does); the split allocates C-ordered
    results, so such calls run whole."""
    monkeypatch.setattr(_split, 'SPLIT_WORK', 1000)
    x, y = _r(257, 129), _r(257, 129, seed=1)
    for r in (x.t().tanh(), ember.atan2(x.t(), y.t())):
        assert r.stride() == (1, 129)
    assert splits == []


def test_choice_follows_the_measured_speed(monkeypatch):
    """The adaptive choice (NOTE [split pointwise]): one whole call, one split call, then the faster way, with
    the slower one tried again on every 64th call."""
    monkeypatch.setattr(_split, 'ADAPTIVE', True)
    c = _split._Choice()
    assert c.split_now() is False
    c.record(False, 2.0, 1)
    assert c.split_now() is True
    c.record(True, 1.0, 1)      # split twice as fast
    picks = [c.split_now() for _ in range(128)]
    assert picks.count(False) == 2 and picks.count(True) == 126
    for _ in range(20):
        c.record(True, 4.0, 1)  # the machine got busy: splitting became slow
    assert [c.split_now() for _ in range(63)].count(False) >= 62


def test_partially_overlapping_in_place_operands_are_not_split(splits, monkeypatch):
    """``x[1:, 1:] += x[:-1, :-1]`` (operands with gaps, which torch's overlap check lets through: NOTE [memory
    overlap]): blocks run on different threads would read values other blocks already wrote, so the call stays
    whole (NumPy's buffered result); an operand that is the output itself still splits."""
    monkeypatch.setattr(_split, 'SPLIT_WORK', 1000)
    a = np.random.default_rng(1).standard_normal(50_001).astype(np.float32)
    m = a[:50_000].reshape(250, 200)
    e = ember.tensor(m)
    e[1:, 1:].add_(e[:-1, :-1])
    np.testing.assert_array_equal(e.numpy()[1:, 1:], m[1:, 1:] + m[:-1, :-1])
    assert splits == []
    e = ember.tensor(a)
    e.add_(e)
    np.testing.assert_array_equal(e.numpy(), a + a)
    assert splits != []


def test_small_operands_broadcasting_to_a_large_output_are_split(splits, monkeypatch):
    """An outer product (vmap's per-sample weight gradients): both operands are below the threshold, the
    output is above it, so it is cut by rows; the same bits as the whole call."""
    g, x = _r(6, 40, 1), _r(6, 1, 30, seed=1)          # 240 and 180 elements -> 7,200
    whole, cut = _both(lambda: g * x, monkeypatch, splits)
    assert np.array_equal(whole.numpy().view(np.uint8), cut.numpy().view(np.uint8))
    monkeypatch.setattr(_split, 'SPLIT_WORK', 1000)
    n = len(splits)
    _r(6, 40, 1) * _r(6, 40, 1)                          # same shapes, 240 elements: whole
    _r(6, 40, 1) + _r(40, 1)                              # broadcasting to a small output: whole
    assert len(splits) == n
