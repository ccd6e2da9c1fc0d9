"""The Python custom-operator API of torch.library: ``custom_op``, ``register_fake``, ``register_kernel``,
``register_autograd``, ``infer_schema`` and ``opcheck``, on ember's dispatcher.

``custom_op`` defines a real operator (``ember.ops.<ns>.<name>``), so dispatch modes, make_fx and the Meta
backend see one call, not the operators inside it. Its table, all Tensor-level kernels (torch's custom ops take
Tensors at every key, unlike ``Library.impl``'s array kernels for backend keys):

  CompositeExplicitAutograd (or each of ``device_types``)  the function, run below autograd (grad mode off)
  Meta          the fake function (``register_fake``), or torch's "no fake impl" error
  Autograd      a generated ``autograd.Function`` (``GeneratedBackwardFor_<ns>_<name>_default``) whose
                backward is ``register_autograd``'s, or torch's "no autograd formula" error when reached

So a backward that uses differentiable operators gives double backward, as in torch: the engine runs it with
grad mode on under ``create_graph=True``. The function forms (``register_fake('ns::op', fn)``, ...) also
serve operators made with ``Library.define``.

>>> import ember
>>> @ember.library.custom_op('demo_co::mysin', mutates_args=())
... def mysin(x: ember.Tensor) -> ember.Tensor:
...     return ember.from_numpy(ember.sin(x).numpy())
>>> mysin._opoverload.schema
mysin(Tensor x) -> Tensor
>>> _ = mysin.register_fake(lambda x: ember.empty_like(x))
>>> mysin(ember.empty(2, 3, device='meta')).shape
ember.Size([2, 3])
>>> mysin._destroy()
"""
import collections.abc
import inspect
import re
import typing

from ._core.dispatch_key import DispatchKey, below
from ._core.tensor_impl import TensorImpl
from ._dispatch import dispatcher
from ._dispatch.schema import parse_schema
from .autograd.grad_mode import is_grad_enabled, _set_enabled

_BELOW_AUTOGRAD = below(DispatchKey.Autograd)
_CEA = DispatchKey.CompositeExplicitAutograd


def _library(ns):
    """A FRAGMENT Library of ``ns`` (imported here: ember.library imports this module at its end)."""
    from .library import Library
    return Library(ns, 'FRAGMENT')


# --- infer_schema ---------------------------------------------------------------------------------------

def _type_maps():
    """(parameter annotation -> schema type, return annotation -> schema type), as torch's tables."""
    import ember
    number = typing.Union[int, float, bool]
    seqs = (typing.Sequence, typing.List, collections.abc.Sequence, list)
    params = {}

    def add(py, name, opt=True, seq=False, opt_seq=False):
        params[py] = name
        if opt:
            params[typing.Optional[py]] = name + '?'
        for S in seqs if seq else ():
            params[S[py]] = name + '[]'
            if opt_seq:
                params[typing.Optional[S[py]]] = name + '[]?'
    add(ember.Tensor, 'Tensor', seq=True)
    for S in seqs:
        params[S[typing.Optional[ember.Tensor]]] = 'Tensor?[]'
    add(int, 'SymInt', seq=True, opt_seq=True)
    add(float, 'float', seq=True, opt_seq=True)
    add(bool, 'bool', seq=True, opt_seq=True)
    add(str, 'str')
    add(number, 'Scalar', seq=True)
    add(ember.dtype, 'ScalarType')
    add(ember.device, 'Device')
    returns = {ember.Tensor: 'Tensor', typing.List[ember.Tensor]: 'Tensor[]', list[ember.Tensor]: 'Tensor[]',
               int: 'SymInt', float: 'float', bool: 'bool', number: 'Scalar'}
    return params, returns


_MAPS = []


def _maps():
    if not _MAPS:
        _MAPS.append(_type_maps())
    return _MAPS[0]


def _default_text(v):
    import ember
    if v is None or isinstance(v, (bool, int, float)):
        return repr(v)
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, ember.dtype):
        return str(v).split('.')[-1]
    if isinstance(v, ember.device):
        return f'"{v}"'
    return None


