"""Tensor subclasses that take part in dispatch: ``__torch_function__`` and ``__torch_dispatch__``.

NOTE [tensor subclasses] -- a Python subclass of Tensor can override two levels of the call path, as in torch:

* ``__torch_function__(cls, func, types, args, kwargs)`` sees the public call (``torch.add``, ``Tensor.__getitem__``,
  ``F.gelu``) before anything runs. Tensor's own implementation (``default_torch_function``) runs ``func`` with
  subclasses' handlers off and turns every Tensor it returns into an instance of ``cls`` (``as_subclass``), which is
  why ``(x + 1)`` of a ``class M(Tensor): pass`` instance is an ``M``. ``nn.Parameter`` opts out with
  ``_disabled_torch_function_impl``: operators on a Parameter return plain Tensors.
* ``__torch_dispatch__(cls, func, types, args, kwargs)`` sees the aten operators (``func`` is the OpOverload, e.g.
  ``aten.add.Tensor``) after autograd has recorded the call, so autograd works on the subclass unchanged; a
  *wrapper* subclass (``Tensor._make_wrapper_subclass``) has sizes, strides, dtype and device but no data of its own
  and unwraps to the tensors it holds inside its handler, as torch's LoggingTensor, DTensor or FakeTensor do.

Both are dispatch keys carried by the instances, so an ordinary tensor pays nothing for them: when a subclass
instance is made (``as_subclass``, ``_make_subclass``, ``_make_wrapper_subclass``, a Parameter's constructor), its
key set gets PythonTorchFunction when its class's ``__torch_function__`` is not the disabled one, and PythonSubclass
when its class defines ``__torch_dispatch__`` (``subclass_keys``). The generated entry point folds them in with the
other keys; PythonTorchFunction is the highest key, so its fallback (``torch_function_fallback``, shared with torch
function modes) runs first and rebuilds the call as the public function received it; PythonSubclass sits between
Autograd and the backends, and its fallback (``python_subclass_fallback``) calls the handler with the operator. A
hand-written public function (``public_function`` in torch_function.py) finds subclass arguments by the same bit.

What the handler receives as ``func`` is torch's: a method call gives the Tensor method (``x.softmax(1)``:
``Tensor.softmax``, where ember's generated method and ``torch.softmax`` are often one entry point, which would show
the function), a Python operator the method torch names for it (``x + 1`` and ``1 + x``: ``Tensor.add``, ``x += 1``:
``Tensor.add_``, ``2 - x``: ``Tensor.__rsub__``), a property read or write the property's bound ``__get__`` or
``__set__`` (``x.shape``: equal to ``Tensor.shape.__get__``, a new object at each access as in torch), with the
arguments as the caller gave them. The plain Tensor's attributes cannot tell a subclass from a Tensor without a check
on every call, so the subclass gets wrappers of its own when its keys are first computed (``_hand_over_methods``):
one for every public method, Python operator and property it inherits and does not define itself, which hand the call
over and, inside a handler (subclasses off), run the Tensor attribute as it is; ``super().__torch_function__`` runs
``func`` whichever it is. A handler that reads ``args[0].shape`` without turning subclasses off therefore calls itself,
as in torch (``torch._C.DisableTorchFunctionSubclass``).

A subclass that defines ``__torch_dispatch__`` and not ``__torch_function__`` gets the disabled
``__torch_function__`` when it is made (``init_subclass``, torch's ``_TensorMeta``). ``t.__class__ = Sub`` on a
tensor made already (``Tensor.__class__``'s setter) gives it Sub's PythonTorchFunction key, as torch looks the handler
up on the type at each call; not PythonSubclass, which torch sets only when a tensor is made.

A composite operator (``flatten``, ``reshape``, ``split``, ``scaled_dot_product_attention``) reaches the
PythonTorchFunction fallback before its decomposition runs (``_lookup`` in dispatcher.py), so ``__torch_function__`` sees
the call as made and its pieces run with subclasses' handlers off, as torch checks before entering the dispatcher.

Not like torch: a torch function mode sees none of this. Its handler is reached from the entry point's fallback
(``torch_function_fallback``), which knows the operator and not whether a method or the function was called, so a
mode sees ``torch.softmax`` for ``x.softmax(1)`` (the same object as ``Tensor.softmax`` where ember has one entry
point for both: ``x.relu()``, ``x.add_(1)``), the pieces of a hand-written method (``x[0]``: ``Tensor.select``) and no
property read or hand-written method (``x.shape``, ``len(x)``, ``x.size()``); telling them apart would cost every
plain Tensor's method a look at the mode stack. ember's private methods and fields (``_base`` is a field here) are
never handed over (torch hands over ``_base``, ``_grad``, ``_cdata``; ``_version`` is handed over as torch's); a
subclass's own method that calls ``super().sum()`` reaches the handler through the entry point, so it shows
``torch.sum`` where torch's shows ``Tensor.sum``; ``list(x)`` shows ``Tensor.unbind`` alone (torch's ``__iter__``
also calls ``dim`` and ``__len__``); ``del x.grad`` is not handed over (torch hands over ``__delete__``); where
one ember operator stands for two aten overloads a ``__torch_dispatch__`` handler sees ember's (``x.sum()`` is
``aten.sum.dim_IntList``, torch's ``aten.sum.default``).
"""
import functools
import types

