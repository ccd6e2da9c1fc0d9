"""OpInfo records for bincount, histc, quantile/nanquantile and logspace (ember/_ops/statistics.py)."""
import numpy as np

import ember
from .core import op, S, Arg, FLOATS


def _ints(*v):
    return np.array(v, dtype=np.int64)


op('bincount', lambda dt: [S(_ints(1, 3, 3, 0)), S(_ints(2, 0, 2), minlength=6), S(_ints()), S(_ints(), minlength=2),
                           S(_ints(1, 3), np.array([0.5, 2.0], dtype=np.float32)),
                           S(_ints(1, 3, 1), np.array([0.5, 2.0, 1.0])), S(_ints(1, 1), _ints(4, 5)),
                           S(_ints(-1, 2)), S(np.array([[1, 2]])), S(np.array([1.0, 2.0])),
                           S(_ints(1, 2), np.array([1.0]))],
   dtypes=('int64',), grad=False, meta=False)
op('histc', lambda dt: [S(Arg((20,))), S(Arg((3, 4)), 4), S(Arg((3, 4)), 5, -1, 1), S(np.ones(3, dtype=dt), 4),
                        S(np.array([1, 2, 3, 4, 9], dtype=dt), 4, 2, 5), S(np.zeros(0, dtype=dt), 3),
                        S(np.array([1, 2, 3, 4, 9], dtype=dt), 4, 2, 2), S(Arg((5,)), 4, 3, 1),
                        S(Arg((5,)), 0), S(np.array([1, 2], dtype=np.int64), 3), S(Arg((3, 4), noncontig=True), 6)],
   dtypes=FLOATS, grad=False)
op('logspace', lambda dt: [S(0, 2, 3), S(-1, 1, 5, base=2), S(0, 3, 4, dtype=ember.int64), S(0, 1, 0),
                           S(1, 0, 4, base=3.0, dtype=ember.float64), S(0, 1, -1)],
   grad=False)


def _quantile_samples(dt):
    nan = np.array([[1., np.nan, 3., 2.], [4., 2., 6., 5.], [np.nan, np.nan, np.nan, np.nan]], dtype=dt)
    q2 = np.array([0.1, 0.5, 0.75], dtype=dt)
    yield S(Arg((7,)), 0.3)
    yield S(Arg((3, 4)), 0.5, 1)
    yield S(Arg((3, 4)), 0.25, 0, True)
    yield S(Arg((3, 4)), q2, 1)
    yield S(Arg((2, 3, 4)), q2, -1, True)
    yield S(Arg((2, 3, 4)), q2, None, True)
    yield S(Arg((2, 3, 4)), q2)
    yield S(Arg(()), 0.5)
    yield S(Arg(()), q2, 0)
    yield S(Arg((3, 4), noncontig=True), 0.6, 1)
    for mode in ('lower', 'higher', 'midpoint', 'nearest', 'linear'):
        yield S(Arg((3, 5)), q2, 1, interpolation=mode)
        yield S(np.array([1., 2., 3., 4.], dtype=dt), np.array([0.5, 1 / 6], dtype=dt), interpolation=mode)
    yield S(nan[:2], 0.5, 1)
    yield S(nan, q2, 1)
    # errors
    yield S(Arg((0,)), 0.5)
    yield S(Arg((4,)), 1.5)
    yield S(Arg((4,)), np.array([[0.5]], dtype=dt))
    yield S(Arg((4,)), np.array([0.5], dtype=np.float64 if dt == 'float32' else np.float32))
    yield S(Arg((4,)), 0.5, interpolation='bad')
    yield S(Arg((4,), dtype='int64'), 0.5)
    yield S(Arg((3, 4)), 0.5, 2)


op('quantile', _quantile_samples, gradgrad=False)
op('nanquantile', _quantile_samples, gradgrad=False)
