"""Generate the public API from the operator table.

For every declaration: the ``ember.<name>`` function (with ``out=`` when the
op has an out variant, ``*size`` varargs for shape arguments and
``requires_grad=`` for factories), the ``Tensor.<name>`` method, the in-place
method ``Tensor.<name>_`` and, where declared, ``ember.nn.functional.<name>``.
Nothing here is written per operator.
"""
import types

from numpy import generic as _np_generic

from .registry import DECLS
from .._core import determinism as _determinism
from .._core.dtype import iinfo as _iinfo
from .overloads import returns_written_list, returning_written_list

NN_FUNCTIONAL = {}   # operators declared nn=True; ember.nn.functional takes them on import

_VARARG_NAMES = ('size', 'shape', 'dims', 'sizes', 'repeats')


def _vararg_position(op):
    """Index of an int[] argument that may also be given as ``*ints`` (``x.view(2, 3)``)."""
    args = op.schema.arguments
    for i, a in enumerate(args):
        if a.kwarg_only:
            return None
        if a.base_type in ('int[]', 'SymInt[]') and a.name in _VARARG_NAMES:
            if all(b.kwarg_only or b.has_default for b in args[i + 1:]):
                return i
            return None
        if a.base_type not in ('Tensor',):
            return None
    return None


_NOT_SIZES = (str, float, type(None), complex)


def _method_vararg_position(op):
    """1 for a method whose one positional argument after ``self`` is an int list of another name
    (``x.squeeze(0, 1)``, ``x.count_nonzero(0, 1)``): torch's argument parser takes such a list as ``*ints``
    whatever its name; None otherwise."""
    positional = [a for a in op.schema.arguments if not a.kwarg_only]
    if len(positional) == 2 and positional[0].base_type == 'Tensor' and \
            positional[1].base_type in ('int[]', 'SymInt[]'):
        return 1
    return None


def _with_method_varargs(fn, pos):
    def wrapper(*args, **kwargs):
        if len(args) > pos + 1:         # two or more ints: the list (one int or one list passes as it is)
            args = args[:pos] + (args[pos:],)
        return fn(*args, **kwargs)
    return wrapper


def _with_varargs(fn, pos):
    def wrapper(*args, **kwargs):
        n = len(args)
        if n > pos + 1 or (n == pos + 1 and (args[pos].__class__ is int or not isinstance(args[pos], (tuple, list))
                                             and (isinstance(args[pos], _np_generic) or not hasattr(args[pos], 'shape'))
                                             and args[pos].__class__ not in _NOT_SIZES)):
            # one int (a NumPy integer too, whose .shape is ()): the sizes are the varargs; one str, float or None
            # is passed on as it is, so that the parser's error names it (``zeros(): ... not float``)
            args = args[:pos] + (tuple(args[pos:]),)
        return fn(*args, **kwargs)
    return wrapper


