"""What a profile holds and how it prints: torch.autograd.profiler_util's events, averages and table.

A `FunctionEvent` is one timed range on one thread (an operator call, an autograd node, a
``record_function`` block, a profiler step) with its children, the shapes of its inputs and the memory
allocated and freed directly inside it. An `EventList` holds them; ``key_averages()`` sums them per name
(and per input shapes, or per call site) into `FunctionEventAvg` rows, whose ``table()`` prints torch's
layout: a name column as wide as the longest name plus four (at most 55), twelve-wide numeric columns, two
spaces after each, then ``Self CPU time total``. ``export_chrome_trace`` writes the Trace Event Format that
chrome://tracing and Perfetto open: one complete ("X") event per range, nested by time, and an instant
("i") event per memory change.

Times are kept in integer nanoseconds (``time.perf_counter_ns``) and shown in microseconds, as torch's.
"""
import warnings
import json
import os

# c10::DeviceType numbers, which torch writes into the trace's memory events
_DEVICE_TYPE = {'cpu': 0, 'cuda': 1, 'meta': 9, 'privateuseone': 20}


class Interval:
    """A time range in microseconds (torch's ``FunctionEvent.time_range``)."""
    __slots__ = ('start', 'end')

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class MemoryRecord:
    """One allocation (``nbytes > 0``) or free (``nbytes < 0``) seen while profiling."""
    __slots__ = ('ts_ns', 'nbytes', 'total_allocated', 'total_reserved', 'device', 'address', 'thread')

    def __init__(self, ts_ns, nbytes, total_allocated, total_reserved, device, address, thread):
        self.ts_ns, self.nbytes, self.total_allocated = ts_ns, nbytes, total_allocated
        self.total_reserved, self.device, self.address, self.thread = total_reserved, device, address, thread


class FunctionEvent:
    """One profiled range. Times in microseconds; memory in bytes (``cpu_memory_usage`` counts the children,
    ``self_cpu_memory_usage`` only what happened directly inside). ``device_memory_usage`` is the same for
    devices whose allocator reports to the profiler ({device type: bytes})."""

    # defaults live on the class, so that recording one (once per operator call) sets only what differs; the
    # shared empty lists are never mutated (the recorder assigns new ones)
    end_ns = None
    trace_name = None           # the name in the Chrome trace when it differs (ProfilerStep#3 for ProfilerStep*)
    input_shapes = []
    input_types = []
    stack = []
    category = 'cpu_op'
    overload_name = ''
    cpu_parent = None
    memory = ()                 # MemoryRecords that happened directly inside this range (a list once there is one)
    count = 1
    device_type = 'cpu'
    is_async = is_remote = is_legacy = False
    _base_ns = 0
    # torch's fields for what ember does not record: device kernels, FLOPs (``with_flops`` is not computed),
    # distributed node ids, the forward thread and autograd sequence numbers of backward ops
    flops = 0
    node_id = -1
    fwd_thread = 0
    sequence_nr = -1
    kernels = []
    use_device = None
    device_time_total = self_device_time_total = 0

    @property
    def cuda_time_total(self):
        warnings.warn("`cuda_time_total` is deprecated. Use `device_time_total` instead.", FutureWarning,
                      stacklevel=2)
        return self.device_time_total

    def __init__(self, id, name, thread, start_ns, end_ns=None, category='cpu_op', overload_name='', base_ns=0):
        self.id, self.name, self.thread, self.start_ns = id, name, thread, start_ns
        self.cpu_children = []
        if end_ns is not None:
            self.end_ns = end_ns
        if category != 'cpu_op':
            self.category = category
        if overload_name:
            self.overload_name = overload_name
        if base_ns:
            self._base_ns = base_ns

    def add_memory(self, record):
        if not self.memory:
            self.memory = []
        self.memory.append(record)

    # --- times (microseconds) ---------------------------------------------------
    @property
    def time_range(self):
        return Interval((self.start_ns - self._base_ns) / 1e3, (self.end_ns - self._base_ns) / 1e3)

    @property
    def cpu_time_total(self):
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count

    @property
    def key(self):
        return self.name

    @property
    def is_user_annotation(self):
        return self.category == 'user_annotation'

    # --- memory (bytes) ---------------------------------------------------------
    @property
    def self_cpu_memory_usage(self):
        return sum(m.nbytes for m in self.memory if m.device == 'cpu')

    @property
    def cpu_memory_usage(self):
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        out = {}
        for m in self.memory:
            if m.device != 'cpu':
                out[m.device] = out.get(m.device, 0) + m.nbytes
        return out

    @property
    def device_memory_usage(self):
        out = dict(self.self_device_memory_usage)
        for c in self.cpu_children:
            for d, n in c.device_memory_usage.items():
                out[d] = out.get(d, 0) + n
        return out

    def __repr__(self):
        return (f'<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} '
                f'start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} '
                f'cpu_children={[c.id for c in self.cpu_children]} thread={self.thread} '
                f'input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>')


