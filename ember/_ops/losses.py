"""Fused loss operators: torch's nll_loss_forward / nll_loss_backward and their spatial forms
nll_loss2d_forward / nll_loss2d_backward (kernels in _backends/cpu/losses.py).

cross_entropy on class indices is log_softmax + nll_loss. As a composite, nll_loss was ~15 dispatched
ops (a where for ignore_index, a bounds check synced through bool(), gather, weights, two sums and a
division) and its backward as many again: 157 us forward and 320 us forward + backward on (128, 10)
logits, against 15 and 49 us for torch. Fused, the forward is one gather and one sum, and the backward
writes one element per sample (NOTE [cross_entropy timings] in nn/functional/_loss.py has the figures).

Each forward returns ``(output, total_weight)``: the loss and the sum of the kept samples' class weights
(their count without weights), which mean reduction divides by and the backward reuses; total_weight is
not differentiable. ``reduction`` is torch's enum: 0 none, 1 mean, anything else sum. The backward is
linear in ``grad_output`` with the forward as its adjoint, and does not depend on ``self``'s values, so
the pair is closed under differentiation and gradients of any order work.

The 1-D/2-D ops take (C,) or (N, C) inputs; the 2d ops take (N, C, H, W) inputs with (N, H, W) targets.
nn.functional.nll_loss picks one by rank as torch's nll_loss_nd does (3-D and 5-D+ inputs are viewed
as (N, C, 1, -1)), so grad_fn names match torch's: NllLossBackward0 and NllLoss2DBackward0.
"""
from .._core import dtype as D
from .._core.dtype import scalar_name as _tname
from .registry import declare
from .._dispatch.ops_namespace import aten

_NONE = 0
_TARGET_DTYPES = (D.int64, D.uint8)






def _lst(s):
    return '[' + ', '.join(str(int(x)) for x in s) + ']'


def _size0(t):
    """``t.size(0)`` as torch's checks read it: an IndexError for a 0-d tensor."""
    if not t._a.ndim:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return t._a.shape[0]


def _check_dtypes(frame, self, tensors, target=None):
    """The dtype checks torch's CPU kernels make once the shapes are right: a floating input, then
    a Long/Byte target (``target`` given: the backward's accessor message), then every other tensor
    in the input's dtype."""
    dt = self._dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{frame}\" not implemented for '{_tname(dt)}'")
    if target is not None and target._dtype not in _TARGET_DTYPES:
        raise RuntimeError(f"expected scalar type Long but found {_tname(target._dtype)}")
    for t in tensors:
        if t is not None and t._dtype is not dt:
            raise RuntimeError(f"expected scalar type {_tname(dt)} but found {_tname(t._dtype)}")


def _check_target_dtype(target):
    if target._dtype not in _TARGET_DTYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_tname(target._dtype)}")


def _check_grad_scalar(grad_output):
    if grad_output._a.ndim > 1 or grad_output._a.size != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {_lst(grad_output._a.shape)}")


def _check_total_weight(total_weight, sep):
    if total_weight._a.size != 1:
        raise RuntimeError(f"expected total_weight to be a{sep}single element tensor, got: "
                           f"{_lst(total_weight._a.shape)} ({total_weight._a.size} elements)")


# --- nll_loss_forward / nll_loss_backward: (C,) or (N, C) inputs ---------------------------

def _nll_shapes(self, target):
    sd, td = self._a.ndim, target._a.ndim
    if not 0 < sd <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if td > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    return sd, td