import numpy

from .._core.dispatch_key import DispatchKey, PYTHON_BIT, PYTHON_SUBCLASS_BIT, TORCH_FUNCTION_BIT
from .._core.tensor_impl import TensorImpl, fields
from . import dispatcher
from . import torch_function as _tf


# --- which keys a class's instances carry ------------------------------------------------------------------------

def disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_function_impl``: a class whose ``__torch_function__`` is this one is not consulted
    (nn.Parameter); called anyway, it runs ``func`` as if no argument defined ``__torch_function__``."""
    with _tf.DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_dispatch_impl``: Tensor's own ``__torch_dispatch__``; it runs ``func`` below the
    subclass key (``super().__torch_dispatch__`` from a subclass that holds real data)."""
    with DisableTorchDispatch(modes=False):
        return func(*args, **(kwargs or {}))


def subclass_keys(cls):
    """The dispatch keys an instance of ``cls`` carries beyond its device's and autograd's, computed once per class
    and kept on the class itself (a table keyed by class would keep every class a program makes alive)."""
    k = cls.__dict__.get('_ember_subclass_keys')
    if k is None:
        from .._tensor import Tensor
        k = 0
        if cls is not Tensor:
            _hide_fields(cls, Tensor)
            tf = getattr(cls, '__torch_function__', None)
            if getattr(tf, '__func__', tf) is not disabled_torch_function_impl:
                k |= TORCH_FUNCTION_BIT
                _hand_over_methods(cls, Tensor)
            td = getattr(cls, '__torch_dispatch__', None)
            if getattr(td, '__func__', td) is not disabled_torch_dispatch_impl:
                k |= PYTHON_SUBCLASS_BIT
        type.__setattr__(cls, '_ember_subclass_keys', k)
    return k


def init_subclass(cls):
    """What torch's ``_TensorMeta`` does to a new subclass: one that defines ``__torch_dispatch__`` and keeps
    Tensor's ``__torch_function__`` gets the disabled one, so its operators reach the dispatch handler and come back
    as it returns them, not converted to the class."""
    td = getattr(cls, '__torch_dispatch__', None)
    tf = getattr(cls, '__torch_function__', None)
    if getattr(td, '__func__', td) is not disabled_torch_dispatch_impl and \
            getattr(tf, '__func__', tf) is default_torch_function:
        type.__setattr__(cls, '__torch_function__', disabled_torch_function_impl)


def _hide_fields(cls, tensor):
    """NOTE [tensor __dict__] for a subclass that also derives from a plain Python class (MONAI's ``MetaTensor(MetaObj,
    Tensor)``): that class's own ``__dict__`` descriptor comes before Tensor's in the MRO and would hand out the whole
    instance dict, ember's fields included, to code that copies or replaces it. Putting ``_UserDictView`` (a Tensor
    subclass that adds nothing but Tensor's ``__dict__``) first among the class's bases restores Tensor's view."""
    view = tensor.__dict__['__dict__']
    owner = next(c for c in cls.__mro__ if '__dict__' in c.__dict__)
    if owner.__dict__['__dict__'] is view:
        return
    global _UserDictView
    if _UserDictView is None:
        _UserDictView = type('_UserDictView', (tensor,), {'__slots__': (), '__dict__': view,
                                                          '__module__': __name__, '__doc__': _hide_fields.__doc__})
    try:
        cls.__bases__ = (_UserDictView,) + cls.__bases__
    except TypeError:       # a layout Python will not rebase (a base with slots of its own): left as it is
        pass


