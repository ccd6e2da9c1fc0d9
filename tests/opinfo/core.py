"""OpInfo machinery: one sample generator per operator, used by the generic tests in test_ops*.py.

A sample's arguments are NumPy arrays (turned into tensors of each library),
`Arg` specs (a random array of a shape and dtype, optionally non-contiguous),
or plain Python values. ``OPS[name]`` describes operator ``name`` of the
registry; tests/test_registry_coverage.py fails when a declared operator has
no record, so every operator gets tested.
"""
import numpy as np

FLOATS = ('float32', 'float64')
INTS = ('int32', 'int64')
ALL_NUMERIC = ('float32', 'float64', 'int64', 'int32', 'uint8', 'bool')


class Arg:
    """A random tensor argument: ``Arg((2, 3))``; ``noncontig=True`` gives a transposed view;
    ``low``/``high`` bound the values (e.g. positive for log)."""

    def __init__(self, shape, dtype=None, noncontig=False, low=-3, high=3, grad=True):
        self.shape, self.dtype, self.noncontig, self.low, self.high, self.grad = tuple(shape), dtype, noncontig, low, high, grad

    def array(self, dtype, rng):
        dt = np.dtype(self.dtype or dtype)
        shape = self.shape[::-1] if self.noncontig else self.shape
        if dt == np.bool_:
            a = rng.random(shape) > 0.5
        elif dt.kind in 'iu':
            lo = max(self.low, 0) if dt.kind == 'u' else self.low
            a = rng.integers(int(lo), int(self.high) + 1, shape).astype(dt)
        elif dt.kind == 'c':
            a = (rng.uniform(self.low, self.high, shape) + 1j * rng.uniform(self.low, self.high, shape)).astype(dt)
        else:
            a = rng.uniform(self.low, self.high, shape).astype(dt)
        a = np.asarray(a)
        return a.T if self.noncontig else a


class S:
    """One sample: positional and keyword arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        def r(x):
            if isinstance(x, Arg):
                return f'Arg{x.shape}{"[nc]" if x.noncontig else ""}'
            if isinstance(x, (list, tuple)) and any(isinstance(y, Arg) for y in x):
                return '[' + ', '.join(r(y) for y in x) + ']'
            return repr(x)
        return ', '.join([r(a) for a in self.args] + [f'{k}={r(v)}' for k, v in self.kwargs.items()])


class OpInfo:
    """``torch_name``: the torch callable path when it differs (e.g. 'nn.functional.relu');
    ``method``: call as a method of the first argument; ``grad``/``gradgrad``: test derivatives;
    ``dtypes``: dtypes to try; ``atol``/``rtol``: tolerances against torch; ``view``: compare strides;
    ``torch_fn``: the torch side as a function of torch ops (for an op torch declares without a CPU kernel)."""

    def __init__(self, name, samples, dtypes=FLOATS, torch_name=None, method=False, grad=True, gradgrad=True,
                 atol=1e-5, rtol=1.3e-6, view=False, meta=True, random=False, grad_dtypes=('float64',),
                 torch_fn=None):
        self.name, self.samples, self.dtypes = name, samples, dtypes
        self.torch_name, self.method = torch_name or name, method
        self.grad, self.gradgrad, self.atol, self.rtol, self.view = grad, gradgrad, atol, rtol, view
        self.meta, self.random, self.grad_dtypes = meta, random, grad_dtypes
        self.torch_fn = torch_fn      # a reference written in torch ops, for a schema torch has no CPU kernel for


OPS = {}


def op(name, samples, **kw):
    OPS[name] = OpInfo(name, samples, **kw)


# --- shared sample generators --------------------------------------------------

SHAPES_1 = [(), (5,), (3, 4), (2, 3, 4), (0, 3)]


def unary_samples(low=-3, high=3):
    def gen(dtype):
        for s in SHAPES_1:
            yield S(Arg(s, low=low, high=high))
        yield S(Arg((3, 4), noncontig=True, low=low, high=high))
    return gen


def binary_samples(low=-3, high=3, rhs_low=None, rhs_high=None, scalars=True):
    rl = low if rhs_low is None else rhs_low
    rh = high if rhs_high is None else rhs_high

    def gen(dtype):
        for a, b in [((), ()), ((5,), (5,)), ((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((0, 3), (3,)),
                     ((3, 4), ())]:
            yield S(Arg(a, low=low, high=high), Arg(b, low=rl, high=rh))
        yield S(Arg((3, 4), noncontig=True, low=low, high=high), Arg((3, 4), low=rl, high=rh))
        if scalars:
            yield S(Arg((3, 4), low=low, high=high), 2)
            yield S(Arg((3, 4), low=low, high=high), 2.5)
    return gen


