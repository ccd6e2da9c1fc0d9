"""The recorder behind ember.profiler, and torch.autograd.profiler's ``profile`` and ``record_function``.

A `Recorder` is an observer of the dispatcher (NOTE [record function] in _dispatch/dispatcher.py): every
operator call, every autograd node the engine runs and every ``record_function`` block becomes a
`FunctionEvent` on a per-thread stack, so a call made while another is open is its child. Nothing here runs
unless a profiler is active; with none, the dispatcher's entry points are the code they always were.

Memory (``profile_memory=True``) comes from two places:
  - the allocators (``_core/allocator.py``): every allocation and free of a CPUAllocator or a
    CachingAllocator (a PrivateUse1 device's) is reported while the profiler listens;
  - CPU kernels' results: ember's CPU kernels allocate with NumPy, which no ember allocator sees (NOTE [host
    malloc tuning] in _core/allocator.py). So when an operator returns a CPU tensor whose memory block is new
    (neither an input's block nor one already counted), the recorder counts the block as allocated by that
    operator and as freed when the block dies, as c10's CPU allocator would report it to torch's profiler.
    Temporaries a kernel makes and drops inside itself are not seen.
A free counts where it happens: in the range open on that thread at the time (so ``Self CPU Mem`` may be
negative), or as a ``[memory]`` row when no range is open, as in torch.
"""
import contextlib
import itertools
import sys
import threading
import time
import weakref

import numpy as np

from .._core import allocator as _allocator
from .._core import device as _device
from .._core.dtype import cpp_name
from .._core.tensor_impl import TensorImpl
from .._dispatch import dispatcher
from .profiler_util import EventList, FunctionEvent, MemoryRecord

_now = time.perf_counter_ns


class _ThreadState(threading.local):
    def __init__(self):
        self.stack = []
        self.tid = threading.get_native_id()