def _nll_forward_meta(self, target, weight, reduction, ignore_index):
    sd, td = _nll_shapes(self, target)
    _check_target_dtype(target)
    if sd == 1 and td == 1 and target._a.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target._a.shape[0]}")
    if sd != 1 and self._a.shape[0] != _size0(target):
        raise RuntimeError(f"size mismatch (got input: {_lst(self._a.shape)}, target: {_lst(target._a.shape)})")
    c = self._a.shape[-1]
    if weight is not None and (weight._a.ndim != 1 or weight._a.size != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {_lst(weight._a.shape)}")
    _check_dtypes('nll_loss_out_frame', self, (weight,))
    dt = self._dtype
    out = (self._a.shape[0],) if reduction == _NONE and sd == 2 else ()
    return [(out, dt), ((), dt)]


def _nll_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    sd, td = _nll_shapes(self, target)
    if not (sd == 1 and td == 0) and self._a.shape[0] != _size0(target):
        raise RuntimeError(f"size mismatch (got input: {_lst(self._a.shape)}, target: {_lst(target._a.shape)})")
    _check_total_weight(total_weight, '  ')      # (sic: torch's message has two spaces)
    if weight is not None and weight._a.size != self._a.shape[-1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if reduction == _NONE and sd == 2:
        n, g = self._a.shape[0], grad_output._a
        if g.ndim != 1 or g.shape[0] != n:
            got = f" and tensor.size[0] = {g.shape[0]}" if g.ndim else ""
            raise RuntimeError(f"Expected a tensor of dimension 1 and tensor.size[0] == {n} but got: dimension "
                               f"{g.ndim}{got}")
    else:
        _check_grad_scalar(grad_output)
    _check_dtypes('nll_loss_backward_out_frame', self, (weight, grad_output, total_weight), target)
    return tuple(self._a.shape), self._dtype


def _declare_nll(prefix, forward_meta, backward_meta, grad_name, backward_grad_name=None):
    """``<prefix>_forward`` and ``<prefix>_backward``: each the other's derivative. The backward is linear
    in grad_output (and constant in self), so its adjoint is the forward applied to the gradient."""
    fwd, bwd = f'{prefix}_forward', f'{prefix}_backward'

    def backward(grad, self, target, weight, reduction, ignore_index, result1):
        return getattr(aten, bwd).default(grad, self, target, weight, reduction, ignore_index, result1)

    def forward_of_grad(grad, target, weight, reduction, ignore_index):
        return getattr(aten, fwd).default(grad, target, weight, reduction, ignore_index)[0]
    def backward_jvp(grad_output, grad_output_t, self, target, weight, weight_t, reduction, ignore_index, total_weight,
                     total_weight_t, result):
        """Linear in grad_output and in weight; with reduction='mean' the result is divided by total_weight, whose
        tangent counts too (torch's)."""
        op = getattr(aten, bwd).default
        out = None if grad_output_t is None else op(grad_output_t, self, target, weight, reduction, ignore_index,
                                                    total_weight)
        if weight_t is not None:
            t = op(grad_output, self, target, weight_t, reduction, ignore_index, total_weight)
            out = t if out is None else out + t
        if total_weight_t is not None and reduction == 1:
            t = -result * (total_weight_t / total_weight)
            out = t if out is None else out + t
        return out
    declare(f'{fwd}(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) '
            '-> (Tensor output, Tensor total_weight)', meta=forward_meta, method=False, forward='linear', grad_name=grad_name,
            output_differentiability=(True, False), derivatives={'self': backward})
    declare(f'{bwd}(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, '
            'SymInt ignore_index, Tensor total_weight) -> Tensor', meta=backward_meta, method=False, forward=backward_jvp,
            grad_name=backward_grad_name,
            derivatives={'grad_output': forward_of_grad, 'self': lambda grad: aten.zeros_like.default(grad)})


_declare_nll('nll_loss', _nll_forward_meta, _nll_backward_meta, 'NllLossBackward0')


# --- nll_loss2d_forward / nll_loss2d_backward: (N, C, H, W) inputs, (N, H, W) targets ----------

def _nll2d_inputs(self, target, weight):
    """torch's check_inputs_nll_loss2d, shared by the forward and the backward."""
    if target._a.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target._a.ndim}")
    if self._a.ndim != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input of dimension: "
                           f"{self._a.ndim}")
    _check_target_dtype(target)
    s, t = self._a.shape, target._a.shape
    if weight is not None and weight._a.size != s[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (s[0], s[2], s[3]) != t:
        raise RuntimeError(f"size mismatch (got input: {_lst(s)} , target: {_lst(t)}")


def _nll2d_forward_meta(self, target, weight, reduction, ignore_index):
    _nll2d_inputs(self, target, weight)
    _check_dtypes('nll_loss2d_forward_out_frame', self, (weight,))
    dt = self._dtype
    return [(tuple(target._a.shape) if reduction == _NONE else (), dt), ((), dt)]


def _nll2d_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _nll2d_inputs(self, target, weight)
    _check_total_weight(total_weight, ' ')
    _check_dtypes('nll_loss2d_backward_out_frame', self, (weight,))
    if reduction == _NONE:
        g, t = grad_output._a.shape, target._a.shape
        if len(g) != 3:
            raise RuntimeError(f"grad_output must have same dimension as target (3) but got dimension: {_lst(g)}")
        if g != t:
            raise RuntimeError(f"size mismatch (got grad_output: {_lst(g)} target: {_lst(t)}")
    else:
        _check_grad_scalar(grad_output)
    _check_dtypes('nll_loss2d_backward_out_frame', self, (grad_output, total_weight))
    return tuple(self._a.shape), self._dtype


_declare_nll('nll_loss2d', _nll2d_forward_meta, _nll2d_backward_meta, 'NllLoss2DBackward0',
             'NllLoss2DBackwardBackward0')


# --- binary cross-entropy: torch's operator, so its gradient is torch's -------------------------------------
# A composite of clamped logs gives nan gradients where the input is exactly 0 or 1 (log's inf times clamp's
# 0); torch's backward is grad * (x - t) / max(x (1 - x), 1e-12), finite there.

def _bce_meta(self, target, weight=None, reduction=1):
    from .pointwise import broadcast_shapes      # torch's kernel broadcasts (the front end wants equal shapes)
    if target._dtype is not self._dtype:
        raise RuntimeError(f"Found dtype {_tname(target._dtype)} but expected {_tname(self._dtype)}")
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape))
    return (tuple(shape) if reduction == _NONE else ()), self._dtype


