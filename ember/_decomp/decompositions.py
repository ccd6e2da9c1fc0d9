"""Decompositions: operators written as Python functions of other aten operators (torch/_decomp/decompositions.py).

Each entry is registered under the OpOverloads it replaces; make_fx calls it with the arguments the operator
received (the mode's ``args``/``kwargs``, so defaults are the schema's) and records the operators it calls.
A decomposition returns ``NotImplemented`` where it does not apply, and the operator is recorded as it is.
Formulas follow torch's own decompositions, so a table from ``get_decompositions`` gives the operators torch's
does wherever ember has them (ember folds torch's ``.Scalar`` overloads into ``.Tensor`` ones, so ``x * 0.5``
is ``mul.Tensor`` in both, and ``x > 0`` is ``gt.Tensor`` here, ``gt.Scalar`` there).

The first group is torch's own CompositeImplicitAutograd definitions of operators ember gives fused kernels
(``primitive_because`` in the registry): make_fx applies them by default, so that graphs show what torch's
do (``t`` and ``addmm`` for ``linear``; ``mm``/``bmm`` and views for ``matmul``).
"""
import math

import ember
from ember.ops import aten

DECOMPOSITIONS = {}          # OpOverload -> function
TORCH_COMPOSITES = set()     # the operators of the first group


def register_decomposition(ops, registry=None, *, composite=False):
    """Decorator: register the function as the decomposition of each OpOverload in ``ops``."""
    ops = ops if isinstance(ops, (list, tuple)) else [ops]

    def deco(fn):
        for op in ops:
            (DECOMPOSITIONS if registry is None else registry)[op] = fn
            if composite:
                TORCH_COMPOSITES.add(op)
        return fn
    return deco


# --- torch's composite definitions of ember's fused primitives ------------------------------------------

@register_decomposition(aten.linear.default, composite=True)
def linear(input, weight, bias=None):
    # aten/src/ATen/native/Linear.cpp: addmm for a matrix (or a contiguous 3-d input folded into one), else
    # matmul and an in-place add of the bias
    dim = input.dim()
    if dim == 2 and bias is not None:
        return aten.addmm.default(bias, input, aten.t.default(weight))
    if bias is not None and input.is_contiguous() and (dim == 3 or bias.dim() == 1) and dim > 0:
        sizes = list(input.shape)
        flat = _reshape(input, [math.prod(sizes[:-1]), sizes[-1]])
        out = aten.addmm.default(bias, flat, aten.t.default(weight))
        return aten.view.default(out, sizes[:-1] + [out.shape[1]])
    out = aten.matmul.default(input, aten.t.default(weight))
    if bias is not None:
        out = aten.add_.Tensor(out, bias) if not out.requires_grad or out.grad_fn is not None else \
            aten.add.Tensor(out, bias)
    return out


def _should_fold(tensor1, tensor2):
    """aten's should_fold: a batched matrix times a matrix/vector becomes one mm on the folded batch (when that
    needs no copy). Like aten it transposes tensor2 first when that is the larger one."""
    larger = tensor1.dim() >= tensor2.dim()
    t1 = tensor1 if larger else aten.transpose.int(tensor2, -2, -1)
    dim_t2 = tensor2.dim() if larger else tensor1.dim()
    if not (t1.dim() >= 3 and dim_t2 <= 2):
        return False
    if (tensor2 if larger else tensor1).requires_grad:     # the smaller one needs a gradient
        return True
    if tensor1.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, stride = t1.shape, t1.stride()
    return all(stride[i] == stride[i + 1] * shape[i + 1] for i in range(t1.dim() - 2))


def _reshape(x, shape):
    """aten's reshape: a view when the strides allow one, else a contiguous copy and _unsafe_view."""
    try:
        return aten.view.default(x, shape)
    except RuntimeError:
        return aten._unsafe_view.default(aten.clone.default(x, memory_format=ember.contiguous_format), shape)


def _broadcast_shapes(a, b):
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        out.append(y if x == 1 else x)
    return out[::-1]


