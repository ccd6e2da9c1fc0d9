"""ember.profiler: torch.profiler on ember's dispatcher.

``profile`` records, for the code inside it, one event per operator call (named as torch names them,
``aten::add``, with the operators a kernel calls nested inside it), one pair of ranges per autograd node
(``autograd::engine::evaluate_function: MulBackward0`` around ``MulBackward0``), each ``record_function``
block and, with ``profile_memory=True``, the memory each operator allocates and frees. The events come from
one observer hook in the dispatcher and the engine (NOTE [record function] in ember/_dispatch/dispatcher.py),
which costs nothing while no profiler is active; the recorder is ember/autograd/profiler.py and the table and
trace formats are in ember/autograd/profiler_util.py.

>>> import ember
>>> from ember.profiler import profile, ProfilerActivity
>>> x = ember.ones(4, 4, requires_grad=True)
>>> with profile(activities=[ProfilerActivity.CPU]) as prof:
...     (x * 2).sum().backward()
>>> [e.name for e in prof.events() if e.cpu_parent is None][:3]
['aten::mul', 'aten::sum', 'autograd::engine::evaluate_function: SumBackward0']

Only CPU activity exists: ember's device kernels run synchronously in the calling thread, so their time is
CPU time. ``with_flops`` and ``with_modules`` are accepted and ignored.
"""
import enum
import os
import socket
import time
from ember._warn import warnings

from ..autograd.profiler import Recorder, record_function
from ..autograd.profiler_util import EventList

__all__ = ['profile', 'record_function', 'schedule', 'ProfilerAction', 'ProfilerActivity',
           'tensorboard_trace_handler', 'supported_activities', 'kineto_available']


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step, as a schedule answers it."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available():
    """ember's profiler is its own, not Kineto."""
    return False


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step number: ``skip_first`` steps of nothing, then cycles of ``wait`` steps of
    nothing, ``warmup`` steps of warming up and ``active`` steps of recording, the last of which saves
    (calls ``on_trace_ready``); ``repeat`` cycles (0: until the profiler stops). ``skip_first_wait=1`` drops
    the wait of the first cycle.

    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(i).name for i in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Invalid step number {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if mod == cycle - 1 else ProfilerAction.RECORD
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """torch.profiler.profile: a context manager (or ``start()``/``stop()``) that records what runs inside it.

    With a ``schedule``, call ``step()`` at the end of each training step: the schedule decides per step
    whether to wait, warm up (the dispatcher's caches fill with the recording kernels, nothing is kept) or
    record, each recorded step is a ``ProfilerStep#N`` range, and after the last recorded step of a cycle
    ``on_trace_ready(prof)`` runs (``tensorboard_trace_handler(dir)`` writes a trace file). Without one,
    everything is recorded and ``on_trace_ready`` runs once, when the profiler stops. ``events()`` and
    ``key_averages()`` give the last recorded cycle.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = set(activities) if activities else supported_activities()
        if self.activities - supported_activities():
            warnings.warn(f"ember records CPU activity only; ignoring "
                          f"{sorted(a.name for a in self.activities - supported_activities())}")
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._rec = None              # the recorder of the cycle under way (warming up or recording)
        self._done = None             # EventList of the last finished cycle
        self._step_range = None

    # --- lifecycle ------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit(None, self.current_action)
        self._open_step()

    def stop(self):
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Mark the end of a step: the schedule's next action takes over."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def _transit(self, prev, cur):
        if prev in _RECORDING and (cur not in _RECORDING or prev is ProfilerAction.RECORD_AND_SAVE):
            self._finish_cycle()
        if cur is ProfilerAction.WARMUP and self._rec is None:
            self._rec = Recorder(self.record_shapes, self.profile_memory, self.with_stack).listen()
        elif cur in _RECORDING:
            if self._rec is None:
                self._rec = Recorder(self.record_shapes, self.profile_memory, self.with_stack).listen()
            if not self._rec.enabled:
                self._rec.base_ns = time.perf_counter_ns()
                self._rec.enabled = True
        elif cur in (ProfilerAction.NONE, None) and self._rec is not None:
            self._rec.close()         # a warm-up that leads nowhere
            self._rec = None

    def _finish_cycle(self):
        rec, self._rec = self._rec, None
        rec.close()
        self._done = rec.event_list()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _open_step(self):
        if self.record_steps and self._rec is not None and self._rec.enabled:
            self._step_range = self._rec.range_enter('ProfilerStep*', 'user_annotation')
            self._step_range.trace_name = f'ProfilerStep#{self.step_num}'

    def _close_step(self):
        if self._step_range is not None:
            self._rec.range_exit(self._step_range)
            self._step_range = None

    # --- results --------------------------------------------------------------------------
    def events(self):
        """The recorded events (a `FunctionEvent` per range), in order of their start."""
        if self._rec is not None and self._rec.enabled:
            return self._rec.event_list()
        return self._done if self._done is not None else EventList(profile_memory=self.profile_memory)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One row per operator name (and input shapes, or call site); ``.table()`` prints torch's table."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Write the trace as JSON for chrome://tracing or https://ui.perfetto.dev (gzipped if ``path`` ends
        in .gz)."""
        return self.events().export_chrome_trace(path)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An ``on_trace_ready`` that writes ``<dir_name>/<worker_name>.<time ns>.pt.trace.json[.gz]`` (worker
    name: ``<host>_<pid>``), the file TensorBoard's profiler plugin reads."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f'{socket.gethostname()}_{os.getpid()}'
        path = os.path.join(dir_name, f'{name}.{time.time_ns()}.pt.trace.json' + ('.gz' if use_gzip else ''))
        prof.export_chrome_trace(path)
    return handler