def _bce_scale(g, self, weight, reduction):
    if reduction != _NONE:
        g = g.expand(tuple(self.shape))
        if reduction == 1:
            g = g / max(self.numel(), 1)
    return g if weight is None else g * weight


def _bce_grad_self(grad, self, target, weight, reduction):
    return _bce_scale(grad, self, weight, reduction) * (self - target) / ((1 - self) * self).clamp_min(1e-12)


def _bce_grad_target(grad, self, target, weight, reduction):
    return _bce_scale(grad, self, weight, reduction) * -self.logit()


declare('binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor', forward='transpose',
        meta=_bce_meta, method=False, out=True, grad_name='BinaryCrossEntropyBackward0',
        derivatives={'self': _bce_grad_self, 'target': _bce_grad_target})


# --- binary cross-entropy with logits: torch's operator (BinaryCrossEntropyWithLogitsBackward0) --------------
# The forward is torch's in-place chain, so the loss takes the target's dtype (a float64 input with a float32
# target gives float32; an integer target is refused by the in-place multiply); the gradients are torch's
# formulas (FunctionsManual.cpp), sigmoid(x) - t rather than the chain's pieces.

def _bce_logits(self, target, weight=None, pos_weight=None, reduction=1):
    if target._dtype is D.bool_:      # torch's C++ ``1 - target`` subtracts a bool tensor from a bool tensor
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    log_sigmoid_input = aten.log_sigmoid.default(self)
    if pos_weight is not None:
        log_sigmoid_input = log_sigmoid_input.mul_((pos_weight - 1).mul(target).add_(1))
    loss = (1 - target).mul_(self).sub_(log_sigmoid_input)
    if weight is not None:
        loss.mul_(weight)
    return loss if reduction == _NONE else loss.mean() if reduction == 1 else loss.sum()


def _bce_logits_finish(g, grad, weight, reduction, numel):
    g = g * grad
    if weight is not None:
        g = g * weight
    return g / numel if reduction == 1 else g


def _bce_logits_grad_self(grad, self, target, weight, pos_weight, reduction):
    if pos_weight is not None:
        t = pos_weight * target
        g = (t + 1 - target) * self.sigmoid() - t
    else:
        g = self.sigmoid() - target
    return _bce_logits_finish(g, grad, weight, reduction, self.numel())


def _bce_logits_grad_target(grad, self, target, weight, pos_weight, reduction):
    if pos_weight is not None:
        g = aten.log_sigmoid.default(-self) - aten.log_sigmoid.default(self) * pos_weight
    else:
        g = -self
    return _bce_logits_finish(g, grad, weight, reduction, target.numel())


declare('binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, '
        'int reduction=1) -> Tensor', explicit=_bce_logits, method=False, forward='transpose',
        grad_name='BinaryCrossEntropyWithLogitsBackward0',
        derivatives={'self': _bce_logits_grad_self, 'target': _bce_logits_grad_target})


# --- mean squared error: torch's operator (MseLossBackward0, and MseLossBackwardBackward0 under create_graph) ------

def _mse_meta(self, target, reduction=1):
    from .pointwise import broadcast_shapes      # torch's operator broadcasts (nn.functional's broadcasts first)
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape))
    return (tuple(shape) if reduction == _NONE else ()), self._dtype


def _mse_backward_meta(grad_output, self, target, reduction):
    from .pointwise import broadcast_shapes
    return tuple(broadcast_shapes(tuple(self.shape), tuple(target.shape))), self._dtype


def _mse_grad(grad, a, b, reduction):
    """mse_loss's gradient for ``a`` (torch's mse_loss_backward(grad, a, b)), summed to ``a``'s shape if the two
    broadcast."""
    g = aten.mse_loss_backward.default(grad, a, b, reduction)
    return g if tuple(g.shape) == tuple(a.shape) else g.sum_to_size(tuple(a.shape))


def _mse_norm(self, reduction):
    return 2.0 / max(self.numel(), 1) if reduction == 1 else 2.0


declare('mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor', forward='transpose', meta=_mse_meta,
        method=False, out=True, grad_name='MseLossBackward0',
        derivatives={'self': lambda grad, self, target, reduction: _mse_grad(grad, self, target, reduction),
                     'target': lambda grad, self, target, reduction: _mse_grad(grad, target, self, reduction)})
declare('mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor',
        forward='transpose', meta=_mse_backward_meta, method=False, grad_name='MseLossBackwardBackward0',
        derivatives={'grad_output': lambda grad, self, target, reduction:
                     ((self - target) * _mse_norm(self, reduction) * grad).sum() if reduction != _NONE
                     else (self - target) * _mse_norm(self, reduction) * grad,
                     'self': lambda grad, grad_output, self, reduction: grad * grad_output * _mse_norm(self, reduction),
                     'target': lambda grad, grad_output, self, reduction:
                     -(grad * grad_output * _mse_norm(self, reduction))})
