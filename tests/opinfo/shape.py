"""OpInfo records for joining, reordering and shape operators (ember/_ops/shape.py).

Operators reached through a hand-written chooser (``repeat_interleave``, ``unique``, ``meshgrid``) are
tested through that public function. Samples cover 0-d, empty, non-contiguous and mixed-dtype inputs
and the error cases (torch's exception class is compared)."""
import numpy as np

from .core import op, S, Arg, FLOATS, ALL_NUMERIC

NUM = ('float32', 'float64', 'int64', 'int32', 'bool')
NC = dict(noncontig=True)


def _s(*samples):
    return lambda dt: list(samples)


def _cat_samples(dt):
    return [S([Arg((2, 3)), Arg((4, 3))]), S([Arg((2, 3)), Arg((2, 1))], 1), S([Arg((2, 3)), Arg((2, 4))], -1),
            S([Arg((3,))]), S([Arg((2, 3)), Arg((0,))]), S([Arg((0,)), Arg((2, 3))], 1), S([Arg((0,)), Arg((0,))]),
            S([Arg((2, 3), **NC), Arg((2, 3))], 0), S([Arg((2, 3)), Arg((2, 3), 'float64')]),
            S([Arg((2, 3)), Arg((2, 3), 'int64')], 1), S([Arg((0, 3)), Arg((2, 3))]),
            S([Arg((2, 3)), Arg((2, 4))]), S([Arg((2, 3)), Arg((2, 3, 1))]), S([Arg(()), Arg((2,))]),
            S([Arg((2, 3)), Arg((2, 3))], 2), S([])]


op('cat', _cat_samples, dtypes=NUM)
op('concat', _s(S([Arg((2, 3)), Arg((4, 3))]), S([Arg((2, 3)), Arg((2, 1))], 1)))
op('concatenate', _s(S([Arg((2, 3)), Arg((4, 3))]), S([Arg((2, 3)), Arg((2, 1))], dim=1)))
op('stack', _s(S([Arg((2, 3)), Arg((2, 3))]), S([Arg((2, 3)), Arg((2, 3))], 2), S([Arg((2, 3)), Arg((2, 3))], -1),
               S([Arg(()), Arg(())]), S([Arg((3,), **{}), Arg((3,), 'float64')]), S([Arg((2, 3), **NC), Arg((2, 3))], 1),
               S([Arg((0, 3))]), S([Arg((2, 3)), Arg((2, 4))]), S([]), S([Arg((2, 3))], 3)),
   dtypes=NUM)
op('hstack', _s(S([Arg((2, 3)), Arg((2, 1))]), S([Arg((3,)), Arg((2,))]), S([Arg(()), Arg((2,))])))
op('vstack', _s(S([Arg((2, 3)), Arg((1, 3))]), S([Arg((3,)), Arg((3,))]), S([Arg(()), Arg(())])))
op('row_stack', _s(S([Arg((2, 3)), Arg((1, 3))]), S([Arg((3,)), Arg((3,))])))
op('dstack', _s(S([Arg((2, 3)), Arg((2, 3))]), S([Arg((3,)), Arg((3,))]), S([Arg((2, 3, 1)), Arg((2, 3, 2))])))
op('column_stack', _s(S([Arg((3,)), Arg((3, 2))]), S([Arg(()), Arg((1,))]), S([Arg((3,)), Arg((3,))])))

op('slice_scatter', _s(S(Arg((5, 4)), Arg((2, 4)), 0, 1, 5, 2), S(Arg((5, 4)), Arg((5, 2)), 1, 2),
                       S(Arg((5, 4)), Arg((5, 4))), S(Arg((5, 4)), Arg((0, 4)), 0, 3, 1),
                       S(Arg((5, 4), **NC), Arg((5, 1)), 1, -1), S(Arg((5, 4)), Arg((2, 4)), 0, 0, 1)),
   dtypes=NUM)
