"""OpInfo records for indexing operators (ember/_ops/indexing.py).

Index tensors are fixed NumPy arrays (valid, and free of repeats where torch's result would depend on
the write order); error samples check torch's exception class for bad dtypes, shapes and out-of-range
indices. ``scatter``, ``masked_fill`` and ``index_fill`` are tested through their public choosers, which
reach every overload."""
import numpy as np

from .core import op, S, Arg

NUM = ('float32', 'float64', 'int64', 'int32')
NC = dict(noncontig=True)
L = np.int64


def _s(*samples):
    return lambda dt: list(samples)


def i(*v):
    return np.array(v if len(v) != 1 or not isinstance(v[0], list) else v[0], dtype=L)


op('index_select', _s(S(Arg((3, 4)), 0, i(0, 2)), S(Arg((3, 4)), 1, i(3, 0, 3)), S(Arg((3, 4)), -1, i(1)),
                      S(Arg((3, 4), **NC), 0, i(2, 1)), S(Arg(()), 0, i(0)), S(Arg(()), 0, np.array(0)),
                      S(Arg((3, 4)), 0, np.array(1)), S(Arg((3, 4)), 0, np.array([], dtype=L)),
                      S(Arg((0, 4)), 1, i(1, 2)), S(Arg((3, 4)), 0, np.array([0, 1], dtype=np.int32)),
                      S(Arg((3, 4)), 0, i([[0]])),
                      S(Arg((3, 4)), 0, np.array([0.])), S(Arg((3, 4)), 2, i(0))),
   dtypes=NUM + ('bool',))
op('index_add', _s(S(Arg((3, 4)), 0, i(0, 2), Arg((2, 4))), S(Arg((3, 4)), 1, i(0, 0, 3), Arg((3, 3))),
                   S(Arg((3, 4)), 0, i(1, 1), Arg((2, 4)), alpha=2), S(Arg(()), 0, i(0), Arg(())),
                   S(Arg((3, 4), **NC), 1, i(2), Arg((3, 1))), S(Arg((3, 4)), 0, np.array([0, 1], np.int32), Arg((2, 4))),
                   S(Arg((3, 4)), 0, np.array(2), Arg((1, 4))), S(Arg((3, 4)), 0, i(0, 1), Arg((3, 4))),
                   S(Arg((3, 4)), 0, i(0, 1), Arg((2, 5))),
                   S(Arg((3, 4)), 0, i(0, 1), Arg((2, 4), 'float16'))),
   dtypes=NUM)
op('gather', _s(S(Arg((3, 4)), 0, i([[0, 1, 2, 0], [2, 2, 1, 0]])), S(Arg((3, 4)), 1, i([[0], [3], [1]])),
                S(Arg((3, 4)), -1, i([[0, 0, 3], [1, 1, 1]])), S(Arg((3, 4), **NC), 0, i([[2, 0]])),
                S(Arg(()), 0, np.array(0)), S(Arg((3,)), 0, np.array([], dtype=L)),
                S(Arg((3, 4)), 0, i(1)), S(Arg((3, 4)), 0, i([[0, 0, 0, 0, 0]])),
                S(Arg((3, 4)), 0, np.array([[0.]])),
                S(Arg((3, 4)), 0, np.array([[1]], np.int32))),
   dtypes=NUM + ('bool',))
op('scatter_add', _s(S(Arg((3, 4)), 0, i([[0, 1, 2, 0], [2, 2, 1, 0]]), Arg((2, 4))),
                     S(Arg((3, 4)), 1, i([[0], [3], [1]]), Arg((3, 2))), S(Arg(()), 0, np.array(0), Arg(())),
                     S(Arg((3, 4)), 0, i([[0, 1]]), Arg((2, 3))), S(Arg((3, 4), **NC), 1, i([[1, 1], [0, 0]]), Arg((2, 2))),
                     S(Arg((3, 4)), 0, np.array([], dtype=L), Arg((2, 4))),
                     S(Arg((3, 4)), 0, i([[0, 1]]), Arg((1, 1))), S(Arg((3, 4)), 0, i([[0]]), Arg((1, 1), 'float16'))),
   dtypes=NUM)