_UserDictView = None


def become(t, cls):
    """``t``'s fields (a handle nobody else holds) under an instance of ``cls``, with the keys that go with it. A new
    object rather than a ``__class__`` assignment: a subclass may declare ``__slots__``."""
    new = object.__new__(cls)
    fields(new).update(fields(t))
    new._keys = (t._keys & ~(TORCH_FUNCTION_BIT | PYTHON_SUBCLASS_BIT)) | subclass_keys(cls)
    return new


# --- Tensor's methods --------------------------------------------------------------------------------------------

def as_subclass(self, cls):
    """``Tensor.as_subclass(cls)``: an alias of ``self`` (sharing its data and, through ``AliasBackward0``, its
    history) that is an instance of ``cls``."""
    from .._tensor import Tensor
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    with _tf.DisableTorchFunctionSubclass():
        out = dispatcher.lookup_op('aten::alias').call(self)
    return become(out, cls)


def make_subclass(cls, data, require_grad=False, *, dispatch_sizes_strides_policy=None, dispatch_device=False,
                  dispatch_layout=False):
    """``Tensor._make_subclass(cls, data, require_grad)``: a new leaf of class ``cls`` that shares ``data``'s
    memory and version counter, without its history (nn.Parameter's constructor)."""
    if not isinstance(data, TensorImpl):
        raise TypeError(f"_make_subclass(): argument 'data' must be Tensor, not {type(data).__name__}")
    t = object.__new__(cls)
    t._alias(data)
    t._set_requires_grad_flag(bool(require_grad))
    return t


def make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None, dtype=None, layout=None,
                          device=None, pin_memory=False, requires_grad=False, dispatch_sizes_strides_policy=None,
                          dispatch_device=False, dispatch_layout=False, _extra_dispatch_keys=None,
                          storage_size=None):
    """``Tensor._make_wrapper_subclass(cls, size, ...)``: an instance of ``cls`` with the given geometry, dtype and
    device and no data (its storage is empty, as a meta tensor's); ``cls.__torch_dispatch__`` answers every
    operator on it."""
    from .._core import dtype as D
    from .._core.device import canonical
    from .._core.storage import MetaArray, contiguous_strides, format_strides
    from .._core.tensor_impl import make_tensor
    dt = D.get_default_dtype() if dtype is None else dtype
    dev = canonical('cpu' if device is None else device)
    shape = tuple(size)
    if strides is None:
        strides = format_strides(shape, memory_format) if memory_format in ('channels_last', 'channels_last_3d') \
            else contiguous_strides(shape)
    isz = dt.itemsize
    a = MetaArray(shape, dt._np, tuple(s * isz for s in strides), int(storage_offset or 0))
    t = become(make_tensor(a, dt, dev), cls)
    t._strides = tuple(strides)
    if requires_grad:
        t._set_requires_grad_flag(True)
    return t


def default_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: run ``func`` with subclasses' handlers off, and return every Tensor it gives
    as an instance of ``cls`` (a Tensor that already is one stays as it is)."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with _tf.DisableTorchFunctionSubclass():
        return _convert(func(*args, **(kwargs or {})), cls)


def _convert(ret, cls):
    from .._tensor import Tensor
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return as_subclass(ret, cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, '_fields') else type(ret)(items)
    return ret


# --- what a subclass's __torch_function__ sees: Tensor's methods and properties by name ---------------------------

# Tensor's attributes that torch never hands to __torch_function__: construction, the class machinery, the protocol
# itself, and __iter__ (whose pieces, t.unbind(0), are handed over instead)
_NOT_HANDED = frozenset({'__new__', '__init__', '__init_subclass__', '__class__', '__dict__', '__hash__', '__iter__',
                         '__torch_function__', '__torch_dispatch__', 'as_subclass'})

