"""Allocators, storage, devices, and a new device registered from test code through the public API."""
import gc

import numpy as np
import pytest

import ember
from ember._core.allocator import CachingAllocator, CPUAllocator, _aligned_buffer
from ember.library import Library


def test_cpu_allocator_alignment():
    a = CPUAllocator(64)
    for n in (1, 7, 100, 4096):
        buf = a.allocate(n)
        assert buf.ctypes.data % 64 == 0 and buf.nbytes == n
    t = ember.empty(3, 5)
    s = t.untyped_storage()
    assert s.nbytes() == 60 and s.device == ember.device('cpu')


def test_caching_allocator_rounding_split_reuse_and_stats():
    raw_calls = []

    def raw(n):
        raw_calls.append(n)
        return _aligned_buffer(n, 32)
    al = CachingAllocator(raw, alignment=32, round_to=512, segment_size=4096)
    assert al.round_size(1) == 512 and al.round_size(513) == 1024
    a = al.allocate(100)
    st = al.memory_stats()
    assert st['allocated_bytes'] == 512 and st['reserved_bytes'] == 4096 and st['num_segments'] == 1
    b = al.allocate(1000)                 # split from the same segment: no new raw allocation
    assert len(raw_calls) == 1 and al.memory_stats()['allocated_bytes'] == 1536
    assert b.ctypes.data - a.ctypes.data == 512
    del a
    gc.collect()
    assert al.memory_stats()['allocated_bytes'] == 1024
    c = al.allocate(200)                  # reuses the freed block
    assert al.memory_stats()['num_cache_hits'] >= 2 and len(raw_calls) == 1
    big = al.allocate(10000)              # larger than a segment: a dedicated one
    assert len(raw_calls) == 2 and al.memory_stats()['peak_allocated_bytes'] >= 512 + 1024 + 10240
    del b, c, big
    gc.collect()
    assert al.memory_stats()['allocated_bytes'] == 0
    al.empty_cache()                      # free blocks merged back: every segment returns
    assert al.memory_stats()['reserved_bytes'] == 0 and al.memory_stats()['num_segments'] == 0


def test_caching_allocator_rejects_misaligned_raw_memory():
    al = CachingAllocator(lambda n: np.empty(n + 1, np.uint8)[1:], alignment=32)
    with pytest.raises(RuntimeError, match='aligned'):
        al.allocate(10)


def test_storage_shared_by_views_and_version_counter():
    x = ember.zeros(4, 3)
    v = x.transpose(0, 1)
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert v.storage_offset() == 0 and v.stride() == (1, 3)
    x.add_(1)
    assert x._version == 1 and v._version == 1
    assert v.tolist()[0] == [1.0] * 4


def test_meta_device_has_no_data():
    m = ember.empty(2, 3, device='meta')
    assert m.device.type == 'meta' and m.is_meta
    r = (m + 1).transpose(0, 1)
    assert r.shape == (3, 2) and r.stride() == (1, 3)
    with pytest.raises(NotImplementedError, match='meta'):
        m.tolist()
    assert m.untyped_storage().nbytes() == 24


def test_device_parsing():
    assert ember.device('cuda:1').index == 1 and ember.device('cuda', 0).type == 'cuda' \
        if 'cuda' in ember._core.device.registered_types() else True
    assert str(ember.device('cpu')) == 'cpu' and repr(ember.device('meta')) == "device(type='meta')"
    with pytest.raises(RuntimeError):
        ember.device('nosuchdevice')


@pytest.fixture(scope='module')
def npu():
    """A simulated accelerator: NumPy memory from a caching allocator demanding 32-byte alignment."""
    al = CachingAllocator(None, alignment=32, round_to=32, segment_size=1 << 16)

    def from_host(a, index=None):
        buf = al.allocate(max(a.nbytes, 1))[:a.nbytes]
        out = buf.view(a.dtype).reshape(a.shape)
        out[...] = a
        return out
    ember.utils.rename_privateuse1_backend('npu', allocator=al, from_host=from_host,
                                           to_host=lambda a: np.array(a))
    ember.utils.generate_methods_for_privateuse1_backend()

    def device_empty(shape, dtype):
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return al.allocate(max(n, 1))[:n].view(dtype).reshape(shape)

    lib = Library('aten', 'IMPL')
    lib.impl('add.Tensor', lambda a, b, alpha: np.add(a, b if alpha == 1 else b * alpha,
                                                      out=device_empty(np.broadcast_shapes(np.shape(a), np.shape(b)),
                                                                       np.result_type(a, b))), 'PrivateUse1')
    lib.impl('mul.Tensor', lambda a, b: np.multiply(a, b, out=device_empty(
        np.broadcast_shapes(np.shape(a), np.shape(b)), np.result_type(a, b))), 'PrivateUse1')
    lib.impl('ones', lambda size, dtype, device: np.ones(size, dtype), 'PrivateUse1')
    yield al
    lib._destroy()


def test_new_device_end_to_end(npu):
    al = npu
    x = ember.tensor([1., 2., 3.]).to('npu')
    assert x.device == ember.device('npu', 0) and x.is_npu and not x.is_cpu
    assert x.data_ptr() % 32 == 0
    before = al.memory_stats()['num_allocs']
    y = x * x + x                                      # kernels registered from test code
    assert y.device.type == 'npu' and al.memory_stats()['num_allocs'] == before + 2
    assert y.data_ptr() % 32 == 0
    assert y.cpu().tolist() == [2., 6., 12.]
    z = x.view(3, 1).transpose(0, 1)                   # views need no kernel on any device
    assert z.device.type == 'npu' and z.stride() == (1, 1)
    assert ember.ones(2, device='npu').npu().device.type == 'npu'
    g = ember.ones(3, requires_grad=True).to('npu')    # autograd runs above the backend
    (g * g).backward(ember.ones(3).to('npu'))


def test_new_device_missing_kernel_names_op_and_backend(npu):
    x = ember.ones(2).to('npu')
    with pytest.raises(NotImplementedError, match=r"aten::sub\.Tensor.*NPU"):
        x - x


def test_mixing_devices_in_one_op_is_an_error(npu):
    x = ember.ones(2).to('npu')
    with pytest.raises((RuntimeError, NotImplementedError)):
        x + ember.ones(2, device='meta')


def test_device_context_manager_sets_the_factories_default_like_torch():
    import torch
    for L in (torch, ember):
        with L.device('meta'):
            lin = L.nn.Linear(4, 3)
            made = [L.zeros(2), L.randn(2), L.tensor([1.]), L.arange(3)]
            with L.device('cpu'):
                inner = L.ones(1)
        assert lin.weight.device.type == 'meta' and all(t.device.type == 'meta' for t in made), L
        assert inner.device.type == 'cpu' and L.zeros(1).device.type == 'cpu', L
