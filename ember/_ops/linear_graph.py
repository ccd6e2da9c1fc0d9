"""torch's autograd graph of ``F.linear`` (``nn.Linear``), recorded around ember's fused kernel.

NOTE [linear's graph]: torch's linear is a composite (at::native::linear). A 2-D input with a bias is
``addmm(bias, input, weight.t())``; a contiguous input of another rank with a 1-D bias is flattened into rows, put
through that addmm and viewed back (``_flatten_nd_linear``); anything else is ``matmul(input, weight.t())`` and then
``add_(bias)``, where matmul unsqueezes a vector input (and squeezes the result in place) and folds a batched one
into the rows of one mm. Libraries that walk ``grad_fn.next_functions`` (torch-pruning's DependencyGraph, torchviz)
see those nodes: AddmmBackward0 (edges: bias, mat1, mat2) or MmBackward0 (self, mat2), whose mat2 edge is a
TBackward0 into the weight, between a ViewBackward0, UnsafeViewBackward0 or SqueezeBackward4 above it and a
ViewBackward0 or UnsqueezeBackward0 into the input for other ranks.

ember keeps its fused kernel (one GEMM plus bias forward, the fused two-GEMM backward) and the formulas' one node,
and records torch's nodes around that node (the declaration's ``torch_graph``, `linear_nodes`): the product's node
wraps the formulas' node, lists the edges in torch's order and shows torch's saved attributes; the nodes around it
reshape the gradient as torch's do (each a view), and the product's node reshapes it back for the formulas, which
see the tensors the forward saw. Nothing is computed in the forward beyond the kernel (no reshaped input is
made and saved), so a graph traced from a backward (aot_autograd) reads only the operator's own inputs. The
weight's gradient leaves the product's node transposed (a view) and TBackward0 transposes it back: NOTE [a view
undone]. The gradients are the fused backward's, bit for bit.

Where torch's composite is not a product of rows (a 1-D weight, a bias of another rank beside a non-matrix input,
a batched input that must be copied to fold it) the formulas' node stays alone, under the name of torch's top node.
"""
from math import prod

from .._dispatch.ops_namespace import aten
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node, _FREED, _BOOKKEEPING


def _rows_view(shape, strides):
    """Whether a batched input folds into rows by a view (torch's computeStride for reshape(-1, C): the
    dimensions before the last nest, size-1 ones aside)."""
    nest = None
    for i in range(len(shape) - 2, -1, -1):
        if shape[i] != 1:
            if nest is not None and strides[i] != nest:
                return 0 in shape
            nest = strides[i] * shape[i]
    return True


def _folds(shape, strides, weight):
    """torch's matmul should_fold for a batched input against ``weight.t()``, and a fold that is a view."""
    nest = all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))
    return (weight.requires_grad or 0 in shape or nest) and _rows_view(shape, strides)


def _chain(input, weight, bias):
    """(top node class, product class, input node class) of torch's graph, or None where it is not one product
    of rows (NOTE [linear's graph])."""
    nx = input._a.ndim
    if weight._a.ndim != 2:
        return None
    if nx == 2:
        return None, AddmmBackward0 if bias is not None else MmBackward0, None
    if bias is None:
        if nx == 1:
            return SqueezeBackward4, MmBackward0, UnsqueezeBackward0
        return (UnsafeViewBackward0, MmBackward0, ViewBackward0) if _folds(input.shape, input.stride(), weight) \
            else None
    if bias._a.ndim == 1 and input.is_contiguous():
        return ViewBackward0, AddmmBackward0, ViewBackward0
    return None


def linear_node_name(input, weight, bias=None):
    """The name of the formulas' node where it stands alone: torch's top node for that call."""
    nx, nw = input._a.ndim, weight._a.ndim
    if bias is not None and nx != 2:
        return 'AddBackward0'           # torch's add_ of the bias onto matmul's result
    if nw == 1:
        return 'DotBackward0' if nx == 1 else 'MvBackward0' if nx == 2 else 'UnsafeViewBackward0'
    if nx == 2:
        return 'AddmmBackward0' if bias is not None else 'MmBackward0'
    return 'UnsafeViewBackward0'