@register_decomposition(aten.matmul.default, composite=True)
def matmul(tensor1, tensor2):
    # aten/src/ATen/native/LinearAlgebra.cpp: _matmul_impl
    d1, d2 = tensor1.dim(), tensor2.dim()
    if d1 == 0 or d2 == 0:
        return NotImplemented          # the operator's own error message
    if d1 == 1 and d2 == 1:
        return aten.dot.default(tensor1, tensor2)
    if d1 == 2 and d2 == 1:
        return aten.mv.default(tensor1, tensor2)
    if d1 == 1 and d2 == 2:
        return aten.squeeze.dims(aten.mm.default(aten.unsqueeze.default(tensor1, 0), tensor2), [0])
    if d1 == 2 and d2 == 2:
        return aten.mm.default(tensor1, tensor2)
    if _should_fold(tensor1, tensor2):
        transpose = d2 > d1
        t1 = aten.transpose.int(tensor2, -1, -2) if transpose else tensor1
        t2 = tensor2 if not transpose else (aten.t.default(tensor1) if d1 == 2 else tensor1)
        sizes1 = list(t1.shape)
        output_shape = sizes1[:-1]
        folded = math.prod(output_shape)
        if t2.dim() == 2:
            output_shape.append(t2.shape[1])
        t1_folded = _reshape(t1, [folded, sizes1[-1]])
        if t2.dim() == 2:
            out = aten._unsafe_view.default(aten.mm.default(t1_folded, t2), output_shape)
            return aten.contiguous.default(aten.transpose.int(out, -1, -2)) if transpose else out
        return aten._unsafe_view.default(aten.mv.default(t1_folded, t2), output_shape)
    n = tensor1.shape[-2] if d1 > 1 else 1
    m1 = tensor1.shape[-1]
    batch1 = list(tensor1.shape[:max(d1 - 2, 0)])
    m2 = tensor2.shape[-2] if d2 > 1 else tensor2.shape[0]
    p = tensor2.shape[-1] if d2 > 1 else 1
    batch2 = list(tensor2.shape[:max(d2 - 2, 0)])
    output_shape = _broadcast_shapes(batch1, batch2)
    b = math.prod(output_shape)
    t1 = _reshape(aten.expand.default(tensor1, output_shape + [n, m1]), [b, n, m1])
    vector_rhs = d2 == 1
    t2 = aten.expand.default(tensor2, output_shape + ([m2] if vector_rhs else [m2, p]))
    if vector_rhs:
        t2 = aten.unsqueeze.default(t2, -1)
    t2 = _reshape(t2, [b, m2, p])
    if d1 > 1:
        output_shape.append(n)
    if d2 > 1:
        output_shape.append(p)
    out = aten.bmm.default(t1, t2)
    if vector_rhs:
        out = aten.squeeze.dims(out, [-1])
    return aten._unsafe_view.default(out, output_shape)


# --- activations ---------------------------------------------------------------------------------------

@register_decomposition(aten.gelu.default)
def gelu(self, approximate='none'):
    if approximate == 'tanh':
        kBeta = math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5
        x_cube = self * self * self
        inner = kBeta * (self + 0.044715 * x_cube)
        return 0.5 * self * (1 + aten.tanh.default(inner))
    return self * 0.5 * (1 + aten.erf.default(self * (1 / math.sqrt(2))))


@register_decomposition(aten.gelu_backward.default)
def gelu_backward(grad, self, approximate='none'):
    if approximate == 'tanh':
        kBeta = math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5
        x_sq = self * self
        inner = kBeta * (self + 0.044715 * x_sq * self)
        tanh_inner = aten.tanh.default(inner)
        left, right = 0.5 * self, 1 + tanh_inner
        left_derivative = 0.5 * right
        right_derivative = left * ((1 - tanh_inner * tanh_inner) * (kBeta * (1 + 3 * 0.044715 * x_sq)))
        return grad * (left_derivative + right_derivative)
    cdf = 0.5 * (1 + aten.erf.default(self * (1 / math.sqrt(2))))
    pdf = aten.exp.default(-0.5 * self * self) * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


@register_decomposition(aten.silu.default)
def silu(self):
    return self * aten.sigmoid.default(self)


@register_decomposition(aten.silu_backward.default)
def silu_backward(grad_output, self):
    sigmoid = 1 / (1 + aten.exp.default(-self))
    return grad_output * sigmoid * (1 + self * (1 - sigmoid))


@register_decomposition(aten.hardswish.default)
def hardswish(self):
    return self * aten.clamp.default(aten.clamp.default(self + 3, 0), None, 6) / 6


@register_decomposition(aten.hardsigmoid.default)
def hardsigmoid(self):
    return aten.clamp.default(aten.clamp.default(self + 3, 0), None, 6) / 6


@register_decomposition(aten.hardtanh.default)
def hardtanh(self, min_val=-1, max_val=1):
    return aten.clamp.default(self, min_val, max_val)


@register_decomposition(aten.leaky_relu.default)
def leaky_relu(self, negative_slope=0.01):
    return aten.where.self(self > 0, self, self * negative_slope)


@register_decomposition(aten.elu.default)
def elu(self, alpha=1, scale=1, input_scale=1):
    negcoef, poscoef, negiptcoef = alpha * scale, scale, input_scale
    return aten.where.self(self > 0, self * poscoef, aten.expm1.default(self * negiptcoef) * negcoef)


@register_decomposition(aten.softplus.default)
def softplus(self, beta=1, threshold=20):
    scaled = self * beta if beta != 1 else self
    log1p_exp = aten.log1p.default(aten.exp.default(scaled))
    if beta != 1:
        log1p_exp = log1p_exp / beta
    return aten.where.self(scaled > threshold, self, log1p_exp)


@register_decomposition(aten.log_sigmoid.default)
def log_sigmoid(self):
    # the stable form: min(x, 0) - log1p(exp(-|x|))
    return aten.clamp.default(self, None, 0) - aten.log1p.default(aten.exp.default(-aten.abs.default(self)))


@register_decomposition(aten.threshold_backward.default)
def threshold_backward(grad_output, self, threshold):
    return aten.where.self(self <= threshold, aten.zeros_like.default(grad_output), grad_output)