def _with_out(fn, out_fn, n_out):
    if n_out == 1:
        def wrapper(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return out_fn(*args, out=out, **kwargs)
    else:
        names = [a.name for a in out_fn._op.schema.arguments[-n_out:]]

        def wrapper(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            kwargs.update(zip(names, out))
            return out_fn(*args, **kwargs)
    return wrapper


def _with_factory_out(fn):
    """``out=`` for a factory (torch.rand(2, 2, out=t)): the values are made in ``out``'s dtype and device (so a
    seeded draw is torch's), then ``out`` is resized and filled; an explicit other dtype is torch's error."""
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        dt = kwargs.get('dtype')
        if dt is not None and dt != out.dtype:
            from .._core.dtype import scalar_name
            raise RuntimeError(f"dtype {scalar_name(dt)} does not match dtype of out parameter "
                               f"({scalar_name(out.dtype)})")
        kwargs['dtype'] = out.dtype
        kwargs.setdefault('device', out.device)
        r = fn(*args, **kwargs)
        if tuple(out.shape) != tuple(r.shape):
            out.resize_(r.shape)        # silently: torch's factories do not warn about resizing out
        return out.copy_(r)
    return wrapper


def _with_memory_format(fn):
    """``torch.empty(..., memory_format=torch.channels_last)``: the same allocation with the channels innermost
    (empty_strided with those strides)."""
    def wrapper(*args, memory_format=None, **kwargs):
        if memory_format in (None, 'contiguous_format', 'preserve_format'):
            return fn(*args, **kwargs)
        from .._core.storage import format_strides
        size = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        if 'size' in kwargs:
            size = tuple(kwargs.pop('size'))
        return DECLS['empty_strided'].op.call(size, format_strides(size, memory_format), **kwargs)
    return wrapper


from .._core.coo import strided as _strided  # noqa: E402

_LIKE_FACTORIES = ('empty_like', 'zeros_like', 'ones_like', 'full_like', 'rand_like', 'randn_like', 'randint_like')


def _filled_when_deterministic(fn):
    """``empty``'s memory filled as torch's is under deterministic algorithms (NOTE in _core/determinism.py)."""
    def wrapper(*args, **kwargs):
        t = fn(*args, **kwargs)
        if _determinism.fills_uninitialized_memory() and not t.is_meta:
            dt = t.dtype
            value = (True if dt.name == 'bool' else float('nan') if dt.is_floating_point or dt.is_complex
                     else _iinfo(dt).max)
            t.fill_(value)          # before requires_grad= is applied (the wrappers outside this one)
        return t
    return wrapper


def _with_arange_end(fn):
    """torch.arange's signatures are ``arange(end)`` and ``arange(start, end, step=1)``, where ember's operator has
    one, ``arange(start, end=None, step=1)``: ``arange(end=5)`` alone names the end."""
    def wrapper(*args, **kwargs):
        if not args and 'start' not in kwargs and 'end' in kwargs:
            args = (kwargs.pop('end'),)
        return fn(*args, **kwargs)
    return wrapper


def _with_requires_grad(fn, name):
    """The keywords torch's factories take beside the schema's: ``requires_grad``, ``layout`` (strided; a sparse
    COO ``zeros``/``empty`` is the empty sparse tensor of that size, as torch's) and ``pin_memory``."""
    def wrapper(*args, requires_grad=False, layout=None, pin_memory=False, **kwargs):
        if layout is not None and layout is not _strided:
            t = _sparse_factory(name, layout, args, kwargs)
        else:
            if pin_memory and not _accelerator():
                raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
                                   "allocator is available on this system.")
            t = fn(*args, **kwargs)
            if pin_memory:
                t = t.pin_memory()
        if requires_grad:
            t.requires_grad_(True)
        return t
    return wrapper


def _accelerator():
    from .. import accelerator
    return accelerator.is_available()


def _sparse_factory(name, layout, args, kwargs):
    from .._core.coo import sparse_coo
    from .. import sparse_coo_tensor, empty, int64
    if layout is not sparse_coo:
        raise NotImplementedError(f"{name}(): ember has no {layout} tensors (strided and sparse_coo only)")
    base = name[:-len('_like')] if name.endswith('_like') else name
    if base not in ('zeros', 'empty'):
        raise RuntimeError(f"{base}(...) is not implemented for sparse layout")
    if base != name:        # zeros_like(x, layout=...): x's size, dtype and device unless given
        x = args[0]
        size, dtype, dev = tuple(x.shape), kwargs.get('dtype') or x.dtype, kwargs.get('device') or x.device
    else:
        size = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        size = tuple(kwargs.get('size', size))
        dtype, dev = kwargs.get('dtype'), kwargs.get('device')
    return sparse_coo_tensor(empty((len(size), 0), dtype=int64, device=dev), empty((0,), dtype=dtype, device=dev), size)


def _finish(fn, decl, name):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = decl.doc or f"{decl.op.schema}\n\nSee torch.{name}."
    fn._op = decl.op
    fn.__signature__ = _public_signature(decl)
    return fn


from .._dispatch.dispatcher import _MISSING
from .._dispatch.torch_function import builtin_function_or_method


def _public_signature(decl):
    """The schema's arguments, then the keywords a wrapper adds (``out``, ``requires_grad``), so that
    ``inspect.signature(ember.add)`` reads like torch's documentation."""
    import inspect
    sig = inspect.signature(decl.op.call)
    # NOTE [numpy keyword aliases]: the entry's **_np catch-all and its stand-in default for a required dim
    # are how it accepts axis=/keepdims=, not part of the signature torch documents
    params = [p.replace(default=inspect.Parameter.empty) if p.default is _MISSING else p
              for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    extra = []
    if decl.out_op is not None or (decl.kind == 'factory' and any(a.base_type == 'ScalarType'
                                                                   for a in decl.op.schema.arguments)):
        extra.append('out')
    if decl.kind == 'factory' and 'requires_grad' not in sig.parameters:
        extra.append('requires_grad')
    if decl.name == 'empty' and 'memory_format' not in sig.parameters:
        extra.append('memory_format')
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=False if n == 'requires_grad' else None)
               for n in extra if n not in sig.parameters]
    return sig.replace(parameters=params)


