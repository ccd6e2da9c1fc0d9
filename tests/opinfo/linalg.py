"""OpInfo records for matrix products and linear algebra."""
from .core import op, S, Arg, FLOATS

INT_FLOATS = FLOATS + ('int64', 'int32')


def _matmul_samples(dt):
    for a, b in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3,)),
                 ((3,), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((2, 3), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 2)),
                 ((2, 2, 3), (2, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0,), (0,)), ((1, 2, 3), (3,))]:
        yield S(Arg(a), Arg(b))
    yield S(Arg((3, 4), noncontig=True), Arg((4, 2), noncontig=True))
    yield S(Arg((4, 5), noncontig=True), Arg((5,)))
    # errors: torch's message for each dimension case
    for a, b in [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 5)), ((2, 2, 3), (2, 4, 5)),
                 ((3, 2, 3), (2, 3, 5)), ((2, 3, 3), (4,)), ((4,), (2, 3, 3)), ((), (3,)), ((3,), ())]:
        yield S(Arg(a), Arg(b))


op('matmul', _matmul_samples, dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('mm', lambda dt: [S(Arg((2, 3)), Arg((3, 4))), S(Arg((3, 4), noncontig=True), Arg((4, 2))), S(Arg((0, 3)), Arg((3, 2))),
                     S(Arg((2, 0)), Arg((0, 3))), S(Arg((2, 3)), Arg((4, 5))), S(Arg((2, 3, 3)), Arg((3, 3))),
                     S(Arg((2, 3)), Arg((3,)))], dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('bmm', lambda dt: [S(Arg((2, 2, 3)), Arg((2, 3, 4))), S(Arg((0, 2, 3)), Arg((0, 3, 4))), S(Arg((2, 3, 3)), Arg((3, 3))),
                      S(Arg((2, 2, 3)), Arg((3, 3, 3))), S(Arg((2, 3, 4)), Arg((2, 3, 3)))],
   dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('mv', lambda dt: [S(Arg((2, 3)), Arg((3,))), S(Arg((3, 4), noncontig=True), Arg((3,))), S(Arg((0, 3)), Arg((3,))),
                     S(Arg((2, 3)), Arg((4,))), S(Arg((2, 3)), Arg((4, 1))), S(Arg((2, 3, 1)), Arg((4,)))],
   dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('dot', lambda dt: [S(Arg((3,)), Arg((3,))), S(Arg((0,)), Arg((0,))), S(Arg((3,)), Arg((4,))),
                      S(Arg((3, 1)), Arg((3,)))], dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('vdot', lambda dt: [S(Arg((3,)), Arg((3,))), S(Arg((0,)), Arg((0,))), S(Arg((3,)), Arg((4,)))],
   dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('linear', lambda dt: [S(Arg((4, 3)), Arg((5, 3))), S(Arg((4, 3)), Arg((5, 3)), Arg((5,))),
                         S(Arg((2, 4, 3)), Arg((5, 3)), Arg((5,))), S(Arg((3,)), Arg((5, 3)), Arg((5,))),
                         S(Arg((4, 3)), Arg((3,))), S(Arg((4, 3)), Arg((3,)), Arg(())), S(Arg((3,)), Arg((3,))),
                         S(Arg((3, 4), noncontig=True), Arg((5, 4)), Arg((1,))), S(Arg((0, 3)), Arg((5, 3)), Arg((5,))),
                         S(Arg((2, 3)), Arg((4, 5))), S(Arg((2, 3)), Arg((4, 3)), Arg((5,))), S(Arg(()), Arg((4, 3)))],
   torch_name='nn.functional.linear', atol=1e-4, rtol=1e-5)
