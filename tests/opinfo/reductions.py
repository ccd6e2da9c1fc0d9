"""OpInfo records for reductions, scans, sorting and softmax.

Operators whose public function chooses among overloads (max, var, sort, ...) are tested through that
function, under the name of each overload they reach (``_max_dim`` is ``ember.max(x, dim)``)."""
import ember
from .core import op, S, Arg, FLOATS, INTS, ALL_NUMERIC

NUMERIC = ('float32', 'float64', 'int64', 'int32')


def reduction_samples(extra=(), dims=True, empty=True):
    """Full and per-dim reductions: 0-d, empty, negative and tuple dims, keepdim, non-contiguous, bad dims."""
    def gen(dtype):
        for s in [(), (5,), (3, 4), (2, 3, 4)]:
            yield S(Arg(s))
        if empty:
            yield S(Arg((0, 3)))
        if dims:
            yield S(Arg((3, 4)), 1)
            yield S(Arg((3, 4)), -1, True)
            yield S(Arg((2, 3, 4)), (0, 2))
            yield S(Arg((2, 3, 4)), [-1, 0], keepdim=True)
            yield S(Arg((2, 3, 4)), ())
            yield S(Arg(()), 0)
            yield S(Arg(()), -1, True)
            yield S(Arg((3, 4), noncontig=True), 0)
            yield S(Arg((3, 4)), 2)
            yield S(Arg((3, 4)), (0, 0))
            yield S(Arg((2, 3)), dim=None)
            if empty:
                yield S(Arg((0, 3)), 0)
                yield S(Arg((0, 3)), 1)
        yield from extra
    return gen


def single_dim_samples(extra=(), keep=True):
    """Ops over one dim: 0-d, empty, negative dims, keepdim, non-contiguous, a bad dim."""
    def gen(dtype):
        yield S(Arg((5,)), 0)
        yield S(Arg((3, 4)), 1)
        yield S(Arg((3, 4)), -2)
        yield S(Arg((2, 3, 4)), 1)
        yield S(Arg(()), 0)
        yield S(Arg((3, 4), noncontig=True), 1)
        yield S(Arg((0, 3)), 1)
        yield S(Arg((0, 3)), 0)
        yield S(Arg((3, 4)), 2)
        if keep:
            yield S(Arg((3, 4)), 1, True)
            yield S(Arg((2, 3, 4)), -1, keepdim=True)
            yield S(Arg(()), -1, True)
        yield from extra
    return gen


F64 = ember.float64

op('sum', reduction_samples([S(Arg((3, 4)), 1, dtype=F64), S(Arg((3, 4)), dtype=ember.int32)]), dtypes=ALL_NUMERIC)
op('nansum', lambda dt: [*reduction_samples()(dt), S(Arg((3, 4)), 0, dtype=F64)], dtypes=ALL_NUMERIC)
op('mean', reduction_samples([S(Arg((3, 4)), 1, dtype=F64), S(Arg((2, 3)), dtype=ember.int64)]),
   dtypes=ALL_NUMERIC)
op('nanmean', reduction_samples(), dtypes=FLOATS + ('int64',))
op('prod', lambda dt: [S(Arg(s)) for s in [(), (5,), (3, 4), (0, 3)]] +
   [S(Arg((3, 4)), 1), S(Arg((3, 4)), -1, True), S(Arg(()), 0), S(Arg((0, 3)), 0), S(Arg((3, 4), noncontig=True), 0),
    S(Arg((3, 4)), 2), S(Arg((3, 4)), 1, dtype=F64), S(Arg((2, 3), low=-1, high=1), 1)], dtypes=ALL_NUMERIC)
def _extreme_samples(dtype):
    yield from reduction_samples(dims=False)(dtype)
    yield from single_dim_samples()(dtype)
    yield S(Arg((3, 4)), dim=1, keepdim=True)
    yield S(Arg((3, 4)), Arg((3, 4)))              # max(input, other): maximum
    yield S(Arg((3, 1)), other=Arg((4,)))


op('max', _extreme_samples, dtypes=ALL_NUMERIC)
op('min', _extreme_samples, dtypes=ALL_NUMERIC)
op('amax', reduction_samples(), dtypes=ALL_NUMERIC)
op('amin', reduction_samples(), dtypes=ALL_NUMERIC)
op('aminmax', lambda dt: [S(Arg((3, 4))), S(Arg(())), S(Arg((3, 4)), dim=1), S(Arg((3, 4)), dim=-1, keepdim=True),
                          S(Arg((2, 3)), keepdim=True), S(Arg((0, 3))), S(Arg((0, 3)), dim=1), S(Arg((0, 3)), dim=0)],
   dtypes=NUMERIC)
op('argmax', reduction_samples(dims=False, extra=[S(Arg((3, 4)), 1), S(Arg((3, 4)), -1, True), S(Arg(()), 0),
                                                  S(Arg((3, 4)), keepdim=True), S(Arg((0, 3)), 1),
                                                  S(Arg((0, 3)), 0)]), dtypes=ALL_NUMERIC[:-1], grad=False)
