"""Custom autograd functions: ``ember.autograd.Function`` (torch.autograd.Function).

A subclass gives ``forward`` and ``backward`` as static methods. ``apply`` runs
``forward`` with grad mode off, then (when an input requires grad) makes one
backward node, an instance of a class named after the function
(``CubeBackward`` for ``class Cube``), which is also the ``ctx`` that
``forward`` / ``setup_context`` and ``backward`` receive. Tensors given to
``ctx.save_for_backward`` become SavedVariables after the outputs are wired,
so a saved output does not keep its own node alive (NOTE [saved outputs] in
node.py) and in-place changes after the forward are caught by the version
check when ``ctx.saved_tensors`` is read.

>>> import ember
>>> class Cube(ember.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x * x
...     @staticmethod
...     def backward(ctx, g):
...         x, = ctx.saved_tensors
...         return 3 * x * x * g
>>> x = ember.tensor([2.], requires_grad=True)
>>> y = Cube.apply(x); y.backward(ember.ones(1)); x.grad
tensor([12.])
"""
import functools
import inspect

from .._core.dispatch_key import AUTOGRAD_BIT
from .._core.tensor_impl import TensorImpl, CreationMeta
from .grad_mode import is_grad_enabled, _set_enabled
from .node import Node, SavedVariable, gradient_edge, _FREED
from . import anomaly, saved_hooks


class FunctionCtx:
    """What ``forward``/``setup_context`` can tell backward (torch.autograd.function.FunctionCtx)."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, TensorImpl):
                raise TypeError(f"save_for_backward can only save variables, but argument {len(tensors)} is not a "
                                f"Tensor or None (got {type(t).__name__})")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs):
        raise RuntimeError("mark_shared_storage is deprecated. Tensors with shared storages are automatically "
                           "tracked.")


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call; ``_forward_cls`` is the Function subclass."""
    _forward_cls = None
    materialize_grads = True
    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()
    needs_input_grad = ()

    def __init__(self):
        Node.__init__(self)
        self._saved = None

    def name(self):
        return type(self).__name__

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(_FREED)
        sv = self._saved
        if sv is None:
            return tuple(self.to_save)      # inside forward/setup_context: not packed yet
        return tuple(s.unpack(self, 'saved_tensors') if isinstance(s, SavedVariable) else s
                     for s in sv['saved_tensors'])

    saved_variables = saved_tensors

    def apply(self, grad_outputs):
        cls = self._forward_cls
        grads = list(grad_outputs)
        grads += [None] * (len(self._out_meta) - len(grads))
        if self.materialize_grads:
            for i, g in enumerate(grads):
                if g is None and self._out_meta[i][1] is not None:     # not for non-tensor outputs
                    shape, dtype, device = self._out_meta[i]
                    from .. import zeros
                    grads[i] = zeros(shape, dtype=dtype, device=device)
        res = cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n_in = len(self._input_meta)
        if len(res) != n_in:
            if len(res) > n_in and all(r is None for r in res[n_in:]):
                res = res[:n_in]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                                   f"{n_in}, got {len(res)})")
        out = []
        edges = iter(self.next_functions)
        for i, (g, meta) in enumerate(zip(res, self._input_meta)):
            if meta is None:        # not a tensor input: no edge
                continue
            edge = next(edges)
            if g is None or edge[0] is None:        # an input that needs no gradient: dropped unchecked
                out.append(None)
                continue
            if not isinstance(g, TensorImpl):
                raise TypeError(f"function {self.name()} returned a gradient of type {type(g).__name__} at "
                                f"index {i}, expected a Tensor or None")
            shape = meta[0]
            if tuple(g.shape) != tuple(shape):
                from .kernels import sum_to
                try:
                    from .._ops.pointwise import broadcast_shapes
                    ok = broadcast_shapes(tuple(shape), tuple(g.shape)) == tuple(g.shape)
                except RuntimeError:
                    ok = False
                if not ok:
                    raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index {i} - got "
                                       f"{list(g.shape)} but expected shape compatible with {list(shape)}")
                g = sum_to(g, shape)
            if g._dtype is not meta[1]:     # torch's engine gives each input a gradient of its own dtype
                g = g.to(meta[1])
            out.append(g)
        return tuple(out)


class FunctionMeta(type):
    """Makes the backward node class (``<Name>Backward``) of every Function subclass."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + 'Backward', (BackwardCFunction,), {'_forward_cls': cls})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom differentiable operations (torch.autograd.Function). Call ``apply``."""

    def __init__(self, *args, **kwargs):
        from ember._warn import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, "
                      f"so you should invoke them on the class itself.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-"
                           "style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            sig = inspect.signature(cls.forward)
            bound = sig.bind(*((None,) if not _uses_setup_context(cls) else ()) + args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())[0 if _uses_setup_context(cls) else 1:]
        return _apply(cls, args)


def _uses_setup_context(cls):
    return cls.setup_context is not Function.setup_context


def _apply(cls, args):
    node = cls._backward_cls()
    tensor_in = [a for a in args if isinstance(a, TensorImpl)]
    record = is_grad_enabled() and any(t._keys & AUTOGRAD_BIT for t in tensor_in)
    node.needs_input_grad = tuple(isinstance(a, TensorImpl) and record and bool(a._keys & AUTOGRAD_BIT)
                                  for a in args)
    prev = is_grad_enabled()
    _set_enabled(False)
    try:
        if _uses_setup_context(cls):
            output = cls.forward(*args)
            cls.setup_context(node, args, output)
        else:
            output = cls.forward(node, *args)
    finally:
        _set_enabled(prev)
    if not record:
        return _wrap_unrecorded(node, args, output)
    return _wire(node, args, output)