def _type_names(table):
    return ', '.join(sorted({getattr(t, '__name__', None) if isinstance(t, type) else str(t) for t in table},
                            key=str))


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """The schema of a function from its type hints, as ``torch.library.infer_schema``: ``int`` is ``SymInt``,
    ``Optional[Tensor]`` is ``Tensor?``, and each mutated argument gets its own alias set ``Tensor(a<i>!)``."""
    sig = inspect.signature(prototype_function)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(ann):
        """A string annotation (``from __future__ import annotations``), evaluated in the function's module."""
        if not isinstance(ann, str):
            return ann
        try:
            return eval(ann, prototype_function.__globals__)
        except NameError as e:
            error(f"Unsupported type annotation {ann}. It is not a type. ({e}). If you are using 'from __future__ "
                  f"import annotations', note that annotations are evaluated lazily as strings; make sure all "
                  f"types referenced in annotations are importable at module scope, not only inside a local "
                  f"function.")
    params_map, returns_map = _maps()
    mutated = _mutated_names(mutates_args)
    parts, seen_kwonly, seen = [], False, set()
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind is p.KEYWORD_ONLY and not seen_kwonly:
            parts.append('*')
            seen_kwonly = True
        if p.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        typ = params_map.get(resolve(p.annotation))
        if typ is None:
            error(f"Parameter {name} has unsupported type {p.annotation}. The valid types are: "
                  f"{_type_names(params_map)}.")
        if (mutated == 'unknown' and typ.startswith('Tensor')) or (mutated != 'unknown' and name in mutated):
            if not typ.startswith('Tensor'):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                      f"mutated")
            typ = f'Tensor(a{idx}!)' + typ[len('Tensor'):]
            seen.add(name)
        if p.default is inspect.Parameter.empty:
            parts.append(f'{typ} {name}')
        else:
            text = _default_text(p.default)
            if text is None:
                error(f"Parameter {name} has an unsupported default value type {type(p.default)}. Please file an "
                      f"issue on GitHub so we can prioritize this.")
            parts.append(f'{typ} {name}={text}')
    if mutated != 'unknown' and set(mutated) - seen:
        error(f"{set(mutated) - seen} in mutates_args were not found in the custom op's signature. mutates_args "
              f"should contain the names of all args that the custom op mutates, or just the string 'unknown' if "
              f"you don't know.")
    ret = resolve(sig.return_annotation)
    if ret is inspect.Signature.empty:
        error("No return type annotation was provided. Please add one.")
    if ret is None or ret is type(None):
        out = '()'
    elif typing.get_origin(ret) is tuple and typing.get_args(ret):
        names = [returns_map.get(a) for a in typing.get_args(ret)]
        if None in names:
            error(f"Return has unsupported type {ret}. The valid types are: {_type_names(returns_map)}.")
        out = f'({", ".join(names)})'
    else:
        out = returns_map.get(ret)
        if out is None:
            error(f"Return has unsupported type {ret}. The valid types are: {_type_names(returns_map)}.")
    return f'{op_name or ""}({", ".join(parts)}) -> {out}'


def _mutated_names(mutates_args):
    if mutates_args == 'unknown':
        return 'unknown'
    if isinstance(mutates_args, str) or not isinstance(mutates_args, collections.abc.Iterable):
        raise ValueError("mutates_args must either be a sequence of the names of the arguments that are mutated "
                         "or the string 'unknown'. ")
    return tuple(mutates_args)


# --- the kernels ----------------------------------------------------------------------------------------

def _caller(schema, fn):
    """``fn`` called with the dispatcher's schema-ordered arguments: keyword-only ones by name, a dtype or
    device default (kept as its schema text, 'float32' / 'cpu') as the object."""
    import ember
    kw = [(i, a.name) for i, a in enumerate(schema.arguments) if a.kwarg_only]
    conv = [(i, (lambda v: getattr(ember, v)) if a.base_type == 'ScalarType' else ember.device)
            for i, a in enumerate(schema.arguments) if a.base_type in ('ScalarType', 'Device')]
    n_pos = len(schema.arguments) - len(kw)
    if not kw and not conv:
        return fn

    def call(*args):
        if conv:
            args = list(args)
            for i, c in conv:
                if isinstance(args[i], str):
                    args[i] = c(args[i])
        return fn(*args[:n_pos], **{name: args[i] for i, name in kw})
    return call


class _GradOff:
    """Grad mode off: a kernel below Autograd runs its operators there, as torch's AutoDispatchBelowAutograd."""
    __slots__ = ('prev',)

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(False)

    def __exit__(self, *exc):
        _set_enabled(self.prev)


