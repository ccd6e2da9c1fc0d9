"""Loss functions (``ember.nn.functional.cross_entropy`` and friends) with torch's signatures.

Every loss is a composite of ember operators, so autograd and higher-order
gradients come from the operators' own formulas. nll_loss (and cross_entropy =
log_softmax + nll_loss on class indices) calls the fused nll_loss_forward /
nll_loss2d_forward operators, as torch does, for speed (NOTE [cross_entropy
timings]). Argument errors are raised before any computation, with torch's
exception classes.
"""
import math
from ember._warn import warnings

from ..._tensor import Tensor
from ... import _functions as _E

__all__ = ['cross_entropy', 'nll_loss', 'mse_loss', 'l1_loss', 'smooth_l1_loss', 'huber_loss',
           'binary_cross_entropy', 'binary_cross_entropy_with_logits', 'kl_div', 'cosine_embedding_loss',
           'margin_ranking_loss', 'hinge_embedding_loss', 'triplet_margin_loss', 'triplet_margin_with_distance_loss',
           'soft_margin_loss', 'multilabel_soft_margin_loss', 'poisson_nll_loss', 'gaussian_nll_loss',
           'multi_margin_loss', 'multilabel_margin_loss']

_REDUCTIONS = ('none', 'mean', 'sum')


def _legacy_reduction(size_average, reduce, emit_warning=True):
    """torch's _Reduction.legacy_get_string: the old ``size_average``/``reduce`` flags as a ``reduction``."""
    warning = "size_average and reduce args will be deprecated, please use reduction='{}' instead."
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = 'mean' if size_average and reduce else 'sum' if reduce else 'none'
    if emit_warning:
        warnings.warn_in_library(warning.format(ret), stacklevel=2)      # at the caller in the library, as torch's
    return ret


def _resolve(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == 'mean':
        return loss.mean()
    if reduction == 'sum':
        return loss.sum()
    return loss


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def _weighted(loss, weight, reduction, input, mean_by_weight=True):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == 'none':
        return loss
    if reduction == 'sum':
        return loss.sum()
    return loss.sum() / weight.sum() if mean_by_weight else loss.mean()


def _no_grad_arg(fn, name, t):
    """torch's fused losses have no derivative for their weights: requiring one is an error there."""
    if t is not None and t.requires_grad:
        from ...autograd.grad_mode import is_grad_enabled
        if is_grad_enabled():
            raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. This "
                               "input cannot have requires_grad True.")


# --- classification ---------------------------------------------------------------
# NOTE [cross_entropy timings] cross_entropy on class indices is log_softmax + the fused nll_loss_forward
# (ember/_ops/losses.py); its backward is nll_loss_backward + _log_softmax_backward_data. Median us per call,
# one core, one BLAS thread (bench/bench_loss.py; the composite measured in the same process):
#                                  composite nll   fused nll   torch 2.13
#   (128, 10) forward                   157            52          23
#   (128, 10) forward + backward        320           129          59
#   (1024, 65) forward                  304           190          60
#   (1024, 65) forward + backward       595           370         147
# The (128, 10) forward now splits into log_softmax 24 (its kernel 15, 6.6 of them np.maximum.reduce over
# rows of 10), nll_loss_forward 25 (kernel 5, recording the autograd node 13) and 2 here; the backward spends
# ~5 on zeros that FormulaNode makes for total_weight, which never gets a gradient.

_REDUCTION_ENUM = {'none': 0, 'mean': 1, 'sum': 2}      # torch's at::Reduction


