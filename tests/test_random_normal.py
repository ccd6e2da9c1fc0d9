"""Normal draws equal torch's bit for bit at every size and dtype (NOTE [float32 Box-Muller passes] in
ember/_backends/cpu/_box_muller32.py, NOTE [torch's random streams] in _torch_random.py): the per-element
pairs below 16 elements, the blocks of 16 and their tail, chunk and thread boundaries, mean and std (the
fused multiply-add), and nn.init.trunc_normal_ in both of torch's branches."""
import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = ['float32', 'float64', 'float16', 'bfloat16']
BLOCKS_PER_CHUNK = 4096         # _torch_random._CHUNK: the float32 transform's chunk, in blocks of 16


def bits(t):
    """A tensor's bytes as unsigned integers: -0.0 and +0.0 differ, as they should."""
    a = np.ascontiguousarray((t.float() if t.dtype in (torch.bfloat16, ember.bfloat16) else t).numpy())
    return a.view(f'u{a.itemsize}')


def assert_same_draws(fn, seed=0):
    out = []
    for lib in (torch, ember):
        lib.manual_seed(seed)
        out.append(fn(lib))
    theirs, ours = out
    assert str(ours.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(bits(ours), bits(theirs))


SIZES = list(range(1, 41)) + [16 * 300 + r for r in (0, 1, 7, 15)] + [1_000_000]


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('n', SIZES)
def test_randn_every_size(n, dtype):
    assert_same_draws(lambda L: L.randn(n, dtype=getattr(L, dtype)), seed=n)


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mean, std', [(0.0, 1.0), (0.5, 1.0), (0.0, 0.02), (-1.5, 3.0), (2.0, 0.0)])
@pytest.mark.parametrize('n', [5, 16, 33, 16 * 300 + 7, 1_000_000])
def test_normal_mean_std(n, mean, std, dtype):
    assert_same_draws(lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(mean, std), seed=7)


@pytest.mark.parametrize('blocks, extra', [(BLOCKS_PER_CHUNK, 0), (BLOCKS_PER_CHUNK + 1, 3),
                                           (2 * BLOCKS_PER_CHUNK + 5, 11), (5 * BLOCKS_PER_CHUNK - 1, 0)])
@pytest.mark.parametrize('threads', [1, 2, 3])
def test_chunk_and_thread_boundaries(blocks, extra, threads):
    n = 16 * blocks + extra
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        assert_same_draws(lambda L: L.randn(n), seed=blocks)
        assert_same_draws(lambda L: L.empty(n).normal_(0.25, 0.5), seed=blocks)
    finally:
        ember.set_num_threads(old)


def test_draws_in_sequence_and_generators():
    assert_same_draws(lambda L: L.cat([L.randn(1000), L.randn(17), L.randn(3), L.randn(64, 65).flatten()]), seed=3)
    assert_same_draws(lambda L: L.randn(5000, generator=L.Generator().manual_seed(11)))
    assert_same_draws(lambda L: L.empty(40, 50).t().normal_(1.0, 2.0), seed=4)        # element by element


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mean, std, a, b', [
    (0.0, 0.02, -2.0, 2.0),             # timm's and GPT-2's: all accepted
    (0.5, 0.3, -1.0, 2.0),              # normal proposals, some redrawn
    (0.0, 1.0, -1.5, 1.5),
    (0.0, 1.0, 0.1, 0.2),               # uniform proposals accepted by the density ratio
    (0.3, 0.7, 1.1, 3.2),
])
def test_trunc_normal(mean, std, a, b, dtype):
    def draw(L):
        return L.nn.init.trunc_normal_(L.empty(60, 70, dtype=getattr(L, dtype)), mean, std, a, b)
    assert_same_draws(draw, seed=5)


def test_trunc_normal_generator_noncontiguous_and_warning():
    assert_same_draws(lambda L: L.nn.init.trunc_normal_(L.empty(50, 40).t(), 0.5, 0.3, -1.0, 2.0), seed=2)
    assert_same_draws(lambda L: L.nn.init.trunc_normal_(L.empty(300), 0.3, 0.7, 1.1, 3.2,
                                                        generator=L.Generator().manual_seed(9)))
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            lib.nn.init.trunc_normal_(lib.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)
        assert any('more than 2 std' in str(x.message) for x in w), lib.__name__