def _scatter_samples(dt):
    idx = i([[0, 1, 2, 0], [2, 0, 1, 1]])       # no repeats along a scatter line
    return [S(Arg((3, 4)), 0, idx, Arg((2, 4))), S(Arg((3, 4)), 1, i([[3], [0], [2]]), Arg((3, 2))),
            S(Arg((3, 4)), 0, idx, 2.5), S(Arg((3, 4)), 0, idx, value=-1), S(Arg(()), 0, np.array(0), Arg(())),
            S(Arg((3, 4)), 0, i([[0, 1]]), Arg((2, 3))), S(Arg((3, 4), **NC), 1, i([[1, 0]]), Arg((1, 2))),
            S(Arg((3, 4)), 0, i([[0, 0], [1, 2]]), Arg((2, 2)), reduce='add'),
            S(Arg((3, 4)), 0, i([[0, 0], [1, 2]]), Arg((2, 2)), reduce='multiply'),
            S(Arg((3, 4)), 0, i([[0, 0], [1, 2]]), 2.0, reduce='multiply'),
            S(Arg((3, 4)), 0, i([[0, 0], [1, 2]]), 2.0, reduce='add'),
            S(Arg((3, 4)), 0, i([[0]]), Arg((1, 1)), reduce='sum'),
            S(Arg((3, 4)), 0, i([[0]]), Arg((1, 1), 'float16'))]


op('scatter', _scatter_samples, dtypes=NUM)


def _scatter_reduce_samples(dt):
    idx = i([[0, 1, 2, 0], [0, 0, 1, 1], [2, 2, 2, 2]])
    out = []
    for red in ('sum', 'prod', 'mean', 'amax', 'amin'):
        for inc in (True, False):
            out.append(S(Arg((3, 4)), 0, idx, Arg((3, 4)), red, include_self=inc))
        out.append(S(Arg((3, 4)), 1, i([[0, 0], [3, 1], [2, 2]]), Arg((3, 2)), red))
    out += [S(Arg((3, 4)), 0, idx, Arg((3, 4)), 'max'), S(Arg(()), 0, np.array(0), Arg(()), 'sum')]
    return out


op('scatter_reduce', _scatter_reduce_samples, dtypes=NUM)

_ADV = [([i(0, 2)],), ([None, i(1, 3, 3)],), ([i(0, 2), i(1, 3)],), ([i([[0], [2]]), i(1, 3)],),
        ([np.array([True, False, True])],), ([None, np.array([True, False, True, True])],),
        ([np.array([[True, False, True, True], [False, False, True, False], [True, True, True, True]])],),
        ([i(-1, 0)],), ([np.array([0, 2], np.int32), None],), ([np.array([1, 0, 1], np.uint8)],)]


def _index_samples(dt):
    out = [S(Arg((3, 4)), *a) for a in _ADV]
    out += [S(Arg((2, 3, 4)), [i(0, 1), None, i(1, 3)]), S(Arg((2, 3, 4)), [None, i(0, 2), i(1, 3)]),
            S(Arg((2, 3, 4)), [i(1), i([[0], [2]])]), S(Arg((3, 4), **NC), [None, i(1, 2)]),
            S(Arg((3, 4)), [np.array([0.])]),
            S(Arg((3, 4)), [i(0, 1), i(0, 1, 2)]), S(Arg((3, 4)), [np.array([True, False])]),
            S(Arg((3, 4)), [i(0), i(0), i(0)]), S(Arg((0, 4)), [None, i(1, 2)])]
    return out


op('index', _index_samples, dtypes=NUM + ('bool',), torch_name='ops.aten.index.Tensor', meta=False)


def _index_put_samples(dt):
    return [S(Arg((3, 4)), [i(0, 2)], Arg((2, 4))), S(Arg((3, 4)), [i(0, 2)], Arg((4,))),
            S(Arg((3, 4)), [None, i(1, 3)], Arg((3, 1))), S(Arg((3, 4)), [i(0, 2), i(1, 3)], Arg(())),
            S(Arg((3, 4)), [i(0, 0, 2), i(1, 1, 3)], Arg((3,)), True),
            S(Arg((3, 4)), [np.array([True, False, True])], Arg((2, 4))),
            S(Arg((3, 4)), [np.array([[True, False, True, True], [False] * 4, [True] * 4])], Arg(())),
            S(Arg((3, 4)), [i(1, 1)], Arg((2, 4)), True), S(Arg((2, 3, 4)), [i(0, 1), None, i(1, 3)], Arg((2, 3))),
            S(Arg((3, 4)), [i(0, 2)], Arg((3,))),
            S(Arg((3, 4)), [i(0, 2)], Arg((1, 2, 4)))]


op('index_put', _index_put_samples, dtypes=NUM, meta=False, torch_name='ops.aten.index_put')
op('index_copy', _s(S(Arg((3, 4)), 0, i(2, 0), Arg((2, 4))), S(Arg((3, 4)), 1, i(3), Arg((3, 1))),
                    S(Arg((3, 4), **NC), 1, i(1, 0), Arg((3, 2))), S(Arg(()), 0, i(0), Arg(())),
                    S(Arg((3, 4)), 0, i(0), Arg((1, 5))),
                    S(Arg((3, 4)), 0, np.array([0], np.int32), Arg((1, 4))), S(Arg((3, 4)), 0, i(0, 1), Arg((1, 4)))),
   dtypes=NUM)