def linear_nodes(node, input, weight, bias=None):
    """The declaration's torch_graph: torch's nodes around the formulas' ``node`` (NOTE [linear's graph])."""
    chain = _chain(input, weight, bias)
    if chain is None:
        return node
    top_cls, product_cls, input_cls = chain
    x_edge, w_edge, b_edge = node.next_functions
    x_shape, w_shape = tuple(input._a.shape), tuple(weight._a.shape)
    rows = (prod(x_shape[:-1]), x_shape[-1])
    product = product_cls()
    product._f = node
    product._saved = node._saved
    product._seq = node._seq
    if x_edge[0] is not None:
        x_strides = (() if input.is_sparse else input.stride()) if input_cls is None else (rows[1], 1)
        if input_cls is not None:
            x_edge = (input_cls(x_shape), 0)
            x_edge[0].next_functions = (node.next_functions[0],)
    else:
        x_strides = ()
    w_strides = weight.stride() if w_edge[0] is not None else ()
    if w_edge[0] is not None:
        w_edge = (TBackward0(), 0)
        w_edge[0].next_functions = (node.next_functions[1],)
    product.next_functions = (b_edge, x_edge, w_edge) if bias is not None else (x_edge, w_edge)
    product._meta = (rows, w_shape, x_strides, w_strides)
    if top_cls is None:
        product._shapes = None
        return product
    product._shapes = (x_shape[:-1] + (w_shape[0],), x_shape)
    top = top_cls((rows[0], w_shape[0]))
    top.next_functions = ((product, 0),)
    return top


def _owned_base(g):
    """NOTE [a view undone]: ``g``'s base where ``g`` is the engine's own view of the whole of a contiguous tensor
    the engine has not delivered, and nothing records; else None. The caller checks the layout."""
    b = g._base
    if (b is not None and g._grad_owner is True and b._grad_owner is None and b._base is None and g._grad_fn is None
            and g._a.size == b._a.size and not is_grad_enabled() and b.is_contiguous()):
        return b
    return None


# NOTE [a view undone]: a node of torch's graph around linear's product hands its gradient on as a view (the
# weight's gradient transposed for mat2, the input's gradient as rows); the node after it views it back into
# the shape of the tensor the fused backward made. That node hands on the tensor itself (``_owned_base``),
# rather than a second view of it, when the engine alone holds the view (its ``_grad_owner``, NOTE [gradient
# ownership]: no hook saw it), the tensor was never delivered, nothing records (no create_graph) and the view
# covers the whole tensor with the layout viewing back would give: the values and layout are the same, and
# AccumulateGrad may then take the tensor as ``.grad`` without a copy, as it did before the graph had torch's
# shape (torch's AccumulateGrad steals its view there). Without it every step would copy each weight's gradient.


