"""torch's multi-tensor operators (``_foreach_*``, NOTE [foreach operators] in ember/_ops/foreach.py) against torch:
every public name, its overloads, dtypes, 0-d and empty tensors, in-place writes, gradients and torch's errors."""
import numpy as np
import pytest
import torch

import ember
from ember._ops.registry import DECLS

UNARY = ('abs', 'acos', 'asin', 'atan', 'ceil', 'cos', 'cosh', 'erf', 'erfc', 'exp', 'expm1', 'floor', 'frac',
         'lgamma', 'log', 'log10', 'log1p', 'log2', 'neg', 'reciprocal', 'round', 'rsqrt', 'sigmoid', 'sign', 'sin',
         'sinh', 'sqrt', 'tan', 'tanh', 'trunc')
DTYPES = ('float32', 'float64', 'int64')
SHAPES = ((2, 3), (), (0,), (5,))          # a matrix, a 0-d tensor, an empty one, a vector


def _arrays(dtype, seed, low=0.1, high=0.9):
    rng = np.random.default_rng(seed)
    if dtype == 'int64':
        return [rng.integers(1, 5, s).astype(np.int64) for s in SHAPES]
    return [rng.uniform(low, high, s).astype(dtype) for s in SHAPES]


def _tensors(lib, dtype, seed=0, **kw):
    return [lib.tensor(a) for a in _arrays(dtype, seed, **kw)]


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def _assert_same(ours, theirs, rtol=0):
    """Equal values (bit for bit unless ``rtol``), dtypes and shapes; tuples and lists alike, element by element."""
    if isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs), (type(ours), type(theirs))
        assert len(ours) == len(theirs) > 0
        for o, t in zip(ours, theirs):
            _assert_same(o, t, rtol)
        return
    if theirs is None:
        assert ours is None
        return
    assert str(ours.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    if rtol:
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(_np(ours), _np(theirs))


def _compare(fn, rtol=1e-6, message=True):
    """``fn(lib)`` under torch and ember: the same result (dtypes and shapes exactly, values to ``rtol``: some of
    ember's single-tensor kernels round differently in the last bit, see test_equal_to_the_single_tensor_operator
    for the exact comparison), or the same error class and message."""
    try:
        theirs = fn(torch)
    except Exception as e:      # noqa: BLE001 - the error is what is compared
        with pytest.raises(type(e)) as info:
            fn(ember)
        if message:
            assert str(info.value).split('\n')[0] == str(e).split('\n')[0]
        return None
    ours = fn(ember)
    _assert_same(ours, theirs, rtol)
    return theirs


def _inplace(name, *args, make=None, **kwargs):
    """``lib._foreach_<name>_`` on fresh tensors: what it returns (the list itself), the written values and the
    version counters, each bumped once."""
    def run(lib):
        xs = make(lib) if make else _tensors(lib, 'float32')
        before = [t._version for t in xs]
        extra = [a(lib) if callable(a) else a for a in args]
        r = getattr(lib, f'_foreach_{name}_')(xs, *extra, **kwargs)
        assert r is xs
        assert [t._version - v for t, v in zip(xs, before)] == [1] * len(xs)
        return xs
    return run


# --- every name -------------------------------------------------------------------------------------------------

def test_the_names_are_torchs():
    theirs = sorted(n for n in dir(torch) if n.startswith('_foreach_'))
    ours = sorted(n for n in dir(ember) if n.startswith('_foreach_'))
    assert len(theirs) == 91
    assert ours == theirs


def test_the_schemas_are_torchs():
    from ember._dispatch.dispatcher import all_ops
    ours = {str(op.schema).replace('aten::', '') for name, op in all_ops().items() if name.startswith('aten::_foreach_')}
    theirs = {str(s).replace('aten::', '') for n in {n.rstrip('_') for n in dir(torch) if n.startswith('_foreach_')}
              for op in (n, n + '_') for s in torch._C._jit_get_schemas_for_operator(f'aten::{op}')
              if 'out' not in s.overload_name}
    assert len(theirs) == 148
    assert ours == theirs


# --- unary ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('name', UNARY)
def test_unary(name, dtype):
    # ember's transcendental kernels may differ from torch's in the last bit: close to torch, and exactly what
    # ember's own single-tensor operator gives
    theirs = _compare(lambda lib: getattr(lib, f'_foreach_{name}')(_tensors(lib, dtype)))
    if theirs is not None:
        _assert_same(getattr(ember, f'_foreach_{name}')(_tensors(ember, dtype)),
                     tuple(getattr(ember, name)(t) for t in _tensors(ember, dtype)))
    _compare(_inplace(name, make=lambda lib: _tensors(lib, dtype)))


def test_equal_to_the_single_tensor_operator():
    """torch's slow path, bit for bit: each foreach overload gives what ember's single-tensor operator gives."""
    x, y, z = (_tensors(ember, 'float32', s) for s in range(3))
    s4 = [0.5, 2, -1.5, 3]
    cases = [
        (ember._foreach_add(x, y, alpha=0.3), [ember.add(a, b, alpha=0.3) for a, b in zip(x, y)]),
        (ember._foreach_add(x, ember.tensor(2.5)), [ember.add(a, 2.5) for a in x]),
        (ember._foreach_sub(x, s4), [ember.sub(a, c) for a, c in zip(x, s4)]),
        (ember._foreach_mul(x, ember.tensor(3, dtype=ember.float64)), [a * ember.tensor(3, dtype=ember.float64) for a in x]),
        (ember._foreach_div(x, s4), [a / c for a, c in zip(x, s4)]),
        (ember._foreach_pow(x, 2.5), [a ** 2.5 for a in x]), (ember._foreach_pow(1.5, x), [1.5 ** a for a in x]),
        (ember._foreach_maximum(x, 0.5), [ember.clamp_min(a, 0.5) for a in x]),
        (ember._foreach_minimum(x, y), [ember.minimum(a, b) for a, b in zip(x, y)]),
        (ember._foreach_clamp_max(x, y), [ember.clamp_max(a, b) for a, b in zip(x, y)]),
        (ember._foreach_addcmul(x, y, z, s4), [ember.addcmul(a, b, c, value=v) for a, b, c, v in zip(x, y, z, s4)]),
        (ember._foreach_addcdiv(x, y, z, ember.tensor(s4)), [ember.addcdiv(a, b, c, value=v)
                                                             for a, b, c, v in zip(x, y, z, s4)]),
        (ember._foreach_lerp(x, y, z), [ember.lerp(a, b, c) for a, b, c in zip(x, y, z)]),
        (ember._foreach_exp(x), [ember.exp(a) for a in x]),
    ]
    for ours, single in cases:
        _assert_same(ours, tuple(single))


# --- binary: List, Scalar, ScalarList, Tensor -----------------------------------------------------------------

_BINARY = {
    'add': ('List', 'Scalar', 'ScalarList', 'Tensor'), 'sub': ('List', 'Scalar', 'ScalarList'),
    'mul': ('List', 'Scalar', 'ScalarList', 'Tensor'), 'div': ('List', 'Scalar', 'ScalarList', 'Tensor'),
    'clamp_min': ('List', 'Scalar', 'ScalarList'), 'clamp_max': ('List', 'Scalar', 'ScalarList'),
    'maximum': ('List', 'Scalar', 'ScalarList'), 'minimum': ('List', 'Scalar', 'ScalarList'),
    'pow': ('List', 'Scalar', 'ScalarList'),
}


def _second(overload, dtype, scalar):
    """The second argument of each overload, for library ``lib``."""
    return {'List': lambda lib: _tensors(lib, dtype, seed=1),
            'Scalar': lambda lib: scalar,
            'ScalarList': lambda lib: [scalar, 2, -1.5, 3][:len(SHAPES)],
            'Tensor': lambda lib: lib.tensor(scalar)}[overload]


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('scalar', (2, 0.5))
@pytest.mark.parametrize('name', sorted(_BINARY))
def test_binary(name, scalar, dtype):
    for ov in _BINARY[name]:
        other = _second(ov, dtype, scalar)
        _compare(lambda lib: getattr(lib, f'_foreach_{name}')(_tensors(lib, dtype), other(lib)))
        # an integer tensor clamped in place by a float: torch's clamp_min_ names the dtype 'long int' where
        # ember's (the single-tensor operator's message, not foreach's) says 'Long'
        clamp = name in ('clamp_min', 'clamp_max', 'maximum', 'minimum') and ov != 'List'
        _compare(_inplace(name, other, make=lambda lib: _tensors(lib, dtype)), message=not clamp)


@pytest.mark.parametrize('name', ('add', 'sub'))
def test_alpha(name):
    _compare(lambda lib: getattr(lib, f'_foreach_{name}')(_tensors(lib, 'float32'), _tensors(lib, 'float32', 1),
                                                          alpha=0.3))
    _compare(_inplace(name, lambda lib: _tensors(lib, 'float32', 1), alpha=-2))
    _compare(lambda lib: lib._foreach_add(_tensors(lib, 'int64'), lib.tensor(2.5), alpha=3))


def test_tensor_scalar_promotes_as_torch():
    # add reads the 0-d tensor as a number, mul and div keep its dtype in the promotion
    for name in ('add', 'mul', 'div'):
        _compare(lambda lib: getattr(lib, f'_foreach_{name}')(_tensors(lib, 'int64'), lib.tensor(2.5, dtype=lib.float64)))
        _compare(lambda lib: getattr(lib, f'_foreach_{name}')(_tensors(lib, 'float32'), lib.tensor(3)))


def test_pow_scalar_and_tensor():
    for dtype in DTYPES:
        _compare(lambda lib: lib._foreach_pow(2, _tensors(lib, dtype)))
        _compare(lambda lib: lib._foreach_pow(0.5, _tensors(lib, dtype)))


def test_binary_lists_of_mixed_dtypes_and_broadcast():
    _compare(lambda lib: lib._foreach_mul([lib.ones(2, 3), lib.arange(3)], [lib.arange(3.), lib.tensor(2.)]))
    _compare(lambda lib: lib._foreach_add([lib.ones(2, 3, dtype=lib.float64)], [lib.ones(3)]))
    # an in-place write whose result cannot be cast, and one that would broadcast the output: torch's errors
    _compare(lambda lib: lib._foreach_add_([lib.ones(2, dtype=lib.int64)], 1.5))
    _compare(lambda lib: lib._foreach_add_([lib.ones(2)], [lib.ones(3, 2)]))
    _compare(lambda lib: lib._foreach_div_([lib.arange(3)], 2))


# --- addcmul, addcdiv, lerp -------------------------------------------------------------------------------------

@pytest.mark.parametrize('dtype', ('float32', 'float64'))
@pytest.mark.parametrize('name', ('addcmul', 'addcdiv'))
def test_addc(name, dtype):
    t = lambda lib, s=0: _tensors(lib, dtype, s)
    for value in ((), (0.5,), ([0.5, 2, -1, 3],), (lambda lib: lib.tensor([0.5, 2, -1, 3], dtype=lib.float64),)):
        args = lambda lib: [v(lib) if callable(v) else v for v in value]
        _compare(lambda lib: getattr(lib, f'_foreach_{name}')(t(lib), t(lib, 1), t(lib, 2), *args(lib)))
        _compare(_inplace(name, lambda lib: t(lib, 1), lambda lib: t(lib, 2), *value,
                          make=lambda lib: t(lib)))
    _compare(lambda lib: getattr(lib, f'_foreach_{name}')(t(lib), t(lib, 1), t(lib, 2), value=3))


def test_addc_integers_and_packed_scalars_errors():
    ints = lambda lib: _tensors(lib, 'int64')
    _compare(lambda lib: lib._foreach_addcmul(ints(lib), ints(lib), ints(lib), 2))
    _compare(lambda lib: lib._foreach_addcdiv(ints(lib), ints(lib), ints(lib)))
    _compare(_inplace('addcdiv', ints, ints, [2, 3, 4, 5], make=ints))
    _compare(lambda lib: lib._foreach_addcdiv(ints(lib), _tensors(lib, 'float32'), ints(lib)))
    f = lambda lib: _tensors(lib, 'float32')
    _compare(lambda lib: lib._foreach_addcmul(f(lib), f(lib), f(lib), lib.tensor(2.)))
    _compare(lambda lib: lib._foreach_addcmul(f(lib), f(lib), f(lib), lib.ones(3)))
    _compare(lambda lib: lib._foreach_addcmul(f(lib), f(lib), f(lib), lib.ones(1, 4)))


@pytest.mark.parametrize('dtype', ('float32', 'float64', 'int64'))
def test_lerp(dtype):
    t = lambda lib, s=0: _tensors(lib, dtype, s)
    for w in (0.3, [0.3, 0.7, 1.5, -1], lambda lib: _tensors(lib, dtype, 2)):
        wv = lambda lib: w(lib) if callable(w) else w
        _compare(lambda lib: lib._foreach_lerp(t(lib), t(lib, 1), wv(lib)))
        _compare(_inplace('lerp', lambda lib: t(lib, 1), w, make=lambda lib: t(lib)))


# --- reductions, products, copies -------------------------------------------------------------------------------

@pytest.mark.parametrize('ord', (2, 1, 3, 0.5, float('inf'), 0))
def test_norm(ord):
    data = lambda lib: [lib.tensor(a) for a in _arrays('float32', 0, -2, 2) if a.size] + \
        [lib.tensor([[1., -2.], [3., 4.]], dtype=lib.float64)]
    theirs = torch._foreach_norm(data(torch), ord)
    ours = ember._foreach_norm(data(ember), ord)
    # the values are ember's own linalg.vector_norm's, bit for bit, and torch's to rounding
    _assert_same(ours, tuple(ember.linalg.vector_norm(t, ord) for t in data(ember)))
    for o, t in zip(ours, theirs):
        assert o.dtype == getattr(ember, str(t.dtype).split('.')[-1])
        np.testing.assert_allclose(_np(o), _np(t), rtol=1e-6)
    _compare(lambda lib: lib._foreach_norm(_tensors(lib, 'float32'), dtype=lib.float64))
    _compare(lambda lib: lib._foreach_norm(_tensors(lib, 'float64'), dtype=lib.float32))
    _compare(lambda lib: lib._foreach_norm(_tensors(lib, 'int64')))
    _compare(lambda lib: lib._foreach_norm(_tensors(lib, 'float32'), ord))     # an empty tensor among them


@pytest.mark.parametrize('ord', (2, 1, 3, 0.5, float('inf'), 0))
def test_powsum(ord):
    data = lambda lib: [lib.tensor(a) for a in _arrays('float64', 0, -2, 2)]
    for o, t in zip(ember._foreach_powsum(data(ember), ord), torch._foreach_powsum(data(torch), ord)):
        assert o.dtype == ember.float64 and o.shape == t.shape
        np.testing.assert_allclose(_np(o), _np(t), rtol=1e-12)
    _compare(lambda lib: lib._foreach_powsum(_tensors(lib, 'int64')))
    r = ember._foreach_powsum([ember.ones(3)], dtype=ember.float64)
    assert r[0].dtype == ember.float64 and r[0].item() == 3.0


def test_max():
    nonempty = lambda lib, dtype: [t for t in _tensors(lib, dtype) if t.numel()]
    for dtype in DTYPES:
        _compare(lambda lib: lib._foreach_max(nonempty(lib, dtype)))
    _compare(lambda lib: lib._foreach_max(_tensors(lib, 'float32')))       # an empty tensor: torch's error


def test_mm():
    _compare(lambda lib: lib._foreach_mm([lib.ones(2, 3), lib.arange(4.).reshape(2, 2)],
                                         [lib.ones(3, 4), lib.eye(2)]))
    _compare(lambda lib: lib._foreach_mm([lib.ones(2, 3)], [lib.ones(2, 3)]))


def test_clone_copy_zero():
    _compare(lambda lib: lib._foreach_clone(_tensors(lib, 'float64')))
    clones = ember._foreach_clone(xs := _tensors(ember, 'float32'))
    assert all(c.data_ptr() != x.data_ptr() for c, x in zip(clones, xs) if x.numel())
    _compare(_inplace('copy', lambda lib: _tensors(lib, 'int64', 1)))
    _compare(_inplace('zero'))
    _compare(lambda lib: lib._foreach_copy_([lib.ones(2)], [lib.ones(3)]))
    # the functional forms are operators only
    _compare(lambda lib: tuple(lib.ops.aten._foreach_copy.default(_tensors(lib, 'float32'),
                                                                  _tensors(lib, 'float32', 1))))
    _compare(lambda lib: tuple(lib.ops.aten._foreach_zero.default(_tensors(lib, 'float32'))))
    assert ember.ops.aten._foreach_zero_.default(_tensors(ember, 'float32')) is None
    assert ember.ops.aten._foreach_add_.Scalar(_tensors(ember, 'float32'), 1) is None


def test_views_are_written_through():
    for lib in (torch, ember):
        base = lib.zeros(4)
        lib._foreach_add_([base[:2], base[2:]], [1.0, 2.0])
        assert base.tolist() == [1.0, 1.0, 2.0, 2.0]


# --- torch's errors ---------------------------------------------------------------------------------------------

def test_errors():
    a = lambda lib: [lib.ones(2), lib.ones(3)]
    for call in (
            lambda lib: lib._foreach_add([], 1), lambda lib: lib._foreach_add_([], []),
            lambda lib: lib._foreach_abs([]), lambda lib: lib._foreach_norm([]), lambda lib: lib._foreach_zero_([]),
            lambda lib: lib._foreach_add(a(lib), a(lib)[:1]), lambda lib: lib._foreach_add(a(lib), [1.0]),
            lambda lib: lib._foreach_addcmul(a(lib), a(lib), a(lib)[:1]),
            lambda lib: lib._foreach_lerp(a(lib), a(lib), [1.0]), lambda lib: lib._foreach_lerp(a(lib), a(lib)[:1], .5),
            lambda lib: lib._foreach_add(a(lib), lib.ones(2)), lambda lib: lib._foreach_mul(a(lib), lib.ones(1)),
            lambda lib: lib._foreach_add([lib.ones(2)], [lib.ones(3)]),
            lambda lib: lib._foreach_sqrt_([lib.ones(2, dtype=lib.int64)]),
            lambda lib: lib._foreach_neg([lib.ones(2, dtype=lib.bool)]),
            lambda lib: lib._foreach_sub([lib.ones(2, dtype=lib.bool)], 1),
            lambda lib: lib._foreach_lerp([lib.arange(3)], [lib.arange(3)], 0.5),
            lambda lib: lib._foreach_add(a(lib), 'x'), lambda lib: lib._foreach_add(1, 1)):
        _compare(call)


def test_mixed_devices_run_per_tensor():
    # a pair on two devices is the single-tensor operator's error (whose wording differs from torch's: not compared)
    _compare(lambda lib: lib._foreach_add([lib.ones(2)], [lib.ones(2, device='meta')]), message=False)
    xs = lambda lib: [lib.ones(2), lib.ones(3, device='meta')]
    for lib in (torch, ember):
        r = lib._foreach_mul(xs(lib), 2)
        assert [t.device.type for t in r] == ['cpu', 'meta'] and r[0].tolist() == [2.0, 2.0]


# --- autograd ---------------------------------------------------------------------------------------------------

def _grads(fn):
    """Gradients of sum(outputs) for the leaves ``fn(lib, leaves)`` is given."""
    out = []
    for lib in (torch, ember):
        leaves = [lib.tensor(a, requires_grad=True) for a in _arrays('float64', 3, 0.2, 0.8)]
        others = [lib.tensor(a) for a in _arrays('float64', 4, 0.2, 0.8)]
        r = fn(lib, leaves, others)
        sum(t.sum() for t in r).backward()
        out.append((r, [t.grad for t in leaves]))
    (ours, ours_g), (theirs, theirs_g) = out[1], out[0]
    _assert_same(ours, tuple(t.detach() for t in theirs))
    for o, t in zip(ours_g, theirs_g):
        np.testing.assert_allclose(_np(o), _np(t), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize('fn', [
    lambda lib, x, y: lib._foreach_mul(x, y),
    lambda lib, x, y: lib._foreach_add(x, y, alpha=0.5),
    lambda lib, x, y: lib._foreach_div(x, [2.0, 3, 4, 5]),
    lambda lib, x, y: lib._foreach_exp(x),
    lambda lib, x, y: lib._foreach_lerp(x, y, 0.25),
    lambda lib, x, y: lib._foreach_addcdiv(y, x, y, 0.5),
    lambda lib, x, y: lib._foreach_pow(x, 3),
    lambda lib, x, y: lib._foreach_norm(x),
    lambda lib, x, y: lib._foreach_maximum(x, y),
], ids=['mul', 'add', 'div', 'exp', 'lerp', 'addcdiv', 'pow', 'norm', 'maximum'])
def test_gradients(fn):
    _grads(fn)


def test_inplace_on_leaves_that_require_grad_is_torchs_error():
    _compare(lambda lib: lib._foreach_add_([lib.ones(2, requires_grad=True)], 1))


# --- clients: torch.utils._foreach_utils, clip_grad_norm_, optimizers ------------------------------------------

def test_foreach_utils():
    from torch.utils import _foreach_utils as T
    from ember.utils import _foreach_utils as E
    # the last entry is the PrivateUse1 backend's name, which another test of this process may have renamed
    name = ember.utils.get_privateuse1_backend_name()
    assert E._get_foreach_kernels_supported_devices() == T._get_foreach_kernels_supported_devices()[:-1] + [name]
    assert E._get_fused_kernels_supported_devices() == T._get_fused_kernels_supported_devices()[:-1] + [name]

    def groups(lib, U):
        a = [lib.ones(2), lib.ones(2, dtype=lib.float64), lib.ones(3), lib.ones(1, device='meta')]
        b = [lib.zeros(2), None, lib.zeros(3), lib.zeros(1, device='meta')]
        return {(str(d), str(t).split('.')[-1]): ([[None if x is None else tuple(x.shape) for x in tl] for tl in lists],
                                                  idx)
                for (d, t), (lists, idx) in U._group_tensors_by_device_and_dtype([a, b], with_indices=True).items()}
    assert groups(ember, E) == groups(torch, T)
    assert groups(ember, E)[('cpu', 'float32')] == ([[(2,), (3,)], [(2,), (3,)]], [0, 2])
    for U, lib in ((T, torch), (E, ember)):
        assert U._device_has_foreach_support(lib.device('cpu'))
        assert not U._device_has_foreach_support(lib.device('meta'))
        assert U._has_foreach_support([lib.ones(1), None], lib.device('cpu'))
        assert not U._has_foreach_support([lib.nn.Parameter(lib.ones(1))], lib.device('cpu'))


def _model(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    for p, a in zip(m.parameters(), _params()):
        with lib.no_grad():
            p.copy_(lib.tensor(a))
    return m


def _params():
    rng = np.random.default_rng(7)
    return [rng.standard_normal(s).astype(np.float32) for s in ((8, 4), (8,), (2, 8), (2,))]


def _train(lib, make_opt, steps=3, clip=True):
    m = _model(lib)
    opt = make_opt(lib, m.parameters())
    x = lib.tensor(np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))
    norms = []
    for _ in range(steps):
        opt.zero_grad()
        m(x).pow(2).mean().backward()
        if clip:
            norms.append(float(lib.nn.utils.clip_grad_norm_(m.parameters(), 0.1, foreach=True)))
        opt.step()
    return [p.detach().numpy().copy() for p in m.parameters()], norms


@pytest.mark.parametrize('opt', ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad'])
def test_optimizers_with_foreach(opt):
    kw = {'SGD': dict(lr=0.1, momentum=0.9), 'Adam': dict(lr=0.01), 'AdamW': dict(lr=0.01, weight_decay=0.1),
          'RMSprop': dict(lr=0.01), 'Adagrad': dict(lr=0.1)}[opt]
    make = lambda lib, params: getattr(lib.optim, opt)(params, foreach=True, **kw)
    (ours, ours_n), (theirs, theirs_n) = _train(ember, make), _train(torch, make)
    np.testing.assert_allclose(ours_n, theirs_n, rtol=1e-6)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-7)

