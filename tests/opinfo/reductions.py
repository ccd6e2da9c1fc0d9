"""OpInfo records for reductions, scans, sorting and softmax."""
import ember
from .core import op, S, Arg, FLOATS, INTS, ALL_NUMERIC


def reduction_samples(extra=()):
    """Full and per-dim reductions: 0-d, empty, negative and tuple dims, keepdim, non-contiguous, bad dims."""
    def gen(dtype):
        for s in [(), (5,), (3, 4), (2, 3, 4)]:
            yield S(Arg(s))
        yield S(Arg((3, 4)), 1)
        yield S(Arg((3, 4)), -1, True)
        yield S(Arg((2, 3, 4)), (0, 2))
        yield S(Arg((2, 3, 4)), [-1, 0], keepdim=True)
        yield S(Arg((2, 3, 4)), ())
        yield S(Arg(()), 0)
        yield S(Arg(()), -1, True)
        yield S(Arg((0, 3)), 0)
        yield S(Arg((0, 3)), 1)
        yield S(Arg((0, 3)))
        yield S(Arg((3, 4), noncontig=True), 0)
        yield S(Arg((3, 4)), 2)
        yield S(Arg((3, 4)), (0, 0))
        yield S(Arg((2, 3)), dim=None)
        yield from extra
    return gen


op('sum', reduction_samples([S(Arg((3, 4)), 1, dtype=ember.float64), S(Arg((3, 4)), dtype=ember.int32)]),
   dtypes=ALL_NUMERIC)