def _tensors(args):
    for a in args:
        if isinstance(a, TensorImpl):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, TensorImpl))


def _backend_kernel(op, fn, check_aliasing):
    """A Tensor-level kernel for a backend key (or CompositeExplicitAutograd)."""
    call = _caller(op.schema, fn)
    where = getattr(fn, '__module__', None)

    def kernel(ks, *args):
        with _GradOff():
            out = call(*args)
        if check_aliasing and out is not None:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            vcs = [t._vc for t in _tensors(args)]
            seen = []
            for o in outs:
                if isinstance(o, TensorImpl):
                    if any(o._vc is v for v in vcs) or any(o._vc is v for v in seen):
                        raise RuntimeError(
                            f"{op.schema.name} (with implementation in {where}): The output of this custom "
                            f"operator (1) must not also be an input to this custom operator and (2) may not alias "
                            f"any inputs to this custom operator or other returns. The most common way to trigger "
                            f"this error is if we have y = custom_op(x) and y and x are the same Tensor. Please "
                            f"instead return a clone of the offending output tensor(s) (e.g. return x.clone()) or "
                            f"refactor the custom operator to not return y.")
                    seen.append(o._vc)
        return out
    kernel.__qualname__ = getattr(fn, '__qualname__', op.schema.name)
    return kernel


def _no_fake_kernel(owner):
    """The Meta kernel before ``register_fake``: an operator that returns nothing (it only mutates) needs no fake
    function, as in torch; any other cannot be traced."""
    returns_nothing = not owner._opoverload.schema.returns

    def kernel(ks, *args):
        if returns_nothing:
            return None
        raise RuntimeError(f"There was no fake impl registered for {owner!r}. This is necessary for "
                           f"torch.compile/export/fx tracing to work. Please use "
                           f"`{getattr(owner._init_fn, '__name__', owner._name)}.register_fake` to add an fake impl.")
    return kernel


class _AutogradInfo:
    """What the generated autograd.Function of one operator calls; ``register_autograd`` fills it in."""
    __slots__ = ('backward', 'setup_context')

    def __init__(self):
        self.backward = self.setup_context = None


def _autograd_kernel(op, info):
    """The Autograd kernel: an ``autograd.Function`` whose forward runs the operator below Autograd.

    As torch's: ``setup_context(ctx, inputs, output)`` gets the positional arguments (and
    ``keyword_only_inputs``, a dict, when the schema has keyword-only ones), ``backward`` returns one gradient
    per positional argument, a list for a ``Tensor[]``, and ``ctx.needs_input_grad`` has that structure too.
    The Function's own inputs are ``(ks, list lengths, keyword-only values, *tensors flattened)``, so each
    Tensor of a list gets its own edge."""
    from .autograd.function import Function, _apply
    positional = [a for a in op.schema.arguments if not a.kwarg_only]
    kw_names = [a.name for a in op.schema.arguments if a.kwarg_only]
    is_list = [a.base_type == 'Tensor[]' for a in positional]
    n_pos = len(positional)

    def unflatten(lengths, flat):
        out, i = [], 0
        for n in lengths:
            out.append(flat[i] if n < 0 else list(flat[i:i + n]))
            i += 1 if n < 0 else n
        return out

    def forward(ks, lengths, kwvals, *flat):
        return op.redispatch(ks & _BELOW_AUTOGRAD, *unflatten(lengths, flat), *kwvals)

    def setup_context(ctx, inputs, output):
        ctx._lengths = inputs[1]
        if info.setup_context is None:
            return
        args = tuple(unflatten(inputs[1], inputs[3:]))
        if kw_names:
            info.setup_context(ctx=ctx, inputs=args, keyword_only_inputs=dict(zip(kw_names, inputs[2])),
                               output=output)
        else:
            info.setup_context(ctx=ctx, inputs=args, output=output)

    def backward(ctx, *grads):
        if info.backward is None:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula was registered. Please "
                               f"use register_autograd to add one.")
        flat_needs = ctx.needs_input_grad
        ctx.needs_input_grad = tuple(unflatten(ctx._lengths, flat_needs[3:]))
        try:
            res = info.backward(ctx, *grads)
        finally:
            ctx.needs_input_grad = flat_needs
        res = res if isinstance(res, tuple) else (res,)
        shape = [n if n >= 0 else None for n in ctx._lengths]
        got = [len(r) if isinstance(r, (list, tuple)) else None for r in res]
        if len(res) != n_pos or any(g != n for g, n in zip(got, shape)):
            raise RuntimeError(f"Expected the return from backward to be of the same structure as the inputs. Got: "
                               f"{_structure(got)} (return from backward), {_structure(shape)} (inputs): one "
                               f"gradient per positional input of {op}, a list for each Tensor[] input")
        flat = []
        for r, n in zip(res, ctx._lengths):
            if n >= 0:
                flat.extend(r)
            else:
                flat.append(r)
        return (None, None, None, *flat)

    name = f'GeneratedBackwardFor_{op.namespace}_{op.schema.name}_{op.schema.overload or "default"}'
    fn_cls = type(name, (Function,), {'forward': staticmethod(forward), 'setup_context': staticmethod(setup_context),
                                      'backward': staticmethod(backward)})

    def kernel(ks, *args):
        lengths, flat = [], []
        for a, lst in zip(args, is_list):
            if lst and a is not None:
                lengths.append(len(a))
                flat.extend(a)
            else:
                lengths.append(-1)
                flat.append(a)
        return _apply(fn_cls, (ks, tuple(lengths), args[n_pos:], *flat))
    kernel.__qualname__ = name
    return kernel