class _ProductNode(Node):
    """AddmmBackward0 / MmBackward0 of F.linear: runs the formulas' node ``_f`` (schema order: input, weight,
    bias) on the forward's shapes and hands the gradients on in torch's order, the input's as rows and the
    weight's transposed (mat2 is ``weight.t()``)."""
    _fresh_outputs = True     # NOTE [gradient ownership]
    _mat1 = 'mat1'

    def apply(self, grads):
        shapes = self._shapes
        g = grads[0]
        if shapes is not None and g is not None:
            g = aten.reshape.default(g, shapes[0])
        gi, gw, gb = self._f.apply((g,))
        if gi is not None and shapes is not None:
            gi = aten.reshape.default(gi, self._meta[0])
        if gw is not None:
            gw = aten.t.default(gw)
        return self._order(gi, gw, gb)

    def _release(self):
        Node._release(self)
        self._f._release()

    def _torch_saved(self):
        """torch's saved attributes (after ``_saved_``): a tensor it did not save is None, its strides ()."""
        rows, w_shape, x_strides, w_strides = self._meta
        return {self._mat1: lambda: self._unpack('input'), self._mat1 + '_sym_sizes': lambda: rows,
                self._mat1 + '_sym_strides': lambda: x_strides,
                'mat2': lambda: self._unpack('weight'), 'mat2_sym_sizes': lambda: w_shape[::-1],
                'mat2_sym_strides': lambda: w_strides[::-1]}

    def _unpack(self, key):
        if self._released:
            raise RuntimeError(_FREED)
        sv = self._saved.get(key)
        if sv is None:
            return None
        v = sv.unpack(self._f, key)
        if key == 'weight':
            return aten.t.default(v)
        return v if v._a.shape == self._meta[0] else aten.reshape.default(v, self._meta[0])

    def __getattr__(self, name):
        if name.startswith('_saved_') and '_meta' in self.__dict__:
            fn = self._torch_saved().get(name[7:])
            if fn is not None:
                return fn()
        return Node.__getattr__(self, name)

    def __dir__(self):
        return sorted((set(object.__dir__(self)) - _BOOKKEEPING) | {'_saved_' + a for a in self._torch_saved()})


class AddmmBackward0(_ProductNode):
    def _order(self, gi, gw, gb):
        return gb, gi, gw

    def _torch_saved(self):
        return {**_ProductNode._torch_saved(self), 'alpha': lambda: 1, 'beta': lambda: 1}


class MmBackward0(_ProductNode):
    _mat1 = 'self'

    def _order(self, gi, gw, gb):
        return gi, gw


class TBackward0(Node):
    """TBackward0 of linear's weight: the gradient of ``weight.t()`` transposed back."""
    _fresh_outputs = True     # NOTE [gradient ownership]

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return (None,)
        a = g._a
        b = _owned_base(g) if a.ndim == 2 else None
        if b is not None and b._a.shape == a.shape[::-1] and b._a.strides == a.strides[::-1]:
            return (b,)         # NOTE [a view undone]
        return (aten.t.default(g),)


class _ReshapeNode(Node):
    """A node of torch's graph around linear's product whose backward is a reshape of the gradient to the
    ``sizes`` of its input (ViewBackward0, UnsafeViewBackward0, SqueezeBackward4, UnsqueezeBackward0)."""
    _fresh_outputs = True     # NOTE [gradient ownership]
    _dim = None               # torch's _saved_dim where its node has one

    def __init__(self, sizes):
        super().__init__()
        self._sizes = sizes

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return (None,)
        b = _owned_base(g)
        if b is not None and b._a.shape == self._sizes and g.is_contiguous():
            return (b,)         # NOTE [a view undone]
        return (aten.reshape.default(g, self._sizes),)

    def _torch_saved(self):
        saved = {} if type(self) is UnsqueezeBackward0 else {'self_sym_sizes': tuple(self._sizes)}
        if self._dim is not None:
            saved['dim'] = self._dim
        return saved

    def __getattr__(self, name):
        if name.startswith('_saved_') and '_sizes' in self.__dict__:
            saved = self._torch_saved()
            if name[7:] in saved:
                return saved[name[7:]]
        return Node.__getattr__(self, name)

    def __dir__(self):
        return sorted((set(object.__dir__(self)) - _BOOKKEEPING) | {'_saved_' + a for a in self._torch_saved()})


class ViewBackward0(_ReshapeNode):
    pass


class UnsafeViewBackward0(_ReshapeNode):
    pass


class SqueezeBackward4(_ReshapeNode):       # matmul's squeeze_(0) of a vector's product
    _dim = 0


class UnsqueezeBackward0(_ReshapeNode):     # matmul's unsqueeze(0) of a vector input
    _dim = 0