op('select_scatter', _s(S(Arg((5, 4)), Arg((4,)), 0, 1), S(Arg((5, 4)), Arg((5,)), 1, -1),
                        S(Arg((2, 3, 4)), Arg((2, 4)), 1, 2), S(Arg((5, 4)), Arg((3,)), 0, 1),
                        S(Arg((5, 4)), Arg((4,)), 0, 5)),
   dtypes=NUM)
op('diagonal_scatter', _s(S(Arg((3, 4)), Arg((3,))), S(Arg((3, 4)), Arg((3,)), 1), S(Arg((3, 4)), Arg((2,)), -1),
                          S(Arg((2, 3, 4)), Arg((2, 3)), 0, 1, 2), S(Arg((3, 4)), Arg((4,)))),
   dtypes=NUM)
op('unfold_backward', _s(S(Arg((3, 3, 2)), (3, 4), 1, 2, 1), S(Arg((2, 4, 2)), (5, 4), 0, 2, 2),
                         S(Arg((3, 3)), (7,), 0, 3, 2), S(Arg((1,)), (), 0, 1, 1)),
   torch_name='ops.aten.unfold_backward')

op('flip', _s(S(Arg((3, 4)), (0,)), S(Arg((2, 3, 4)), (0, 2)), S(Arg((2, 3, 4)), (-1,)), S(Arg(()), ()),
              S(Arg((3, 4), **NC), (0, 1)), S(Arg((0, 3)), (0,)), S(Arg((3, 4)), (0, 0)), S(Arg((3, 4)), (2,))),
   dtypes=NUM)
op('fliplr', _s(S(Arg((3, 4))), S(Arg((2, 3, 4))), S(Arg((3,)))), dtypes=NUM)
op('flipud', _s(S(Arg((3, 4))), S(Arg((3,))), S(Arg(()))), dtypes=NUM)
op('roll', _s(S(Arg((3, 4)), 1), S(Arg((3, 4)), -2, 1), S(Arg((3, 4)), (1, 2), (0, 1)), S(Arg((3, 4)), 5, 0),
              S(Arg((3, 4), **NC), 1, 0), S(Arg(()), 1), S(Arg((0, 3)), 1, 1), S(Arg((3, 4)), (1, 2), (0,)),
              S(Arg((3, 4)), (1, 2))),
   dtypes=NUM)
op('rot90', _s(S(Arg((3, 4))), S(Arg((3, 4)), 2), S(Arg((3, 4)), 3), S(Arg((3, 4)), -1), S(Arg((3, 4)), 4),
               S(Arg((2, 3, 4)), 1, (1, 2)), S(Arg((3, 4)), 1, (0,)), S(Arg((3, 4)), 1, (0, 0)), S(Arg((3,)))),
   dtypes=NUM)
op('repeat', _s(S(Arg((2, 3)), (2, 2)), S(Arg((2, 3)), (2, 1, 3)), S(Arg(()), (3,)), S(Arg(()), ()),
                S(Arg((3,)), (0, 2)), S(Arg((2, 3), **NC), (1, 2)), S(Arg((2, 3)), (2,)), S(Arg((2, 3)), (2, -1))),
   dtypes=NUM, method=True)
op('tile', _s(S(Arg((2, 3)), (2,)), S(Arg((2, 3)), (2, 1, 3)), S(Arg(()), (3,)), S(Arg((2, 3)), ())), dtypes=NUM)
op('repeat_interleave', _s(S(Arg((2, 3)), 2), S(Arg((2, 3)), 2, 1), S(Arg((2, 3)), np.array([1, 0, 2]), 1),
                           S(Arg((2, 3)), np.array([3, 1]), 0), S(Arg((2, 3)), np.array(2), 1), S(Arg(()), 3),
                           S(Arg((3,)), np.array([1, 2, 3])), S(np.array([2, 0, 1])), S(Arg((2, 3)), 0, 1),
                           S(Arg((2, 3)), np.array([1, 2]), 1), S(Arg((2, 3)), -1),
                           S(Arg((2, 3)), np.array([[1, 2]]), 0)),
   dtypes=NUM, meta=False)