op('index_fill', _s(S(Arg((3, 4)), 0, i(2, 0), 1.5), S(Arg((3, 4)), 1, i(3, 3), -2), S(Arg((3, 4)), 1, i(-1), Arg(())),
                    S(Arg((3, 4), **NC), 0, i(1), 0), S(Arg(()), 0, i(0), 3),
                    S(Arg((3, 4)), 0, np.array([0], np.int32), 1), S(Arg((3, 4)), 0, i(0), Arg((1,)))),
   dtypes=NUM)
op('masked_fill', _s(S(Arg((3, 4)), Arg((3, 4), 'bool'), 1.5), S(Arg((3, 4)), Arg((4,), 'bool'), Arg(())),
                     S(Arg((4,)), Arg((3, 4), 'bool'), -1), S(Arg(()), Arg((), 'bool'), 2), S(Arg((3, 4), **NC), Arg((3, 4), 'bool'), 0),
                     S(Arg((3, 4)), Arg((3, 4), 'float32'), 1), S(Arg((3, 4)), Arg((3, 4), 'uint8'), 1),
                     S(Arg((3, 4)), Arg((3, 4), 'bool'), Arg((1,))), S(Arg((3, 4)), Arg((3, 4), 'bool'), Arg((), 'float64')),
                     S(Arg((3, 4)), Arg((2, 4), 'bool'), 0)),
   dtypes=NUM + ('bool',))
op('masked_scatter', _s(S(Arg((3, 4)), Arg((3, 4), 'bool'), Arg((12,))), S(Arg((3, 4)), Arg((4,), 'bool'), Arg((4, 4))),
                        S(Arg((4,)), Arg((3, 4), 'bool'), Arg((3, 5))), S(Arg((3, 4)), np.zeros((3, 4), bool), Arg((2,))),
                        S(Arg((3, 4)), np.ones((3, 4), bool), Arg((5,))), S(Arg((3, 4)), Arg((3, 4), 'int64'), Arg((12,))),
                        S(Arg((3, 4)), Arg((3, 4), 'bool'), Arg((12,), 'float16'))),
   dtypes=NUM, meta=False)
op('masked_select', _s(S(Arg((3, 4)), Arg((3, 4), 'bool')), S(Arg((3, 4)), Arg((4,), 'bool')), S(Arg((4,)), Arg((3, 4), 'bool')),
                       S(Arg(()), Arg((), 'bool')), S(Arg((3, 4), **NC), Arg((3, 4), 'bool')), S(Arg((3, 4)), Arg((3, 4), 'int64')),
                       S(Arg((3, 4)), Arg((2, 4), 'bool'))),
   dtypes=NUM + ('bool',), meta=False)
op('take', _s(S(Arg((3, 4)), i(0, 11, 5)), S(Arg((3, 4)), i([[1, -1], [3, 3]])), S(Arg((3, 4), **NC), i(1, 2)),
              S(Arg(()), np.array(0)), S(Arg((3, 4)), np.array([0], np.int32))),
   dtypes=NUM)
op('put', _s(S(Arg((3, 4)), i(0, 11, 5), Arg((3,))), S(Arg((3, 4)), i([[1, -1], [3, 3]]), Arg((2, 2)), True),
             S(Arg((3, 4)), i(1, 2), Arg((2,))), S(Arg(()), np.array(0), Arg(())),
             S(Arg((3, 4)), i(1, 2), Arg((3,)))),
   dtypes=NUM, method=True)
op('take_along_dim', _s(S(Arg((3, 4)), i([[0, 1, 2, 0], [2, 2, 1, 0]]), 0), S(Arg((3, 4)), i([[0], [3], [1]]), 1),
                        S(Arg((3, 4)), i(0, 11, 5)), S(Arg((3, 4)), i([[0, 3]]), 1), S(Arg((3, 4)), i(1), 0)),
   dtypes=NUM)
op('nonzero', _s(S(Arg((3, 4))), S(Arg((5,))), S(Arg(())), S(Arg((0, 3))), S(Arg((2, 3, 4))), S(Arg((3, 4), **NC)),
                 S(Arg((3, 4)), as_tuple=True), S(Arg(()), as_tuple=True)),
   dtypes=NUM + ('bool',), grad=False, meta=False)
op('argwhere', _s(S(Arg((3, 4))), S(Arg(())), S(Arg((0, 3)))), dtypes=NUM + ('bool',), grad=False, meta=False)