op('argmin', reduction_samples(dims=False, extra=[S(Arg((3, 4)), 1), S(Arg((3, 4)), -1, True), S(Arg(()), 0),
                                                  S(Arg((3, 4)), keepdim=True), S(Arg((0, 3)), 1)]),
   dtypes=ALL_NUMERIC[:-1], grad=False)


def _var_samples(dtype):
    # not dim=(): torch reduces over everything but its backward then reduces over nothing (inf/nan grads)
    yield from (s for s in reduction_samples(empty=False)(dtype) if s.args[1:2] != ((),))
    yield S(Arg((3, 4)), 1, True)                  # unbiased positional
    yield S(Arg((3, 4)), 1, False, True)
    yield S(Arg((3, 4)), False)
    yield S(Arg((3, 4)), 0, correction=0)
    yield S(Arg((3, 4)), (0, 1), correction=2, keepdim=True)
    yield S(Arg((3, 4)), unbiased=False)


op('var', _var_samples, dtypes=FLOATS + ('int64',))
op('std', _var_samples, dtypes=FLOATS + ('int64',))
op('var_mean', lambda dt: [S(Arg((3, 4))), S(Arg((3, 4)), 1), S(Arg((3, 4)), 1, True, True),
                           S(Arg((3, 4)), 0, correction=0)])
op('std_mean', lambda dt: [S(Arg((3, 4))), S(Arg((3, 4)), 1), S(Arg((3, 4)), 1, False, True),
                           S(Arg((2, 3, 4)), (0, 2), correction=2)])
op('logsumexp', lambda dt: [S(Arg((3, 4)), 1), S(Arg((3, 4)), -1, True), S(Arg((2, 3, 4)), (0, 2)), S(Arg(()), 0),
                            S(Arg((0, 3)), 0), S(Arg((0, 3)), 1), S(Arg((3, 4), noncontig=True), 0),
                            S(Arg((3, 4), low=50, high=90), 1), S(Arg((3, 4)), 2)], dtypes=FLOATS + INTS)


def _softmax_samples(dtype):
    for s, d in [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((), 0), ((0, 3), 1), ((3, 0), 1)]:
        yield S(Arg(s), d)
    yield S(Arg((3, 4), noncontig=True), 1)
    yield S(Arg((3, 4), low=50, high=100), 1)
    yield S(Arg((3, 4)), 1, dtype=F64)
    yield S(Arg((3, 4)), 2)


op('softmax', _softmax_samples, dtypes=FLOATS + ('int64',))
op('log_softmax', _softmax_samples, dtypes=FLOATS + ('int64',))
op('_nn_softmax', lambda dt: [S(Arg((3, 4)), 1), S(Arg((3, 4)), dim=0, dtype=F64), S(Arg((2, 3, 4)), dim=-1)],
   torch_name='nn.functional.softmax')
op('_nn_log_softmax', lambda dt: [S(Arg((3, 4)), 1), S(Arg((2, 3, 4)), dim=0, dtype=F64)],
   torch_name='nn.functional.log_softmax')
op('_nn_softmin', lambda dt: [S(Arg((3, 4)), 1), S(Arg((2, 3, 4)), dim=0, dtype=F64)],
   torch_name='nn.functional.softmin')
op('all', reduction_samples(), dtypes=ALL_NUMERIC, grad=False)
op('any', reduction_samples(), dtypes=ALL_NUMERIC, grad=False)
op('count_nonzero', lambda dt: [S(Arg((3, 4), low=-1, high=1)), S(Arg((3, 4), low=-1, high=1), 1),
                                S(Arg((2, 3, 4), low=-1, high=1), (0, 2)), S(Arg(())), S(Arg((0, 3)), 0),
                                S(Arg((3, 4)), 2)], dtypes=ALL_NUMERIC, grad=False)


def _norm_samples(dtype):
    for p in (2, 1, 3, 0.5, float('inf'), float('-inf'), 0):
        yield S(Arg((3, 4)), p)
        yield S(Arg((2, 3, 4)), p, (0, 2), True)
    yield S(Arg((3, 4)), 2, 1)
    yield S(Arg(()), 2)
    yield S(Arg((0, 3)), 2)
    yield S(Arg((0, 3)), float('inf'))
    yield S(Arg((0, 3)), float('inf'), 0)
    yield S(Arg((0, 3)), float('inf'), 1)
    yield S(Arg((3, 4), noncontig=True), 1.5, 0)
    yield S(Arg((3, 4)), dtype=F64)


op('linalg_vector_norm', _norm_samples, torch_name='linalg.vector_norm', dtypes=FLOATS + ('int64',))
op('norm', lambda dt: [S(Arg((3, 4))), S(Arg((3, 4)), 'fro', (0, 1)), S(Arg((3, 4)), 1, 1), S(Arg((3, 4)), p=3, dim=0),
                        S(Arg((2, 3, 4)), float('inf'), keepdim=True), S(Arg((3, 4)), 2, dtype=F64)],
   dtypes=FLOATS + ('int64',))
