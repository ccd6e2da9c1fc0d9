"""torch.library's Python custom-operator API (custom_op, register_fake/kernel/autograd, infer_schema, opcheck):
the same operators defined with torch and with ember, compared on values, gradients (first and second order),
mutation, make_fx, the meta device, and the errors."""
from typing import Optional, Sequence, Union

import numpy as np
import pytest
import torch

import ember
from test_autograd import same, data


@pytest.fixture
def defs():
    """Custom ops a test defines, removed afterwards (both libraries keep operators process-wide)."""
    made = []
    yield made
    for op in made:
        _destroy(op)


def _destroy(op):
    """Remove a custom op (torch's CustomOpDef has no method for it; its library has)."""
    getattr(op, '_destroy', op._lib._destroy)()


def _sin_op(lib, defs, name):
    """``ns::name``: sin, with a fake kernel and a backward written with differentiable operators."""
    @lib.library.custom_op(f'co_test::{name}', mutates_args=())
    def mysin(x: lib.Tensor) -> lib.Tensor:
        return lib.from_numpy(np.sin(x.numpy()))        # opaque to autograd, as a real custom kernel is
    defs.append(mysin)

    @mysin.register_fake
    def _(x):
        return lib.empty_like(x)

    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos()
    mysin.register_autograd(backward, setup_context=setup_context)
    return mysin