op('tril', _s(S(Arg((3, 4))), S(Arg((3, 4)), 1), S(Arg((3, 4)), -1), S(Arg((2, 3, 4)), 2), S(Arg((3, 4), **NC)),
              S(Arg((0, 3))), S(Arg((3, 4)), -10), S(Arg((3,)))),
   dtypes=NUM)
op('triu', _s(S(Arg((3, 4))), S(Arg((3, 4)), 1), S(Arg((3, 4)), -1), S(Arg((2, 3, 4)), 2), S(Arg((3, 4), **NC)),
              S(Arg((0, 3))), S(Arg((3, 4)), 10), S(Arg(()))),
   dtypes=NUM)
op('tril_indices', _s(S(3, 3), S(3, 4, 1), S(4, 3, -1), S(0, 3), S(3, 3, 10), S(3, 3, -10)), dtypes=('int64',), meta=False,
   grad=False)
op('triu_indices', _s(S(3, 3), S(3, 4, 1), S(4, 3, -1), S(0, 3), S(3, 3, 10), S(3, 3, -10)), dtypes=('int64',), meta=False,
   grad=False)
op('broadcast_to', _s(S(Arg((3, 1)), (3, 4)), S(Arg(()), (2, 2)), S(Arg((3, 1)), (2, -1, 4)), S(Arg((3, 2)), (3, 4))),
   dtypes=NUM, view=True)
op('broadcast_tensors', _s(S(Arg((3, 1)), Arg((4,))), S(Arg(()), Arg((2, 2))), S(Arg((3,)),), S(Arg((3,)), Arg((4,)))),
   dtypes=NUM, view=True)
op('meshgrid', _s(S(Arg((2,)), Arg((3,)), indexing='ij'), S(Arg((2,)), Arg((3,)), indexing='xy'),
                  S(Arg((2,)), Arg((3,)), Arg((4,)), indexing='xy'), S(Arg(()), Arg((3,)), indexing='ij'),
                  S([Arg((2,)), Arg((3,))], indexing='ij'), S(Arg((2,)), indexing='xy')),
   view=True)
op('atleast_1d', _s(S(Arg(())), S(Arg((3,))), S(Arg((2, 3))), S(Arg(()), Arg((2,)))), view=True)
op('atleast_2d', _s(S(Arg(())), S(Arg((3,))), S(Arg((2, 3))), S([Arg(()), Arg((2,))])), view=True)
op('atleast_3d', _s(S(Arg(())), S(Arg((3,))), S(Arg((2, 3))), S(Arg((2, 3, 4))), S(Arg(()), Arg((2, 3)))), view=True)
op('cartesian_prod', _s(S(Arg((2,)), Arg((3,))), S(Arg((3,))), S(Arg((2,)), Arg((2,)), Arg((2,))),
                        S(Arg((2, 2)), Arg((2,)))),
   dtypes=NUM)
op('block_diag', _s(S(Arg((2, 2)), Arg((1, 3))), S(Arg(()), Arg((2,)), Arg((2, 1))), S(Arg((2, 2)), Arg((2, 2), 'float64')),
                    S(Arg((2, 2, 2)),)))

_PAD_VALUES = dict(low=-3, high=3)


def _pad_samples(dt):
    out = [S(Arg((2, 3)), (1, 2)), S(Arg((2, 3)), (1, 1, 2, 0), value=2.5), S(Arg((2, 3)), (-1, 1)),
           S(Arg((2, 3, 4)), (1, 0, 0, 1, 1, 1)), S(Arg(()), ()), S(Arg((2, 3), **NC), (1, 1)),
           S(Arg((2, 3)), (1, 2, 3)), S(Arg((2, 3)), (1, 1, 1, 1, 1, 1)), S(Arg((2, 3)), (-2, -2))]
    for mode in ('reflect', 'replicate', 'circular'):
        out += [S(Arg((2, 3)), (1, 2), mode=mode), S(Arg((1, 2, 3)), (2, 1), mode=mode),
                S(Arg((1, 3, 4)), (1, 2, 2, 1), mode=mode), S(Arg((2, 1, 3, 4)), (1, 1, 1, 0), mode=mode),
                S(Arg((1, 2, 3, 3)), (1, 1, 1, 1, 1, 1), mode=mode), S(Arg((2, 1, 2, 3, 3)), (1, 0, 0, 1, 1, 1), mode=mode),
                S(Arg((1, 3, 4)), (-1, 2, 1, -1), mode=mode), S(Arg((2, 3)), (3, 3), mode=mode),
                S(Arg((3,)), (1, 1), mode=mode), S(Arg((2, 3)), (1, 1, 1, 1), mode=mode),
                S(Arg((2, 3, 4), **{}), (1, 1), mode=mode, value=1.0)]
    out += [S(Arg((1, 0, 3)), (1, 1), mode='reflect'), S(Arg((2, 3)), (1, 1), mode='foo'),
            S(Arg((1, 3, 4)), (4, 4), mode='circular')]
    return out