# --- softmax and normalization --------------------------------------------------------------------------

def _cast(x, dtype):
    return x if dtype is None else aten._to_copy.default(x, dtype=dtype)


@register_decomposition(aten.softmax.int)
def softmax(self, dim, dtype=None):
    x = _cast(self, dtype)
    if x.numel() == 0:
        return aten.exp.default(x)
    unnormalized = aten.exp.default(x - aten.amax.default(x, [dim], True))
    return unnormalized / aten.sum.dim_IntList(unnormalized, [dim], True)


@register_decomposition(aten.log_softmax.int)
def log_softmax(self, dim, dtype=None):
    x = _cast(self, dtype)
    if x.numel() == 0:
        return x
    shifted = x - aten.amax.default(x, [dim], True)
    return shifted - aten.log.default(aten.sum.dim_IntList(aten.exp.default(shifted), [dim], True))


@register_decomposition(aten._softmax_backward_data.default)
def softmax_backward_data(grad_output, output, dim, input_dtype):
    new_grad = grad_output * output
    return _cast(new_grad - output * aten.sum.dim_IntList(new_grad, [dim], True), input_dtype)


@register_decomposition(aten._log_softmax_backward_data.default)
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    grad_input = grad_output - aten.exp.default(output) * aten.sum.dim_IntList(grad_output, [dim], True)
    return _cast(grad_input, input_dtype)


@register_decomposition(aten.native_layer_norm.default)
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    axis = input.dim() - len(normalized_shape)
    dims = list(range(axis, input.dim()))
    var = aten.var.correction(input, dims, correction=0, keepdim=True)
    mean = aten.mean.dim(input, dims, True)
    rstd = aten.rsqrt.default(var + eps)
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


@register_decomposition(aten.native_batch_norm.default)
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if training:
        return NotImplemented       # updates the running statistics: the fused kernel keeps doing that
    shape = [1, -1] + [1] * (input.dim() - 2)
    invstd = aten.rsqrt.default(running_var + eps)
    out = (input - aten.reshape.default(running_mean, shape)) * aten.reshape.default(invstd, shape)
    if weight is not None:
        out = out * aten.reshape.default(weight, shape)
    if bias is not None:
        out = out + aten.reshape.default(bias, shape)
    empty = aten.zeros.default([0], dtype=input.dtype, device=input.device)
    return out, empty, aten.clone.default(empty)



# the fused recurrent cells (ember/_ops/rnn_cells.py) as the composite steps torch's CPU LSTM and GRU run, for
# exporters with no translation of them (ONNX); the workspaces are laid out as the kernels' are

def _cell_gates(input_gates, hidden_gates, input_bias, hidden_bias):
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    return input_gates, hidden_gates


@register_decomposition(aten._thnn_fused_lstm_cell.default)
def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    ig, hg = _cell_gates(input_gates, hidden_gates, input_bias, hidden_bias)
    i, f, g, o = (ig + hg).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, aten.cat.default([i, f, g, o], 1)


@register_decomposition(aten._thnn_fused_gru_cell.default)
def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    ig, hg = _cell_gates(input_gates, hidden_gates, input_bias, hidden_bias)
    ir, iz, in_ = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n), aten.cat.default([r, z, n, hx, hn], 1)

# --- products -------------------------------------------------------------------------------------------

@register_decomposition(aten.addmm.default)
def addmm(self, mat1, mat2, beta=1, alpha=1):
    out = alpha * aten.mm.default(mat1, mat2)
    if beta == 0:
        return out
    return beta * self + out


@register_decomposition(aten.baddbmm.default)
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    out = alpha * aten.bmm.default(batch1, batch2)
    if beta == 0:
        return out
    return beta * self + out


@register_decomposition(aten.t.default)
def t(self):
    # ember's `t` is itself a composite, so it never reaches make_fx: listed for torch's tables
    return aten.transpose.int(self, 0, 1) if self.dim() == 2 else self


@register_decomposition(aten.linear_backward.default)
def linear_backward(self, grad_output, weight, output_mask):
    grad_input = grad_weight = grad_bias = None
    go2 = aten.reshape.default(grad_output, [-1, grad_output.shape[-1]])
    if output_mask[0]:
        grad_input = aten.matmul.default(grad_output, weight)
    if output_mask[1]:
        grad_weight = aten.mm.default(aten.t.default(go2), aten.reshape.default(self, [-1, self.shape[-1]]))
    if output_mask[2]:
        grad_bias = aten.sum.dim_IntList(go2, [0], False)
    return grad_input, grad_weight, grad_bias


# --- pointwise composites -----------------------------------------------------------------------------

@register_decomposition(aten.addcmul.default)
def addcmul(self, tensor1, tensor2, value=1):
    return self + value * tensor1 * tensor2


@register_decomposition(aten.addcdiv.default)
def addcdiv(self, tensor1, tensor2, value=1):
    return self + value * (tensor1 / tensor2)


@register_decomposition(aten.lerp.Tensor)
def lerp(self, end, weight):
    return self + weight * (end - self)
