"""ember.memory: the statistics of a device's allocator, with torch.cuda's (and torch.accelerator's) names.

A device registered with an allocator (``ember.utils.rename_privateuse1_backend('npu', allocator=...)``,
``ember.library.register_device``) answers here: ``memory_allocated``, ``max_memory_allocated``,
``memory_reserved``, ``max_memory_reserved``, ``memory_stats`` (torch's flat keys,
``'allocated_bytes.all.current'``), ``reset_peak_memory_stats``, ``empty_cache`` and, for a caching
allocator, ``memory_snapshot`` (its segments and blocks). ``device=None`` means the PrivateUse1 device, as
torch.accelerator's functions mean the current accelerator.

The CPU is not one of them: ember's CPU kernels allocate their results with NumPy, which no ember allocator
sees (NOTE [host malloc tuning] in ember/_core/allocator.py), so a CPU "memory_allocated" would be a number
that measures nothing. For CPU memory per operator use ``ember.profiler.profile(profile_memory=True)``.

>>> import ember, numpy as np
>>> from ember._core.allocator import CachingAllocator
>>> al = CachingAllocator(None, alignment=64, round_to=512, segment_size=4096)
>>> _ = ember.library.register_device('memdemo', allocator=al)
>>> buf = al.allocate(1000)
>>> ember.memory.memory_allocated('memdemo'), ember.memory.memory_reserved('memdemo')
(1024, 4096)
"""
import collections

from ._core import device as _device

_CPU = ("ember's CPU kernels allocate with NumPy, which no ember allocator sees, so ember.memory has no CPU "
        "statistics; use ember.profiler.profile(profile_memory=True) for the memory each operator allocates")


def _allocator(device):
    if device is None or isinstance(device, int):
        from .utils import get_privateuse1_backend_name
        name = get_privateuse1_backend_name()
        if name not in _device.registered_types():
            raise RuntimeError("Cannot access accelerator device when none is available. (ember.memory reports "
                               "on devices registered with an allocator, e.g. "
                               "ember.utils.rename_privateuse1_backend('npu', allocator=...))")
        device = name
    dev = device if isinstance(device, _device.device) else _device.device(device)
    if dev.type == 'cpu':
        raise RuntimeError(_CPU)
    al = _device.device_interface(dev.type).allocator
    if al is None:
        raise RuntimeError(f"device type '{dev.type}' was registered without an allocator: it has no memory "
                           f"statistics")
    return al


def memory_stats(device=None):
    """torch.cuda.memory_stats's flat dictionary for the allocator's counters (sorted by key)."""
    st = _allocator(device).memory_stats()
    alloc = st.get('allocated_bytes', 0)
    reserved = st.get('reserved_bytes', alloc)
    out = {
        'allocated_bytes.all.current': alloc,
        'allocated_bytes.all.peak': st.get('peak_allocated_bytes', alloc),
        'reserved_bytes.all.current': reserved,
        'reserved_bytes.all.peak': st.get('peak_reserved_bytes', reserved),
        'allocation.all.allocated': st.get('num_allocs', 0),
        'allocation.all.freed': st.get('num_frees', 0),
        'allocation.all.current': st.get('num_allocs', 0) - st.get('num_frees', 0),
        'num_alloc_retries': 0,
        'num_ooms': 0,
    }
    if 'num_segments' in st:
        out['segment.all.current'] = st['num_segments']
    if 'num_cache_hits' in st:
        out['num_cache_hits'] = st['num_cache_hits']      # ember's own: allocations served from the cache
    return collections.OrderedDict(sorted(out.items()))


def memory_allocated(device=None):
    """Bytes of live blocks (rounded sizes, as torch's)."""
    return memory_stats(device)['allocated_bytes.all.current']


def max_memory_allocated(device=None):
    """The peak of ``memory_allocated`` since the start or the last ``reset_peak_memory_stats``."""
    return memory_stats(device)['allocated_bytes.all.peak']


def memory_reserved(device=None):
    """Bytes the allocator holds from the device (live blocks plus its cache)."""
    return memory_stats(device)['reserved_bytes.all.current']


def max_memory_reserved(device=None):
    return memory_stats(device)['reserved_bytes.all.peak']


def reset_peak_memory_stats(device=None):
    """Set the peaks to the current values."""
    _allocator(device).reset_peak_stats()


def empty_cache(device=None):
    """Give the cached, unused segments back to the device (a no-op for an allocator that caches nothing)."""
    al = _allocator(device)
    if hasattr(al, 'empty_cache'):
        al.empty_cache()


def memory_snapshot(device=None):
    """torch.cuda.memory_snapshot: a list of segments, each ``{'address', 'total_size', 'allocated_size',
    'blocks': [{'address', 'size', 'state'}]}`` (state 'active_allocated' or 'inactive')."""
    al = _allocator(device)
    if not hasattr(al, 'snapshot'):
        raise RuntimeError(f"{type(al).__name__} keeps no segments to snapshot (only a CachingAllocator does)")
    return al.snapshot()


def plot_segments(snapshots, path, labels=None):
    """Draw caching-allocator snapshots (``memory_snapshot()`` or ``CachingAllocator.snapshot()``, one per
    moment) side by side: for each moment a column of segments, each segment a bar of its blocks, allocated
    blocks dark and cached free blocks light; block sizes to scale within a segment. Saves a PNG at ``path``
    (needs matplotlib: ``pip install ember[plot]``)."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("ember.memory.plot_segments needs matplotlib: pip install ember[plot]") from e
    labels = labels or [f't{i}' for i in range(len(snapshots))]
    height = max((len(s) for s in snapshots), default=1)
    fig, ax = plt.subplots(figsize=(1.6 * len(snapshots) + 1, 0.5 * height + 1.2))
    for x, snap in enumerate(snapshots):
        for y, seg in enumerate(snap):
            left = 0.0
            for b in seg['blocks']:
                w = b['size'] / seg['total_size']
                ax.barh(y, w * 0.9, left=x + left * 0.9, height=0.6, edgecolor='black', linewidth=0.5,
                        color='tab:blue' if b['state'] == 'active_allocated' else 'lightgray')
                left += w
    ax.set_xticks([i + 0.45 for i in range(len(snapshots))], labels)
    ax.set_yticks(range(height), [f'segment {i}' for i in range(height)])
    ax.set_title('allocated (blue), cached free (gray)')
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