def test_values_first_and_second_order_gradients(defs):
    def f(lib):
        mysin = _sin_op(lib, defs, 'sin1')
        x = data(lib, 4)
        y = mysin(x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        x2 = data(lib, 4)
        mysin(x2).sum().backward()
        return [y, g, gg, x2.grad, type(y.grad_fn).__name__, str(mysin._opoverload), repr(mysin),
                lib.ops.co_test.sin1.default is mysin._opoverload, lib.ops.co_test.sin1(x.detach())]
    same(f)


def test_schema_inference_matches_torch():
    def schemas(lib):
        T = lib.Tensor
        number = Union[int, float, bool]

        def f1(x: T, y: Optional[T], zs: list[T], n: int, a: float, b: bool, s: str, sq: Sequence[int],
               dt: lib.dtype, dev: lib.device, k: int = 3, o: Optional[int] = None, fl: float = -1e-3,
               ozs: list[Optional[T]] = None) -> tuple[T, T]: ...

        def f2(x: T, *, k: int = 2, sc: number = 2, ob: Optional[bool] = None, ol: Optional[list[int]] = None,
               s: str = 'hi', d: lib.dtype = lib.float32, dv: lib.device = lib.device('cpu')) -> int: ...

        def f3(x: T, n: int, y: T, zs: list[T]) -> None: ...

        def f4(x: T, n: 'Optional[int]') -> list[T]: ...      # a string annotation: read in the module
        return [lib.library.infer_schema(f1, mutates_args=()), lib.library.infer_schema(f1, mutates_args='unknown'),
                lib.library.infer_schema(f2, mutates_args=()),
                lib.library.infer_schema(f3, mutates_args=('zs', 'y'), op_name='f3'),
                lib.library.infer_schema(f4, mutates_args=[])]
    assert schemas(ember) == schemas(torch)


@pytest.mark.parametrize('src, mutates, match', [
    ('def f(x) -> T: ...', (), r'^infer_schema\(func\): Parameter x must have a type annotation\. Got func'),
    ('def f(x: T, *a: int) -> T: ...', (), 'We do not support positional-only args, varargs, or varkwargs'),
    ('def f(x: T, /, y: T) -> T: ...', (), 'We do not support positional-only args'),
    ('def f(x: dict) -> T: ...', (), 'Parameter x has unsupported type'),
    ('def f(x: "Undefined") -> T: ...', (), r"Unsupported type annotation Undefined\. It is not a type\. \(name "
                                            r"'Undefined' is not defined\)"),
    ('def f(x: T): ...', (), 'No return type annotation was provided. Please add one.'),
    ('def f(x: T) -> dict: ...', (), 'Return has unsupported type'),
    ('def f(x: T) -> tuple[T, Optional[T]]: ...', (), 'Return has unsupported type'),
    ('def f(x: T, y: list[int] = [1]) -> T: ...', (),
     "Parameter y has an unsupported default value type <class 'list'>"),
    ('def f(x: T) -> T: ...', ('y',), r"\{'y'\} in mutates_args were not found in the custom op's signature"),
    ('def f(x: int) -> T: ...', ('x',), 'Parameter x is in mutable_args but only Tensors or collections of Tensors'),
    ('def f(x: T) -> T: ...', 'x', "mutates_args must either be a sequence of the names of the arguments that are "
                                   "mutated or the string 'unknown'"),
])
def test_infer_schema_errors_match_torch(src, mutates, match):
    for lib in (torch, ember):
        ns = {'T': lib.Tensor, 'Optional': Optional}
        exec(src, ns)
        with pytest.raises(ValueError, match=match):
            lib.library.infer_schema(ns['f'], mutates_args=mutates)
        with pytest.raises(ValueError, match=match):          # custom_op reports the same
            lib.library.custom_op('co_test::never', ns['f'], mutates_args=mutates)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'mutates_args'"):
        ember.library.infer_schema(lambda x: x)


def test_mutation_and_trivial_fake(defs):
    def f(lib):
        @lib.library.custom_op('co_test::addc_', mutates_args={'x'})
        def addc_(x: lib.Tensor, c: float) -> None:
            x.add_(c)
        defs.append(addc_)
        t = lib.zeros(3)
        v0 = t._version
        addc_(t, 2.5)
        m = lib.zeros(3, device='meta')          # returns nothing: no fake kernel is needed
        return [t, t._version > v0, addc_(m, 1.0), lib.library.opcheck(addc_, (lib.zeros(3), 1.0))]
    e, t = same(f)
    assert ember.ops.co_test.addc_.default.schema.text == 'addc_(Tensor(a0!) x, float c) -> ()'


def test_meta_and_make_fx_see_one_operator(defs):
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx
    from ember.fx.experimental.proxy_tensor import make_fx as ember_make_fx

    def f(lib):
        mysin = _sin_op(lib, defs, 'sin2')
        make_fx = torch_make_fx if lib is torch else ember_make_fx

        def prog(a):
            return mysin(a * 2) + 1
        out = [mysin(lib.empty(2, 5, device='meta')).shape, mysin(lib.empty(2, 5, device='meta')).device.type]
        for mode in ('real', 'fake'):
            gm = make_fx(prog, tracing_mode=mode)(lib.ones(3))
            targets = [str(n.target) for n in gm.graph.nodes if n.op == 'call_function']
            out += [targets, gm(lib.full((3,), 0.5))]
        return out
    e, t = same(f)
    assert e[2] == ['aten.mul.Tensor', 'co_test.sin2.default', 'aten.add.Tensor']


def test_kernels_per_device_and_the_function_forms(defs):
    def f(lib):
        L = lib.library

        @L.custom_op('co_test::k', mutates_args=(), device_types='cpu')
        def k(x: lib.Tensor) -> lib.Tensor:
            return x * 2
        defs.append(k)
        out = [k(lib.ones(2))]
        k.register_kernel('cpu', lambda x: x * 3)
        out.append(k(lib.ones(2)))
        L.register_kernel('co_test::k', 'cpu', lambda x: x * 4)
        out.append(k(lib.ones(2)))

        @L.custom_op('co_test::k2', mutates_args=(), device_types='cuda')
        def k2(x: lib.Tensor) -> lib.Tensor:
            return x * 2
        defs.append(k2)
        with pytest.raises(NotImplementedError, match="Could not run 'co_test::k2' with arguments from the 'CPU' "
                                                      "backend"):
            k2(lib.ones(2))
        L.register_kernel(k2, 'cpu', lambda x: x * 5)
        out.append(k2(lib.ones(2)))

        # an operator made with define: impl on a device type (a Tensor kernel), register_fake, register_autograd
        lb = L.Library('co_test_def', 'FRAGMENT')
        L.define('co_test_def::bar', '(Tensor x, *, float s=2.0) -> Tensor', lib=lb)
        L.impl('co_test_def::bar', 'cpu', lambda x, *, s=2.0: x * s, lib=lb)
        out.append(lib.ops.co_test_def.bar(lib.ones(2), s=3.0))
        L.register_fake('co_test_def::bar', lambda x, *, s=2.0: x.new_empty(x.shape), lib=lb)
        out.append(lib.ops.co_test_def.bar(lib.ones(4, device='meta')).shape)
        res = L.opcheck(lib.ops.co_test_def.bar.default, (lib.ones(2, requires_grad=True),), raise_exception=False)
        out.append({n: r == 'SUCCESS' for n, r in res.items()})
        L.register_autograd('co_test_def::bar', lambda ctx, g: g * 2, lib=lb)
        x = lib.ones(2, requires_grad=True)
        lib.ops.co_test_def.bar(x).sum().backward()
        out.append(x.grad)
        lb._destroy()
        return out
    e, t = same(f)
    assert e[-2] == {'test_schema': True, 'test_autograd_registration': False, 'test_faketensor': True,
                     'test_aot_dispatch_dynamic': False}


def test_lists_keyword_only_arguments_and_needs_input_grad(defs):
    def f(lib):
        T = lib.Tensor
        seen = []

        @lib.library.custom_op('co_test::wsum', mutates_args=())
        def wsum(xs: list[T], w: Optional[T], *, scale: float = 2.0) -> tuple[T, T]:
            s = sum(xs[1:], xs[0]) * w
            return s * scale, s.sum().reshape(1)
        defs.append(wsum)
        wsum.register_fake(lambda xs, w, *, scale=2.0: (lib.empty_like(xs[0]), xs[0].new_empty(1)))

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            xs, w = inputs
            ctx.save_for_backward(w, *xs)
            ctx.scale = keyword_only_inputs['scale']

        def backward(ctx, g0, g1):
            w, *xs = ctx.saved_tensors
            seen.append(ctx.needs_input_grad)
            gs = g0 * ctx.scale + g1
            return [gs * w] * len(xs), gs * sum(xs[1:], xs[0])
        wsum.register_autograd(backward, setup_context=setup_context)
        a, b, w = data(lib, 2), data(lib, 2, seed=1), data(lib, 2, seed=2, rg=False)
        r = wsum([a, b], w, scale=3.0)
        (r[0].sum() + r[1].sum()).backward()
        needs = list(seen)          # before opcheck's own backward calls
        check = lib.library.opcheck(wsum, ([data(lib, 2), data(lib, 2, seed=1)], data(lib, 2, seed=2)),
                                    {'scale': 1.5})
        return [r[0], r[1], a.grad, b.grad, w.grad, needs, check]
    same(f)


def test_custom_op_errors(defs):
    for lib in (torch, ember):
        L = lib.library
        T = lib.Tensor

        @L.custom_op('co_test::nofake', mutates_args=())
        def nofake(x: T) -> T:
            return x + 1
        defs.append(nofake)
        x = lib.ones(3, requires_grad=True)
        y = nofake(x)                                          # forward works; backward has no formula
        with pytest.raises(RuntimeError, match=r'^Trying to backward through co_test.nofake.default but no '
                                               r'autograd formula was registered. Please use register_autograd'):
            y.sum().backward()
        with pytest.raises(RuntimeError, match=r'^There was no fake impl registered for <CustomOpDef\(co_test::'
                                               r'nofake\)>\. .* Please use `nofake.register_fake`'):
            nofake(lib.ones(3, device='meta'))

        @L.custom_op('co_test::retin', mutates_args=())
        def retin(x: T) -> T:
            return x.view(-1)
        defs.append(retin)
        with pytest.raises(RuntimeError, match=r'retin \(with implementation in .*\): The output of this custom '
                                               r'operator \(1\) must not also be an input'):
            retin(lib.ones(3))

        @L.custom_op('co_test::bad_mut', mutates_args=())
        def bad_mut(x: T) -> T:
            x.mul_(2)
            return x + 1
        defs.append(bad_mut)
        with pytest.raises(Exception, match=r'^opcheck\(op, \.\.\.\): test_schema failed with .*Argument x is not '
                                            r'defined as mutable but was mutated') as info:
            L.opcheck(bad_mut, (lib.ones(3),))
        assert type(info.value).__name__ == 'OpCheckError'

        @L.custom_op('co_test::wrong_fake', mutates_args=())
        def wrong_fake(x: T) -> T:
            return x.sin()
        defs.append(wrong_fake)
        wrong_fake.register_fake(lambda x: lib.empty(5))
        with pytest.raises(Exception, match=r'test_faketensor failed with When comparing the output of '
                                            r'co_test.wrong_fake.default on FakeTensor and concrete Tensors, found '
                                            r'mismatched tensor metadata: Shapes (torch|ember).Size\(\[3\]\) and '
                                            r'(torch|ember).Size\(\[5\]\) are not equal!'):
            L.opcheck(wrong_fake, (lib.randn(3),))
        wrong_fake.register_fake(lambda x: lib.empty_like(x, dtype=lib.float64))
        with pytest.raises(Exception, match=r'Dtypes (torch|ember).float32 and (torch|ember).float64 are not equal'):
            L.opcheck(wrong_fake, (lib.randn(3),))
        with pytest.raises(ValueError, match=r"expected test_utils to be subset of \('test_schema', "):
            L.opcheck(wrong_fake, (lib.randn(3),), test_utils=('bogus',))
        wrong_fake.register_fake(lambda x: lib.empty_like(x))
        res = L.opcheck(wrong_fake, (lib.randn(3, requires_grad=True),), raise_exception=False)
        assert res['test_faketensor'] == 'SUCCESS' and 'no autograd formula' in str(res['test_aot_dispatch_dynamic'])

        def f(x: T) -> T:
            return x.clone()
        with pytest.raises(ValueError, match=r"The schema suggests that the op mutates set\(\)which is different"):
            L.custom_op('co_test::sch', f, mutates_args=('x',), schema='(Tensor x) -> Tensor')

        def g(x: T, *, y: T) -> T:
            return x + y
        with pytest.raises(NotImplementedError, match='custom_op with kwarg-only Tensor args'):
            L.custom_op('co_test::kwt', g, mutates_args=())

        @L.custom_op('co_test::mut_ag', mutates_args=('x',))
        def mut_ag(x: T) -> None:
            x.add_(1)
        defs.append(mut_ag)
        with pytest.raises(RuntimeError, match='Cannot register autograd formula for non-functional operator'):
            mut_ag.register_autograd(lambda ctx, g: g)

        mysin = _sin_op(lib, defs, 'sin3')
        mysin.register_autograd(lambda ctx, g: (g, g), setup_context=lambda ctx, inputs, output: None)
        with pytest.raises(RuntimeError):
            mysin(lib.ones(2, requires_grad=True)).sum().backward()
    with pytest.raises(ValueError, match="expected a name 'namespace::opname'"):
        ember.library.custom_op('nonamespace', f, mutates_args=())
    with pytest.raises(RuntimeError, match=r'^Expected the return from backward to be of the same structure as '
                                           r'the inputs'):
        ember.ops.co_test.sin3(ember.ones(2, requires_grad=True)).sum().backward()


def test_redefinition_replaces_and_destroy_removes(defs):
    for lib in (torch, ember):
        def one(x: lib.Tensor) -> lib.Tensor:
            return x + 1

        def two(x: lib.Tensor) -> lib.Tensor:
            return x + 2
        lib.library.custom_op('co_test::redef', one, mutates_args=())
        op = lib.library.custom_op('co_test::redef', two, mutates_args=())
        assert lib.ops.co_test.redef(lib.zeros(1)).tolist() == [2.0]
        _destroy(op)
    with pytest.raises(AttributeError):
        ember.ops.co_test.redef


def test_library_define_impl_unchanged():
    with ember.library.Library('co_test_lib', 'DEF') as lib:
        lib.define('twice(Tensor x) -> Tensor')
        lib.impl('twice', lambda a: a * 2, 'CPU')                     # array kernel at a backend key, as before

        @ember.library.impl('co_test_lib::twice', 'CompositeImplicitAutograd', lib=lib)
        def _(x):
            return x * 2
        x = ember.ones(2, requires_grad=True)
        ember.ops.co_test_lib.twice(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