op('pad', _pad_samples, torch_name='nn.functional.pad', dtypes=('float32', 'float64', 'int64'))
op('constant_pad_nd', _s(S(Arg((2, 3)), (1, 2)), S(Arg((2, 3)), (1, -1, 0, 2), 3), S(Arg((2, 3)), (1, 2, 3)),
                         S(Arg((2, 3)), (-2, -2))),
   dtypes=NUM)

op('unique', _s(S(np.array([3, 1, 2, 1, 3])), S(np.array([3, 1, 2, 1, 3]), return_inverse=True),
                S(np.array([[3, 1], [1, 3]]), return_inverse=True, return_counts=True),
                S(np.array([3, 1, 2, 1, 3]), return_counts=True), S(np.array([], dtype=np.int64)),
                S(np.array([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True, return_counts=True),
                S(np.array([[1, 2, 1], [3, 4, 3]]), dim=1), S(np.array(5)), S(np.array([2, 1]), dim=2)),
   grad=False, dtypes=('int64',), meta=False)
op('unique_consecutive', _s(S(np.array([3, 3, 1, 3, 2])), S(np.array([3, 3, 1, 1]), return_inverse=True,
                                                           return_counts=True),
                            S(np.array([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True, return_counts=True),
                            S(np.array([[1, 1, 2], [3, 3, 4]]), return_counts=True, dim=1),
                            S(np.array([[1, 1], [2, 2]]), return_inverse=True), S(np.array([], dtype=np.int64))),
   grad=False, dtypes=('int64',), meta=False)
op('isclose', _s(S(Arg((3, 4)), Arg((3, 4))), S(np.array([1., 2., np.nan]), np.array([1. + 1e-9, 2.1, np.nan])),
                 S(np.array([1., 2., np.nan]), np.array([1., 2., np.nan]), equal_nan=True),
                 S(np.array([1., 2.]), np.array([1.05, 2.5]), rtol=0.1), S(np.array([1., 2.]), np.array([1.05, 2.5]), atol=0.2),
                 S(Arg((3, 1)), Arg((4,))), S(Arg((3,)), Arg((3,), 'int64')), S(Arg((3,)), Arg((4,)))),
   grad=False, dtypes=('float32', 'float64', 'int64', 'bool'))
op('allclose', _s(S(np.array([1., 2.]), np.array([1., 2. + 1e-9])), S(np.array([1., 2.]), np.array([1., 2.1])),
                  S(np.array([1., np.nan]), np.array([1., np.nan]), equal_nan=True), S(Arg((3, 1)), Arg((4,)))),
   grad=False, meta=False)
op('equal', _s(S(np.array([1., 2.]), np.array([1., 2.])), S(np.array([1., 2.]), np.array([1., 2.1])),
               S(np.array([1., 2.]), np.array([1.])), S(Arg((0,)), Arg((0,)))),
   grad=False, meta=False)
op('searchsorted', _s(S(np.array([1, 3, 5, 7]), np.array([0, 3, 6, 9])),
                      S(np.array([1, 3, 5, 7]), np.array([[0, 3], [6, 7]]), right=True),
                      S(np.array([1, 3, 5, 7]), np.array([3, 7]), side='right'),
                      S(np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3, 4], [1, 7]])),
                      S(np.array([1, 3, 5, 7]), 4), S(np.array([1, 3, 5, 7]), np.array([3]), out_int32=True),
                      S(np.array([5, 1, 7, 3]), np.array([3, 6]), sorter=np.array([1, 3, 0, 2])),
                      S(np.array([1, 3, 5, 7]), np.array([3]), side='left', right=True),
                      S(np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3, 4]]))),
   grad=False, dtypes=('int64',))
