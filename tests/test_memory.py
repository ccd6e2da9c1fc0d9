"""ember.memory: allocator statistics with torch.cuda's names, for devices registered with an allocator, and the
caching allocator's snapshot of segments and blocks."""
import gc

import numpy as np
import pytest

import ember
from ember._core.allocator import CachingAllocator, CPUAllocator


@pytest.fixture
def caching(device_registry):
    al = CachingAllocator(None, alignment=64, round_to=512, segment_size=4096)
    ember.library.register_device('memcache', allocator=al)
    return al


def test_statistics_follow_allocations_and_frees(caching):
    m = ember.memory
    a = caching.allocate(100)
    b = caching.allocate(1000)
    assert m.memory_allocated('memcache') == 512 + 1024 and m.memory_reserved('memcache') == 4096
    del a
    gc.collect()
    assert m.memory_allocated('memcache') == 1024 and m.max_memory_allocated('memcache') == 1536
    m.reset_peak_memory_stats('memcache')
    assert m.max_memory_allocated('memcache') == 1024
    big = caching.allocate(10000)                              # a segment of its own
    assert m.memory_reserved('memcache') == 4096 + 10240 and m.max_memory_reserved('memcache') == 4096 + 10240
    st = m.memory_stats(ember.device('memcache'))
    assert list(st) == sorted(st)
    assert st['allocated_bytes.all.current'] == 1024 + 10240 and st['allocated_bytes.all.peak'] == 1024 + 10240
    assert st['allocation.all.allocated'] == 3 and st['allocation.all.freed'] == 1 and st['allocation.all.current'] == 2
    assert st['segment.all.current'] == 2 and st['num_ooms'] == 0
    del b, big
    gc.collect()
    m.empty_cache('memcache')
    assert m.memory_reserved('memcache') == 0 and m.max_memory_reserved('memcache') == 4096 + 10240


def test_snapshot_lists_segments_and_blocks(caching):
    a, b, c = caching.allocate(512), caching.allocate(512), caching.allocate(1024)
    del b
    gc.collect()
    (seg,) = ember.memory.memory_snapshot('memcache')
    assert seg['total_size'] == 4096 and seg['allocated_size'] == 512 + 1024
    assert [(blk['size'], blk['state']) for blk in seg['blocks']] == [
        (512, 'active_allocated'), (512, 'inactive'), (1024, 'active_allocated'), (2048, 'inactive')]
    addrs = [blk['address'] for blk in seg['blocks']]
    assert addrs[0] == seg['address'] == a.ctypes.data and addrs[2] == c.ctypes.data
    assert all(addrs[i] + seg['blocks'][i]['size'] == addrs[i + 1] for i in range(3))    # contiguous, in order


def test_cpu_allocator_device_and_its_peak(device_registry):
    al = CPUAllocator(64)
    ember.library.register_device('memplain', allocator=al)
    bufs = [al.allocate(100) for _ in range(3)]
    assert ember.memory.memory_allocated('memplain') == 300 == ember.memory.memory_reserved('memplain')
    del bufs[:2]
    gc.collect()
    assert ember.memory.memory_allocated('memplain') == 100 and ember.memory.max_memory_allocated('memplain') == 300
    ember.memory.reset_peak_memory_stats('memplain')
    assert ember.memory.max_memory_allocated('memplain') == 100
    with pytest.raises(RuntimeError, match='only a CachingAllocator'):
        ember.memory.memory_snapshot('memplain')


def test_cpu_and_devices_without_allocator_say_why(device_registry):
    with pytest.raises(RuntimeError, match=r"NumPy.*profile_memory=True"):
        ember.memory.memory_allocated('cpu')
    ember.library.register_device('memnone')
    with pytest.raises(RuntimeError, match='without an allocator'):
        ember.memory.memory_stats('memnone')


def test_default_device_is_the_privateuse1_backend(device_registry):
    al = CachingAllocator(None, alignment=64, round_to=512, segment_size=4096)

    def from_host(a, index=None):         # the device's memory comes from its allocator
        out = al.allocate(max(a.nbytes, 1))[:a.nbytes].view(a.dtype).reshape(a.shape)
        out[...] = a
        return out
    ember.utils.rename_privateuse1_backend('memacc', allocator=al, from_host=from_host)
    x = ember.ones(10).to('memacc')
    assert ember.memory.memory_allocated() == 512 == ember.memory.memory_allocated(0)
    del x
    gc.collect()
    assert ember.memory.memory_allocated() == 0
