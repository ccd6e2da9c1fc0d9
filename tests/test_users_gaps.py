"""API that published programs and libraries use, found running them under ``ember run`` (llama2.c, Hugging Face
transformers and diffusers, Lightning, torchmetrics, einops programs), each checked against torch."""
import numpy as np
import pytest
import torch

import ember


def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


# --- Tensor.view(dtype) ------------------------------------------------------------------------------------------

VIEWS = {
    'same_size': lambda L, x: x.view(L.int32), 'smaller': lambda L, x: x.view(L.float16),
    'bytes': lambda L, x: x.view(L.uint8), 'larger': lambda L, x: x.view(L.float64),
    'keyword': lambda L, x: x.view(dtype=L.int16), 'complex': lambda L, x: x.view(L.complex64),
    'sliced_rows': lambda L, x: x[1:].view(L.float64), 'strided_rows': lambda L, x: x[::2].view(L.int8),
    'bool': lambda L, x: (x > 0).view(L.uint8), 'back': lambda L, x: x.view(L.uint8).view(L.float32),
}


@pytest.mark.parametrize('case', sorted(VIEWS))
def test_view_dtype_reads_the_same_bytes(case):
    x = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5
    e, t = VIEWS[case](ember, ember.from_numpy(x.copy())), VIEWS[case](torch, torch.from_numpy(x.copy()))
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    assert e.storage_offset() == t.storage_offset()
    assert e.numpy().tobytes() == t.numpy().tobytes()


def test_view_dtype_shares_memory_and_is_not_differentiable():
    x = ember.zeros(2, 4)
    x.view(ember.int32)[0, 1] = 1065353216       # the bits of 1.0
    assert x[0, 1].item() == 1.0 and x._version == 1
    y = ember.randn(2, 4, requires_grad=True).view(ember.int32)
    assert not y.requires_grad and y.grad_fn is None
    assert ember.empty(2, 4, device='meta').view(ember.float16).shape == (2, 8)


BAD_VIEWS = [lambda L, x: x[:, :3].view(L.float64), lambda L, x: x[:, ::2].view(L.float16),
             lambda L, x: L.tensor(1.).view(L.float16), lambda L, x: x[:, 1:3].view(L.float64),
             lambda L, x: x.t().view(L.float64), lambda L, x: x.t().contiguous().t()[:, :2].view(L.float64)]


@pytest.mark.parametrize('i', range(len(BAD_VIEWS)))
def test_view_dtype_errors_are_torchs(i):
    msgs = []
    for L in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            BAD_VIEWS[i](L, L.arange(8, dtype=L.float32).reshape(2, 4))
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


# --- torch.linalg.lstsq ------------------------------------------------------------------------------------------

@pytest.mark.parametrize('driver', [None, 'gels', 'gelsy', 'gelsd', 'gelss'])
@pytest.mark.parametrize('shape', [((5, 3), (5, 2)), ((5, 3), (5,)), ((2, 5, 3), (2, 5, 2)), ((3, 5), (3, 2))])
def test_lstsq_matches_torch(driver, shape):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape[0]), rng.standard_normal(shape[1])
    e = ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b), driver=driver)
    t = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
    for name in ('solution', 'residuals', 'rank', 'singular_values'):
        _same(getattr(e, name), getattr(t, name))


def test_lstsq_rank_deficient_and_gradients():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    a[:, 2] = a[:, 1]
    b = rng.standard_normal((5, 2)).astype(np.float32)
    for field in ('residuals', 'rank'):
        _same(getattr(ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b), driver='gelsd'), field),
              getattr(torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver='gelsd'), field))
    a[:, 2] += rng.standard_normal(5).astype(np.float32)
    grads = []
    for L in (ember, torch):
        A, B = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        (L.linalg.lstsq(A, B).solution ** 2).sum().backward()
        grads.append((A.grad, B.grad))
    _same(grads[0][0], grads[1][0])
    _same(grads[0][1], grads[1][1])


@pytest.mark.parametrize('bad', [lambda L: L.linalg.lstsq(L.randn(3), L.randn(3, 2)),
                                 lambda L: L.linalg.lstsq(L.randn(5, 3), L.randn(5, 2).double()),
                                 lambda L: L.linalg.lstsq(L.randn(5, 3), L.randn(5, 2), driver='x'),
                                 lambda L: L.linalg.lstsq(L.randn(5, 3), L.randn(4, 2)),
                                 lambda L: L.linalg.lstsq(L.ones(5, 3, dtype=L.int32), L.ones(5, 2, dtype=L.int32))])
def test_lstsq_errors_are_torchs(bad):
    msgs = []
    for L in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            bad(L)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]