def _structure(lengths):
    """``(x, [3 items], x)``: one gradient per input, a list's length shown."""
    return '(' + ', '.join('x' if n is None else f'[{n} items]' for n in lengths) + ')'


def _device_keys(device_types):
    """Backend keys for ``device_types`` ('cpu', ['cpu', 'cuda'], a renamed PrivateUse1); None: every backend."""
    if device_types is None:
        return (_CEA,)
    from ._core import device as _device
    known = {'cpu': DispatchKey.CPU, 'cuda': DispatchKey.CUDA, 'meta': DispatchKey.Meta}
    names = (device_types,) if isinstance(device_types, str) else tuple(device_types)
    return tuple(known[n] if n in known else _device.device_interface(n).key for n in names)


# --- custom_op and CustomOpDef ------------------------------------------------------------------------

_CUSTOM_OPS = {}      # 'ns::name' -> the live CustomOpDef


class CustomOpDef:
    """What ``custom_op`` returns: call it to call the operator; ``register_*`` add its other kernels."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name, self._init_fn = namespace, name, fn
        self._qualname = f'{namespace}::{name}'
        self._lib = _library(namespace)
        self._lib.define(f'{name}{schema}')
        self._opoverload = self._lib._defs[-1]
        self._autograd = _AutogradInfo()
        self._fake_fn = None
        op = self._opoverload
        op.register(DispatchKey.Meta, _no_fake_kernel(self))
        op.register(DispatchKey.Autograd, _autograd_kernel(op, self._autograd))

    def __repr__(self):
        return f'<CustomOpDef({self._qualname})>'

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        """Use ``fn`` (Tensors in, Tensors out) for ``device_types`` (None: every device)."""
        if fn is None:
            return lambda f: self.register_kernel(device_types, f)
        for key in _device_keys(device_types):
            self._opoverload.register(key, _backend_kernel(self._opoverload, fn, True), allow_override=True)
        return fn

    def register_fake(self, fn, /):
        """``fn`` computes the outputs' metadata from meta tensors: the Meta kernel, what FakeTensorMode and
        make_fx(tracing_mode='fake') run."""
        self._fake_fn = fn
        self._opoverload.register(DispatchKey.Meta, _backend_kernel(self._opoverload, fn, False),
                                  allow_override=True)
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """``backward(ctx, *grads)`` returns one gradient per input; ``setup_context(ctx, inputs, output)``
        saves what it needs. Both run as an ``autograd.Function``'s do."""
        _check_autograd_fns(self._opoverload, backward, setup_context)
        if self._opoverload.schema.is_mutable:
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with schema "
                               f"{self._opoverload.schema}. Please create a functional operator and register an "
                               f"autograd formula for that.")
        self._autograd.backward, self._autograd.setup_context = backward, setup_context

    def _destroy(self):
        """Remove the operator (its kernels go with it)."""
        self._lib._destroy()
        if _CUSTOM_OPS.get(self._qualname) is self:
            del _CUSTOM_OPS[self._qualname]


