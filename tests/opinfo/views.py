"""OpInfo records for the view operators of ember/_ops/views.py.

``view=True``: the generic tests compare sizes, strides and storage offsets with torch (and the
Meta backend's strides with CPU's), so every view is checked to alias the same elements torch's does.
Composite views that may copy (reshape of a non-contiguous input) are compared the same way: torch's
result is then contiguous too.
"""
from .core import op, S, Arg, FLOATS

VDT = ('float32', 'int64')
NC = dict(noncontig=True)


def _s(*samples):
    return lambda dt: list(samples)


op('view', _s(S(Arg((3, 4)), (4, 3)), S(Arg((3, 4)), (-1,)), S(Arg((2, 3, 4)), (6, -1)), S(Arg(()), (1,)),
              S(Arg((5,)), ()), S(Arg((1,)), ()), S(Arg((0, 3)), (3, 0)), S(Arg((0, 3)), (-1, 1)),
              S(Arg((3, 4), **NC), (3, 4, 1)), S(Arg((3, 4), **NC), (1, 3, 1, 4)), S(Arg((3, 4), **NC), (12,)),
              S(Arg((3, 4)), (5,)), S(Arg((3, 4)), (-1, -1)), S(Arg((3, 4)), (5, -1))),
   dtypes=VDT, method=True, view=True)
op('transpose', _s(S(Arg((3, 4)), 0, 1), S(Arg((2, 3, 4)), -1, 0), S(Arg(()), 0, 0), S(Arg(()), -1, 0),
                   S(Arg((3, 4), **NC), 0, 1), S(Arg((0, 3)), 1, 0), S(Arg((3, 4)), 0, 2)),
   dtypes=VDT, view=True)
op('permute', _s(S(Arg((2, 3, 4)), (2, 0, 1)), S(Arg(()), ()), S(Arg((3, 4), **NC), (1, 0)),
                 S(Arg((2, 3, 4)), (-1, 0, 1)), S(Arg((3, 4)), (0, 0)), S(Arg((3, 4)), (0,))),
   dtypes=VDT, view=True)
op('expand', _s(S(Arg((3, 1)), (3, 4)), S(Arg((4,)), (2, 3, 4)), S(Arg(()), (2, 2)), S(Arg((3, 1)), (-1, 4)),
                S(Arg((1, 3)), (0, 3)), S(Arg((3, 1), **NC), (2, 3, 5)), S(Arg((3, 2)), (3, 4)),
                S(Arg((3, 2)), (2,)), S(Arg((3, 1)), (-1, 3, 1))),
   dtypes=VDT, method=True, view=True)
op('squeeze', _s(S(Arg((3, 1, 4, 1))), S(Arg((3, 1, 4, 1)), 1), S(Arg((3, 1, 4, 1)), -1), S(Arg((3, 1, 4)), 0),
                 S(Arg((3, 1, 4, 1)), (1, 3)), S(Arg(())), S(Arg(()), 0), S(Arg((1, 1))), S(Arg((3, 1)), 3),
                 S(Arg((4, 1), **NC), 1)),
   dtypes=VDT, view=True)
op('unsqueeze', _s(S(Arg((2, 3, 4)), 0), S(Arg((2, 3, 4)), -1), S(Arg((2, 3, 4)), 3), S(Arg((2, 3, 4)), 2),
                   S(Arg(()), 0), S(Arg((3, 4), **NC), 1), S(Arg((0, 3)), 1), S(Arg((2, 3)), 4)),
   dtypes=VDT, view=True)
op('select', _s(S(Arg((3, 4)), 0, 1), S(Arg((3, 4)), 1, -1), S(Arg((2, 3, 4)), 1, 2), S(Arg((3, 4), **NC), 1, 2),
                S(Arg((3, 4)), 0, 3), S(Arg((3, 4)), 0, -4), S(Arg(()), 0, 0), S(Arg((3, 4)), 2, 0)),
   dtypes=VDT, view=True)
op('slice', _s(S(Arg((5, 4)), 0, 1, 4, 2), S(Arg((5, 4)), 1, None, None, 1), S(Arg((5, 4)), 0, -3, None, 1),
               S(Arg((5, 4)), 0, 10, 20, 1), S(Arg((5, 4)), 1, 0, 4, 3), S(Arg((5, 4)), 1, -10, 2, 1),
               S(Arg((5, 4)), 0, 3, 1, 1), S(Arg((5, 4), **NC), 0, 1, 3, 1), S(Arg((5, 4)), 0, 0, 4, 0),
               S(Arg(()), 0, 0, 1, 1)),
   dtypes=VDT, view=True, torch_name='ops.aten.slice.Tensor')
op('as_strided', _s(S(Arg((3, 4)), (2, 2), (1, 2)), S(Arg((3, 4)), (2,), (3,), 1), S(Arg((3, 4)), (3, 3), (1, 1)),
                    S(Arg((3, 4)), (2, 3), (4, 1), 2), S(Arg((3, 4)), (), ()), S(Arg((3, 4), **NC), (2, 2), (1, 3)),
                    S(Arg((3, 4)), (0, 3), (1, 1)), S(Arg((3, 4)), (5, 5), (5, 1)), S(Arg((3, 4)), (2, 2), (1,)),
                    S(Arg((3, 4)), (2, 2), (1, -1))),
   dtypes=VDT, view=True)
op('detach', _s(S(Arg((3, 4))), S(Arg(())), S(Arg((3, 4), **NC))), dtypes=VDT, view=True, grad=False)
op('alias', _s(S(Arg((3, 4))), S(Arg(())), S(Arg((3, 4), **NC))), dtypes=VDT, view=True,
   torch_name='ops.aten.alias')
