"""In-place operations on views: rebasing the base's history (torch's CopySlices).

When ``v = base[...]`` is overwritten in place with a value ``tmp`` that has
history (``v.mul_(2)``, ``v.copy_(y)``, ``base[0] = y``), the base's new value
is "the old base, with the view's region replaced by tmp". So the base gets a
``CopySlices`` node with two edges:

  * the base's previous history, which receives the incoming gradient with the
    view's region zeroed (those elements were overwritten), and
  * tmp's node, which receives the gradient of the view's region; tmp's own
    history leads back (through the view's old node) to the old base where the
    op read it, and the engine sums both contributions there.

The view's own ``grad_fn`` is then regenerated from the base (an
``AsStridedBackward0`` that embeds the view's gradient into the base's shape),
as torch does. The region is a fixed int64 tensor of flat indices into the base
(computed once from the two geometries, with operators), and the three
gradient maps (extract the region, embed it, zero it) are operators
(index_select, index_copy, index_fill), so they run on any backend, Python
modes see them, and ``create_graph=True`` differentiates through them again.

``copy_`` has its own Autograd kernel (``CopyBackwards``): the gradient goes to
``src`` (summed to its shape, cast to its dtype and device) and the
overwritten tensor's old value gets zeros.
"""
import re
from math import prod

from .._core.dtype import int64 as _int64
from .._core.dispatch_key import AUTOGRAD_BIT, DispatchKey, below
from .._core.tensor_impl import TensorImpl, CreationMeta
from .._dispatch.ops_namespace import aten
from .node import Node, gradient_edge
from .engine import task_active

_BELOW = below(DispatchKey.Autograd)


def check_inplace(self):
    """torch's errors for writing in place, with grad mode on and some input requiring grad, into a view that is
    not DEFAULT (NOTE [view creation meta]), a leaf that requires grad, or a view of one."""
    if self._creation_meta:
        raise rebase_error(self, indirect=False)
    if self._grad_fn is None and self._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    b = self._base
    if b is not None and b._grad_fn is None and b._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


# NOTE [view creation meta]: a view records how it was made (torch's CreationMeta, ``_creation_meta``):
#   NO_GRAD_MODE / INFERENCE_MODE  made with grad mode off (adapters.view_kernel): it has no history, yet
#                                  requires grad when its base does (so do the results of ops on it, which get a
#                                  node with no edge to it: no gradient reaches the base through it);
#   MULTI_OUTPUT_NODE              a piece of split/chunk/unbind (multi_view), or one of several outputs of a
#                                  custom Function that are views;
#   IN_CUSTOM_FUNCTION             the one view returned by a custom Function (or an input returned as is).
# A view of such a view keeps its kind (an inference-mode one always; the others give way to the new view's
# own kind when that is not DEFAULT: torch's propagate_creation_meta). For any of them the "rebase" of NOTE
# [view history] would be wrong (a no_grad view has no history to rebase; a custom Function's backward would be
# bypassed; the pieces of one node cannot be rebased one at a time), so torch forbids it: writing into the view
# in place with grad mode on raises (check_inplace), and once the view's storage was written by anything (its
# version counter moved on since ``_view_version``, recorded when it was made), reading its history
# (grad_fn, is_leaf, using it in a recorded op) raises too, as torch's VariableHooks::grad_fn does.

_REBASE_SUFFIX = {
    CreationMeta.MULTI_OUTPUT_NODE: " This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one.",
    CreationMeta.NO_GRAD_MODE: " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
    "clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't "
    "want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
    CreationMeta.INFERENCE_MODE: " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
    "clarify your code by moving both the view and the inplace either both inside the inference_mode block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
    CreationMeta.IN_CUSTOM_FUNCTION: " This view was created inside a custom Function (or because an input was "
    "returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated "
    "with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
    "cloning the output of the custom Function.",
}