def _check_autograd_fns(op, backward, setup_context):
    if not callable(backward) or (setup_context is not None and not callable(setup_context)):
        raise TypeError(f"register_autograd({op}): expected backward and setup_context to be callables, got "
                        f"{type(backward).__name__} and {type(setup_context).__name__}")


_NAME = re.compile(r'^(\w+)::(\w+)$')


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` an operator ``ns::name`` (a decorator when ``fn`` is omitted), its schema inferred from the
    type hints unless given; returns a ``CustomOpDef``. Defining the same name again replaces the operator, as
    torch does, so a notebook cell can be rerun."""
    if fn is None:
        return lambda f: custom_op(name, f, mutates_args=mutates_args, device_types=device_types, schema=schema,
                                   tags=tags)
    m = _NAME.match(name)
    if m is None:
        raise ValueError(f"custom_op(name): expected a name 'namespace::opname' (identifiers), got {name!r}")
    ns, opname = m.groups()
    if schema is None:
        schema = infer_schema(fn, mutates_args=mutates_args)
    else:
        if not schema.lstrip().startswith('('):
            raise ValueError(f"custom_op(..., schema=...): the schema must not name the operator (the name comes "
                             f"from custom_op's first argument): expected '(args) -> returns', got {schema!r}")
        if mutates_args != 'unknown':
            declared = {a.name for a in parse_schema(f'{opname}{schema}').arguments if a.is_write}
            if declared != set(_mutated_names(mutates_args)):
                raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                                 f"`schema={schema}. The schema suggests that the op mutates {declared}which is "
                                 f"different from what was provided to us in `mutates_args`. Please make these "
                                 f"consistent.")
    parsed = parse_schema(f'{opname}{schema}')
    if any(a.kwarg_only and a.base_type.startswith('Tensor') for a in parsed.arguments):
        raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not kwarg-only. "
                                  f"Got: {opname}{schema}")
    old = _CUSTOM_OPS.pop(f'{ns}::{opname}', None)
    if old is not None:
        old._destroy()
    op = CustomOpDef(ns, opname, schema, fn)
    op.register_kernel(device_types, fn)
    _CUSTOM_OPS[op._qualname] = op
    return op


# --- the function forms: any operator -------------------------------------------------------------------

def _resolve(op):
    """A CustomOpDef, or the OpOverload of a name, overload or packet."""
    if isinstance(op, CustomOpDef):
        return op
    from ._dispatch.ops_namespace import OpOverloadPacket
    if isinstance(op, OpOverloadPacket):
        op = f'{op._ns}::{op._name}'
    if isinstance(op, dispatcher.OpOverload):
        found = _CUSTOM_OPS.get(f'{op.namespace}::{op.schema.name}')
        return found if found is not None and found._opoverload is op else op
    if not isinstance(op, str) or '::' not in op:
        raise ValueError(f"expected an operator: a CustomOpDef, an OpOverload or a name 'ns::op', got {op!r}")
    if op in _CUSTOM_OPS:
        return _CUSTOM_OPS[op]
    ops = dispatcher.all_ops()
    if op in ops:
        return ops[op]
    group = dispatcher.overloads_of(op)
    if not group:
        raise RuntimeError(f"operator {op} does not exist")
    return group.get('') or min(group.values(), key=lambda o: len(o.schema.overload))


