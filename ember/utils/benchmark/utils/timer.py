"""``Timer``: ``timeit.Timer`` with warm-up, a pinned thread count and replicate measurements.

Each measurement method runs ``stmt`` under ``set_torch_threads(num_threads)`` (ember's thread count is set
for the duration and restored afterwards) and returns a ``Measurement``. Only Python statements are timed:
ember has no C++ front end to compile a ``language='cpp'`` statement against, nor the Callgrind bindings
``collect_callgrind`` drives, and both say so when asked.
"""
import enum
import textwrap
import timeit

from . import common

__all__ = ['Timer', 'timer', 'Language']


def timer():
    """``timeit.default_timer``, after waiting for an accelerator's queued work (if one is present)."""
    import ember
    if ember.accelerator.is_available():
        ember.accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _strip(code):
    """Dedent and drop the leading newline of a triple-quoted block, so reprs look like the code."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith('\n') else code).rstrip()


class Timer:
    """Time a Python statement: ``Timer(stmt, setup, globals=...).blocked_autorange()``.

    ``globals`` is copied (``ember`` is added under the name ``torch`` unless given), ``setup`` runs once per
    timing call, and ``label``/``sub_label``/``description``/``env`` only label the result (``Compare`` groups
    by them). ``num_threads`` is the thread count the statement runs with (default 1, for comparable numbers).

    >>> m = Timer('x + 1', globals={'x': 1}).timeit(100)
    >>> m.number_per_run, len(m.raw_times), m.title
    (100, 1, 'x + 1')
    """

    _timer_cls = timeit.Timer

    def __init__(self, stmt='pass', setup='pass', global_setup='', timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError('Currently only a `str` stmt is supported.')
        if language in (Language.CPP, 'cpp', 'c++'):
            raise NotImplementedError('ember times Python statements only: it has no C++ API to compile a '
                                      "language='cpp' statement against. Time the Python equivalent instead.")
        if language not in (Language.PYTHON, 'py', 'python'):
            raise ValueError(f'Invalid language `{language}`.')
        if global_setup:
            raise ValueError(f'global_setup is C++ only, got `{global_setup}`. Most likely this code can simply '
                             'be moved to `setup`.')
        import ember
        self._globals = dict(globals or {})          # a copy: exec adds __builtins__, which must not leak out
        self._globals.setdefault('torch', ember)
        self._language = Language.PYTHON
        stmt, setup = _strip(stmt), _strip(setup)
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        # floor at 1 ns: no real statement is faster, and it keeps later divisions finite
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number, times):
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number=1000000):
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100``): one measurement."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return self._measurement(number, [self._timeit(number)])

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError('See `Timer.blocked_autorange.`')

    def autorange(self, callback=None):
        raise NotImplementedError('See `Timer.blocked_autorange.`')

    def _estimate_block_size(self, min_run_time):
        """Runs per measurement: grow by 10x until the timer's own overhead is under 0.01% of a block (or the
        block already takes ``min_run_time / 1000``, or ``min_run_time``). Doubles as the warm-up."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                taken = self._timeit(number)
                if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

    def _measure_until(self, number, can_stop, min_run_time, max_run_time=None, callback=None):
        """Time blocks of ``number`` runs until ``min_run_time`` is spent and ``can_stop(times)``, or past
        ``max_run_time``."""
        times, total = [], 0.0
        stop = False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                stop = can_stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Measure blocks of a fixed size (chosen so the timer's overhead is negligible) for ``min_run_time``
        seconds; ``callback(number, time)`` sees each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure_until(number, lambda times: True, min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """As ``blocked_autorange``, but continue until IQR / median < ``threshold`` (over at least four blocks)
        or ``max_run_time`` seconds are spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def can_stop(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold=threshold)

        times = self._measure_until(number, can_stop, min_run_time, max_run_time, callback=callback)
        return self._measurement(number, times)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True, retain_out_file=False):
        """Instruction counts need torch's compiled Callgrind bindings, which ember (pure Python) does not have."""
        if repeats is not None and repeats < 1:
            raise ValueError('If specified, `repeats` must be >= 1')
        self._timeit(1)            # a faulty stmt or setup fails here, as it would in torch before valgrind starts
        raise OSError('collect_callgrind is not supported by ember: it needs valgrind and the compiled Callgrind '
                      'bindings of a PyTorch build. Use blocked_autorange() or adaptive_autorange() for wall times.')
