"""OpInfo records for random operators: values differ from torch's streams (random=True compares shapes,
dtypes and errors only); distributions and reproducibility are tested in tests/test_random.py."""
from .core import op, S, Arg, FLOATS

_R = dict(random=True, grad=False)


def _drop(dt):
    for p in (0.0, 0.3, 1.0):
        yield S(Arg((4, 5)), p)
    yield S(Arg((3, 4, 5)), 0.5, training=False)
    yield S(Arg((0, 3)), 0.5)
    yield S(Arg(()), 0.5)
    yield S(Arg((3, 4)), 1.5)
    yield S(Arg((3, 4)), -0.1)
    yield S(Arg((3, 4), 'int64'), 0.5)


op('dropout', _drop, torch_name='nn.functional.dropout', **_R)
op('alpha_dropout', lambda dt: [S(Arg((4, 5)), 0.3, True), S(Arg((4, 5)), 0.3), S(Arg((4, 5)), 1.0, True),
                                S(Arg((4, 5)), 1.5, True)], torch_name='nn.functional.alpha_dropout', **_R)
op('feature_alpha_dropout', lambda dt: [S(Arg((2, 3, 4)), 0.3, True), S(Arg((2, 3, 4)), 1.5, True)],
   torch_name='nn.functional.feature_alpha_dropout', **_R)
op('feature_dropout', lambda dt: [S(Arg((2, 3, 4)), 0.3, True), S(Arg((2, 3, 4)), 0.3, False)], **_R)
op('dropout1d', lambda dt: [S(Arg((2, 3, 4)), 0.3), S(Arg((3, 4)), 0.3), S(Arg((2, 3, 4, 5)), 0.3)],
   torch_name='nn.functional.dropout1d', **_R)
op('dropout2d', lambda dt: [S(Arg((2, 3, 4, 5)), 0.3), S(Arg((3, 4, 5)), 0.3)],
   torch_name='nn.functional.dropout2d', **_R)
op('dropout3d', lambda dt: [S(Arg((2, 3, 2, 4, 5)), 0.3), S(Arg((3, 2, 4, 5)), 0.3)],
   torch_name='nn.functional.dropout3d', **_R)
op('native_dropout', lambda dt: [S(Arg((4, 5)), 0.3, True), S(Arg((4, 5)), 0.3, False), S(Arg((0,)), 0.3, True)],
   **_R)
op('bernoulli', lambda dt: [S(Arg((3, 4), low=0, high=1)), S(Arg((), low=0, high=1)), S(Arg((3,), 'int64'))],
   dtypes=FLOATS, **_R)
op('multinomial', lambda dt: [S(Arg((5,), low=0.1, high=1), 3), S(Arg((2, 5), low=0.1, high=1), 4, True),
                              S(Arg((5,), low=0.1, high=1), 6), S(Arg((5,), low=0.1, high=1), 0),
                              S(Arg((2, 2, 5), low=0.1, high=1), 2), S(Arg((5,), 'int64'), 2)], dtypes=FLOATS, **_R)
op('normal', lambda dt: [S(Arg((3, 4)), 2.0), S(Arg((3, 4)), Arg((3, 4), low=0.1, high=1)),
                         S(1.0, Arg((2, 3), low=0.1, high=1)), S(Arg((3,)), -1.0),
                         S(Arg((3,)), Arg((4,), low=0.1, high=1))], dtypes=FLOATS, **_R)
op('randint_like', lambda dt: [S(Arg((2, 3)), 5), S(Arg((2, 3)), 2, 5), S(Arg((2, 3)), 5, 2)], dtypes=FLOATS + ('int64',), **_R)


def _fill(name, *params):
    def gen(dt):
        for p in params:
            yield S(Arg((3, 4)), *p)
        yield S(Arg((0,)))
    return gen


op('uniform_', _fill('uniform_', (), (-2.0, 3.0), (2.0, 1.0)), method=True, dtypes=FLOATS + ('int64',), **_R)
op('normal_', _fill('normal_', (), (1.0, 2.0), (0.0, -1.0)), method=True, dtypes=FLOATS + ('int64',), **_R)
op('exponential_', _fill('exponential_', (), (2.0,), (0.0,), (-1.0,)), method=True, dtypes=FLOATS + ('int64',), **_R)
op('geometric_', lambda dt: [S(Arg((3, 4)), 0.3), S(Arg((3, 4)), 0.0), S(Arg((3, 4)), 1.5)], method=True,
   dtypes=FLOATS + ('int64',), **_R)
op('cauchy_', _fill('cauchy_', (), (1.0, 2.0), (0.0, 0.0)), method=True, dtypes=FLOATS + ('int64',), **_R)
op('log_normal_', _fill('log_normal_', (), (0.0, 0.5), (0.0, 0.0)), method=True, dtypes=FLOATS + ('int64',), **_R)
op('random_', lambda dt: [S(Arg((3, 4))), S(Arg((3, 4)), 5), S(Arg((3, 4)), -3, 5), S(Arg((3, 4)), 5, 2),
                          S(Arg((3, 4), 'uint8'), -1, 5), S(Arg((3, 4), 'uint8'), 0, 500)], method=True,
   dtypes=FLOATS + ('int64', 'int32'), **_R)
op('bernoulli_', lambda dt: [S(Arg((3, 4))), S(Arg((3, 4)), 0.3), S(Arg((3, 4)), 1.5),
                             S(Arg((3, 4)), Arg((4,), low=0, high=1))], method=True, dtypes=FLOATS + ('int64',), **_R)
op('poisson', lambda dt: [S(Arg((3, 4), low=0, high=5)), S(Arg((3,), 'int64'))], **_R)
op('_standard_gamma', lambda dt: [S(Arg((3, 4), low=0.1, high=5)), S(Arg((0,))), S(Arg((3,), 'int64'))],
   dtypes=FLOATS, **_R)
op('_sample_dirichlet', lambda dt: [S(Arg((3, 4), low=0.1, high=5)), S(Arg((4,), low=0.1, high=5)), S(Arg((0, 3))),
                                   S(Arg((3,), 'int64'))], dtypes=FLOATS, **_R)
op('binomial', lambda dt: [S(Arg((3, 4), low=0, high=10), Arg((3, 4), low=0, high=1)),
                           S(Arg((3,), 'int64'), Arg((3,), low=0, high=1)),
                           S(Arg((3,), low=0, high=10), Arg((3,), 'float64', low=0, high=1))], dtypes=('float32',), **_R)
# torch's derivative is a fitted approximation (~5e-4 relative); ember's is exact, hence the tolerance;
# test_distributions.py compares it on points across the distribution's bulk
op('_standard_gamma_grad', lambda dt: [S(Arg((3, 4), low=0.5, high=5), Arg((3, 4), low=0.5, high=5)),
                                       S(Arg((0,), low=0.5, high=5), Arg((0,), low=0.5, high=5))],
   dtypes=('float32', 'float64'), grad=False, rtol=3e-3, atol=1e-5)