def _with_structseq(fn, rt):
    def wrapper(*args, **kwargs):
        r = fn(*args, **kwargs)
        # the operator returns a plain tuple; what a __torch_function__ handler returned comes back as it is
        return rt(*r) if type(r) is tuple else r
    return wrapper


def _named_returns(decl, name):
    """torch.return_types.<name> for a public operator whose schema names its several returns (torch.svd's
    ``(Tensor U, Tensor S, Tensor V)``); None for the others and for ember's internal entry points."""
    from .overloads import _return_names
    from ..return_types import _structseq
    names = _return_names(decl.op.schema)
    if not names or len(names) < 2 or name.startswith('_') or name.endswith('_forward'):
        return None
    return _structseq(name, names)


def build(Tensor, functions, nn_functional, results=None):
    """Install every declared operator into ``functions`` (a dict), ``Tensor`` and ``nn_functional``."""
    for name, decl in DECLS.items():
        op = decl.op
        pos = _vararg_position(op)
        fn = op.call
        if decl.out_op is not None:
            fn = _with_out(fn, decl.out_op.call, len(op.schema.returns))
        if pos is not None:
            fn = _with_varargs(fn, pos)
        rt = _named_returns(decl, name)
        if rt is not None:
            fn = _with_structseq(fn, rt)
        if name in ('empty', 'empty_like', 'empty_strided'):
            fn = _filled_when_deterministic(fn)
        if decl.kind == 'factory':
            if name == 'empty':
                fn = _with_memory_format(fn)
            if name == 'arange':
                fn = _with_arange_end(fn)
            fn = _with_requires_grad(fn, name)
            if decl.out_op is None and any(a.base_type == 'ScalarType' for a in op.schema.arguments):
                fn = _with_factory_out(fn)
        elif name in _LIKE_FACTORIES:
            fn = _with_requires_grad(fn, name)
        if returns_written_list(op):
            fn = returning_written_list(fn)
        if fn is not op.call:   # the bare generated entry point needs no wrapper on the hot path
            fn = _finish(fn, decl, name)
        elif fn.__doc__ is None:
            fn.__doc__ = decl.doc or f"{op.schema}\n\nSee torch.{name}."
        if decl.function or decl.nn:        # pickled by reference where users find it, as torch's builtins are
            fn.__module__ = 'ember' if decl.function else 'ember.nn.functional'
            fn.__qualname__ = name
            if not decl.method:
                fn = builtin_function_or_method(fn)
        if decl.function:
            functions[name] = fn
        if decl.nn:
            nn_functional[name] = fn
        if decl.function or decl.nn:    # what __torch_function__ receives as func (NOTE [__torch_function__])
            op.public = fn
            if decl.out_op is not None:
                decl.out_op.public = fn
        mpos = _method_vararg_position(op) if pos is None and decl.method and decl.kind != 'factory' else None
        if decl.method and decl.kind != 'factory':
            meth = op.call if pos is None else _with_varargs(op.call, pos)
            if mpos is not None:
                meth = _with_method_varargs(meth, mpos)
            if rt is not None:
                meth = _with_structseq(meth, rt)
            if not hasattr(Tensor, name) or getattr(getattr(Tensor, name), '_generated', True):
                setattr(Tensor, name, meth)
        if decl.inplace_op is not None:
            ip = decl.inplace_op.call
            if decl.method:
                setattr(Tensor, name + '_', ip if pos is None and mpos is None else
                        _with_varargs(ip, pos) if mpos is None else _with_method_varargs(ip, mpos))
            if decl.function:
                functions[name + '_'] = ip
                ip.__module__, ip.__qualname__ = 'ember', name + '_'
                decl.inplace_op.public = ip
    from .overloads import install          # overload groups (overloads.py) take their public names last
    install(Tensor, functions)
    _as_builtins(functions)


