"""Allocators: where a Storage's bytes come from.

An allocator hands out flat byte buffers (NumPy ``uint8`` arrays, or CuPy ones
on a GPU). The memory goes back when the last array viewing the buffer dies:
each buffer carries a ``weakref.finalize`` that returns its block, so tensors,
views and NumPy arrays made from them all keep the block alive for as long as
they need it, with no manual free.

NOTE [buffer lifetime]: NumPy collapses chains of views to the array that owns
the memory, so a plain slice of a segment would let views outlive the block's
finalizer. Each block is therefore exported through a memoryview
(`_owned_view`): NumPy stops collapsing at a non-array base, so every view
made from the block keeps the block's own array alive.

`CachingAllocator` is the design of PyTorch's CUDA caching allocator in
miniature: sizes are rounded to classes, freed blocks go to a free list instead
of back to the device, a large free block is split to serve a small request,
and `empty_cache()` gives unused segments back; `snapshot()` lists its segments
and blocks (torch.cuda.memory_snapshot's format).

Every allocation and free is reported to the functions in `MEMORY_OBSERVERS`
(ember.profiler's memory events) when there are any: one truth test otherwise.
ember.memory reads the statistics.
"""
import bisect
import weakref

import numpy as np


MEMORY_OBSERVERS = []    # fn(allocator, nbytes, address): nbytes < 0 for a free (ember.profiler)


def _report(allocator, nbytes, address):
    for fn in MEMORY_OBSERVERS:
        fn(allocator, nbytes, address)


def _address(a):
    return a.ctypes.data if isinstance(a, np.ndarray) else getattr(getattr(a, 'data', None), 'ptr', 0)


class Allocator:
    """Interface: ``allocate(nbytes) -> uint8 array`` whose memory lives as long as the array.

    ``memory_stats()`` gives at least ``allocated_bytes`` and ``peak_allocated_bytes``;
    ``reset_peak_stats()`` sets the peaks to the current values."""
    alignment = 1

    def allocate(self, nbytes):
        raise NotImplementedError

    def memory_stats(self):
        return {}

    def reset_peak_stats(self):
        pass


def _owned_view(raw, start, stop):
    """``raw[start:stop]`` as an array that every further view keeps alive (NOTE [buffer lifetime])."""
    if isinstance(raw, np.ndarray):
        return np.frombuffer(memoryview(raw)[start:stop], dtype=np.uint8)
    return raw[start:stop]


def _aligned_buffer(nbytes, alignment):
    """A uint8 array of ``nbytes`` whose first byte is ``alignment``-aligned."""
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    shift = -raw.ctypes.data % alignment
    return raw[shift:shift + nbytes]


class CPUAllocator(Allocator):
    """Plain aligned host memory (64 bytes by default, like c10's alloc_cpu)."""

    def __init__(self, alignment=64):
        self.alignment = alignment
        self.stats = {'allocated_bytes': 0, 'peak_allocated_bytes': 0, 'num_allocs': 0, 'num_frees': 0}

    def allocate(self, nbytes):
        buf = _owned_view(_aligned_buffer(max(nbytes, 1), self.alignment), 0, nbytes)
        st = self.stats
        st['num_allocs'] += 1
        st['allocated_bytes'] += nbytes
        st['peak_allocated_bytes'] = max(st['peak_allocated_bytes'], st['allocated_bytes'])
        address = _address(buf)
        weakref.finalize(buf, self._release, nbytes, address)
        if MEMORY_OBSERVERS:
            _report(self, nbytes, address)
        return buf

    def _release(self, nbytes, address):
        self.stats['allocated_bytes'] -= nbytes
        self.stats['num_frees'] += 1
        if MEMORY_OBSERVERS:
            _report(self, -nbytes, address)

    def memory_stats(self):
        return dict(self.stats)

    def reset_peak_stats(self):
        self.stats['peak_allocated_bytes'] = self.stats['allocated_bytes']


class _Block:
    __slots__ = ('segment', 'offset', 'size', 'free')

    def __init__(self, segment, offset, size):
        self.segment, self.offset, self.size, self.free = segment, offset, size, True