class Recorder:
    """Collects events while ``enabled``; ``listen()`` / ``close()`` attach it to the dispatcher and the
    allocators and detach it."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.enabled = False
        self.base_ns = _now()
        self.events = []                 # finished FunctionEvents
        self.memory = []                 # every MemoryRecord
        self._ids = itertools.count(1)
        self._tls = _ThreadState()
        self._live = {}                  # id(NumPy block) -> finalize, for CPU results counted as allocations
        self._cpu_allocated = 0          # bytes of those blocks alive now
        self._devices = {}               # id(allocator) -> device type name
        self._names = {}                 # OpOverload -> event name ('aten::add')

    # --- attach / detach ---------------------------------------------------------------
    def listen(self):
        dispatcher.add_observer(self)
        if self.profile_memory:
            _allocator.MEMORY_OBSERVERS.append(self.allocator_event)
        return self

    def close(self):
        self.enabled = False
        dispatcher.remove_observer(self)
        if self.allocator_event in _allocator.MEMORY_OBSERVERS:
            _allocator.MEMORY_OBSERVERS.remove(self.allocator_event)
        for f in list(self._live.values()):     # blocks still alive: no free events after the profile
            f.detach()
        self._live.clear()

    def event_list(self):
        devices = sorted({m.device for m in self.memory if m.device != 'cpu'})
        return EventList(sorted(self.events, key=lambda e: (e.start_ns, -(e.end_ns or 0))), self.profile_memory,
                         self.base_ns, list(self.memory), devices)

    # --- ranges (the hot path while recording: one enter and one exit per operator call) ---------------------
    def _close(self, e, end_ns):
        stack = self._tls.stack
        if stack and stack[-1] is e:
            stack.pop()
        elif e in stack:                 # closed out of order (a step ended inside a block): drop it there
            stack.remove(e)
        else:
            return
        e.end_ns = end_ns
        if stack:
            e.cpu_parent = parent = stack[-1]
            parent.cpu_children.append(e)
        self.events.append(e)

    def op_enter(self, op, args):
        if not self.enabled:
            return None
        name = self._names.get(op)
        if name is None:
            name = self._names[op] = f'{op.namespace}::{op.schema.name}'
        st = self._tls
        e = FunctionEvent(next(self._ids), name, st.tid, 0, overload_name=op.schema.overload, base_ns=self.base_ns)
        if self.record_shapes:
            e.input_shapes, e.input_types = _describe(args)
        if self.with_stack:
            e.stack = _call_sites()
        if self.profile_memory:
            e._inputs = args
        st.stack.append(e)
        e.start_ns = _now()              # last: the recording itself stays outside the range
        return e

    def op_exit(self, e, result):
        if e is None:
            return
        end = _now()
        if self.profile_memory:
            if result is not None:
                self._count_results(e, result, end)
            e._inputs = None
        self._close(e, end)

    def range_enter(self, name, category='cpu_op'):
        if not self.enabled:
            return None
        st = self._tls
        e = FunctionEvent(next(self._ids), name, st.tid, 0, category=category, base_ns=self.base_ns)
        st.stack.append(e)
        e.start_ns = _now()
        return e

    def range_exit(self, e):
        if e is not None:
            self._close(e, _now())

    # --- memory ------------------------------------------------------------------------
    def _record_memory(self, nbytes, total, reserved, device, address, owner=None, ts_ns=None):
        st = self._tls
        rec = MemoryRecord(_now() if ts_ns is None else ts_ns, nbytes, total, reserved, device, address, st.tid)
        self.memory.append(rec)
        if owner is None and st.stack:
            owner = st.stack[-1]
        if owner is None:                # nothing open: a row of its own, as torch's [memory]
            owner = FunctionEvent(next(self._ids), '[memory]', st.tid, rec.ts_ns, rec.ts_ns, base_ns=self.base_ns)
            self.events.append(owner)
        owner.add_memory(rec)

    def allocator_event(self, allocator, nbytes, address):
        if not self.enabled:
            return
        dev = self._devices.get(id(allocator))
        if dev is None:
            dev = self._devices[id(allocator)] = next(
                (name for name in _device.registered_types()
                 if getattr(_device.device_interface(name), 'allocator', None) is allocator), 'cpu')
        st = allocator.memory_stats()
        self._record_memory(nbytes, st.get('allocated_bytes', 0), st.get('reserved_bytes', 0), dev, address)

    def _count_results(self, e, result, end_ns):
        outs = result if isinstance(result, (tuple, list)) else (result,)
        inputs = None
        for t in outs:
            if not isinstance(t, TensorImpl) or t._device.type != 'cpu' or not isinstance(t._a, np.ndarray):
                continue
            block = _block(t._a)
            key = id(block)
            if key in self._live:
                continue
            if inputs is None:
                inputs = {id(_block(x._a)) for x in _tensors(e._inputs) if isinstance(x._a, np.ndarray)}
            if key in inputs:            # a view of an input, or an in-place / out= result
                continue
            n = block.nbytes
            self._cpu_allocated += n
            f = weakref.finalize(block, self._block_freed, key, n, block.ctypes.data)
            f.atexit = False
            self._live[key] = f
            self._record_memory(n, self._cpu_allocated, 0, 'cpu', block.ctypes.data, owner=e, ts_ns=end_ns)

    def _block_freed(self, key, nbytes, address):
        if self._live.pop(key, None) is None:
            return
        self._cpu_allocated -= nbytes
        if self.enabled:
            self._record_memory(-nbytes, self._cpu_allocated, 0, 'cpu', address)


def _block(a):
    """The array that owns ``a``'s memory."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _tensors(args):
    for a in args:
        if isinstance(a, TensorImpl):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, TensorImpl))


def _describe(args):
    """torch's ``Input Dims`` and ``Input type`` of an operator's arguments (schema order)."""
    shapes, types = [], []
    for a in args:
        if isinstance(a, TensorImpl):
            shapes.append(list(a._a.shape))
            types.append(cpp_name(a._dtype))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, TensorImpl) for x in a):
            shapes.append([list(x._a.shape) for x in a])
            types.append('TensorList')
        else:
            shapes.append([])
            types.append('' if a is None else 'ScalarList' if isinstance(a, (list, tuple)) else 'Scalar')
    return shapes, types


_OWN_FILES = (__file__, dispatcher.__file__)


