"""What a benchmark measured: ``TaskSpec`` (what was timed) and ``Measurement`` (the times), plus the unit and
significant-figure helpers that ``Compare`` and ``Measurement.__repr__`` format with.

The statistics are plain Python on the list of times (a handful to a few thousand floats): quantiles interpolate
linearly between order statistics, as ``Tensor.quantile``'s default does, so median and IQR agree with torch's.
"""
import collections
import contextlib
import dataclasses
import math
import textwrap

__all__ = ['TaskSpec', 'Measurement', 'select_unit', 'unit_to_english', 'trim_sigfig', 'ordered_unique',
           'set_torch_threads']

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9          # 25 ns: no timer resolves better, so no claim finer than this
_IQR_WARN_THRESHOLD = 0.1                 # IQR / median above this: "system fluctuation"
_IQR_GROSS_WARN_THRESHOLD = 0.25          # above this: "significant environmental influence"
_REPR_SKIP = '\0skip-line\0'


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs and how it is labelled (everything but ``globals``); hashable, so replicates group."""
    stmt: str
    setup: str
    global_setup: str = ''
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """``label`` (or a one-line ``stmt``) with ``: sub_label``; a multi-line stmt is shown indented."""
        suffix = f': {self.sub_label}' if self.sub_label else ''
        if self.label is not None:
            return self.label + suffix
        if '\n' not in self.stmt:
            return self.stmt + suffix
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if not self.setup or self.setup == 'pass':
            return ''
        if '\n' in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f'setup: {self.setup}'

    def summarize(self):
        """The title, description and setup lines that head a Measurement's repr (multi-line parts get a blank line)."""
        parts = [p for p in (self.title, self.description or '', self.setup_str()) if p]
        return '\n'.join(p + '\n' if '\n' in p else p for p in parts)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(sorted_values, q):
    """Linear interpolation between order statistics (``Tensor.quantile(q)``'s default, numpy's 'linear')."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """One or more timings of one TaskSpec: ``raw_times[i]`` is the time of ``number_per_run`` runs of ``stmt``.

    >>> m = Measurement(number_per_run=2, raw_times=[2e-6, 2.02e-6, 2.04e-6], task_spec=TaskSpec('x + 1', 'pass'))
    >>> m.times, m.median
    ([1e-06, 1.01e-06, 1.02e-06], 1.01e-06)
    >>> print(repr(m).split('\\n', 1)[1])
    x + 1
      Median: 1.01 us
      3 measurements, 2 runs per measurement, 1 thread
    """
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None          # the user's payload; never read here

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        # stmt, setup, label, sub_label, description, num_threads, ... read through to the TaskSpec
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def times(self):
        """Seconds per single run of ``stmt`` (each raw time divided by ``number_per_run``)."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """How many figures of the median the spread of the middle half of the times supports (1 to 4).

        A rough 90% confidence interval (z = 1.645) of the interquartile times' mean; ``Compare`` trims to it.
        """
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:math.ceil(3 * n / 4)]
        mu = sum(middle) / len(middle)
        std = math.sqrt(sum((t - mu) ** 2 for t in middle) / len(middle))
        interval = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._median = _quantile(self._sorted_times, 0.5)
        self._mean = sum(self._sorted_times) / len(self._sorted_times)
        self._p25 = _quantile(self._sorted_times, 0.25)
        self._p75 = _quantile(self._sorted_times, 0.75)
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning('This suggests significant environmental influence.')
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning('This could indicate system fluctuation.')

    def _add_warning(self, why):
        self._warnings += (f'  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% '
                           f'of the median measurement.\n           {why}',)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or '[Unknown]'

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        s = 's' if n > 1 else ''
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}",
                 (f'  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})'
                  if n >= 4 else _REPR_SKIP),
                 f"  {n} measurement{s}, {self.number_per_run} runs {'per measurement,' if n > 1 else ','} "
                 f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}",
                 '\n'.join(self._warnings)]
        text = '\n'.join(lines).strip()
        return '\n'.join(line for line in text.splitlines() if _REPR_SKIP not in line)

    @staticmethod
    def merge(measurements):
        """Pool replicates of the same TaskSpec into one Measurement per TaskSpec (per-run times, no metadata).

        >>> spec = TaskSpec('x + 1', 'pass')
        >>> [m.raw_times for m in Measurement.merge([Measurement(2, [4.0], spec), Measurement(1, [1.0], spec)])]
        [[2.0, 1.0]]
        """
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec) for spec, times in groups.items()]


def select_unit(t):
    """The unit that puts ``t`` seconds in [1, 1000): ``('us', 1e-6)`` for 3.2e-5."""
    exponent = math.floor(math.log10(t) / 3) if t > 0 else 0
    unit = {-3: 'ns', -2: 'us', -1: 'ms'}.get(exponent, 's')
    return unit, {'ns': 1e-9, 'us': 1e-6, 'ms': 1e-3, 's': 1}[unit]


def unit_to_english(u):
    return {'ns': 'nanosecond', 'us': 'microsecond', 'ms': 'millisecond', 's': 'second'}[u]


def trim_sigfig(x, n):
    """Round ``x`` to ``n`` significant figures: ``trim_sigfig(3.14159, 2) == 3.1``."""
    if n != int(n):
        raise AssertionError('Number of significant figures must be an integer')
    scale = 10.0 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the block with ``ember.set_num_threads(n)``; the prior count is restored even if the block raises."""
    import ember
    prior = ember.get_num_threads()
    try:
        ember.set_num_threads(n)
        yield
    finally:
        ember.set_num_threads(prior)