op('diagonal', _s(S(Arg((3, 4))), S(Arg((3, 4)), 1), S(Arg((3, 4)), -1), S(Arg((2, 3, 4)), 0, 1, 2),
                  S(Arg((2, 3, 4)), 1, -1, 0), S(Arg((3, 4)), 5), S(Arg((3, 4)), -5), S(Arg((3, 4), **NC), 1),
                  S(Arg((0, 3))), S(Arg((3, 4)), 0, 1, 1)),
   dtypes=VDT, view=True)
op('unfold', _s(S(Arg((5, 4)), 0, 2, 1), S(Arg((5, 4)), 1, 2, 2), S(Arg((6,)), 0, 3, 3), S(Arg((7,)), 0, 3, 2),
                S(Arg(()), 0, 1, 1), S(Arg((5, 4), **NC), 0, 3, 1), S(Arg((5, 4)), -1, 4, 1), S(Arg((5, 4)), 0, 6, 1),
                S(Arg((5, 4)), 0, 2, 0), S(Arg((5, 4)), 0, 0, 1)),
   dtypes=VDT, method=True, view=True)
op('reshape', _s(S(Arg((3, 4)), (4, 3)), S(Arg((3, 4), **NC), (12,)), S(Arg((3, 4), **NC), (3, 4, 1)),
                 S(Arg(()), (1, 1)), S(Arg((0, 3)), (0, -1)), S(Arg((2, 3, 4)), (-1,)), S(Arg((3, 4)), (5, -1))),
   dtypes=VDT, view=True)
op('flatten', _s(S(Arg((2, 3, 4))), S(Arg((2, 3, 4)), 1), S(Arg((2, 3, 4)), 0, 1), S(Arg(())),
                 S(Arg((3, 4), **NC)), S(Arg((3, 4), **NC), 1), S(Arg((2, 3, 4)), 2, 1)),
   dtypes=VDT, view=True)
op('unflatten', _s(S(Arg((2, 12)), 1, (3, 4)), S(Arg((2, 12)), -1, (-1, 2)), S(Arg((6, 2)), 0, (2, 3)),
                   S(Arg((2, 12)), 1, (5, -1))),
   dtypes=VDT, view=True)
op('movedim', _s(S(Arg((2, 3, 4)), 0, 2), S(Arg((2, 3, 4)), (0, 1), (2, 0)), S(Arg((2, 3, 4)), -1, 0),
                 S(Arg((2, 3, 4)), (0, 1), (0,))),
   dtypes=VDT, view=True)
op('moveaxis', _s(S(Arg((2, 3, 4)), 0, 2), S(Arg((2, 3, 4)), (0, 1), (2, 0))), dtypes=VDT, view=True)
op('swapaxes', _s(S(Arg((2, 3, 4)), 0, 2), S(Arg((3, 4), **NC), 1, 0)), dtypes=VDT, view=True)
op('swapdims', _s(S(Arg((2, 3, 4)), 0, 2), S(Arg((3, 4)), -1, 0)), dtypes=VDT, view=True)
op('split', _s(S(Arg((5, 4)), 2), S(Arg((5, 4)), 2, 1), S(Arg((5, 4)), [2, 3]), S(Arg((0, 4)), 2),
               S(Arg((5, 4)), 5), S(Arg((5, 4)), 7), S(Arg((5, 4), **NC), 2, 1), S(Arg((5, 4)), [2, 2]),
               S(Arg((5, 4)), 0)),
   dtypes=VDT, view=True)
op('split_with_sizes', _s(S(Arg((5, 4)), [2, 3]), S(Arg((5, 4)), [1, 0, 3], 1), S(Arg((5, 4)), [2, 2])),
   dtypes=VDT, view=True)
op('chunk', _s(S(Arg((5, 4)), 2), S(Arg((5, 4)), 3, 1), S(Arg((6,)), 4), S(Arg((6,)), 3), S(Arg((0, 4)), 2),
               S(Arg((5, 4)), 0)),
   dtypes=VDT, view=True)
op('unbind', _s(S(Arg((3, 4))), S(Arg((3, 4)), 1), S(Arg((3, 4), **NC), -1), S(Arg((0, 3)), 0)),
   dtypes=VDT, view=True)
op('narrow', _s(S(Arg((5, 4)), 0, 1, 2), S(Arg((5, 4)), 1, -2, 2), S(Arg((5, 4)), 0, 5, 0), S(Arg((5, 4)), 0, 4, 2)),
   dtypes=VDT, view=True)
op('t', _s(S(Arg((3, 4))), S(Arg((3,))), S(Arg(())), S(Arg((3, 4), **NC)), S(Arg((2, 3, 4)))), dtypes=VDT, view=True)
op('view_as', _s(S(Arg((3, 4)), Arg((4, 3))), S(Arg((3, 4)), Arg((12,)))), dtypes=VDT, method=True, view=True)
op('expand_as', _s(S(Arg((3, 1)), Arg((3, 4))), S(Arg(()), Arg((2, 2)))), dtypes=VDT, method=True, view=True)
op('reshape_as', _s(S(Arg((3, 4)), Arg((4, 3))), S(Arg((3, 4), **NC), Arg((12,)))), dtypes=VDT, method=True,
   view=True)
op('adjoint', _s(S(Arg((3, 4))), S(Arg((2, 3, 4)))), dtypes=FLOATS, view=True)