# Python operators whose handler sees another Tensor method, as torch 2.13's C++ operators name it (``x + 1`` and
# ``1 + x`` show Tensor.add, ``-x`` Tensor.neg); every other operator shows itself (``x == y`` Tensor.__eq__,
# ``2 - x`` Tensor.__rsub__, ``1 / x`` Tensor.__rdiv__)
_OPERATOR_FUNCS = {'__add__': 'add', '__radd__': 'add', '__iadd__': 'add_', '__sub__': 'sub', '__isub__': 'sub_',
                   '__mul__': 'mul', '__rmul__': 'mul', '__imul__': 'mul_', '__truediv__': 'div', '__itruediv__': 'div_',
                   '__ifloordiv__': 'floor_divide_', '__mod__': 'remainder', '__imod__': 'remainder_',
                   '__matmul__': 'matmul', '__rand__': 'bitwise_and', '__ror__': 'bitwise_or', '__rxor__': 'bitwise_xor',
                   '__ne__': 'ne', '__lt__': 'lt', '__le__': 'le', '__gt__': 'gt', '__ge__': 'ge',
                   '__neg__': 'neg', '__pos__': 'positive', '__abs__': 'abs'}
_BINARY = frozenset(f'__{p}{op}__' for op in ('add', 'sub', 'mul', 'truediv', 'floordiv', 'mod', 'pow', 'matmul', 'and',
                                              'or', 'xor', 'lshift', 'rshift') for p in ('', 'r', 'i')) | \
    frozenset(f'__{op}__' for op in ('eq', 'ne', 'lt', 'le', 'gt', 'ge'))


def _is_handed(name, attr):
    """Public names, dunders and ``_version`` (torch's own private names ember keeps elsewhere: ``_base`` is a field
    here); ember's private methods (``_host``, ``_new``) are its own business, not the user's."""
    if name in _NOT_HANDED or not isinstance(attr, (types.FunctionType, property)):
        return False
    return not name.startswith('_') or (name.startswith('__') and name.endswith('__')) or name == '_version'


def _hand_over_methods(cls, base):
    """Give ``cls`` the public methods, Python operators and properties it inherits from ``base`` (Tensor) as
    wrappers that hand the call to its ``__torch_function__`` with torch's ``func``: the method itself
    (``Tensor.softmax`` for ``x.softmax(1)``, where the entry point it shares with ``torch.softmax`` would show the
    function), the operator's method (``Tensor.add`` for ``x + 1``) or the property's ``__get__``/``__set__``
    (``Tensor.shape.__get__``). Set on the subclass, so an ordinary Tensor's attributes stay as they are."""
    d = base.__dict__
    for name, attr in list(d.items()):
        if not _is_handed(name, attr) or getattr(cls, name, None) is not attr:      # (the subclass's own: its own)
            continue
        if isinstance(attr, property):
            wrapper = _handed_over_property(attr, f'{base.__name__}.{name}')
        else:
            shown = _OPERATOR_FUNCS.get(name, name)
            wrapper = _handed_over(attr, d.get(shown, attr), f'{base.__name__}.{shown}', name in _BINARY)
        setattr(cls, name, wrapper)


def name_methods(tensor):
    """Name the Tensor methods a helper made (``_with_varargs``'s ``wrapper``, a lambda) for the attribute that holds
    them, as torch's are (``Tensor.reshape.__name__ == 'reshape'``): a ``__torch_function__`` handler reads
    ``func.__name__``. A function held under two names keeps its own."""
    held = {}
    for name, attr in tensor.__dict__.items():
        if isinstance(attr, types.FunctionType) and attr.__name__ in ('<lambda>', 'wrapper'):
            held.setdefault(attr, []).append(name)
    for fn, names in held.items():
        if len(names) == 1:
            fn.__name__, fn.__qualname__ = names[0], f'{tensor.__name__}.{names[0]}'


_HANDED_OVER = {}


