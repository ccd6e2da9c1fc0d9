"""API gaps found by running torch programs: cat/stack layouts of channels_last inputs, random ranges and their
errors, tensor subclasses set by ``__class__``, small torch namespaces, and the control-flow operators
``cond``/``while_loop``. Each is checked against torch 2.13."""
import numpy as np
import pytest
import torch

import ember


# --- cat / stack keep a common channels_last layout (NOTE [output strides]) ---------------------------------------

def _laid_out(lib, shape, layout, device):
    t = lib.arange(float(np.prod(shape))).reshape(shape).to(device)
    if layout == 'channels_last':
        return t.to(memory_format=lib.channels_last)
    if layout == 'channels_last_3d':
        return t.to(memory_format=lib.channels_last_3d)
    if layout == 'transposed':
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    return t


_LAYOUTS = [((2, 3, 4, 5), ('channels_last', 'channels_last')),
            ((2, 3, 4, 5), ('channels_last', 'contiguous')),
            ((2, 3, 4, 5), ('contiguous', 'channels_last')),
            ((2, 3, 4, 5), ('transposed', 'transposed')),
            ((2, 3, 4, 5, 6), ('channels_last_3d', 'channels_last_3d')),
            ((2, 3, 4, 5, 6), ('channels_last_3d', 'contiguous')),
            ((2, 1, 4, 5), ('channels_last', 'channels_last')),     # size-1 channels: torch's ambiguous cases
            ((2, 3, 1, 1), ('channels_last', 'channels_last'))]


@pytest.mark.parametrize('device', ['cpu', 'meta'])
@pytest.mark.parametrize('op', ['cat', 'stack'])
@pytest.mark.parametrize('shape,layouts', _LAYOUTS)
def test_cat_stack_strides(shape, layouts, op, device):
    for dim in range(-1, len(shape) + (op == 'stack')):
        ours = getattr(ember, op)([_laid_out(ember, shape, lay, device) for lay in layouts], dim)
        theirs = getattr(torch, op)([_laid_out(torch, shape, lay, device) for lay in layouts], dim)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.stride() == theirs.stride(), (dim, ours.stride(), theirs.stride())
        if device == 'cpu':
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_cat_channels_last_mixed_dtypes_and_empty():
    for lib in (ember, torch):
        a = lib.randn(2, 3, 4, 5).to(memory_format=lib.channels_last)
        lib.r1 = lib.cat([a, a.double()], 1)
        lib.r2 = lib.cat([a, lib.empty(0)], 0)      # a legacy empty input suggests contiguous
    assert ember.r1.stride() == torch.r1.stride() and ember.r1.dtype == ember.float64
    assert ember.r2.stride() == torch.r2.stride()


@pytest.mark.parametrize('fmt', ['channels_last', 'contiguous_format'])
@pytest.mark.parametrize('shape,layout', [((2, 3, 4, 5), 'contiguous'), ((2, 1, 4, 5), 'contiguous'),
                                          ((2, 3, 1, 1), 'contiguous'), ((2, 3, 4, 5), 'channels_last'),
                                          ((2, 3, 4, 5), 'transposed')])
def test_to_memory_format(shape, layout, fmt):
    """``to(memory_format=)`` returns the tensor itself when its strides suggest the format, else an exact copy."""
    for dtype in (None, 'float64'):
        got = []
        for lib in (ember, torch):
            t = _laid_out(lib, shape, layout, 'cpu')
            args = (getattr(lib, dtype),) if dtype else ()
            r = t.to(*args, memory_format=getattr(lib, fmt))
            got.append((r.stride(), r.data_ptr() == t.data_ptr()))
        assert got[0] == got[1]


# --- random_ / randint ranges and their errors ---------------------------------------------------------------------

def _both(fn):
    """``fn(lib)`` under the same seed for ember and torch: (values, warnings) or the error's class and message."""
    import warnings
    out = []
    for lib in (ember, torch):
        lib.manual_seed(7)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            try:
                r = fn(lib)
                res = (str(r.dtype).split('.')[1], r.tolist())
            except Exception as e:      # noqa: BLE001 - the error itself is compared
                res = (type(e).__name__, str(e))
        out.append((res, [str(x.message).split(' (Triggered')[0] for x in w]))
    return out