def _as_builtins(functions):
    """torch's public functions are builtins (``torch.add``, ``torch.tanh``): kept as a class attribute
    (``act = torch.tanh`` in a class body) they bind no ``self``. The functions that are also Tensor methods
    (where ember's method is the same Python function) get a ``builtin_function_or_method`` of their own in the
    namespace; the Tensor method stays the function, and ``__torch_function__`` handlers receive the namespace's
    object (op.public), as before."""
    from .._dispatch.dispatcher import all_ops
    made = {}
    for name, fn in functions.items():
        if name.startswith('_') or type(fn) is not types.FunctionType:
            continue
        w = made.get(id(fn))
        if w is None:
            w = made[id(fn)] = (fn, builtin_function_or_method(fn))
            chosen = getattr(fn, '_public', None)     # an overload group's chooser reports itself
            if chosen is not None and chosen[0] is fn:
                chosen[0] = w[1]
        functions[name] = w[1]
    for op in all_ops().values():
        w = made.get(id(op.public))
        if w is not None and w[0] is op.public and not op.public.__name__.endswith('_'):
            op.public = w[1]        # (an in-place operator's handlers receive the Tensor method, as torch's)


_BINARY = {'add': 'add', 'sub': 'sub', 'mul': 'mul', 'truediv': 'div', 'floordiv': 'floor_divide',
           'mod': 'remainder', 'pow': 'pow', 'matmul': 'matmul', 'and': 'bitwise_and', 'or': 'bitwise_or',
           'xor': 'bitwise_xor', 'lshift': 'bitwise_left_shift', 'rshift': 'bitwise_right_shift'}
_COMPARE = {'eq': 'eq', 'ne': 'ne', 'lt': 'lt', 'le': 'le', 'gt': 'gt', 'ge': 'ge'}
_UNARY = {'neg': 'neg', 'abs': 'abs', 'invert': 'bitwise_not', 'pos': 'positive'}


# reflected operators (2 * t) as torch defines them, so the recorded graph is torch's: the commutative ones are
# the operator with the tensor first (MulBackward0's first edge is t's), a number over a tensor is
# t.reciprocal() * number (torch's __rdiv__, also its rounding), the rest the operator with the operands swapped
_COMMUTATIVE = ('add', 'mul', 'and', 'or', 'xor')


def _rtruediv(self, other):
    r = DECLS['reciprocal'].op.call(self)
    return DECLS['mul'].op.operator_call(r, other)


def install_operators(Tensor):
    """Python operators (``a + b``, ``a += b``, ``-a``, ``a @ b``) bound straight to the operators' entry points;
    the binary ones return NotImplemented for an operand they cannot take (NOTE [operators return NotImplemented]
    in _dispatch/dispatcher.py)."""
    for dunder, name in _BINARY.items():
        d = DECLS.get(name)
        if d is None:
            continue
        fn = d.op.operator_call
        setattr(Tensor, f'__{dunder}__', fn)
        if dunder in _COMMUTATIVE:
            setattr(Tensor, f'__r{dunder}__', fn)
        elif dunder == 'truediv':
            setattr(Tensor, '__rtruediv__', _rtruediv)
            setattr(Tensor, '__rdiv__', _rtruediv)    # torch's other name for it, which __torch_function__ sees
        else:
            setattr(Tensor, f'__r{dunder}__', (lambda f: lambda self, other: f(other, self))(fn))
        if d.inplace_op is not None:
            setattr(Tensor, f'__i{dunder}__', d.inplace_op.operator_call)
    for dunder, name in _COMPARE.items():
        if name in DECLS:
            setattr(Tensor, f'__{dunder}__', DECLS[name].op.operator_call)
    for dunder, name in _UNARY.items():
        if name in DECLS:
            setattr(Tensor, f'__{dunder}__', DECLS[name].op.call)
