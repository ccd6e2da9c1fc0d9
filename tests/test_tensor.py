"""The Tensor handle: printing, metadata, conversions and Python protocols, against torch."""
import numpy as np
import pytest
import torch

import ember


def _same_repr(data, **kw):
    e = repr(ember.tensor(data, **{k: getattr(ember, v) for k, v in kw.items()}))
    t = repr(torch.tensor(data, **{k: getattr(torch, v) for k, v in kw.items()})).replace('torch.', 'ember.')
    assert e == t


@pytest.mark.parametrize('data', [
    [1.5, 2.0], [1., 2.], [[1, 2], [3, 4]], [1e-5, 1.], [123456789., 1.], [True, False], 3.25, 7, True,
    [float('nan'), 1., float('inf')], [-1., 2.5], [[True] * 3] * 2, [1 + 2j, 3 - 1j], [0., 0.], [-float('inf'), 2.],
    [[1e10, 1e-10]], [0.1, 100.25, -3.], [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], 0.0001, [12345.6789],
])
def test_repr_matches_torch(data):
    _same_repr(data)


@pytest.mark.parametrize('dtype', ['float64', 'int32', 'uint8', 'float16', 'int8'])
def test_repr_dtype_suffix(dtype):
    _same_repr([1, 2, 3], dtype=dtype)


@pytest.mark.parametrize('arr', [np.arange(2000.).reshape(40, 50), np.arange(30).reshape(3, 10),
                                 np.linspace(-5, 5, 100).astype(np.float32), np.arange(1200).reshape(2, 600),
                                 np.random.default_rng(0).random((3, 4, 5)).astype(np.float32)])
def test_repr_summarised_and_wrapped(arr):
    assert repr(ember.tensor(arr)) == repr(torch.tensor(arr)).replace('torch.', 'ember.')


def test_repr_empty_meta_and_autograd():
    assert repr(ember.zeros(0)) == repr(torch.zeros(0))
    assert repr(ember.zeros(2, 0)) == repr(torch.zeros(2, 0))
    assert repr(ember.ones(2, 3, device='meta')) == repr(torch.ones(2, 3, device='meta'))
    assert repr(ember.ones(2, requires_grad=True)) == repr(torch.ones(2, requires_grad=True))
    assert repr(ember.ones(2, requires_grad=True) * 2) == repr(torch.ones(2, requires_grad=True) * 2)


def test_set_printoptions():
    try:
        ember.set_printoptions(precision=2)
        torch.set_printoptions(precision=2)
        assert repr(ember.tensor([1.23456])) == repr(torch.tensor([1.23456]))
    finally:
        ember.set_printoptions(profile='default')
        torch.set_printoptions(profile='default')


def test_metadata():
    x = ember.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == ember.Size([2, 3, 4]) and x.size(-1) == 4
    assert x.stride() == (12, 4, 1) and x.stride(0) == 12 and x.storage_offset() == 0
    assert x.ndim == 3 and x.dim() == 3 and x.numel() == 24 and x.element_size() == 4 and x.nbytes == 96
    assert x.is_contiguous() and not x.transpose(0, 1).is_contiguous()
    assert repr(x.shape) == 'ember.Size([2, 3, 4])' and x.shape.numel() == 24
    with pytest.raises(IndexError, match='Dimension out of range'):
        x.size(3)


def test_numpy_shares_memory_and_from_numpy():
    x = ember.zeros(3)
    a = x.numpy()
    a[0] = 5
    assert x[0].item() == 5 if hasattr(ember.Tensor, '__getitem__') else x.tolist()[0] == 5
    b = np.arange(4, dtype=np.float32)
    t = ember.from_numpy(b)
    b[1] = 9
    assert t.tolist() == [0, 9, 2, 3]
    with pytest.raises(RuntimeError, match='requires grad'):
        ember.ones(2, requires_grad=True).numpy()
    assert np.asarray(ember.ones(2)).tolist() == [1., 1.]


def test_item_tolist_bool_len_iter():
    assert ember.tensor(2.5).item() == 2.5 and isinstance(ember.tensor(3).item(), int)
    assert ember.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert bool(ember.tensor(1.)) and not bool(ember.tensor([0]))
    with pytest.raises(RuntimeError, match='ambiguous'):
        bool(ember.ones(2))
    with pytest.raises(RuntimeError, match='cannot be converted to Scalar'):
        ember.ones(2).item()
    assert len(ember.zeros(4, 2)) == 4
    with pytest.raises(TypeError):
        len(ember.tensor(1.))
    assert [r.tolist() for r in ember.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    assert float(ember.tensor(1.5)) == 1.5 and int(ember.tensor(3)) == 3
    assert [10, 20, 30][ember.tensor(1)] == 20


def test_tensor_dtype_inference_matches_torch():
    for data in ([1, 2], [1.5], [True], [1, 2.5], [True, 2], np.array([1, 2], np.int32), np.float64(1.5),
                 [np.float32(1)], 3, 2.5, [[1j]]):
        assert ember.tensor(data).dtype.name == str(torch.tensor(data).dtype).replace('torch.', ''), data


def test_to_and_casts():
    x = ember.tensor([1.7, -2.2])
    assert x.to(ember.int64).tolist() == torch.tensor([1.7, -2.2]).to(torch.int64).tolist()
    assert x.double().dtype is ember.float64 and x.long().dtype is ember.int64 and x.bool().dtype is ember.bool
    assert x.to('cpu') is x and x.to(ember.float32) is x and x.to(ember.float32, copy=True) is not x
    assert x.to(ember.zeros(1, dtype=ember.float64)).dtype is ember.float64
    m = x.to('meta')
    assert m.device.type == 'meta' and m.shape == (2,)
    assert x.type() == 'ember.FloatTensor'


def test_dlpack_roundtrip():
    x = ember.arange(6).view(2, 3)
    y = ember.from_dlpack(np.from_dlpack(x))
    assert y.tolist() == x.tolist()
    a = np.arange(3.)
    assert ember.from_dlpack(a).tolist() == [0., 1., 2.]


def test_hash_is_identity_and_eq_is_elementwise():
    a, b = ember.ones(2), ember.ones(2)
    assert hash(a) != hash(b) or a is not b
    assert len({a, b}) == 2
    assert (a == b).tolist() == [True, True]
