"""The ``__torch_function__`` protocol (torch.overrides) against torch: a Tensor-like class written once
receives the same calls from both libraries' public functions."""
import pytest
import torch
import torch.overrides

import ember
import ember.overrides


def tensor_like(lib, log):
    class TensorLike:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func.__name__, [type(a).__name__ for a in args], sorted(kwargs or {}),
                        [t.__name__ for t in types]))
            return 'handled'
    return TensorLike


CALLS = [
    ('add', lambda lib, T: lib.add(T(), 1)),
    ('add tensor first', lambda lib, T: lib.add(lib.ones(2), T(), alpha=2)),
    ('mul operator', lambda lib, T: lib.ones(2) * T()),
    ('relu', lambda lib, T: lib.relu(T())),
    ('F.relu', lambda lib, T: lib.nn.functional.relu(T())),
    ('F.linear', lambda lib, T: lib.nn.functional.linear(T(), lib.ones(2, 2))),
    ('cat', lambda lib, T: lib.cat([lib.ones(1), T()], dim=0)),
    ('where', lambda lib, T: lib.where(lib.ones(2) > 0, T(), lib.ones(2))),
    ('sum', lambda lib, T: lib.sum(T(), dim=0)),
    ('matmul', lambda lib, T: lib.matmul(T(), lib.ones(2, 2))),
    ('stack', lambda lib, T: lib.stack((T(), lib.ones(1)))),
]


@pytest.mark.parametrize('name, call', CALLS, ids=[c[0] for c in CALLS])
def test_public_functions_hand_tensor_likes_to_torch_function(name, call):
    seen = {}
    for lib in (torch, ember):
        log = []
        assert call(lib, tensor_like(lib, log)) == 'handled'
        seen[lib.__name__] = log
    assert len(seen['ember']) == 1
    e_name, e_types, e_kwargs, e_tl = seen['ember'][0]
    t_name, t_types, t_kwargs, t_tl = seen['torch'][0]
    assert e_name == t_name.replace('__mul__', 'mul')            # torch hands a Tensor operator its dunder
    assert e_tl == t_tl == ['TensorLike']
    assert set(e_kwargs) <= set(t_kwargs)                       # torch's Python functionals pass their defaults
    assert [t.replace('Tensor', 'T') for t in e_types][:len(t_types)] == \
        [t.replace('Tensor', 'T') for t in t_types][:len(e_types)]


def test_func_is_the_public_function():
    got = []

    class T:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            got.append(func)
            return 0
    ember.add(T(), 1)
    ember.nn.functional.relu(T())
    ember.where(ember.ones(1) > 0, T(), 1.0)
    ember.nn.functional.gelu(T())
    assert got == [ember.add, ember.nn.functional.relu, ember.where, ember.nn.functional.gelu]


def test_not_implemented_everywhere_raises_type_error_like_torch():
    msgs = []
    for lib in (torch, ember):
        class T:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        with pytest.raises(TypeError) as info:
            lib.nn.functional.relu(T())
        msgs.append(str(info.value).replace(f"'{lib.__name__}.", "'LIB."))
        with pytest.raises(TypeError, match='__torch_function__'):
            lib.add(T(), 1)
    assert msgs[0] == msgs[1]
    assert msgs[1].startswith("no implementation found for 'LIB.nn.functional.relu' on types that implement")


def test_subclass_goes_before_base_class():
    order = []

    class Base:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append(cls.__name__)
            return NotImplemented if cls is Base else 'sub'

    class Sub(Base):
        pass
    assert ember.add(Base(), Sub()) == 'sub'
    assert order == ['Sub']
    torch_order = list(torch.overrides._get_overloaded_args([Base(), Sub()]))
    assert [type(a).__name__ for a in ember.overrides._get_overloaded_args([Base(), Sub()])] == \
        [type(a).__name__ for a in torch_order]


def test_helpers_match_torch():
    class T:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return 0
    for lib, ov in ((torch, torch.overrides), (ember, ember.overrides)):
        t = lib.ones(1)
        assert ov.is_tensor_like(t) and ov.is_tensor_like(T()) and not ov.is_tensor_like(1.0)
        assert ov.has_torch_function((t, T())) and not ov.has_torch_function((t, 1))
        assert ov.has_torch_function_unary(T()) and ov.has_torch_function_variadic(t, T())
        assert ov.handle_torch_function(lib.add, (T(),), T(), 1) == 0


def test_wrap_torch_function():
    @ember.overrides.wrap_torch_function(lambda a, b=None: (a,))
    def f(a, b=None):
        return 'ran'

    class T:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func is f
    assert f(1) == 'ran' and f(T()) is True


def test_ordinary_type_errors_are_unchanged():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match=r"add\(\): argument 'other' .* must be Tensor, not list"):
            lib.add(lib.ones(1), [1])
    with pytest.raises(TypeError, match="must be Tensor, not str"):
        ember.relu('x')
