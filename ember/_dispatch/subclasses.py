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
hand-written public function (``public_function`` in torch_function.py) finds subclass arguments by the same bit, and
the hand-written Tensor methods (``__getitem__``, ``__repr__``, ``to``, ``item``, ...) reach a subclass's handler
through wrappers set on the subclass itself when its keys are first computed (``_hand_over_methods``).

A subclass that defines ``__torch_dispatch__`` and not ``__torch_function__`` gets the disabled
``__torch_function__`` when it is made (``init_subclass``, torch's ``_TensorMeta``). ``t.__class__ = Sub`` on a
tensor made already (``Tensor.__class__``'s setter) gives it Sub's PythonTorchFunction key, as torch looks the handler
up on the type at each call; not PythonSubclass, which torch sets only when a tensor is made.

A composite operator (``flatten``, ``reshape``, ``split``, ``scaled_dot_product_attention``) reaches the
PythonTorchFunction fallback before its decomposition runs (``_lookup`` in dispatcher.py), so ``__torch_function__`` sees
the call as made and its pieces run with subclasses' handlers off, as torch checks before entering the dispatcher.

Not like torch: property reads (``t.shape``, ``t.grad``, ``t.mT``) are not handed to ``__torch_function__`` (a
property made of an operator, ``t.mT``, shows that operator); a Tensor method that is a declared operator hands over
the public function (``x.softmax(1)`` shows ``torch.softmax``, not ``Tensor.softmax``); and where one ember operator
stands for two aten overloads a handler sees ember's (``x.sum()`` is ``aten.sum.dim_IntList``, torch's
``aten.sum.default``).
"""
import functools

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


# the hand-written methods a subclass's __torch_function__ sees by name (the rest reach it through their operators)
_METHODS = ('__getitem__', '__setitem__', '__repr__', '__format__', '__len__', '__iter__', 'item', 'tolist', 'numpy',
            'to', 'cpu', 'cuda', 'type', 'type_as', 'new_empty', 'new_zeros', 'new_ones', 'new_full', 'new_tensor',
            'float', 'double', 'half', 'bfloat16', 'long', 'int', 'short', 'bool', 'byte', 'char', 'norm', 'var', 'std',
            'dim', 'ndimension', 'size', 'numel', 'nelement', 'element_size', 'stride', 'storage_offset', 'data_ptr',
            'is_contiguous', 'is_floating_point', 'requires_grad_', 'untyped_storage')


def _hand_over_methods(cls, base):
    """Give ``cls`` the methods of ``_METHODS`` it inherits from ``base`` (Tensor) as public functions that hand the
    call to its ``__torch_function__``: set on the subclass, so an ordinary Tensor's methods stay as they are."""
    for name in _METHODS:
        fn = base.__dict__[name]
        if getattr(cls, name) is fn:
            setattr(cls, name, _handed_over(fn))


_HANDED_OVER = {}


def _handed_over(fn):
    """``fn`` (``Tensor.__getitem__``, ...) that hands its call to the arguments' ``__torch_function__`` with ``func``
    the Tensor method itself, as torch's does; inside the handler (subclasses off) it runs as it is."""
    method = _HANDED_OVER.get(fn)
    if method is None:
        @functools.wraps(fn)
        def method(self, *args, **kwargs):
            if _tf._MODES.subclasses_off or not self._keys & TORCH_FUNCTION_BIT:   # (an instance given the class
                return fn(self, *args, **kwargs)                                   # by __class__ assignment)
            return _tf.dispatch_overloaded(fn, (self,) + args + tuple(kwargs.values()), (self,) + args, kwargs,
                                           operator=True)
        _HANDED_OVER[fn] = method
    return method


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
