"""``Compare``: a table of many Measurements, one per label.

Layout (as torch's): Measurements are first merged (replicates pooled); each label gets a table whose rows are
``(num_threads, env, sub_label or stmt)`` — grouped under a ``N threads: ----`` rule per thread count, with
``(env)`` shown when envs differ — and whose columns are the ``description`` values, in first-seen order.
Every number is the median in the table's unit (the unit of its smallest median).
"""
import collections
import enum
import math

from . import common

__all__ = ['Colorize', 'Compare']

BEST = '\033[92m'
GOOD = '\033[34m'
BAD = '\033[2m\033[91m'
VERY_BAD = '\033[31m'
BOLD = '\033[1m'
TERMINATE = '\033[0m'


class Colorize(enum.Enum):
    NONE = 'none'
    COLUMNWISE = 'columnwise'
    ROWWISE = 'rowwise'


def _color(text, value, best):
    """Green within 1% (or 100 ns) of the best, blue within 10%, dim red at 2x, red at 5x; else plain."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


class _NumberFormat:
    """How one column prints its medians: a shared width and number of decimals, so the column lines up.

    With trimming, decimals are the fewest any cell's significant figures allow; otherwise one decimal.
    With highlighted warnings (and a noisy cell in the column), a ``(! 13%)`` field follows each number.
    """

    def __init__(self, measurements, scale, trim, highlight_warnings):
        present = [m for m in measurements if m is not None]
        self.trim = trim
        self.highlight = highlight_warnings and any(m.has_warnings for m in present)
        digits = [math.ceil(math.log10(m.median / scale)) for m in present]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(present, digits)) if trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        self._template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def cell(self, value, sigfigs, spread):
        if value is None:
            return ' ' * len(self.cell(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        return self._template.format(value, f' (! {spread * 100:.0f}%)' if self.highlight and spread is not None
                                     else '')


class _Table:
    """One label's table: builds the grid of Measurements (None where a row lacks a column), then renders it."""

    def __init__(self, results, colorize, trim, highlight_warnings):
        self.results, self.colorize, self.highlight_warnings = results, colorize, highlight_warnings
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(m.median for m in results))
        # rows keep first-seen order within a (threads, env) group
        row_keys = common.ordered_unique(self._row_key(m) for m in results)
        self.row_keys = sorted(row_keys, key=lambda k: (k[0], k[1] or ''))
        self.column_keys = common.ordered_unique(m.description for m in results)
        where = {key: i for i, key in enumerate(self.row_keys)}
        col = {key: j for j, key in enumerate(self.column_keys)}
        self.grid = [[None] * len(self.column_keys) for _ in self.row_keys]
        for m in results:
            self.grid[where[self._row_key(m)]][col[m.description]] = m
        self.groups = [i for i, key in enumerate(self.row_keys) if i == 0 or key[0] != self.row_keys[i - 1][0]]
        self.formats = [_NumberFormat([row[j] for row in self.grid], self.scale, trim, highlight_warnings)
                        for j in range(len(self.column_keys))]

    @staticmethod
    def _row_key(m):
        return m.num_threads, m.env, m.as_row_name

    def _row_names(self):
        envs = {m.env for m in self.results}
        show_env = len(envs) > 1
        env_width = max(len(str(e)) for e in envs) if show_env else 0
        names, prior = [], None
        for i, (_, env, name) in enumerate(self.row_keys):
            if i in self.groups:
                prior = None
            tag = f'({env})' if show_env and env != prior else ''
            names.append('  ' + tag.ljust(env_width + 4) + name)
            prior = env
        return names

    def _best(self, i):
        """The median each cell of row ``i`` is colored against (None: no color)."""
        row = self.grid[i]
        if self.colorize == Colorize.ROWWISE:
            return [min(m.median for m in row if m is not None)] * len(row)
        if self.colorize == Colorize.COLUMNWISE:
            start = max(g for g in self.groups if g <= i)
            end = min([g for g in self.groups if g > i] + [len(self.grid)])
            return [min((r[j].median for r in self.grid[start:end] if r[j] is not None), default=None)
                    for j in range(len(row))]
        return [None] * len(row)

    def render(self):
        text = [[''] + [str(k) if k is not None else '' for k in self.column_keys]]
        for name, row in zip(self._row_names(), self.grid):
            text.append([name] + [f.cell(None if m is None else m.median / self.scale,
                                         1 if m is None else m.significant_figures,
                                         m.iqr / m.median if m is not None and m.has_warnings else None)
                                  for f, m in zip(self.formats, row)])
        widths = [max(len(cells[j]) for cells in text) for j in range(len(text[0]))]
        header = '  |  '.join(c.center(w) for c, w in zip(text[0], widths))
        lines = [header]
        for i, cells in enumerate(text[1:]):
            if i in self.groups:
                lines.append(f'{self.row_keys[i][0]} threads: '.ljust(len(header), '-'))
            out = [cells[0].ljust(widths[0])]
            for c, w, m, best in zip(cells[1:], widths[1:], self.grid[i], self._best(i)):
                c = c.center(w)
                out.append(_color(c, m.median, best) if m is not None and best is not None else c)
            lines.append('  |  '.join(out))
        warn = self.highlight_warnings and any(m.has_warnings for m in self.results)
        title = f" {self.label or ''} ".center(len(header) - 2, '-')
        return (f'[{title}]\n' + '\n'.join(lines) +
                f'\n\nTimes are in {common.unit_to_english(self.unit)}s ({self.unit}).\n' +
                ('(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n' if warn else ''))


class Compare:
    """Format many Measurements as tables: ``print(Compare(results))`` or ``Compare(results).print()``.

    >>> from ember.utils.benchmark import Measurement, TaskSpec
    >>> spec = lambda d: TaskSpec('x + 1', 'pass', label='add', sub_label='float', description=d)
    >>> print(Compare([Measurement(1, [2e-6] * 4, spec('n=1')), Measurement(1, [3e-6] * 4, spec('n=8'))]))
    [---------- add ----------]
                 |  n=1  |  n=8
    1 threads: ----------------
          float  |  2.0  |  3.0
    <BLANKLINE>
    Times are in microseconds (us).
    <BLANKLINE>
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return '\n'.join(self._render())

    def extend_results(self, results):
        """Add more Measurements (anything else raises ValueError)."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f'Expected an instance of `Measurement`, got {type(r)} instead.')
        self._results.extend(results)

    def trim_significant_figures(self):
        """Print only the figures each measurement's spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Color cells against the best of their column (per thread group), or of their row."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Mark noisy measurements with ``(! IQR/median %)``."""
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for m in common.Measurement.merge(self._results):
            by_label[m.label].append(m)
        return [_Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for group in by_label.values()]