class CachingAllocator(Allocator):
    """A caching allocator over a raw device allocator ``raw_alloc(nbytes) -> uint8 array``.

    Requests are rounded up to ``round_to`` bytes (512, as CUDA's small
    blocks); a miss reserves a segment of at least ``segment_size`` bytes
    from the device. A block bigger than needed is split and the remainder
    stays cached; neighbouring free blocks of a segment merge again on free.

    >>> import numpy as np
    >>> a = CachingAllocator(lambda n: _aligned_buffer(n, 32), alignment=32)
    >>> buf = a.allocate(100); del buf
    >>> buf = a.allocate(200); a.memory_stats()['num_cache_hits']
    1
    """

    def __init__(self, raw_alloc, alignment=512, round_to=512, segment_size=2 << 20):
        self.raw_alloc = raw_alloc
        self.alignment = alignment
        self.round_to = max(round_to, alignment)
        self.segment_size = segment_size
        self._segments = {}        # id -> (raw array, [blocks in address order])
        self._free = []            # sorted (size, segment id, offset) of free blocks
        self._stats = dict.fromkeys(('allocated_bytes', 'reserved_bytes', 'peak_allocated_bytes',
                                     'peak_reserved_bytes', 'num_allocs', 'num_cache_hits', 'num_segments',
                                     'num_frees'), 0)

    def round_size(self, nbytes):
        r = self.round_to
        return max(r, (nbytes + r - 1) // r * r)

    def allocate(self, nbytes):
        size = self.round_size(nbytes)
        block = self._take_free(size)
        if block is None:
            block = self._new_segment(size)
        else:
            self._stats['num_cache_hits'] += 1
        if block.size > size:
            self._split(block, size)
        block.free = False
        st = self._stats
        st['allocated_bytes'] += block.size
        st['num_allocs'] += 1
        st['peak_allocated_bytes'] = max(st['peak_allocated_bytes'], st['allocated_bytes'])
        raw = self._segments[block.segment][0]
        buf = _owned_view(raw, block.offset, block.offset + nbytes)
        weakref.finalize(buf, self._free_block, block)
        if MEMORY_OBSERVERS:
            _report(self, block.size, _address(raw) + block.offset)
        return buf

    def _take_free(self, size):
        i = bisect.bisect_left(self._free, (size, -1, -1))
        if i == len(self._free):
            return None
        _, seg, off = self._free.pop(i)
        return next(b for b in self._segments[seg][1] if b.offset == off)

    def _new_segment(self, size):
        seg_bytes = max(size, self.segment_size)
        raw = _aligned_buffer(seg_bytes, self.alignment) if self.raw_alloc is None else self.raw_alloc(seg_bytes)
        if raw.ctypes.data % self.alignment:
            raise RuntimeError(f"raw allocator returned memory not aligned to {self.alignment} bytes")
        sid = id(raw)
        block = _Block(sid, 0, seg_bytes)
        self._segments[sid] = (raw, [block])
        st = self._stats
        st['reserved_bytes'] += seg_bytes
        st['peak_reserved_bytes'] = max(st['peak_reserved_bytes'], st['reserved_bytes'])
        st['num_segments'] += 1
        return block

    def _split(self, block, size):
        rest = _Block(block.segment, block.offset + size, block.size - size)
        blocks = self._segments[block.segment][1]
        blocks.insert(blocks.index(block) + 1, rest)
        block.size = size
        bisect.insort(self._free, (rest.size, rest.segment, rest.offset))

    def _free_block(self, block):
        self._stats['allocated_bytes'] -= block.size
        self._stats['num_frees'] += 1
        if MEMORY_OBSERVERS:
            _report(self, -block.size, _address(self._segments[block.segment][0]) + block.offset)
        block.free = True
        blocks = self._segments[block.segment][1]
        i = blocks.index(block)
        for j in (i + 1, i - 1):  # merge with free neighbours (next first keeps i valid)
            if 0 <= j < len(blocks) and blocks[j].free:
                other = blocks[j]
                self._free.remove((other.size, other.segment, other.offset))
                first, second = (block, other) if j > i else (other, block)
                first.size += second.size
                blocks.remove(second)
                block = first
        bisect.insort(self._free, (block.size, block.segment, block.offset))

    def empty_cache(self):
        """Give every segment with no live block back to the device."""
        for sid, (raw, blocks) in list(self._segments.items()):
            if len(blocks) == 1 and blocks[0].free:
                self._free.remove((blocks[0].size, sid, 0))
                del self._segments[sid]
                self._stats['reserved_bytes'] -= blocks[0].size
                self._stats['num_segments'] -= 1

    def memory_stats(self):
        return dict(self._stats)

    def reset_peak_stats(self):
        st = self._stats
        st['peak_allocated_bytes'], st['peak_reserved_bytes'] = st['allocated_bytes'], st['reserved_bytes']

    def snapshot(self):
        """The segments and their blocks in address order, as torch.cuda.memory_snapshot() lists them:
        ``[{'address', 'total_size', 'allocated_size', 'blocks': [{'address', 'size', 'state'}]}]`` with
        ``state`` 'active_allocated' or 'inactive' (cached, free)."""
        out = []
        for raw, blocks in sorted(self._segments.values(), key=lambda seg: _address(seg[0])):
            base = _address(raw)
            bl = [{'address': base + b.offset, 'size': b.size, 'state': 'inactive' if b.free else 'active_allocated'}
                  for b in blocks]
            out.append({'address': base, 'total_size': sum(b.size for b in blocks),
                        'allocated_size': sum(b.size for b in blocks if not b.free), 'blocks': bl})
        return out

    def memory_allocated(self):
        return self._stats['allocated_bytes']

    def memory_reserved(self):
        return self._stats['reserved_bytes']


# NOTE [host malloc tuning]: NumPy allocates every temporary with malloc. glibc serves blocks over its
# mmap threshold (128 KiB, adapting up to 32 MiB) with fresh mmap()s and gives freed heap tops back to the
# OS, so a chain of elementwise ops on MB-sized arrays page-faults its way through every temporary: a
# float32 GELU over 16x64x512 values took 11.5 ms with 3,700 page faults per call, and 2.4 ms with none
# once freed memory stays in the heap for reuse. This is what a caching allocator does for torch; NumPy's
# allocations cannot be routed through ember's allocators (only C code can set NumPy's allocation
# handler), so ember asks glibc to keep freed memory instead. The process keeps its peak heap (as torch's
# caches do). When this is applied and how to undo it: NOTE [process settings] in _backends/cpu/_process.py;
# EMBER_HOST_MALLOC_TUNING=0 leaves malloc alone.
