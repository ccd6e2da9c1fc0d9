"""OpInfo records for pointwise operators."""
from .core import op, S, Arg, unary_samples, binary_samples, FLOATS, INTS, ALL_NUMERIC

# --- records for operators ---------------------------------------------------

op('add', lambda dt: [*binary_samples()(dt), S(Arg((3, 4)), Arg((3, 4)), alpha=2)], dtypes=ALL_NUMERIC[:-1])
op('sub', lambda dt: [*binary_samples()(dt), S(Arg((3, 4)), Arg((3, 4)), alpha=2)], dtypes=ALL_NUMERIC[:-1])
op('mul', binary_samples(), dtypes=ALL_NUMERIC)
op('div', binary_samples(rhs_low=0.5, rhs_high=3), dtypes=FLOATS + INTS)
op('neg', unary_samples(), dtypes=FLOATS + INTS)
op('exp', unary_samples(), dtypes=FLOATS + INTS)
op('log', unary_samples(0.1, 5), dtypes=FLOATS)
op('sin', unary_samples(), dtypes=FLOATS + INTS)
op('cos', unary_samples(), dtypes=FLOATS + INTS)
op('tanh', unary_samples(), dtypes=FLOATS)
op('sigmoid', unary_samples(), dtypes=FLOATS)
op('sqrt', unary_samples(0.1, 5), dtypes=FLOATS)
op('eq', binary_samples(-1, 1), dtypes=ALL_NUMERIC, grad=False)
op('lt', binary_samples(), dtypes=ALL_NUMERIC[:-1], grad=False)
op('gt', binary_samples(), dtypes=ALL_NUMERIC[:-1], grad=False)
op('logical_not', unary_samples(), dtypes=ALL_NUMERIC, grad=False)
op('where', lambda dt: [S(Arg((3, 4), 'bool'), Arg((3, 4)), Arg((3, 4))), S(Arg((3, 1), 'bool'), Arg((4,)), Arg(())),
                        S(Arg((3, 4), 'bool'), Arg((3, 4)), 0.5)], dtypes=FLOATS + INTS)