op('sort', lambda dt: [S(Arg((5,))), S(Arg((3, 4)), 0), S(Arg((3, 4)), 1, True), S(Arg((3, 4)), descending=True,
                                                                                    stable=True),
                        S(Arg(())), S(Arg((0, 3)), 0), S(Arg((3, 4), noncontig=True), -1), S(Arg((3, 4)), 2)],
   dtypes=FLOATS + INTS + ('bool',))
op('argsort', lambda dt: [S(Arg((5,))), S(Arg((3, 4)), 0), S(Arg((3, 4)), 1, True), S(Arg((3, 4)), stable=True),
                          S(Arg(())), S(Arg((0, 3)), 0), S(Arg((3, 4)), 2)], dtypes=FLOATS + INTS, grad=False)
op('msort', lambda dt: [S(Arg((5,))), S(Arg((3, 4))), S(Arg((3, 4), noncontig=True))], dtypes=FLOATS + INTS)
op('topk', lambda dt: [S(Arg((5,)), 2), S(Arg((3, 4)), 3), S(Arg((3, 4)), 2, 0), S(Arg((3, 4)), 2, largest=False),
                        S(Arg((3, 4)), 0), S(Arg((3, 4)), 4, 1), S(Arg(()), 1), S(Arg((3, 4)), 5),
                        S(Arg((3, 4), noncontig=True), 2, 0)], dtypes=FLOATS)
op('kthvalue', lambda dt: [S(Arg((5,)), 2), S(Arg((3, 4)), 3), S(Arg((3, 4)), 1, 0, True), S(Arg(()), 1),
                            S(Arg((3, 4)), 5), S(Arg((0, 3)), 1, 0), S(Arg((3, 4), noncontig=True), 2, 0)],
   dtypes=FLOATS)
op('median', lambda dt: [S(Arg((5,))), S(Arg((3, 4))), S(Arg(())), S(Arg((0, 3))), *single_dim_samples()(dt)],
   dtypes=FLOATS)
def _nan_samples(dtype):
    """Arrays with NaNs in some rows (none all-NaN: which index torch reports there is unspecified)."""
    import numpy as np
    a = np.array([[1., np.nan, 3., 2.], [4., 2., 6., 5.], [np.nan, 7., np.nan, 0.5]], dtype=dtype)
    yield S(a)
    yield S(a, 1)
    yield S(a, 0, True)
    yield S(a[:, 1:], 1)


op('nanmedian', lambda dt: [*_nan_samples(dt), S(Arg((3, 4))), S(Arg(())), S(Arg((0, 3))), *single_dim_samples()(dt)],
   dtypes=FLOATS)
op('mode', lambda dt: [S(Arg((6,), low=0, high=3)), S(Arg((3, 8), low=0, high=3), 1),
                       S(Arg((3, 8), low=0, high=3), 0, True), S(Arg(())), S(Arg((0, 3)), 1), S(Arg((0, 3)), 0),
                       S(Arg((8, 3), noncontig=True, low=0, high=2))], dtypes=FLOATS + INTS)


def _scan_samples(extra=()):
    def gen(dtype):
        yield from single_dim_samples(keep=False)(dtype)
        yield from extra
    return gen


op('cumsum', _scan_samples([S(Arg((3, 4)), 1, dtype=F64), S(Arg((3, 4)), 0, dtype=ember.int32)]),
   dtypes=ALL_NUMERIC)
op('cumprod', _scan_samples([S(Arg((3, 4)), 1, dtype=F64), S(Arg((2, 3), low=-1, high=1), 1)]),
   dtypes=ALL_NUMERIC)
op('logcumsumexp', _scan_samples([S(Arg((3, 4), low=50, high=90), 1)]), dtypes=FLOATS + ('int64',))
op('cummax', _scan_samples([S(Arg((3, 8), low=0, high=2), 1)]), dtypes=FLOATS + INTS)
op('cummin', _scan_samples([S(Arg((3, 8), low=0, high=2), 1)]), dtypes=FLOATS + INTS)
op('trace', lambda dt: [S(Arg((3, 4))), S(Arg((4, 4))), S(Arg((0, 3))), S(Arg((3,))), S(Arg((3, 4), noncontig=True))],
   dtypes=ALL_NUMERIC)
op('diff', lambda dt: [S(Arg((5,))), S(Arg((3, 4)), 2), S(Arg((3, 4)), 1, 0), S(Arg((3, 4)), 1, -1, Arg((3, 2)), Arg((3, 1))),
                       S(Arg((3, 4)), 3, 0), S(Arg(())), S(Arg((3, 4)), -1)], dtypes=FLOATS + INTS + ('bool',))


def _softmax_bwd_samples(dtype):
    d = getattr(ember, dtype)
    for s, dim in [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((5,), 0), ((0, 3), 1)]:
        yield S(Arg(s), Arg(s, low=-2, high=0), dim, d)


op('_softmax_backward_data', _softmax_bwd_samples)
op('_log_softmax_backward_data', _softmax_bwd_samples)