def _handlers_off(t):
    """Whether ``t``'s class's ``__torch_function__`` stays silent for this call: inside a handler (subclasses
    off), for an instance that was given the class by ``__class__`` assignment (no key), and during backward, where
    the engine runs below the public API (it drops the key from the dispatcher's state, NOTE [torch function
    modes]: torch's derivative formulas never reach a handler, and the gradients they make are plain tensors)."""
    return _tf._MODES.subclasses_off or not t._keys & TORCH_FUNCTION_BIT or not dispatcher.STATE.keep & TORCH_FUNCTION_BIT


def _handed_over(fn, func, name, binary=False):
    """``fn`` (``Tensor.__getitem__``, ``Tensor.softmax``, ``Tensor.__add__``) as a method that hands its call to the
    arguments' ``__torch_function__`` with ``func`` (``fn`` itself, or the method torch names for an operator); inside
    the handler (subclasses off) it runs as it is. A binary operator given an operand it refuses (neither a Tensor,
    a number nor a ``__torch_function__`` type) runs with the handlers off and answers NotImplemented: torch's C++
    operators check their arguments before they hand a call over; a TypeError of the handlers (all refusing) is
    NotImplemented too, so Python raises its "unsupported operand type(s)". ``name``: what a refusal calls ``func``
    (``Tensor.add``)."""
    method = _HANDED_OVER.get((fn, func))
    if method is None:
        if binary:
            @functools.wraps(fn)
            def method(self, other):
                if _handlers_off(self):
                    return fn(self, other)
                if not isinstance(other, _OPERANDS) and not _tf._overloaded(other):
                    with _tf.DisableTorchFunctionSubclass():
                        return fn(self, other)
                try:
                    return _tf.dispatch_overloaded(func, (self, other), (self, other), {}, operator=True, name=name)
                except TypeError:
                    return NotImplemented
        else:
            @functools.wraps(fn)
            def method(self, *args, **kwargs):
                if _handlers_off(self):
                    return fn(self, *args, **kwargs)
                return _tf.dispatch_overloaded(func, (self,) + args + tuple(kwargs.values()), (self,) + args, kwargs,
                                               operator=True, name=name)
        _HANDED_OVER[(fn, func)] = method
    return method


_OPERANDS = (TensorImpl, int, float, complex, bool, numpy.number, numpy.bool_)


def _handed_over_property(prop, shown):
    """``prop`` (``Tensor.shape``) as a property whose reads hand ``func=prop.__get__`` to ``__torch_function__``, and
    writes ``prop.__set__``, as torch's getset descriptors do (a bound ``__get__`` is made anew at each access, in
    torch as here: it compares equal to ``Tensor.shape.__get__``, it is not the same object)."""
    wrapper = _HANDED_OVER.get(prop)
    if wrapper is None:
        get, put, fget, fset = prop.__get__, prop.__set__, prop.fget, prop.fset

        def read(self):
            if _handlers_off(self):
                return fget(self)
            return _tf.dispatch_overloaded(get, (self,), (self,), {}, operator=True, name=f'{shown}.__get__')

        def write(self, value):
            if _handlers_off(self):
                return fset(self, value)
            _tf.dispatch_overloaded(put, (self, value), (self, value), {}, operator=True, name=f'{shown}.__set__')
        wrapper = _HANDED_OVER[prop] = property(read, write if fset is not None else None, prop.fdel, prop.__doc__)
    return wrapper


class DisableTorchDispatch:
    """``with torch._C._DisableTorchDispatch():`` operators inside skip subclasses' ``__torch_dispatch__`` (and,
    as torch's, dispatch modes)."""

    def __init__(self, modes=True):
        self.bits = PYTHON_SUBCLASS_BIT | (PYTHON_BIT if modes else 0)

    def __enter__(self):
        s = dispatcher.STATE
        self.saved = s.keep
        s.keep &= ~self.bits
        return self

    def __exit__(self, *exc):
        dispatcher.STATE.keep = self.saved
        return False


# --- helpers torch.utils._python_dispatch gives wrapper subclasses -------------------------------------------------

def is_traceable_wrapper_subclass(t):
    """A Tensor subclass that says how to flatten itself (``__tensor_flatten__``/``__tensor_unflatten__``)."""
    from .._tensor import Tensor
    return isinstance(t, Tensor) and type(t) is not Tensor and hasattr(t, '__tensor_flatten__') and \
        hasattr(t, '__tensor_unflatten__')