def rebase_error(view, indirect):
    """torch's error (handle_view_on_rebase) for a view that is not DEFAULT being written in place, or whose base
    or another view of it was (``indirect``)."""
    cm, fn = view._creation_meta, view._grad_fn
    what = "its base or another view of its base has been" if indirect else "is being"
    out = fn is not None and f"Output {view._output_nr} of {re.sub(r'Backward[0-9]*$', '', fn.name())}"
    if cm is CreationMeta.NO_GRAD_MODE or cm is CreationMeta.INFERENCE_MODE or not out:
        prefix = f"{out} is a view of a view which was created in" if out else "A view was created in"
        msg = (f"{prefix} inference mode and {what} modified inplace in normal mode." if cm is
               CreationMeta.INFERENCE_MODE else
               f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled.")
    else:
        msg = f"{out} is a view and {what} modified inplace."
    return RuntimeError(msg + _REBASE_SUFFIX[cm])


def check_view_version(view):
    """Raise if ``view`` (not DEFAULT) was written since it was made, once its history is read."""
    if view._view_version != view._vc[0] and (view._grad_fn is not None or view._base._keys & AUTOGRAD_BIT):
        raise rebase_error(view, indirect=True)


def _units(t, split):
    """The geometry of ``t`` (shape, strides, offset) counted in elements of its storage; when ``split`` (a real
    view of a complex tensor or the reverse, NOTE [complex views]) a complex tensor is counted in real units:
    its (real, imaginary) pairs are a last dimension of size 2."""
    shape, st, off = tuple(t.shape), t.stride(), t.storage_offset()
    if split and t._dtype.is_complex:
        return shape + (2,), tuple(s * 2 for s in st) + (1,), off * 2
    return shape, st, off


class _Region:
    """Where a view's elements lie in its base: ``idx``, an int64 tensor of flat (C-order) indices into the
    base's elements, one per element of the view (flattened in the view's C order). Between a complex base and a
    real view (``.real``, ``.imag``, ``view_as_real``) or a real base and a complex view (``view_as_complex``) both
    are counted in real units, and a complex gradient is read as its ``view_as_real`` pairs. The three gradient
    maps are operators (each differentiable, so create_graph=True records them): extract the region (the base's
    shape -> the view's), embed it (the view's -> zeros of the base's shape), and write it into the base's."""

    def __init__(self, base, view, lazy=False):
        split = base._dtype.is_complex != view._dtype.is_complex
        self._bc, self._vc = split and base._dtype.is_complex, split and view._dtype.is_complex
        self.base_shape, self.view_shape = tuple(base.shape), tuple(view.shape)
        self._geometry = (base.device, _units(base, split), _units(view, split))
        self._idx = None if lazy else _region_index(*self._geometry)

    @property
    def idx(self):
        """The indices, made at the first use when the region was made ``lazy`` (a view given history because its
        base gained some: most are never used, NOTE [view history])."""
        idx = self._idx
        if idx is None:
            idx = self._idx = _region_index(*self._geometry)
        return idx

    @staticmethod
    def _flat(t, pairs):
        return (aten.view_as_real.default(t) if pairs else t).reshape(-1)

    @staticmethod
    def _shaped(flat, shape, pairs):
        return aten.view_as_complex.default(flat.reshape(shape + (2,))) if pairs else flat.reshape(shape)

    def extract(self, g):
        return self._shaped(self._flat(g, self._bc).index_select(0, self.idx), self.view_shape, self._vc)

    def embed(self, r):
        flat = self._flat(r, self._vc)
        n = prod(self.base_shape) * (2 if self._bc else 1)
        z = aten.zeros.default((n,), dtype=flat.dtype, device=flat.device).index_copy(0, self.idx, flat)
        return self._shaped(z, self.base_shape, self._bc)

    def zero(self, g):
        return self._shaped(self._flat(g, self._bc).index_fill(0, self.idx, 0), self.base_shape, self._bc)

    def replace(self, g, r):
        flat = self._flat(g, self._bc).index_copy(0, self.idx, self._flat(r, self._vc))
        return self._shaped(flat, self.base_shape, self._bc)


def _region_index(dev, base_geometry, view_geometry):
    """The flat indices of a view's elements in its base's, computed with operators from the two geometries:
    number the base's elements in a buffer laid out like the storage, then read that buffer as the view."""
    (bshape, bst, boff), (vshape, vst, voff) = base_geometry, view_geometry
    ext = lambda off, shape, st: off + sum((n - 1) * s for n, s in zip(shape, st)) + 1 if all(shape) else off
    n = max(ext(boff, bshape, bst), ext(voff, vshape, vst), 1)
    numbered = aten.full.default((n,), -1, dtype=_int64, device=dev).index_copy(
        0, aten._strided_index.default(bshape, bst, boff, device=dev),
        aten.arange.default(prod(bshape), dtype=_int64, device=dev))
    idx = numbered.index_select(0, aten._strided_index.default(vshape, vst, voff, device=dev))
    if dev.type != 'meta' and idx.numel() and bool((idx < 0).any()):
        raise RuntimeError("in-place operation on a view that is not inside its base's elements")
    return idx


class CopySlices(Node):
    """The history of a base after an in-place write into one of its views (see the module docstring). As
    torch's, it holds the in-place operator's node ``fn`` and takes ``fn``'s edges as its own, except the first
    (the view's old value), which is the base's: its gradient is the incoming one with the view's region replaced
    by what ``fn`` gives the view's old value (zeros for ``copy_``)."""

    def name(self):
        return 'torch::autograd::CopySlices'

    def __init__(self, region, fn):
        super().__init__()
        self._region, self._fn = region, fn
        self._fresh_outputs = fn._fresh_outputs     # NOTE [gradient ownership]: fn's outputs are handed on

    # fn's saved tensors are this node's: the engine releases them after it ran, and refuses a second run
    _saved = property(lambda self: self._fn._saved)
    _released = property(lambda self: self._fn._released)

    def _release(self):
        self._fn._release()

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return (None,) * len(self.next_functions)
        fn = self._fn
        old = fn.next_functions[0][0]       # the view's old value: not on the engine's walk (this node's edge 0 is
        active = task_active()              # the base's), so with inputs it is let through (NOTE [grad inputs])
        if active is None or old is None or old in active:
            r = fn.apply((self._region.extract(g),))
        else:
            active.add(old)
            try:
                r = fn.apply((self._region.extract(g),))
            finally:
                active.discard(old)
        if self.next_functions[0][0] is None:
            base = None
        elif r[0] is None:
            base = self._region.zero(g)
        else:
            base = self._region.replace(g, r[0])
        return (base,) + tuple(r[1:])


class AsStridedBackward0(Node):
    """A view's history regenerated from its rebased base: the view's gradient embedded in the base's shape."""
    _fresh_outputs = True     # NOTE [gradient ownership]

    def __init__(self, region):
        super().__init__()
        self._region = region

    def name(self):
        # torch replays view_as_complex for a complex view of a real base (as_strided cannot change the dtype)
        return 'ViewAsComplexBackward0' if self._region._vc else 'AsStridedBackward0'

    def apply(self, grads):
        g = grads[0]
        return (None if g is None else self._region.embed(g),)


# NOTE [view history]: every rebase bumps the base's ``_hist`` counter: an in-place write with history
# through a view (copy_slices) or into the base itself (kernels.rebase_history); a view records the counter
# of its base when its grad_fn is made (kernels.autograd_kernel). A view whose counter is behind its base's
# was made before that write, so its grad_fn no longer describes its value: gradient_edge regenerates it
# from the base's current history before it is used (torch's AsStridedBackward0). A view that is not DEFAULT
# (NOTE [view creation meta]) is never regenerated: using one once its storage was written raises, as in torch.
# A view made while its base had no history has no grad_fn and no Autograd key, so the dispatcher would never
# ask about it again; torch asks at every use (VariableHooks::grad_fn compares versions). So a base without
# history keeps weak references to its views (``_views``, kept in make_view) and the write that gives it history
# gives them theirs (adopt_views): a DEFAULT view an AsStridedBackward0 into the base's new history (its region's
# indices made at its first use), any other view the Autograd key alone, so that using it raises torch's error.

def copy_slices(view, tmp):
    """Rebase ``view._base`` after ``view`` was overwritten with ``tmp`` (which has a grad_fn)."""
    base = view._base
    region = _Region(base, view)
    fn = tmp._grad_fn
    if tmp._output_nr:          # (an in-place operator's node has one output)
        raise RuntimeError(f"ember: an in-place write through a view recorded output {tmp._output_nr} of "
                           f"{fn.name()}; expected its only output")
    node = CopySlices(region, fn)
    base_edge = gradient_edge(base) if base._keys & AUTOGRAD_BIT else (None, 0)
    node.next_functions = (base_edge,) + tuple(fn.next_functions[1:])
    base._grad_fn, base._output_nr = node, 0
    base._keys |= AUTOGRAD_BIT
    base._hist = base._hist + 1
    _set_view_history(view, base, region)
    if base._views is not None:     # ``a = x[:, :3]; a[:, 0] = q``: a holds q too (NOTE [view history])
        adopt_views(base)


def adopt_views(base):
    """Give the views ``base`` had while it had no history theirs, now that it has some (NOTE [view history])."""
    refs, base._views = base._views, None
    for ref in refs:
        v = ref()
        if v is None or v._grad_fn is not None or v._requires_grad or v._base is not base:
            continue
        if v._creation_meta:
            v._keys |= AUTOGRAD_BIT         # its next use raises (check_view_version)
        else:
            _set_view_history(v, base, _Region(base, v, lazy=True))


def _set_view_history(view, base, region):
    regen = AsStridedBackward0(region)
    regen.next_functions = ((base._grad_fn, base._output_nr),)
    view._grad_fn, view._output_nr = regen, 0
    view._keys |= AUTOGRAD_BIT
    view._hist = base._hist


def view_edge(view):
    """The gradient edge of a view with a grad_fn whose base was rebased since, or that is not DEFAULT."""
    if view._creation_meta:
        check_view_version(view)        # never regenerated: it raises once its storage was written
    elif view._base._hist != view._hist:
        regenerate(view)
    return (view._grad_fn, view._output_nr)


def regenerate(view):
    """A stale view's grad_fn, made again from its base's current history (NOTE [view history])."""
    base = view._base
    _set_view_history(view, base, _Region(base, view))


# --- copy_ ---------------------------------------------------------------------

class CopyBackwards(Node):
    """``self.copy_(src)``: the gradient goes to src; the overwritten value of self gets zeros."""
    _fresh_outputs = True     # NOTE [gradient ownership]

    def name(self):
        return 'torch::autograd::CopyBackwards'

    def __init__(self, src_meta):
        super().__init__()
        self._src_meta = src_meta

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return (None, None)
        (s, _), (r, _) = self.next_functions
        out_self = g.new_zeros(tuple(g.shape)) if s is not None and hasattr(g, 'new_zeros') else \
            (_zeros_like(g) if s is not None else None)
        out_src = None
        if r is not None:
            shape, dtype, device = self._src_meta
            from .kernels import sum_to, cast_grad
            out_src = sum_to(g, shape) if tuple(g.shape) != shape else g
            if out_src.dtype is not dtype or out_src.device != device:
                out_src = cast_grad(out_src, dtype, device)
        return (out_self, out_src)


def _zeros_like(g):
    from .. import zeros_like
    return zeros_like(g)


def _copy_kernel(op):
    redispatch = op.redispatch

    def kernel(ks, self, src, non_blocking=False):
        src_req = isinstance(src, TensorImpl) and bool(src._keys & AUTOGRAD_BIT)
        self_req = bool(self._keys & AUTOGRAD_BIT)
        if self_req or src_req:
            check_inplace(self)
        redispatch(ks & _BELOW, self, src, non_blocking)
        if not (self_req or src_req) or not (self._dtype.is_floating_point or self._dtype.is_complex):
            return self
        node = CopyBackwards((tuple(src.shape), src._dtype, src._device))
        self_edge = gradient_edge(self) if self_req and self._base is None else (None, 0)
        node.next_functions = (self_edge, gradient_edge(src) if src_req else (None, 0))
        from .kernels import rebase_history
        rebase_history(self, _Result(node))
        return self
    kernel.__qualname__ = 'autograd::copy_'
    return kernel


class _Result:
    """What rebase_history reads of an in-place op's result: its node and output number."""

    def __init__(self, node, nr=0):
        self._grad_fn, self._output_nr = node, nr


def _detach_kernel(view_kernel):
    def kernel(ks, self):
        out = view_kernel(ks, self)
        out._base = None      # detach() is not a differentiable view: in-place writes never rebase self
        return out
    kernel.__qualname__ = 'view::detach'
    return kernel


def register(lib):
    """Kernels that are not generated from formulas: copy_'s Autograd kernel, and detach (with or without
    grad mode) giving a tensor that shares data but is no differentiable view of its input."""
    from .._dispatch.dispatcher import lookup_op
    op = lookup_op('aten::copy_')
    op.register(DispatchKey.Autograd, _copy_kernel(op), allow_override=True)
    op = lookup_op('aten::detach')
    cea = DispatchKey.CompositeExplicitAutograd
    if not getattr(op.kernels.get(cea), '_ember_detach', False):
        k = _detach_kernel(op.kernels[cea])
        k._ember_detach = True
        op.register(cea, k, allow_override=True)


# --- functions that return several views (split, chunk, unbind) ------------------------------------
# torch gives all the pieces one node (SplitBackward0 and friends) whose backward concatenates the pieces'
# gradients, zeros standing in for pieces that got none. Per-piece SliceBackward0 nodes would each embed
# their gradient in a zero tensor of the whole input and the engine would add those up: for the char-GPT's
# qkv split, 3 zero fills, 3 scatters and 2 additions of the full (16, 64, 384) gradient per layer.


class _MultiViewBackward(Node):
    """The gradient of pieces cut from ``self`` along ``dim``: joined with ``cat`` (split) or ``stack``
    (unbind), so ``create_graph=True`` differentiates through it again."""
    _fresh_outputs = True     # NOTE [gradient ownership]

    def __init__(self, dim, piece_shapes, dtype, device, join, saved):
        super().__init__()
        self._saved = saved     # torch's saved values, under torch's names (NOTE [saved attribute names])
        self.dim, self.piece_shapes, self.dtype, self.device, self.join = dim, piece_shapes, dtype, device, join

    def apply(self, grads):
        import ember
        grads = tuple(grads) + (None,) * (len(self.piece_shapes) - len(grads))
        if all(g is None for g in grads):
            return (None,)
        full = [g if g is not None else ember.zeros(s, dtype=self.dtype, device=self.device)
                for g, s in zip(grads, self.piece_shapes)]
        return ((ember.cat if self.join == 'cat' else ember.stack)(full, self.dim),)


def _node_class(name, saved):
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = type(name, (_MultiViewBackward,), {'_saved_attrs': {k: k for k in saved}})
    return cls


_NODE_CLASSES = {}


def multi_view(self, make_pieces, dim, name, join='cat', saved=None):
    """``make_pieces()`` (views of ``self``) as the outputs of one ``name`` node when ``self`` requires grad
    under grad mode; with grad mode on the pieces are MULTI_OUTPUT_NODE views (NOTE [view creation meta]).
    ``saved`` maps torch's saved attribute names to values, the same names for every call of one ``name``."""
    from .grad_mode import is_grad_enabled, no_grad
    if not is_grad_enabled():
        return make_pieces()
    if not self._keys & AUTOGRAD_BIT:
        pieces = make_pieces()
    else:
        with no_grad():
            pieces = make_pieces()
        saved = saved or {}
        node = _node_class(name, saved)(dim, [tuple(p.shape) for p in pieces], self._dtype, self._device, join, saved)
        node.next_functions = (gradient_edge(self),)
        hist = self._hist
        for i, p in enumerate(pieces):
            p._grad_fn, p._output_nr = node, i
            p._keys |= AUTOGRAD_BIT
            p._hist = hist
    return mark_views(pieces, CreationMeta.MULTI_OUTPUT_NODE)


def mark_views(outputs, creation_meta):
    """Give the views among ``outputs`` the kind ``creation_meta``, unless they were made in inference mode."""
    for o in outputs:
        if isinstance(o, TensorImpl) and o._base is not None and o._creation_meta is not CreationMeta.INFERENCE_MODE:
            o._creation_meta, o._view_version = creation_meta, o._vc[0]
    return outputs


# NOTE [in-place view nodes]: torch's in-place view operators (squeeze_, unsqueeze_, t_, transpose_ and its aliases
# swapdims_, swapaxes_) have derivatives.yaml entries of their own, numbered after the out-of-place overloads of
# the same name: squeeze_() / squeeze_(int) / squeeze_(dims) record SqueezeBackward3/4/5 where squeeze records
# 0/1/2, and unsqueeze_, t_, transpose_ record UnsqueezeBackward1, TBackward1, TransposeBackward1. ember runs the
# out-of-place view and takes its node; this gives that node torch's in-place class: a subclass of its class
# under the in-place name (made once), with the same edges and saved values.
_INPLACE_CLASSES = {}


def inplace_view_node(node, overloads):
    """``node`` (of an out-of-place view) as the node of its in-place operator, whose number is the out-of-place
    one plus ``overloads`` (how many out-of-place overloads torch numbers first)."""
    cls = type(node)
    m = re.fullmatch(r'(.*Backward)(\d+)', cls.__name__)
    if m is None:
        return node
    name = f'{m.group(1)}{int(m.group(2)) + overloads}'
    sub = _INPLACE_CLASSES.get((cls, name))
    if sub is None:
        sub = _INPLACE_CLASSES[(cls, name)] = type(name, (cls,), {'__module__': cls.__module__})
    new = object.__new__(sub)
    new.__dict__.update(node.__dict__)
    return new
