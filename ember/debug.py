"""Tools for learners: watch the dispatcher work.

>>> import ember
>>> with ember.debug.trace_dispatch(file=None) as lines:
...     _ = ember.ones(2, requires_grad=True) * 2
>>> any('aten::mul.Tensor' in l and '-> Autograd' in l for l in lines)
True
"""
import sys

from ._dispatch import dispatcher

_STDOUT = object()      # "sys.stdout when called": a default of sys.stdout would keep the stream of import time


class trace_dispatch:
    """Print one line per kernel call: operator, key set, key chosen, kernel.

    Tracing swaps in uncached, printing lookups for the duration, so it costs
    nothing when off. ``file=None`` collects the lines in the returned list only.
    """

    def __init__(self, file=_STDOUT):
        self.file = sys.stdout if file is _STDOUT else file
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


def source(op, file=_STDOUT):
    """Print the generated code behind an operator: its entry point (argument checks, key set, cached
    kernel lookup) and each generated kernel adapter, by dispatch key. Returns the text.

    ``op`` is an operator (``ember.ops.aten.add.Tensor``) or a public function built from one (``ember.add``).

    >>> import ember
    >>> text = ember.debug.source(ember.ops.aten.mul.Tensor, file=None)
    >>> text.splitlines()[0]
    '# entry point: <ember op aten::mul.Tensor>'
    """
    op = getattr(op, '_op', op)
    if not hasattr(op, 'kernels'):
        raise TypeError(f"ember.debug.source expects an operator such as ember.ops.aten.add.Tensor, got {op!r}")
    parts = [f'# entry point: <ember op {op.name}>\n' + op.call.__ember_source__]
    for key, k in sorted(op.kernels.items(), key=lambda kv: -int(kv[0])):
        if hasattr(k, 'materialize'):          # a kernel generated at its first call: generate it now
            k = k.materialize()
        src = getattr(k, '__ember_source__', None)
        parts.append(f'# {key.name} kernel: ' + (f'generated\n{src}' if src else
                                                  f'{getattr(k, "__qualname__", repr(k))} (a Python function, '
                                                  f'no generated source)\n'))
    text = '\n'.join(parts)
    if file is not None:
        print(text, file=sys.stdout if file is _STDOUT else file)
    return text