def _view_as_self(t):
    """An input returned as is becomes a view of itself, made with grad mode off as the forward ran (torch's
    _view_as_self_with_no_grad), so that it can take a history of its own."""
    prev = is_grad_enabled()
    _set_enabled(False)
    try:
        return t.view_as(t)
    finally:
        _set_enabled(prev)


def _mark_views(outs, dirty, creation_meta):
    """The views among the outputs (but inputs modified in place) are IN_CUSTOM_FUNCTION, or MULTI_OUTPUT_NODE when
    several outputs are differentiable (NOTE [view creation meta] in views.py)."""
    for o in outs:
        if isinstance(o, TensorImpl) and o._base is not None and id(o) not in dirty:
            o._creation_meta, o._view_version = creation_meta, o._vc[0]


def _wrap_unrecorded(node, args, output):
    is_tuple = isinstance(output, tuple)
    dirty = {id(t) for t in node.dirty_tensors}
    inputs = {id(a) for a in args if isinstance(a, TensorImpl) and id(a) not in dirty}
    outs = [_view_as_self(o) if id(o) in inputs else o for o in (output if is_tuple else (output,))]
    _mark_views(outs, dirty, CreationMeta.IN_CUSTOM_FUNCTION)
    return tuple(outs) if is_tuple else outs[0]


def _wire(node, args, output):
    """Record the node: edges to the inputs, the outputs' history, then the saved tensors."""
    is_tuple = isinstance(output, tuple)
    outs = list(output) if is_tuple else [output]
    edges, in_meta = [], []
    for a in args:
        if isinstance(a, TensorImpl):
            edges.append(gradient_edge(a) if a._keys & AUTOGRAD_BIT else (None, 0))
            in_meta.append((tuple(a._a.shape), a._dtype))
        else:
            in_meta.append(None)
    node.next_functions = tuple(edges)
    node._input_meta = in_meta
    dirty = {id(t) for t in node.dirty_tensors}
    non_diff = {id(t) for t in node.non_differentiable}
    inputs = {id(a) for a in args if isinstance(a, TensorImpl)}
    node._out_meta = []
    n_diff = 0
    for i, o in enumerate(outs):
        if not isinstance(o, TensorImpl):
            node._out_meta.append(((), None, None))
            continue
        node._out_meta.append((tuple(o._a.shape), o._dtype, o._device))
        if id(o) in dirty:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            o._vc[0] += 1        # as torch does for tensors marked dirty
        elif id(o) in inputs:       # an input returned as is: a new tensor sharing its data
            o = outs[i] = o.detach() if id(o) in non_diff and o.requires_grad else _view_as_self(o)
        if id(outs[i]) in non_diff or id(o) in non_diff or not (o._dtype.is_floating_point or o._dtype.is_complex):
            continue
        n_diff += 1
        if id(o) in dirty:      # its views (made earlier) are stale, or get history (NOTE [view history])
            from .kernels import rebase_history
            rebase_history(o, _Edge(node, i))
            continue
        o._grad_fn = node
        o._output_nr = i
        o._keys |= AUTOGRAD_BIT
    _mark_views(outs, dirty, CreationMeta.MULTI_OUTPUT_NODE if n_diff > 1 else CreationMeta.IN_CUSTOM_FUNCTION)
    out_ids = {id(o): i for i, o in enumerate(outs)}
    hooks = saved_hooks.current()
    saved = []
    for t in node.to_save:
        if t is None:
            saved.append(None)
        elif id(t) in out_ids:
            saved.append(SavedVariable(outs[out_ids[id(t)]], True, hooks))
        else:
            saved.append(SavedVariable(t, False, hooks))
    node._saved = {'saved_tensors': tuple(saved)}
    node.to_save = ()
    if anomaly._enabled:
        anomaly.record(node)
    return tuple(outs) if is_tuple else outs[0]


class _Edge:
    """What rebase_history needs of the in-place result: its node and output number."""

    def __init__(self, node, nr):
        self._grad_fn, self._output_nr = node, nr


def once_differentiable(fn):
    """Decorate a Function's backward that is not itself differentiable: it runs without recording,
    and differentiating its result again raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = is_grad_enabled()
        _set_enabled(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            _set_enabled(prev)
        if not prev:
            return outputs
        requires = any(isinstance(a, TensorImpl) and a._keys & AUTOGRAD_BIT for a in args)
        if not requires:
            return outputs
        tup = isinstance(outputs, tuple)
        outs = outputs if tup else (outputs,)
        err = _OnceDifferentiableNode()
        err.next_functions = tuple(gradient_edge(a) for a in args
                                   if isinstance(a, TensorImpl) and a._keys & AUTOGRAD_BIT)
        res = []
        for o in outs:
            if isinstance(o, TensorImpl) and (o._dtype.is_floating_point or o._dtype.is_complex):
                o = o.detach()
                o._grad_fn, o._output_nr = err, 0
                o._keys |= AUTOGRAD_BIT
            res.append(o)
        return tuple(res) if tup else res[0]
    return wrapper


class _OnceDifferentiableNode(Node):
    def name(self):
        return 'torch::autograd::Error'

    def apply(self, grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