class FunctionEventAvg:
    """The events of one key (name, and input shapes or call site when grouped so) summed."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage, self.self_device_memory_usage = {}, {}
        self.is_user_annotation = False
        self.overload_name = ''
        self.flops, self.node_id = 0, -1
        self.device_time_total = self.self_device_time_total = 0

    def add(self, e):
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage
        for mine, theirs in ((self.device_memory_usage, e.device_memory_usage),
                             (self.self_device_memory_usage, e.self_device_memory_usage)):
            for d, n in theirs.items():
                mine[d] = mine.get(d, 0) + n
        self.is_user_annotation = e.is_user_annotation
        self.flops += e.flops
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f'<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} '
                f'cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes} '
                f'cpu_memory_usage={self.cpu_memory_usage}>')


class EventList(list):
    """A list of `FunctionEvent` (or, from ``key_averages``, `FunctionEventAvg`) rows."""

    def __init__(self, events=(), profile_memory=False, base_ns=0, memory=None, devices=()):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._base_ns = base_ns
        self._memory = memory if memory is not None else []     # every MemoryRecord, for the trace
        self._devices = tuple(devices)                           # non-CPU devices that reported memory

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One row per event name (and input shapes / first ``group_by_stack_n`` call sites), in the order
        each key first started."""
        rows = {}
        for e in sorted(self, key=lambda e: e.start_ns):
            key = (e.name, str(e.input_shapes) if group_by_input_shape else None,
                   tuple(e.stack[:group_by_stack_n]) if group_by_stack_n else None)
            row = rows.get(key)
            if row is None:
                row = rows[key] = FunctionEventAvg(e.name, e.input_shapes if group_by_input_shape else None,
                                                   e.stack[:group_by_stack_n] if group_by_stack_n else None)
            row.add(e)
        return EventList(rows.values(), self._profile_memory, self._base_ns, self._memory, self._devices)

    def total_average(self):
        total = FunctionEventAvg('Total')
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, [CPU Mem, Self CPU
        Mem], # of Calls, [Input Shapes], [Source Location]; sorted by ``sort_by`` (descending) when given."""
        return _build_table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Write the events as Trace Event Format JSON (chrome://tracing, Perfetto); gzipped if ``path``
        ends in .gz."""
        text = json.dumps(chrome_trace(self, self._memory, self._base_ns, path))
        if path.endswith('.gz'):
            import gzip
            with gzip.open(path, 'wt') as f:
                f.write(text)
        else:
            with open(path, 'w') as f:
                f.write(text)


# --- the table ----------------------------------------------------------------------

def _format_time(us):
    if us >= 1e6:
        return f'{us / 1e6:.3f}s'
    if us >= 1e3:
        return f'{us / 1e3:.3f}ms'
    return f'{us:.3f}us'


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f'{nbytes / gb:.2f} GB'
    if abs(nbytes) >= mb:
        return f'{nbytes / mb:.2f} MB'
    if abs(nbytes) >= kb:
        return f'{nbytes / kb:.2f} KB'
    return f'{nbytes} B'


def _percent(part, whole):
    return f'{part / whole * 100:.2f}%' if whole else '0.00%'


def _fit(text, width):
    """Cut ``text`` with '...' when it would leave less than four spaces of the column's left margin."""
    return text[:width - 3] + '...' if len(text) > width - 4 else text


_SORT_KEYS = ('cpu_time', 'cpu_time_total', 'self_cpu_time_total', 'cpu_memory_usage', 'self_cpu_memory_usage',
              'count')


def _build_table(events, sort_by, row_limit, max_src_width, max_name_width, max_shapes_width, header,
                 top_level_only):
    if not events:
        return ''
    rows = list(events)
    if top_level_only:
        rows = [e for e in rows if getattr(e, 'cpu_parent', None) is None]
    if sort_by is not None:
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(_SORT_KEYS)}, not {sort_by!r}")
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    total_self = sum(e.self_cpu_time_total for e in events)
    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)
    mem = events._profile_memory
    devices = events._devices
    names = [e.key for e in events]
    name_w = min(max(len(n) for n in names) + 4, max_name_width)
    cols = [('Name', name_w), ('Self CPU %', 12), ('Self CPU', 12), ('CPU total %', 12), ('CPU total', 12),
            ('CPU time avg', 12)]
    if mem:
        cols += [('CPU Mem', 12), ('Self CPU Mem', 12)]
        for d in devices:
            cols += [(f'{d.upper()} Mem', 15), (f'Self {d.upper()} Mem', 15)]
    cols.append(('# of Calls', 12))
    if has_shapes:
        cols.append(('Input Shapes', min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_width)))
    if has_stack:
        cols.append(('Source Location', max_src_width))
    dashes = ''.join('-' * w + '  ' for _, w in cols)
    lines = [dashes, ''.join(h.rjust(w) + '  ' for h, w in cols), dashes] if header is None else \
        [header, dashes, ''.join(h.rjust(w) + '  ' for h, w in cols), dashes]
    for e in rows[:row_limit] if row_limit is not None and row_limit > 0 else rows:
        cells = [_fit(e.key, name_w), _percent(e.self_cpu_time_total, total_self),
                 _format_time(e.self_cpu_time_total), _percent(e.cpu_time_total, total_self),
                 _format_time(e.cpu_time_total), _format_time(e.cpu_time)]
        if mem:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            for d in devices:
                cells += [_format_memory(e.device_memory_usage.get(d, 0)),
                          _format_memory(e.self_device_memory_usage.get(d, 0))]
        cells.append(str(e.count))
        if has_shapes:
            cells.append(_fit(str(e.input_shapes), cols[len(cells)][1]))
        stack = list(e.stack) if has_stack else []
        if has_stack:
            cells.append(_fit(stack.pop(0) if stack else '', max_src_width))
        lines.append(''.join(c.rjust(w) + '  ' for c, (_, w) in zip(cells, cols)))
        for frame in stack:        # further call sites on lines of their own, under Source Location
            lines.append(''.join(' ' * w + '  ' for _, w in cols[:-1]) + _fit(frame, max_src_width).rjust(max_src_width)
                         + '  ')
    lines += [dashes, f'Self CPU time total: {_format_time(total_self)}']
    return '\n'.join(lines) + '\n'