def _lib_for(op, lib):
    return lib if lib is not None else _library(op.namespace)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Register ``func`` as the fake (Meta) kernel of ``op``: a CustomOpDef, an OpOverload or 'ns::name'."""
    if func is None:
        return lambda f: register_fake(op, f, lib=lib, allow_override=allow_override)
    target = _resolve(op)
    if isinstance(target, CustomOpDef):
        return target.register_fake(func)
    _lib_for(target, lib)._register(target, DispatchKey.Meta, _backend_kernel(target, func, False), allow_override)
    return func


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` (Tensors in, Tensors out) for ``op`` on ``device_types`` (None: every device)."""
    if func is None:
        return lambda f: register_kernel(op, device_types, f, lib=lib)
    target = _resolve(op)
    if isinstance(target, CustomOpDef):
        return target.register_kernel(device_types, func)
    library = _lib_for(target, lib)
    for key in _device_keys(device_types):
        library._register(target, key, _backend_kernel(target, func, False), True)
    return func


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Give ``op`` a backward (see ``CustomOpDef.register_autograd``)."""
    target = _resolve(op)
    if isinstance(target, CustomOpDef):
        return target.register_autograd(backward, setup_context=setup_context)
    _check_autograd_fns(target, backward, setup_context)
    info = _AutogradInfo()
    info.backward, info.setup_context = backward, setup_context
    _lib_for(target, lib)._register(target, DispatchKey.Autograd, _autograd_kernel(target, info), True)


def define(qualname, schema, *, lib=None, tags=()):
    """``define('ns::name', '(Tensor x) -> Tensor')``: the function form of ``Library.define``."""
    ns, name = qualname.split('::', 1)
    lib = lib if lib is not None else _library(ns)
    lib.define(f'{name}{schema}', tags=tags)


# --- opcheck ------------------------------------------------------------------------------------------

class OpCheckError(Exception):
    pass


_ALL_TESTS = ('test_schema', 'test_autograd_registration', 'test_faketensor', 'test_aot_dispatch_static',
              'test_aot_dispatch_dynamic')
DEFAULT_TEST_UTILS = ('test_schema', 'test_autograd_registration', 'test_faketensor', 'test_aot_dispatch_dynamic')


def _clone_args(args):
    def one(a):
        if isinstance(a, TensorImpl):
            c = a.detach().clone()
            return c.requires_grad_(True) if a.requires_grad else c
        if isinstance(a, (list, tuple)) and not hasattr(a, '_fields'):
            return type(a)(one(e) for e in a)
        if isinstance(a, dict):
            return {k: one(v) for k, v in a.items()}
        return a
    return one(args)


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _check_schema(op, args, kwargs):
    """Arguments the schema does not mark mutable (``Tensor(a!)``) keep their values; outputs alias no input
    the schema does not alias."""
    import ember
    args, kwargs = _clone_args(args), _clone_args(kwargs)
    named = dict(zip((a.name for a in op.schema.arguments), args))
    named.update(kwargs)
    before = {n: [t.detach().clone() for t in _tensors([v])] for n, v in named.items()}
    with ember.no_grad():
        out = op(*args, **kwargs)
    writes = {a.name for a in op.schema.arguments if a.is_write}
    aliases = {a.name for a in op.schema.arguments if a.alias}
    for name, value in named.items():
        now = list(_tensors([value]))
        for old, new in zip(before[name], now):
            if new.device.type == 'meta' or name in writes:
                continue
            if not ember.equal(old, new) and not (old.isnan().any() and ember.allclose(old, new, equal_nan=True)):
                raise AssertionError(f"Argument {name} is not defined as mutable but was mutated")
        if name not in aliases:
            for o in _tensors(_outputs(out)):
                if any(o._vc is t._vc for t in now):
                    raise AssertionError(f"Argument {name} is not defined to alias output but was aliasing")


def _check_autograd_registration(op, args, kwargs):
    """With an input that requires grad, the operator has a kernel at Autograd (or a composite one)."""
    if not any(t.requires_grad for t in _tensors(list(args) + list(kwargs.values()))):
        return
    if op.has_kernel_for(DispatchKey.Autograd) or op.has_kernel_for(DispatchKey.CompositeImplicitAutograd):
        return
    out = op(*_clone_args(args), **_clone_args(kwargs))
    if any(t.requires_grad for t in _tensors(_outputs(out))):
        raise AssertionError(
            f"{op.name}: at least one output of this operator has requires_grad=True but the operator does not "
            f"have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean "
            f"that you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may "
            f"lead to silently incorrect results. If your operator consists of regular PyTorch operations, "
            f"consider not using an operator at all or registering your operator as CompositeImplicitAutograd. If "
            f"you have an autograd.Function registered to a backend (CPU/CUDA/XPU) key, the correct location for "
            f"it is the Autograd key.")


def _check_faketensor(op, args, kwargs):
    """The fake kernel's outputs have the real outputs' number, shapes and dtypes."""
    import ember
    from ._subclasses.fake_tensor import FakeTensorMode
    with ember.no_grad():
        real = _outputs(op(*_clone_args(args), **_clone_args(kwargs)))
    mode = FakeTensorMode()
    fargs, fkwargs = mode._fake(_clone_args(args)), mode._fake(_clone_args(kwargs))
    with ember.no_grad(), mode:
        fake = _outputs(op(*fargs, **fkwargs))
    context = f"When comparing the output of {op} on FakeTensor and concrete Tensors,"
    rt, ft = [isinstance(o, TensorImpl) for o in real], [isinstance(o, TensorImpl) for o in fake]
    if rt != ft:
        raise AssertionError(f"{context} mismatched number of tensor outputs")
    for i, (r, f) in enumerate((r, f) for r, f in zip(real, fake) if isinstance(r, TensorImpl)):
        which = 'tensor metadata' if len(real) == 1 else f'tensor metadata for output[{i}]'
        if tuple(r.shape) != tuple(f.shape):
            raise AssertionError(f"{context} found mismatched {which}: Shapes {r.shape} and {f.shape} are not equal!")
        if r.dtype != f.dtype:
            raise AssertionError(f"{context} found mismatched {which}: Dtypes {r.dtype} and {f.dtype} are not equal!")


def _traced_check(tracing_mode):
    def check(op, args, kwargs, atol=None, rtol=None):
        """Traced by make_fx (fake or symbolic sizes), the graph gives eager's outputs on real inputs; with an
        input that requires grad, eager backward runs (the registered autograd formula is there)."""
        import ember
        from .fx.experimental.proxy_tensor import make_fx
        kw = list(kwargs)

        def f(*flat):
            return op(*flat[:len(args)], **dict(zip(kw, flat[len(args):])))
        inputs = list(args) + [kwargs[k] for k in kw]
        tensor_pos = [i for i, a in enumerate(inputs) if isinstance(a, TensorImpl)]

        def g(*ts):
            full = list(inputs)
            for i, t in zip(tensor_pos, ts):
                full[i] = t
            return f(*full)
        with ember.no_grad():
            gm = make_fx(g, tracing_mode=tracing_mode)(*_clone_args([inputs[i] for i in tensor_pos]))
            got = gm(*_clone_args([inputs[i] for i in tensor_pos]))
            want = op(*_clone_args(args), **_clone_args(kwargs))
        ember.testing.assert_close(_outputs(got), _outputs(want), atol=atol, rtol=rtol, equal_nan=True)
        cargs, ckwargs = _clone_args(args), _clone_args(kwargs)
        leaves = [t for t in _tensors(list(cargs) + list(ckwargs.values())) if t.requires_grad]
        if leaves:
            outs = [o for o in _tensors(_outputs(op(*cargs, **ckwargs))) if o.requires_grad]
            if outs:
                ember.autograd.grad(outs, leaves, [ember.ones_like(o) for o in outs], allow_unused=True)
    return check


_CHECKS = {'test_schema': _check_schema, 'test_autograd_registration': _check_autograd_registration,
           'test_faketensor': _check_faketensor, 'test_aot_dispatch_static': _traced_check('fake'),
           'test_aot_dispatch_dynamic': _traced_check('symbolic')}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True, atol=None, rtol=None):
    """Check an operator's registrations on sample arguments, as torch.library.opcheck. ember's checks:

    - test_schema: arguments not marked mutable are not mutated; outputs alias no unaliased input.
    - test_autograd_registration: with an input that requires grad, the operator has an Autograd (or
      CompositeImplicitAutograd) kernel.
    - test_faketensor: the fake kernel gives the real outputs' count, shapes and dtypes (strides unchecked).
    - test_aot_dispatch_static/dynamic: no AOTAutograd here; make_fx traces the operator with fake (static)
      or symbolic (dynamic) sizes, the graph must reproduce eager's outputs on the real inputs, and eager
      backward must run when an input requires grad.

    Returns ``{test: 'SUCCESS' or the exception}``; the first failure raises ``OpCheckError`` unless
    ``raise_exception=False``.
    """
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not set(test_utils) <= set(_ALL_TESTS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{_ALL_TESTS} but it was not")
    target = _resolve(op)
    overload = target._opoverload if isinstance(target, CustomOpDef) else target
    kwargs = dict(kwargs or {})
    results = {}
    for name in test_utils:
        try:
            tol = {'atol': atol, 'rtol': rtol} if name.startswith('test_aot') else {}
            _CHECKS[name](overload, tuple(args), kwargs, **tol)
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)") from e
            results[name] = e
        else:
            results[name] = 'SUCCESS'
    return results