def _nll_nd(input, target, weight, reduction, ignore_index):
    """torch's nll_loss_nd: ``(loss, total_weight)`` from nll_loss_forward for 1-D/2-D inputs and from
    nll_loss2d_forward otherwise (3-D and 5-D+ inputs viewed as (N, C, 1, -1), as torch does, so the
    grad_fn names match torch's). ``reduction`` is the enum."""
    nd = input.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1:
        n = input.size(0)
        tb = target.size(0) if target.dim() else 0       # torch reads a 0-d target's batch size as 0
        if n != tb:
            raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({tb}).")
    if weight is not None:
        _no_grad_arg('nll_loss_forward' if nd <= 2 else 'nll_loss2d_forward', 'weight', weight)
    if nd <= 2:
        return _E.nll_loss_forward(input, target, weight, reduction, ignore_index)
    if nd == 4:
        return _E.nll_loss2d_forward(input, target, weight, reduction, ignore_index)
    shape = list(input.shape)
    n, c, out_size = shape[0], shape[1], [shape[0]] + shape[2:]
    if list(target.shape[1:]) != shape[2:]:
        raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    x, t = input.contiguous(), target.contiguous()
    x = x.view(n, c, 1, -1) if x.numel() else x.view(n, c, 0, 0)
    t = t.view(n, 1, -1) if t.numel() else t.view(n, 0, 0)
    out, total = _E.nll_loss2d_forward(x, t, weight, reduction, ignore_index)
    return (out.view(out_size) if reduction == 0 else out), total


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'):
    """The negative log-likelihood of ``target`` classes under log-probabilities ``input`` (class dim 1).

    >>> import ember
    >>> logp = ember.tensor([[0.1, 0.9], [0.8, 0.2]]).log()
    >>> round(nll_loss(logp, ember.tensor([1, 0])).item(), 4)
    0.1643
    """
    reduction = _resolve(size_average, reduce, reduction)
    return _nll_nd(input, target, weight, _REDUCTION_ENUM[reduction], ignore_index)[0]


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean',
                  label_smoothing=0.0):
    """log_softmax over the class dim (1, or 0 for unbatched input) then nll_loss; ``target`` holds class
    indices or class probabilities (same shape as ``input``); ``label_smoothing`` mixes in the uniform
    distribution as torch does.

    >>> import ember
    >>> x = ember.tensor([[2.0, 0.5, -1.0]])
    >>> round(cross_entropy(x, ember.tensor([0])).item(), 4)
    0.2413
    """
    reduction = _resolve(size_average, reduce, reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    nd = input.dim()
    class_dim = 0 if nd == 1 else 1
    if nd == target.dim() and input.shape == target.shape:      # as torch: same shapes mean class probabilities
        return _cross_entropy_probs(input, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    logp = input.log_softmax(class_dim)
    red = _REDUCTION_ENUM[reduction]
    nll, total = _nll_nd(logp, target, weight, red, ignore_index)
    if label_smoothing <= 0:
        return nll
    n_classes = logp.size(class_dim)
    if weight is not None:
        smooth = -(logp * weight.view([-1 if d == class_dim else 1 for d in range(logp.dim())])).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = _E.where(target == ignore_index, 0.0, smooth)
    if red == 1:     # nll's total_weight is the sum of the kept samples' weights (their count without weights)
        ret = smooth.sum() / total
    else:
        ret = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + ret * (label_smoothing / n_classes)


def _cross_entropy_probs(input, target, weight, reduction, ignore_index, label_smoothing, class_dim):
    """-sum(target * log_softmax(input)) over the class dim, optionally class-weighted."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_dtype_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    n_classes = input.size(class_dim) if input.dim() > 0 else 0
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    logp = input.log_softmax(class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * weight.view([-1 if d == class_dim else 1 for d in range(input.dim())])
    if reduction == 'mean':
        total = -prod.sum()
        return total / (input.numel() // n_classes) if input.numel() else total * math.nan
    if reduction == 'sum':
        return -prod.sum()
    return -prod.sum(class_dim)


_DTYPE_NAMES = {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'bfloat16': 'BFloat16', 'int64': 'Long',
                'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool'}


def _dtype_name(dt):
    return _DTYPE_NAMES.get(dt.name, dt.name)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction='mean'):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    reduction = _resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if input.numel() and bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    _no_grad_arg('binary_cross_entropy', 'weight', weight)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        weight = weight.expand(tuple(input.shape))      # torch broadcasts the weight to the input's shape
    return _E.binary_cross_entropy(input, target, weight, _REDUCTION_ENUM[reduction])


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction='mean',
                                     pos_weight=None):
    """Sigmoid + binary cross-entropy in one numerically stable expression:
    (1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x), torch's operator (BinaryCrossEntropyWithLogitsBackward0)."""
    reduction = _resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    _no_grad_arg('binary_cross_entropy_with_logits', 'weight', weight)
    _no_grad_arg('binary_cross_entropy_with_logits', 'pos_weight', pos_weight)
    return _E.binary_cross_entropy_with_logits(input, target, weight, pos_weight, _REDUCTION_ENUM[reduction])


def _logsigmoid(x):
    from . import logsigmoid
    return logsigmoid(x)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """log(1 + exp(-y x))."""
    reduction = _resolve(size_average, reduce, reduction)
    _warn_size(input, target)
    return _reduce(-_logsigmoid(target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction='mean'):
    """sum_{i != y} max(0, margin - x[y] + x[i])^p / C, per sample."""
    reduction = _resolve(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    _no_grad_arg('multi_margin_loss', 'weight', weight)
    x = input if input.dim() > 1 else input.unsqueeze(0)
    t = target.reshape(-1)
    xy = x.gather(1, t.unsqueeze(1))
    z = (x - xy + margin).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t).unsqueeze(1)
    not_y = _E.arange(x.size(1), device=x.device).unsqueeze(0) != t.unsqueeze(1)
    loss = (z * not_y).sum(1) / x.size(1)
    if input.dim() <= 1:
        loss = loss.squeeze(0) if target.dim() == 0 else loss
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """sum over target classes j (listed first in ``target``, ended by -1) and non-target classes i of
    max(0, 1 - (x[j] - x[i])), divided by C."""
    reduction = _resolve(size_average, reduce, reduction)
    x = input if input.dim() > 1 else input.unsqueeze(0)
    t = target if target.dim() > 1 else target.unsqueeze(0)
    if tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    n, c = x.shape
    # the valid prefix of each row (up to the first -1), and which classes are targets
    rows = t.tolist()
    valid = [[False] * c for _ in range(n)]
    is_target = [[False] * c for _ in range(n)]
    for r, row in enumerate(rows):
        for k, j in enumerate(row):
            if j < 0:
                break
            if j >= c:
                raise RuntimeError(f"multilabel_margin_loss: target index {j} is out of bounds for {c} classes")
            valid[r][k] = True
            is_target[r][j] = True
    from ..._creation import tensor as _tensor
    valid = _tensor(valid, device=x.device)
    not_target = _tensor(is_target, device=x.device).logical_not()
    xy = x.gather(1, _E.where(valid, t, 0))                            # (N, T): scores of the targets
    z = (1 - xy.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)            # (N, T, C)
    loss = (z * (valid.unsqueeze(2) & not_target.unsqueeze(1))).sum((1, 2)) / c
    if input.dim() <= 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


# --- regression ---------------------------------------------------------------------

def mse_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None):
    """(input - target)².

    >>> import ember
    >>> mse_loss(ember.tensor([1., 2.]), ember.tensor([1., 4.])).item()
    2.0
    """
    _warn_size(input, target)
    reduction = _resolve(size_average, reduce, reduction)
    if weight is not None:
        d = input - target
        return _weighted(d * d, weight, reduction, input)
    if input.shape != target.shape:             # torch broadcasts first, then calls its operator
        input, target = _E.broadcast_tensors([input, target])
    return _E.mse_loss(input, target, _REDUCTION_ENUM[reduction])


def l1_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None):
    _warn_size(input, target)
    reduction = _resolve(size_average, reduce, reduction)
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, reduction, input)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0):
    """0.5 d²/beta where |d| < beta, else |d| - 0.5 beta."""
    _warn_size(input, target)
    reduction = _resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    z = (input - target).abs()
    if beta == 0:
        return _reduce(z, reduction)
    loss = _E.where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction='mean', delta=1.0, weight=None):
    """0.5 d² where |d| < delta, else delta (|d| - 0.5 delta)."""
    _warn_size(input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta.")
    z = (input - target).abs()
    loss = _E.where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta)
    if weight is not None:
        return _weighted(loss, weight, reduction, input, mean_by_weight=False)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction='mean', log_target=False):
    """target * (log target - input), with ``input`` given as log-probabilities."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS + ('batchmean',):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == 'mean':
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        pos = target > 0
        # xlogy(t, t): 0 where t == 0 (log of a safe 1 there keeps the gradient finite)
        loss = target * _E.where(pos, target, 1).log() - target * input
    if reduction == 'batchmean':
        return loss.sum() / input.size(0) if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        safe = _E.where(target > 1, target, 1)
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        loss = loss + stirling * (target > 1)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean'):
    """0.5 (log var + (input - target)² / var), var clamped at ``eps`` (without changing its gradient)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _E.full(tuple(input.shape), float(var), dtype=input.dtype, device=input.device)
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.size(-1) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # clamp without touching the gradient: var + (clamped - var).detach()
    var = var + (var.clamp_min(eps) - var).detach()
    d = input - target
    loss = (var.log() + d * d / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# --- embeddings and ranking ---------------------------------------------------------------

def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    reduction = _resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.shape != input2.shape:
        raise RuntimeError(f"cosine_embedding_loss: Input1 and Input2 must have the same shape, but got "
                           f"{list(input1.shape)} and {list(input2.shape)}")
    d = input1.dim() - 1
    if target.dim() != d:
        raise RuntimeError(f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + eps
    mag2 = (input2 * input2).sum(d) + eps
    cos = prod / (mag1 * mag2).sqrt()
    loss = (1 - cos) * (target == 1) + (cos - margin).clamp_min(0) * (target == -1)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'):
    """max(0, -y (x1 - x2) + margin)."""
    reduction = _resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    loss = (margin - input).clamp_min(0) * (target != 1) + input * (target != -1)
    return _reduce(loss, reduction)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6):
    from . import pairwise_distance     # ember.nn.functional's (declared with the nn ops)
    return pairwise_distance(x1, x2, p, eps)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction='mean'):
    """max(d(a, p) - d(a, n) + margin, 0) with the p-norm distance (``swap``: use min(d(a, n), d(p, n)))."""
    reduction = _resolve(size_average, reduce, reduction)
    a, pdim, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pdim == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pdim}D, and negative {n}D inputs")
    if margin <= 0:
        raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _E.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction='mean'):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                         "instead")
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _E.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# Autocast: torch's losses are single ATen operators in its CPU float32 list; ember's are compositions,
# so each gets that list's policy here, by torch's operator name (the table: ember/_ops/autocast_policy.py).
from ...amp.autocast_mode import _autocast_composite   # noqa: E402
for _fn, _op in (('cross_entropy', 'cross_entropy_loss'), ('nll_loss', 'nll_loss'), ('mse_loss', 'mse_loss'),
                 ('l1_loss', 'l1_loss'), ('smooth_l1_loss', 'smooth_l1_loss'), ('huber_loss', 'huber_loss'),
                 ('binary_cross_entropy', 'binary_cross_entropy'), ('kl_div', 'kl_div'),
                 ('binary_cross_entropy_with_logits', 'binary_cross_entropy_with_logits'),
                 ('soft_margin_loss', 'soft_margin_loss'), ('multi_margin_loss', 'multi_margin_loss'),
                 ('multilabel_margin_loss', 'multilabel_margin_loss'), ('poisson_nll_loss', 'poisson_nll_loss'),
                 ('cosine_embedding_loss', 'cosine_embedding_loss'), ('margin_ranking_loss', 'margin_ranking_loss'),
                 ('hinge_embedding_loss', 'hinge_embedding_loss'), ('triplet_margin_loss', 'triplet_margin_loss')):
    globals()[_fn] = _autocast_composite(_op)(globals()[_fn])
del _fn, _op