_RANGES = [('float32', (0, 2 ** 25)), ('float32', ()), ('float32', (0, 2 ** 24 + 1)), ('float32', (-2 ** 25, 0)),
           ('float64', ()), ('float64', (0, 2 ** 54)), ('float16', ()), ('bfloat16', ()), ('float16', (3000,)),
           ('float16', (0, 70000)), ('int8', ()), ('uint8', ()), ('bool', ()), ('int8', (0, 200)),
           ('int8', (-200, 0)), ('uint8', (-1, 3)), ('float32', (5, 5)), ('float32', (5, 3)), ('float32', (0,)),
           ('int64', (-3,)), ('int64', (0, None)), ('int32', (5, None)), ('float32', (0, None)),
           ('float32', (2 ** 24 + 3, None)), ('int64', (-2 ** 63, None)), ('float64', (-2 ** 63, None)),
           ('int32', (-2 ** 63, None)), ('bool', (-2 ** 63, None)), ('int64', (-2 ** 63, 2 ** 63 - 1))]


@pytest.mark.parametrize('dtype,args', _RANGES)
def test_random_ranges(dtype, args):
    ours, theirs = _both(lambda lib: lib.empty(50, dtype=getattr(lib, dtype)).random_(*args))
    assert ours == theirs


@pytest.mark.parametrize('low,high,dtype', [(5, 5, None), (5, 3, None), (0, 300, 'int8'), (-1, 3, 'uint8'),
                                            (0, 2 ** 25, 'float32'), (0, 70000, 'float16'), (0, 3, 'bool'),
                                            (0, 2 ** 63, None), (0, 2 ** 30, None), (-10, 10, 'int16')])
def test_randint_ranges(low, high, dtype):
    kw = {'dtype': dtype} if dtype else {}
    ours, theirs = _both(lambda lib: lib.randint(low, high, (20,), **{k: getattr(lib, v) for k, v in kw.items()}))
    assert ours == theirs
    ours, theirs = _both(lambda lib: lib.randint(low, high, (0,)))     # the checks come before the empty return
    assert ours == theirs


# --- t.__class__ = Sub (NOTE [tensor subclasses]) -------------------------------------------------------------------

def _class_assignment(lib):
    log = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    class Dispatching(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            log.append('dispatch')
            return 'handled'

    class Slotted(lib.Tensor):
        __slots__ = ('x',)

    seen = [Dispatching.__torch_function__ is lib._C._disabled_torch_function_impl]
    t = lib.ones(2)
    t.__class__ = Logged
    seen += [type(t).__name__, type(t + 1).__name__, type(lib.add(t, 1)).__name__, type(t[0]).__name__, list(log)]
    log.clear()
    t.__class__ = lib.Tensor
    seen += [type(t + 1).__name__, list(log)]
    u = lib.ones(2)
    u.__class__ = Dispatching       # torch sets the Python dispatch key only when a tensor is made
    seen += [type(u + 1).__name__, list(log)]
    p = lib.nn.Parameter(lib.ones(2))
    p.__class__ = Logged
    seen += [type(p * 2).__name__, isinstance(p, lib.Tensor), list(log)]
    for cls in (Slotted, int):
        try:
            lib.ones(2).__class__ = cls
        except TypeError as e:
            seen.append(str(e))
    return seen


def test_class_assignment_gives_subclass_behaviour():
    assert _class_assignment(ember) == _class_assignment(torch)


# --- small namespaces: jit.Error, _dynamo.config.patch, mps RNG state ----------------------------------------------

def test_jit_error_is_an_exception_programs_catch():
    assert [c.__name__ for c in ember.jit.Error.__mro__] == [c.__name__ for c in torch.jit.Error.__mro__]
    with pytest.raises(ember.jit.Error):
        raise ember.jit.Error("scripted code failed")


def _config_patch(lib):
    import importlib
    config = importlib.import_module(lib.__name__ + '._dynamo.config')
    seen = []
    with config.patch(cache_size_limit=3, suppress_errors=True):
        seen.append((config.cache_size_limit, config.suppress_errors))
    seen.append((config.cache_size_limit, config.suppress_errors))

    @config.patch('cache_size_limit', 5)
    def f():
        return config.cache_size_limit
    seen += [f(), config.cache_size_limit]
    with config.patch({'cache_size_limit': 2}):
        seen.append(config.cache_size_limit)
    try:
        with config.patch(not_a_setting=1):
            pass
    except AttributeError as e:
        seen.append(str(e).replace(lib.__name__ + '.', ''))
    return seen


def test_dynamo_config_patch():
    assert _config_patch(ember) == _config_patch(torch)


@pytest.mark.parametrize('call', ['get_rng_state()', 'set_rng_state(lib.zeros(4, dtype=lib.uint8))'])
def test_mps_rng_state_without_mps(call):
    errors = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as e:
            eval('lib.mps.' + call)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
