"""OpInfo records for factory operators and copies (values against torch; random ones by shape and dtype)."""
import numpy as np

from .core import op, S, Arg, FLOATS

F64 = ('float64',)


def _sizes(dt):
    return [S((2, 3)), S(()), S((0, 4)), S(5), S((2, 3), dtype=dt_obj(dt))]


def dt_obj(name):
    import ember
    return getattr(ember, name)


op('zeros', lambda dt: _sizes(dt), dtypes=FLOATS + ('int64', 'bool'), grad=False)
op('ones', lambda dt: _sizes(dt), dtypes=FLOATS + ('int64', 'bool'), grad=False)
op('empty', lambda dt: _sizes(dt), dtypes=FLOATS, grad=False, random=True)
op('full', lambda dt: [S((2, 3), 1.5), S((2,), 7), S((2,), True), S((3,), 2, dtype=dt_obj(dt)), S((), -1.0)],
   dtypes=FLOATS + ('int64',), grad=False)
op('arange', lambda dt: [S(5), S(2, 9), S(0, 1, 0.25), S(10, 0, -3), S(1.5), S(0, 5, dtype=dt_obj(dt)),
                         S(3, 3), S(0.0, 1.0, 0.1)],
   dtypes=FLOATS + ('int64',), grad=False, atol=1e-6)
op('linspace', lambda dt: [S(0, 1, 5), S(-2, 2, 1), S(3, -3, 7, dtype=dt_obj(dt)), S(0, 10, 0)],
   dtypes=FLOATS, grad=False, atol=1e-6)
op('eye', lambda dt: [S(3), S(2, 4), S(0), S(3, dtype=dt_obj(dt))], dtypes=FLOATS + ('int64',), grad=False)
op('empty_strided', lambda dt: [S((2, 3), (1, 2)), S((2, 2), (4, 1)), S((0,), (1,))], dtypes=FLOATS, grad=False,
   random=True, view=True)
for _n in ('zeros_like', 'ones_like', 'empty_like'):
    op(_n, lambda dt: [S(Arg((2, 3))), S(Arg(())), S(Arg((0, 2))), S(Arg((2, 3)), dtype=dt_obj('int64'))],
       dtypes=FLOATS + ('int64',), grad=False, random=_n == 'empty_like')
op('full_like', lambda dt: [S(Arg((2, 3)), 2.5), S(Arg((3,)), 7, dtype=dt_obj('int32'))],
   dtypes=FLOATS + ('int64',), grad=False)
for _n in ('rand', 'randn'):
    op(_n, lambda dt: [S((2, 3)), S(()), S((0,)), S(4, dtype=dt_obj(dt))], dtypes=FLOATS, grad=False, random=True)
for _n in ('rand_like', 'randn_like'):
    op(_n, lambda dt: [S(Arg((2, 3))), S(Arg(()))], dtypes=FLOATS, grad=False, random=True)
op('randperm', lambda dt: [S(5), S(0), S(3, dtype=dt_obj('int32'))], dtypes=('int64',), grad=False, random=True)

# copies: values, dtypes, and the layouts torch gives them
op('clone', lambda dt: [S(Arg((2, 3))), S(Arg((3, 4), noncontig=True)), S(Arg(())), S(Arg((0, 2)))],
   dtypes=FLOATS + ('int64', 'bool'), view=True)
op('contiguous', lambda dt: [S(Arg((2, 3))), S(Arg((3, 4), noncontig=True)), S(Arg(()))], method=True,
   dtypes=FLOATS + ('int64',), view=True)
op('to', lambda dt: [S(Arg((2, 3)), dt_obj('float64')), S(Arg((3, 4), noncontig=True), dt_obj('int32')),
                     S(Arg(()), dt_obj('float16')), S(Arg((2,)), dt_obj('bool'))],
   method=True, dtypes=FLOATS + ('int64',), gradgrad=True)
op('copy_', lambda dt: [S(Arg((2, 3)), Arg((2, 3))), S(Arg((2, 3)), Arg((3,))), S(Arg((3, 4)), Arg((4, 3), noncontig=True)),
                        S(Arg((2, 2)), Arg((2, 2), dtype='int64'))],
   method=True, dtypes=FLOATS, grad=False)
op('fill_', lambda dt: [S(Arg((2, 3)), 1.5), S(Arg(()), 2), S(Arg((0, 2)), 1), S(Arg((2, 3)), Arg(()))], method=True,
   dtypes=FLOATS + ('int64', 'bool'), grad=False)
op('zero_', lambda dt: [S(Arg((2, 3))), S(Arg(()))], method=True, dtypes=FLOATS + ('int64',), grad=False)
op('randint', lambda dt: [S(0, 10, (2, 3)), S(5, (3,)), S(-3, 3, (4,), dtype=dt_obj('int32')), S(2, ())],
   dtypes=('int64',), grad=False, random=True)
