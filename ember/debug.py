"""Tools for learners: watch the dispatcher work.

>>> import ember
>>> with ember.debug.trace_dispatch(file=None) as lines:
...     _ = ember.ones(2, requires_grad=True) * 2
>>> any('aten::mul.Tensor' in l and '-> Autograd' in l for l in lines)
True
"""
import sys

from ._dispatch import dispatcher


class trace_dispatch:
    """Print one line per kernel call: operator, key set, key chosen, kernel.

    Tracing swaps in uncached, printing lookups for the duration, so it costs
    nothing when off. ``file=None`` collects the lines in the returned list only.
    """

    def __init__(self, file=sys.stdout):
        self.file = file
        self.lines = []

    def _emit(self, line):
        self.lines.append(line)
        if self.file is not None:
            print(line, file=self.file)

    def __enter__(self):
        dispatcher._TRACE.append(self._emit)
        dispatcher.clear_caches()
        return self.lines

    def __exit__(self, *exc):
        dispatcher._TRACE.remove(self._emit)
        dispatcher.clear_caches()


def dispatch_table(op):
    """The kernel table of an operator as ``{key name: kernel name}`` (``op`` is e.g. ``ember.ops.aten.add.Tensor``)."""
    return {k.name: getattr(v, '__qualname__', repr(v)) for k, v in op.kernels.items()}
