"""Errors that teach (NOTE [kernel signatures] in ember/library.py): a kernel registered the way torch's tutorials
write one (Tensors in, Tensors out), or with a signature that cannot take the schema's arguments, is refused
where the mistake is made, with the operator, the key, the kernel and the signature it must have; correct
kernels behave as before."""
import numpy as np
import pytest

import ember
from ember.library import Library


@pytest.fixture
def dev(device_registry):
    """A PrivateUse1 device holding NumPy arrays (no allocator), unregistered after the test."""
    ember.utils.rename_privateuse1_backend('lrn')
    return 'lrn'


def _x(dev):
    return ember.tensor([1., 2., 3.]).to(dev)


def test_torch_style_tensor_kernel_is_refused_naming_op_key_and_signature(dev):
    def my_add(a, b, alpha=1):         # what a torch tutorial writes: Tensors in, a Tensor out
        return ember.from_numpy(np.asarray(a)) + ember.from_numpy(np.asarray(b))
    with Library('aten', 'IMPL') as lib:
        lib.impl('add.Tensor', my_add, 'PrivateUse1')
        with pytest.raises(TypeError) as info:
            _x(dev) + _x(dev)
    msg = str(info.value)
    for part in ('PrivateUse1', 'aten::add.Tensor', 'returned a Tensor', 'my_add(self, other, alpha)',
                 'numpy.ndarray', 'NOTE [kernel signatures]'):
        assert part in msg, (part, msg)
    assert "has no attribute 'astype'" not in msg and info.value.__cause__ is None     # not the generated code's error


def test_generic_kernel_returning_a_tensor_or_a_non_array_is_refused(dev):
    with Library('aten', 'IMPL') as lib:
        lib.impl('mm', lambda a, b: ember.from_numpy(a @ b), 'PrivateUse1')
        with pytest.raises(TypeError, match=r'kernel .*aten::mm returned a Tensor.*\(self, mat2\)'):
            _x(dev).view(1, 3).mm(_x(dev).view(3, 1))
    with Library('aten', 'IMPL') as lib:
        lib.impl('mm', lambda a, b: float((a @ b).sum()), 'PrivateUse1')
        with pytest.raises(TypeError, match=r'aten::mm returned float 14\.0.*must return a new numpy\.ndarray'):
            _x(dev).view(1, 3).mm(_x(dev).view(3, 1))


def test_wrong_arity_is_refused_at_registration(dev):
    with Library('aten', 'IMPL') as lib:
        with pytest.raises(TypeError) as info:
            lib.impl('add.Tensor', lambda a, b: a + b, 'PrivateUse1')      # forgets alpha
        assert not lib._impls                                               # nothing was registered
    msg = str(info.value)
    assert 'aten::add.Tensor at PrivateUse1' in msg and '3 arguments' in msg and '<lambda>(a, b)' in msg
    assert 'add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor' in msg
    with Library('demo_arity', 'DEF') as lib:
        lib.define('twice(Tensor x) -> Tensor')
        with pytest.raises(TypeError, match=r'twice at Autograd .* with Tensors'):
            lib.impl('twice', lambda x, y: x * 2, 'Autograd')
        with pytest.raises(TypeError, match=r'\(keyset, x\)'):
            lib.impl('twice', lambda x: x * 2, 'Autograd', with_keyset=True)
        with pytest.raises(TypeError, match='cannot take them'):
            lib.impl('twice', lambda x, *, scale: x * scale, 'CPU')    # a required keyword-only parameter


def test_signatures_that_fit_are_accepted(dev):
    with Library('aten', 'IMPL') as lib:
        lib.impl('add.Tensor', lambda a, b, alpha, extra=None: a + b * alpha, 'PrivateUse1')   # defaults ok
        lib.impl('mul.Tensor', lambda *arrays: np.multiply(*arrays), 'PrivateUse1')           # *args ok
        lib.impl('sub.Tensor', np.subtract, 'PrivateUse1')          # a ufunc: not checked at registration
        assert (_x(dev) + _x(dev)).cpu().tolist() == [2., 4., 6.]
        assert (_x(dev) * _x(dev)).cpu().tolist() == [1., 4., 9.]


