"""ember.utils.benchmark: time statements (``Timer``) and tabulate the results (``Compare``), as torch.utils.benchmark.

>>> import ember
>>> from ember.utils.benchmark import Timer
>>> m = Timer('x + 1', globals={'x': ember.ones(3)}, label='add').blocked_autorange(min_run_time=0.01)
>>> m.label, m.num_threads, m.number_per_run >= 1, len(m.times) >= 1
('add', 1, True, True)

The fuzzers and Callgrind statistics of torch's package are not provided (``Timer.collect_callgrind`` raises).
"""
from .utils.common import TaskSpec, Measurement, select_unit, unit_to_english, trim_sigfig, ordered_unique, \
    set_torch_threads
from .utils.timer import Timer, timer, Language
from .utils.compare import Colorize, Compare

__all__ = ['TaskSpec', 'Measurement', 'select_unit', 'unit_to_english', 'trim_sigfig', 'ordered_unique',
           'set_torch_threads', 'Timer', 'timer', 'Language', 'Colorize', 'Compare']
