"""ExpandedWeight (torch.nn.utils._expanded_weights): a parameter standing in for one copy per sample, so that a
backward fills ``param.grad_sample`` (batch, *param.shape) instead of ``param.grad``.

NOTE [per-sample gradients]
``call_for_per_sample_grads`` runs the module with each parameter that requires grad replaced by an
ExpandedWeight, a Tensor subclass sharing its data. The subclass's ``__torch_function__`` lets only the layer
functions whose output for one sample depends on that sample alone (linear, the convolutions, embedding and
the layer, group and instance norms) through; any other function given an ExpandedWeight raises, as torch's
does. A handled call becomes one ``_PerSampleGrad`` Function: its forward is the layer on the original weights;
its backward gives the input's gradient by the layer's ordinary vjp and each weight's per-sample gradient by
``vmap`` over the batch of the vjp of the layer applied to one sample, which it adds to ``grad_sample``.
The ExpandedWeights themselves get no gradient, so ``.grad`` stays None. torch writes one formula per layer
(``linear``: ``grad_output^T @ input`` per sample); the vjp under vmap is the same product, found by autograd.
"""
import ember
from .. import functional as F
from ...autograd.function import Function
from ...func import vjp, vmap


def _instance_norm_again(args, kwargs):
    # the running statistics are updated once, by the forward; the vjps of the backward must not update them
    # again, and with use_input_stats they do not change the output
    if kwargs.get('use_input_stats', True):
        kwargs = {**kwargs, 'running_mean': None, 'running_var': None}
    return args, kwargs


# the layer functions whose samples are independent, and how to call one again in the backward
HANDLED_FUNCTIONS = {F.linear: None, F.conv1d: None, F.conv2d: None, F.conv3d: None, F.embedding: None,
                     F.layer_norm: None, F.group_norm: None, F.instance_norm: _instance_norm_again}


class ExpandedWeight(ember.Tensor):
    """``orig_weight`` seen as ``batch_size`` copies, one per sample; its gradients go to
    ``orig_weight.grad_sample`` (NOTE [per-sample gradients])."""

    def __new__(cls, orig_weight, batch_size, loss_reduction):
        if not isinstance(orig_weight, ember.Tensor):
            raise RuntimeError(f"Can only make Expanded Weights of Tensors, got {type(orig_weight).__name__}")
        if not orig_weight.requires_grad:
            raise RuntimeError("Can only build ExpandedWeights objects of tensors that requires_grad")
        return ember.Tensor._make_subclass(cls, orig_weight, True)

    def __init__(self, orig_weight, batch_size, loss_reduction):
        self.batch_size = batch_size
        self.orig_weight = orig_weight
        self.loss_reduction = loss_reduction

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in HANDLED_FUNCTIONS:
            # an unknown function may mix the samples: without its batch dimension no formula can split them
            raise RuntimeError(f"Expanded Weights encountered but cannot handle function {func.__name__}")
        _check_input(func, args, kwargs)
        return _PerSampleGrad.apply(func, args[1:], kwargs, args[0], *_expanded(args, kwargs))

    # what the handler refuses (every other function) the weight answers for itself, as torch's ExpandedWeight does:
    # a property read or one of these methods reaches __torch_function__ (NOTE [tensor subclasses])
    dtype = property(lambda self: self.orig_weight.dtype)
    data = property(lambda self: self.orig_weight.data)
    shape = property(lambda self: self.orig_weight.shape)
    device = property(lambda self: self.orig_weight.device)
    is_cuda = property(lambda self: self.orig_weight.is_cuda)

    def data_ptr(self):
        return self.orig_weight.data_ptr()

    def get_device(self):
        return self.orig_weight.get_device()


def _expanded(args, kwargs):
    return [a for a in list(args) + list(kwargs.values()) if isinstance(a, ExpandedWeight)]


def _unexpand(args, kwargs, weights=None):
    """``args`` and ``kwargs`` with the ExpandedWeights replaced by their original weights, or by ``weights``."""
    ws = iter(weights) if weights is not None else None
    swap = lambda a: (next(ws) if ws is not None else a.orig_weight) if isinstance(a, ExpandedWeight) else a
    return tuple(swap(a) for a in args), {k: swap(v) for k, v in kwargs.items()}


def _check_input(func, args, kwargs):
    input, expanded = args[0], _expanded(args, kwargs)
    if isinstance(input, ExpandedWeight):
        raise RuntimeError(f"Expanded Weights do not support inputs that are also ExpandedWeights. Input must be a "
                           f"Tensor, got {type(input).__name__} in function {func.__name__}")
    if not isinstance(input, ember.Tensor):
        raise RuntimeError(f"Expanded Weights requires a Tensor as the first input to get the batch dimension, got "
                           f"{type(input).__name__} in function {func.__name__}")
    if input.dim() == 0:
        raise RuntimeError(f"Expanded Weights requires a batch dimension but got an input of size 0 in function "
                           f"{func.__name__}")
    for ew in expanded:     # the layers handled all take the batch first (torch's RNN decompositions do not)
        batch = input.shape[0]
        if batch != ew.batch_size:
            raise RuntimeError(f"Expected ExpandedWeights to have batch size matching input but got input batch size "
                               f"of {batch} with ExpandedWeight of batch size {ew.batch_size}")
    if len({ew.loss_reduction for ew in expanded}) > 1:
        raise RuntimeError("Expected ExpandedWeights to all have the same loss_reduction argument")


class _PerSampleGrad(Function):
    """A handled layer call: the layer on the original weights forward, per-sample weight gradients backward."""

    @staticmethod
    def forward(ctx, func, rest, kwargs, input, *expanded):
        ctx.func, ctx.rest, ctx.kwargs, ctx.expanded = func, rest, kwargs, expanded
        ctx.save_for_backward(input)
        rest, kwargs = _unexpand(rest, kwargs)
        return func(input, *rest, **kwargs)

    @staticmethod
    def backward(ctx, grad_output):
        func, rest, kwargs, expanded = ctx.func, ctx.rest, ctx.kwargs, ctx.expanded
        input, = ctx.saved_tensors
        orig = [ew.orig_weight.detach() for ew in expanded]
        again = HANDLED_FUNCTIONS[func]
        rest, kwargs = (rest, kwargs) if again is None else again(rest, kwargs)

        def layer(x, weights):
            a, kw = _unexpand(rest, kwargs, weights)
            return func(x, *a, **kw)

        grad_input = None
        if ctx.needs_input_grad[3]:
            grad_input = vjp(lambda x: layer(x, orig), input.detach())[1](grad_output)[0]

        def one_sample(x, g):
            return vjp(lambda *ws: layer(x.unsqueeze(0), ws), *orig)[1](g.unsqueeze(0))

        for ew, gs in zip(expanded, vmap(one_sample)(input.detach(), grad_output)):
            if ew.loss_reduction == 'mean':
                gs = gs * ew.batch_size
            w = ew.orig_weight
            w.grad_sample = gs if getattr(w, 'grad_sample', None) is None else w.grad_sample + gs
        return (None, None, None, grad_input) + (None,) * len(expanded)