def test_tensor_method_on_an_array_gets_a_note(dev):
    with Library('aten', 'IMPL') as lib:
        lib.impl('add.Tensor', lambda a, b, alpha: a.cpu() + b.cpu(), 'PrivateUse1')
        with pytest.raises(AttributeError, match="has no attribute 'cpu'") as info:
            _x(dev) + _x(dev)
    notes = ' '.join(getattr(info.value, '__notes__', []))
    assert 'with arrays, not Tensors' in notes and "'cpu' is a Tensor method" in notes and 'aten::add.Tensor' in notes


def test_ordinary_kernel_errors_pass_through_unchanged(dev):
    def failing(a, b, alpha):
        raise ValueError('the kernel says no')
    with Library('aten', 'IMPL') as lib:
        lib.impl('add.Tensor', failing, 'PrivateUse1')
        with pytest.raises(ValueError, match='^the kernel says no$') as info:
            _x(dev) + _x(dev)
    assert not getattr(info.value, '__notes__', None)
    with pytest.raises(RuntimeError, match='bincount only supports 1-d'):     # ember's own kernels: untouched
        ember.bincount(ember.tensor([[1, 2]]))


def test_wrong_result_size_names_the_kernel(dev):
    with Library('aten', 'IMPL') as lib:
        lib.impl('mm', lambda a, b: np.zeros((2, 2), np.float32), 'PrivateUse1')
        with pytest.raises(RuntimeError, match=r'kernel .*aten::mm returned an array of shape \(2, 2\).*\(1, 1\)'):
            _x(dev).view(1, 3).mm(_x(dev).view(3, 1))


def test_custom_operator_mistakes():
    with Library('demo_err', 'DEF') as lib:
        lib.define('twice(Tensor x) -> Tensor')
        lib.define('half(Tensor x) -> Tensor', meta=lambda x: x.shape)          # meta must give (shape, dtype)
        lib.define('third(Tensor x) -> Tensor')
        lib.impl('twice', lambda x: (x * 2, x), 'CPU')                          # one output, a tuple returned
        lib.impl('half', lambda x: x / 2, 'CPU')
        lib.impl('third', lambda x: x.numpy() / 3, 'CompositeImplicitAutograd')  # Tensor key, array returned
        with pytest.raises(TypeError, match=r'demo_err::twice returned tuple'):
            ember.ops.demo_err.twice(ember.ones(2))
        with pytest.raises(TypeError, match=r'meta function of demo_err::half returned .*\(shape, dtype\)'):
            ember.ops.demo_err.half(ember.ones(2))
        with pytest.raises(TypeError, match=r'CompositeImplicitAutograd kernel .* returned a NumPy array.*'
                                            r'take and return Tensors'):
            ember.ops.demo_err.third(ember.ones(2))


def test_correct_custom_kernels_still_work():
    with Library('demo_ok', 'DEF') as lib:
        lib.define('twice(Tensor x) -> Tensor')
        lib.define('pair(Tensor x) -> (Tensor, Tensor)')
        lib.define('thrice(Tensor x) -> Tensor')
        lib.impl('twice', lambda x: x * 2, 'CPU')
        lib.impl('pair', lambda x: (x, x + 1), 'CPU')
        lib.impl('thrice', lambda x: x * 3, 'CompositeImplicitAutograd')
        assert ember.ops.demo_ok.twice(ember.ones(2)).tolist() == [2., 2.]
        a, b = ember.ops.demo_ok.pair(ember.ones(2))
        assert b.tolist() == [2., 2.]
        assert ember.ops.demo_ok.thrice(ember.ones(2)).tolist() == [3., 3.]