def _call_sites():
    """The Python call stack, innermost first, as ``file(line): function``, without the profiler's and the
    dispatcher's own frames (nor generated entry points)."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith('<ember') and name not in _OWN_FILES:
            out.append(f'{name}({f.f_lineno}): {f.f_code.co_name}')
        f = f.f_back
    return out


class record_function(contextlib.ContextDecorator):
    """Mark a block (or, as a decorator, each call of a function) as a range named ``name`` in the profile.
    Costs a truth test when no profiler is active.

    >>> import ember
    >>> with ember.profiler.profile() as prof:
    ...     with record_function('my block'):
    ...         _ = ember.ones(2) + 1
    >>> [e.name for e in prof.events()]
    ['my block', 'aten::ones', 'aten::add']
    """

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._open = None

    def __enter__(self):
        obs = dispatcher.OBSERVER
        if obs is not None:
            self._open = (obs, obs.range_enter(self.name, 'user_annotation'))
        return self

    def __exit__(self, *exc):
        if self._open is not None:
            obs, handle = self._open
            self._open = None
            obs.range_exit(handle)
        return False

    def _recreate_cm(self):       # a decorated function may recurse or run on several threads at once
        return record_function(self.name, self.args)


class profile:
    """torch.autograd.profiler.profile: record everything inside the ``with`` block.

    ``key_averages()``, ``table()``, ``events()`` (also ``function_events``), ``export_chrome_trace(path)``,
    ``total_average()`` and ``self_cpu_time_total`` read the result once the block has ended.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self._rec = None
        self.function_events = None

    def __enter__(self):
        if self.enabled:
            self._rec = Recorder(self.record_shapes, self.profile_memory, self.with_stack).listen()
            self._rec.enabled = True
        return self

    def __exit__(self, *exc):
        if self._rec is not None:
            self._rec.close()
            self.function_events = self._rec.event_list()
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self):
        return self._events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        return self._events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def export_chrome_trace(self, path):
        return self._events().export_chrome_trace(path)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def __str__(self):
        return self.table()


# --- emitting ranges to an external profiler ------------------------------------------------------------------------

class _NvtxRanges:
    """A dispatcher observer that opens an NVTX range per operator and per autograd node (CuPy's NVTX bindings),
    so Nsight Systems shows ember's operators over the GPU timeline, as torch's emit_nvtx does."""

    def __init__(self, nvtx, record_shapes):
        self.nvtx, self.record_shapes = nvtx, record_shapes

    def op_enter(self, op, args):
        name = op.name
        if self.record_shapes:
            name += ', sizes = ' + str([list(a.shape) if isinstance(a, TensorImpl) else [] for a in args])
        self.nvtx.RangePush(name)
        return None

    def op_exit(self, handle, result):
        self.nvtx.RangePop()

    def range_enter(self, name, category='cpu_op'):
        self.nvtx.RangePush(name)
        return None

    def range_exit(self, handle):
        self.nvtx.RangePop()


class emit_nvtx:
    """``with torch.autograd.profiler.emit_nvtx():`` every operator and autograd node becomes an NVTX range for
    nvprof/Nsight. It needs a CUDA device, as torch's does: without one, entering raises torch's error."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled, self.record_shapes = enabled, record_shapes
        self._observer = None

    def __enter__(self):
        if not self.enabled:
            return self
        from .. import cuda
        if not cuda.is_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        import cupy
        cuda.synchronize()
        self._observer = _NvtxRanges(cupy.cuda.nvtx, self.record_shapes)
        dispatcher.add_observer(self._observer)
        return self

    def __exit__(self, *exc):
        if self._observer is not None:
            from .. import cuda
            cuda.synchronize()
            dispatcher.remove_observer(self._observer)
            self._observer = None
        return False


class emit_itt:
    """``with torch.autograd.profiler.emit_itt():`` ranges for Intel VTune through the ITT API. ember has no ITT
    bindings, so entering with ``enabled=True`` raises; ``enabled=False`` does nothing, as torch's."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled, self.record_shapes = enabled, record_shapes

    def __enter__(self):
        if self.enabled:
            raise RuntimeError("emit_itt: ember has no ITT (Intel VTune) bindings; use ember.profiler.profile")
        return self

    def __exit__(self, *exc):
        return False