# --- the Chrome trace ---------------------------------------------------------------

def chrome_trace(events, memory, base_ns, name=''):
    """The Trace Event Format document for ``events`` (FunctionEvents) and ``memory`` (MemoryRecords):
    timestamps in microseconds from the profile's start."""
    import time
    pid = os.getpid()
    us = lambda ns: round((ns - base_ns) / 1e3, 3)      # noqa: E731
    threads = sorted({e.thread for e in events} | {m.thread for m in memory})
    out = [{'ph': 'M', 'name': 'process_name', 'pid': pid, 'tid': 0, 'args': {'name': 'python'}},
           {'ph': 'M', 'name': 'process_labels', 'pid': pid, 'tid': 0, 'args': {'labels': 'CPU'}}]
    for t in threads:
        out.append({'ph': 'M', 'name': 'thread_name', 'pid': pid, 'tid': t, 'args': {'name': f'thread {t} (python)'}})
    for e in sorted(events, key=lambda e: (e.start_ns, -e.end_ns)):
        if e.name == '[memory]':
            continue
        args = {'External id': e.id}
        if e.input_shapes:
            args['Input Dims'] = e.input_shapes
            args['Input type'] = e.input_types
        if e.stack:
            args['Call stack'] = ';'.join(e.stack)
        out.append({'ph': 'X', 'cat': e.category, 'name': e.trace_name or e.name,
                    'pid': pid, 'tid': e.thread, 'ts': us(e.start_ns), 'dur': round((e.end_ns - e.start_ns) / 1e3, 3),
                    'args': args})
    for m in memory:
        out.append({'ph': 'i', 'cat': 'cpu_instant_event', 's': 't', 'name': '[memory]', 'pid': pid, 'tid': m.thread,
                    'ts': us(m.ts_ns), 'args': {'Total Reserved': m.total_reserved, 'Total Allocated': m.total_allocated,
                                                'Bytes': m.nbytes, 'Addr': m.address,
                                                'Device Type': _DEVICE_TYPE.get(m.device, 20),
                                                'Device Id': -1 if m.device == 'cpu' else 0}})
    return {'schemaVersion': 1, 'deviceProperties': [], 'traceName': name, 'displayTimeUnit': 'ms',
            'baseTimeNanoseconds': time.time_ns() - (time.perf_counter_ns() - base_ns), 'traceEvents': out}