op('bucketize', _s(S(np.array([0, 3, 6, 9]), np.array([1, 3, 5, 7])),
                   S(np.array([[0, 3], [6, 9]]), np.array([1, 3, 5, 7]), right=True),
                   S(np.array(3), np.array([1, 3, 5, 7]), out_int32=True),
                   S(np.array([1, 2]), np.array([[1, 3], [5, 7]]))),
   grad=False, dtypes=('int64',))
op('one_hot', _s(S(np.array([0, 2, 1])), S(np.array([[0, 2], [1, 1]]), 4), S(np.array([0, 1]), 2),
                               S(np.array([], dtype=np.int64), 3), S(np.array([0, 3]), 3), S(np.array([0, -1]), 3),
                               S(np.array([], dtype=np.int64)), S(np.array([0., 1.]))),
   torch_name='nn.functional.one_hot', grad=False, dtypes=('int64',), meta=False)
op('combinations', _s(S(Arg((4,))), S(Arg((4,)), 3), S(Arg((3,)), 2, True), S(Arg((3,)), 0), S(Arg((3,)), 4),
                      S(Arg((3,)), 1), S(Arg((0,))), S(Arg((2, 2))), S(Arg((3,)), -1)),
   dtypes=('float32', 'float64', 'int64'), meta=False)
_CD = np.array([[0., 1., 2.], [2., 3., 1.]])
op('cdist', _s(*[S(Arg((3, 4)), Arg((5, 4)), p) for p in (0., 1., 2., 3.5, float('inf'))],
               S(Arg((2, 3, 4)), Arg((5, 4))), S(Arg((2, 1, 3, 2)), Arg((4, 5, 2))), S(_CD, _CD[:1]), S(_CD, _CD[:1], 1.),
               S(_CD, _CD[:1], 3.), S(Arg((3,)), Arg((3,))), S(Arg((3, 4)), Arg((5, 3))), S(Arg((3, 4)), Arg((5, 4)), -1.),
               # torch's matrix-product path (_euclidean_dist): p=2 with more than 25 rows, or asked for
               S(Arg((30, 4)), Arg((5, 4))), S(Arg((2, 27, 3)), Arg((1, 4, 3))),
               S(Arg((3, 4)), Arg((5, 4)), 2., 'use_mm_for_euclid_dist'),
               S(Arg((30, 4)), Arg((5, 4)), 2., 'donot_use_mm_for_euclid_dist')),
   atol=1e-4, rtol=1e-5, gradgrad=False)     # torch has no double backward for cdist
op('_unique2', _s(S(np.array([3, 1, 2, 1, 3])), S(np.array([[3, 1], [1, 3]]), True, True, True),
                  S(np.array([3, 1, 3]), True, False, True), S(np.array([], dtype=np.int64))),
   grad=False, dtypes=('int64',), meta=False)
op('unique_dim', _s(S(np.array([[1, 2], [1, 2], [0, 5]]), 0, True, True, True), S(np.array([[1, 2, 1], [3, 4, 3]]), 1),
                    S(np.array([[1, 2, 1], [3, 4, 3]]), -1, True, False, True)),
   grad=False, dtypes=('int64',), meta=False, torch_name='ops.aten.unique_dim')
op('_cdist_forward', _s(S(Arg((3, 4)), Arg((5, 4)), 2., None), S(Arg((2, 3, 4)), Arg((5, 4)), 1., None),
                        S(Arg((3, 4)), Arg((5, 4)), 3., None)),
   torch_name='ops.aten._cdist_forward', atol=1e-4, rtol=1e-5, gradgrad=False)