def return_and_correct_aliasing(func, args, kwargs, out):
    """What a wrapper subclass's ``__torch_dispatch__`` returns for ``func``'s result ``out`` so that aliasing is as
    the schema says: an output that aliases a written input (in-place, ``out=``) is that input itself; an output that
    is a view of an input shares the input's version counter and names it as its base."""
    schema = func._schema
    bound = {a.name: v for a, v in zip((a for a in schema.arguments if not a.kwarg_only), args)}
    bound.update(kwargs or {})
    outs = out if isinstance(out, tuple) else (out,)
    fixed = []
    for ret, o in zip(schema.returns, outs):
        alias = ret.alias_info
        src = None if alias is None else next(
            (bound.get(a.name) for a in schema.arguments if a.alias_info is not None
             and alias.before_set & a.alias_info.before_set), None)
        if src is None:
            fixed.append(o)
        elif alias.is_write:
            fixed.append(src)
        else:
            for view in (o if isinstance(o, (list, tuple)) else (o,)):
                if isinstance(view, TensorImpl) and isinstance(src, TensorImpl) and view is not src:
                    view._vc, view._base = src._vc, src if src._base is None else src._base
            fixed.append(o)
    return tuple(fixed) if isinstance(out, tuple) else fixed[0]


# --- the fallbacks -----------------------------------------------------------------------------------------------

def _dispatch_args(values):
    """The arguments whose class defines ``__torch_dispatch__``, one per class, a subclass before its base."""
    return _tf.overloaded_args(values, lambda a: isinstance(a, TensorImpl) and a._keys & PYTHON_SUBCLASS_BIT)


_COMPOSITES = []


def _torch_composites():
    """torch's CompositeImplicitAutograd definitions of the operators ember gives fused kernels (linear, matmul): torch
    decomposes them before its Python key, so a subclass's handler never sees them whole."""
    if not _COMPOSITES:
        from .._decomp import torch_composite_decompositions
        _COMPOSITES.append(torch_composite_decompositions())
    return _COMPOSITES[0]


def python_subclass_fallback(op, ks, *args):
    from .modes import _split_kwargs
    overloaded = _dispatch_args(args)
    if not overloaded:
        return op.redispatch(ks & ~PYTHON_SUBCLASS_BIT, *args)
    func, pargs, kwargs = _split_kwargs(op, args)
    decomposition = _torch_composites().get(op)
    if decomposition is not None:       # an operator torch builds from others (linear): the subclass sees the pieces
        return decomposition(*pargs, **kwargs)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        result = type(a).__torch_dispatch__(func, types, pargs, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"Multiple dispatch failed for '{op}'; all __torch_dispatch__ handlers returned "
                    f"NotImplemented:\n\n  - tensor subclass {types[0]}\n\nFor more information, try re-running "
                    f"with TORCH_LOGS=not_implemented")


def torch_function_fallback(op, ks, *args):
    """The PythonTorchFunction key: a torch function mode sees the call first (NOTE [torch function modes]), then the
    ``__torch_function__`` of the arguments whose class defines one (NOTE [tensor subclasses])."""
    if _tf._MODES.stack:
        pargs, kwargs = _tf.public_call(op, args)
        func = op.public if op.public is not None else op
        result = _tf.call_mode(func, tuple(type(a) for a in _tf.overloaded_args(args)), pargs, kwargs)
        if result is NotImplemented:
            raise TypeError(f"no implementation found for '{_tf._public_name(func)}': the torch function mode "
                            f"returned NotImplemented")
        return result
    if _tf._MODES.subclasses_off or not _tf.overloaded_args(args):
        return op.redispatch(ks & ~TORCH_FUNCTION_BIT, *args)
    pargs, kwargs = _tf.public_call(op, args)
    func = op.public if op.public is not None else op
    return _tf.dispatch_overloaded(func, args, pargs, kwargs, operator=True)


dispatcher.register_fallback(DispatchKey.PythonSubclass, python_subclass_fallback)
dispatcher.register_fallback(DispatchKey.PythonTorchFunction, torch_function_fallback)
