"""Neural-network operators: convolution, pooling, embedding, normalisation, im2col.

Primitives (a kernel each in _backends/cpu/nn_ops.py) are few and closed under differentiation,
so second-order gradients need nothing more:

* ``convolution`` covers both the convolution F(x, w) and its adjoint in x (``transposed=True``,
  i.e. conv_transpose). The gradient of F in x is the transposed convolution of the gradient, and
  the other way round. The gradient in w is ``convolution_backward_weight``, bilinear in (grad, input);
  its own derivatives are ``convolution`` calls again, so the three ops are closed under differentiation.
* pooling ops and their ``*_backward`` ops are each other's adjoints (linear in the gradient).
* ``native_layer_norm`` / ``native_batch_norm`` are fused (see NOTE [fused normalisation]); their
  formulas are written in ember ops (see `_stats` for how second derivatives stay exact).

Composites (conv2d, layer_norm, group_norm, pixel_shuffle, ...) are written in these and in other
families' ops. The functional API with torch.nn.functional's signatures is ember/nn/functional/_nn_ops.py.
"""
import numpy as np

from .._core.dtype import scalar_name as _tname, legacy_type_name, cpp_name
from .._core import dtype as _D
from .._core.storage import suggest_memory_format, channels_last_strides, contiguous_strides
from .._core.storage import with_layout as _with_layout
from .registry import declare
from .views import wrap_dim
from .._dispatch.ops_namespace import aten




def _shape_str(s):
    return '[' + ', '.join(str(int(x)) for x in s) + ']'


def _tup(v, n, name='stride', op='convolution'):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(v)}")
    return v




# --- convolution -------------------------------------------------------------------

def conv_output_size(isz, k, s, p, d):
    return tuple((i + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for i, kk, ss, pp, dd in zip(isz, k, s, p, d))


def conv_transpose_output_size(isz, k, s, p, d, op):
    return tuple((i - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1 for i, kk, ss, pp, dd, oo in zip(isz, k, s, p, d, op))


def _conv_params(input, weight, stride, padding, dilation, transposed, output_padding, groups):
    nd = weight.dim() - 2
    s, p, d = _tup(stride, nd, 'stride'), _tup(padding, nd, 'padding'), _tup(dilation, nd, 'dilation')
    op = _tup(output_padding, nd, 'output_padding') if transposed else (0,) * nd
    return nd, s, p, d, op


def _conv_dtypes(input, weight, bias, transposed, nd):
    """torch's checks and messages: a transposed convolution takes floating, complex and int64 types, a convolution
    any type but bool; a convolution names a bias of another type than the input first, then the weight's (a
    transposed one adds a bias of another type to its result, in the input's type)."""
    dt = input._dtype
    if transposed and not (dt.is_floating_point or dt.is_complex or dt.name == 'int64'):
        raise NotImplementedError(f'"slow_conv_transpose{3 if nd == 3 else 2}d_out_cpu" not implemented for '
                                  f"'{_tname(dt)}'")
    if bias is not None and bias._dtype is not dt and not transposed:
        raise RuntimeError(f"Input type ({cpp_name(dt)}) and bias type ({cpp_name(bias._dtype)}) should be the same")
    if dt is not weight._dtype:
        raise RuntimeError(f"expected scalar type {_tname(dt)} but found {_tname(weight._dtype)}")
    if dt.name == 'bool':
        raise NotImplementedError(f'"slow_conv2d_cpu" not implemented for \'Bool\'')


def _convolution_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    if weight.dim() < 3:
        raise RuntimeError(f"weight should have at least three dimensions, but got weight of size "
                           f"{_shape_str(weight.shape)}")
    nd, s, p, d, op = _conv_params(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    if input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}-dimensional input for {nd + 1}-dimensional weight "
                           f"{_shape_str(weight.shape)}, but got {input.dim()}-dimensional input of size "
                           f"{_shape_str(input.shape)} instead")
    if any(x <= 0 for x in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(x < 0 for x in p):
        raise RuntimeError("negative padding is not supported")
    if any(x <= 0 for x in d):
        raise RuntimeError("dilation should be greater than zero")
    if any(x < 0 for x in op):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    _conv_dtypes(input, weight, bias, transposed, nd)
    ish, wsh = tuple(input.shape), tuple(weight.shape)
    k = wsh[2:]
    if not transposed:
        if wsh[0] < groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but "
                               f"got weight of size {_shape_str(wsh)} instead")
        if wsh[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{_shape_str(wsh)}] instead")
        if ish[1] != wsh[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_shape_str(wsh)}, expected input"
                               f"{_shape_str(ish)} to have {wsh[1] * groups} channels, but got {ish[1]} channels "
                               f"instead")
        cout = wsh[0]
        padded = tuple(i + 2 * pp for i, pp in zip(ish[2:], p))
        eff = tuple(dd * (kk - 1) + 1 for kk, dd in zip(k, d))
        if any(a < b for a, b in zip(padded, eff)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                               f"actual input size")
        osz = conv_output_size(ish[2:], k, s, p, d)
    else:
        if ish[1] != wsh[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(wsh)}, expected input"
                               f"{_shape_str(ish)} to have {wsh[0]} channels, but got {ish[1]} channels instead")
        if wsh[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{_shape_str(wsh)}] instead")
        if any(o >= ss and o >= dd for o, ss, dd in zip(op, s, d)):
            names = ('depth', 'height', 'width')[-nd:] if nd <= 3 else [str(i) for i in range(nd)]
            parts = ([f"output_padding_{n}: {o}" for n, o in zip(names, op)] + [f"stride_{n}: {x}" for n, x in zip(names, s)]
                     + [f"dilation_{n}: {x}" for n, x in zip(names, d)])
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + ' '.join(parts))
        cout = wsh[1] * groups
        osz = conv_transpose_output_size(ish[2:], k, s, p, d, op)
        if any(o <= 0 for o in osz):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, ish[2:]))}). Calculated output "
                               f"size per channel: ({' x '.join(map(str, osz))}). Output size is too small")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given weight of size {_shape_str(wsh)}, expected bias to be 1-dimensional with {cout} "
                           f"elements, but got bias of size {_shape_str(bias.shape)} instead")
    out = (ish[0], cout) + tuple(osz)
    # mkldnn's layout rule (NOTE [channels_last outputs]): channels_last when the input or the weight is; a 3-D
    # convolution in float64 runs torch's slow kernel, which gives a contiguous result
    st = None if nd == 3 and input._dtype is _D.float64 else channels_last_strides(out, input, weight)
    return (out, input._dtype) if st is None else (out, input._dtype, st)


def _conv_weight_grad(x, g, weight_sizes, stride, padding, dilation, groups):
    """d<g, conv(x, w)>/dw, a primitive of its own (`convolution_backward_weight`): computing it as a convolution
    of x with g as the weight (batch and channels swapped) needs huge windows and was ~20x slower."""
    return aten.convolution_backward_weight.default(g, x, tuple(weight_sizes), stride, padding, dilation, groups)


def _conv_bw_meta(grad_output, input, weight_sizes, stride, padding, dilation, groups):
    return tuple(int(v) for v in weight_sizes), input._dtype


# Bilinear in (grad_output, input); both derivatives are convolutions again, so any order of gradients works.
declare('convolution_backward_weight(Tensor grad_output, Tensor input, SymInt[] weight_sizes, SymInt[] stride, '
        'SymInt[] padding, SymInt[] dilation, SymInt groups) -> Tensor', forward='transpose', meta=_conv_bw_meta, method=False,
        function=False,
        derivatives={
            'grad_output': lambda grad, input, stride, padding, dilation, groups:
                aten.convolution.default(input, grad, None, stride, padding, dilation, False, (0,) * len(stride), groups),
            'input': lambda grad, grad_output, input_sizes, stride, padding, dilation, groups:
                _conv_grad_input(grad_output, grad, input_sizes, stride, padding, dilation, False, None, groups)})


def _conv_grad_input(grad, weight, input_sizes, stride, padding, dilation, transposed, output_padding, groups):
    nd = len(input_sizes) - 2
    s, p, d = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd)
    if transposed:
        return aten.convolution.default(grad, weight, None, s, p, d, False, (0,) * nd, groups)
    k = tuple(weight.shape[2:])
    base = conv_transpose_output_size(tuple(grad.shape[2:]), k, s, p, d, (0,) * nd)
    op = tuple(i - b for i, b in zip(input_sizes[2:], base))
    return aten.convolution.default(grad, weight, None, s, p, d, True, op, groups)


def _conv_grad_weight(grad, input, weight_sizes, stride, padding, dilation, transposed, groups):
    nd = len(weight_sizes) - 2
    s, p, d = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd)
    if transposed:    # out = F^T(x, w): <grad, F^T(x, w)> = <F(grad, w), x>, so the roles of x and grad swap
        return _conv_weight_grad(grad, input, weight_sizes, s, p, d, groups)
    return _conv_weight_grad(input, grad, weight_sizes, s, p, d, groups)


def _conv_jvp(input, input_t, weight, weight_t, bias_t, *conv_args):
    """Forward derivative of convolution, bilinear in (input, weight) plus the bias."""
    out = None
    if input_t is not None:
        out = aten.convolution.default(input_t, weight, None, *conv_args)
    if weight_t is not None:
        t = aten.convolution.default(input, weight_t, None, *conv_args)
        out = t if out is None else out + t
    if bias_t is not None:
        t = bias_t.reshape([1, -1] + [1] * (input.dim() - 2))
        out = t if out is None else out + t
    return out


def _bias_grad(grad):
    return grad.sum([0] + list(range(2, grad.dim())))


declare('convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, '
        'SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor',
        meta=_convolution_meta, method=False, forward=lambda input, input_t, weight, weight_t, bias_t, stride, padding,
        dilation, transposed, output_padding, groups: _conv_jvp(input, input_t, weight, weight_t, bias_t, stride, padding,
                                                                dilation, transposed, output_padding, groups),
        derivatives={
            'input': lambda grad, weight, input_sizes, stride, padding, dilation, transposed, output_padding, groups:
                _conv_grad_input(grad, weight, input_sizes, stride, padding, dilation, transposed, output_padding,
                                 groups),
            'weight': lambda grad, input, weight_sizes, stride, padding, dilation, transposed, groups:
                _conv_grad_weight(grad, input, weight_sizes, stride, padding, dilation, transposed, groups),
            'bias': lambda grad: _bias_grad(grad)})


def _unbatched(input, nd, name):
    if input.dim() == nd + 1:
        return True
    if input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {_shape_str(input.shape)}")
    return False


def conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, name):
    """conv1d/conv2d/conv3d: unbatched inputs, 'same'/'valid' string padding, then ``convolution``."""
    unb = _unbatched(input, nd, name)
    x = input.unsqueeze(0) if unb else input
    s, d = _tup(stride, nd, 'stride'), _tup(dilation, nd, 'dilation')
    if isinstance(padding, str):
        out = _conv_string_padding(x, weight, bias, s, padding, d, groups, nd)
    else:
        out = aten.convolution.default(x, weight, bias, s, _tup(padding, nd, 'padding'), d, False, (0,) * nd, groups)
    return out.squeeze(0) if unb else out


def _conv_string_padding(x, weight, bias, s, padding, d, groups, nd):
    if padding == 'valid':
        return aten.convolution.default(x, weight, bias, s, (0,) * nd, d, False, (0,) * nd, groups)
    if padding != 'same':
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(ss != 1 for ss in s):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [dd * (kk - 1) for dd, kk in zip(d, weight.shape[2:])]
    left = [t // 2 for t in total]
    if all(t % 2 == 0 for t in total):
        return aten.convolution.default(x, weight, bias, s, tuple(left), d, False, (0,) * nd, groups)
    # an odd total padding puts the extra element on the right: as torch does, pad the input by it explicitly
    # (so the convolution saves the padded copy, not the input) and convolve with the symmetric rest
    from ember._warn import warnings
    warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
                  "of the input be created", UserWarning, stacklevel=8)
    pads = []
    for t in reversed(total):
        pads += [0, t % 2]
    x = aten.constant_pad_nd.default(x, pads, 0)
    return aten.convolution.default(x, weight, bias, s, tuple(left), d, False, (0,) * nd, groups)


def conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    unb = _unbatched(input, nd, name)
    x = input.unsqueeze(0) if unb else input
    out = aten.convolution.default(x, weight, bias, _tup(stride, nd, 'stride'), _tup(padding, nd, 'padding'),
                _tup(dilation, nd, 'dilation'), True, _tup(output_padding, nd, 'output_padding'), groups)
    return out.squeeze(0) if unb else out


_CONV_ARGS = 'Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride={one}, SymInt[{n}] padding={zero}, ' \
             'SymInt[{n}] dilation={one}, SymInt groups=1'
_CONVT_ARGS = 'Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride={one}, SymInt[{n}] padding={zero}, ' \
              'SymInt[{n}] output_padding={zero}, SymInt groups=1, SymInt[{n}] dilation={one}'
for _nd in (1, 2, 3):
    _fmt = dict(n=_nd, one=str([1] * _nd).replace(' ', ' '), zero=str([0] * _nd))
    declare(f'conv{_nd}d({_CONV_ARGS.format(**_fmt)}) -> Tensor', method=False,
            composite=(lambda nd: lambda input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1:
                       conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, f'conv{nd}d'))(_nd))
    _str_args = _CONV_ARGS.format(**_fmt).replace('SymInt[%d] padding=%s' % (_nd, _fmt['zero']), 'str padding="valid"')
    declare(f'conv{_nd}d.padding({_str_args}) -> Tensor', method=False,
            composite=(lambda nd: lambda input, weight, bias=None, stride=1, padding='valid', dilation=1, groups=1:
                       conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, f'conv{nd}d'))(_nd))
    declare(f'conv_transpose{_nd}d.input({_CONVT_ARGS.format(**_fmt)}) -> Tensor', method=False,
            composite=(lambda nd: lambda input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                       dilation=1: conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                                                     dilation, nd, f'conv_transpose{nd}d'))(_nd))


# --- im2col / col2im ---------------------------------------------------------------

def _pair(v, name):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * 2
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    return v


def _im2col_meta(self, kernel_size, dilation, padding, stride):
    k, d, p, s = _pair(kernel_size, 'kernel_size'), _pair(dilation, 'dilation'), _pair(padding, 'padding'), \
        _pair(stride, 'stride')
    if self.dim() not in (3, 4) or any(x == 0 for x in tuple(self.shape)[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape_str(self.shape)}")
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0 or min(p) < 0:
        raise RuntimeError(f"kernel size, stride and dilation should be greater than zero, and padding non-negative, "
                           f"but got kernel_size={list(k)} stride={list(s)} dilation={list(d)} padding={list(p)}")
    sh = tuple(self.shape)
    H, W = sh[-2:]
    oh, ow = conv_output_size((H, W), k, s, p, d)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({H}, {W}), kernel_size=({k[0]}, {k[1]}), dilation=("
                           f"{d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of sliding "
                           f"blocks as ({oh}, {ow}), but its components must be at least one.")
    return sh[:-3] + (sh[-3] * k[0] * k[1], oh * ow), self._dtype


def _col2im_meta(self, output_size, kernel_size, dilation, padding, stride):
    o = _pair(output_size, 'output_size')
    k, d, p, s = _pair(kernel_size, 'kernel_size'), _pair(dilation, 'dilation'), _pair(padding, 'padding'), \
        _pair(stride, 'stride')
    sh = tuple(self.shape)
    if self.dim() not in (2, 3) or sh[-1] == 0 or sh[-2] == 0:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape_str(sh)}")
    if sh[-2] % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={sh[-2]} and kernel_size=({k[0]}, {k[1]})")
    nb = conv_output_size(o, k, s, p, d)
    if nb[0] * nb[1] != sh[-1] or min(nb) < 1:
        raise RuntimeError(f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, "
                           f"{d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {nb[0]} * {nb[1]} = "
                           f"{nb[0] * nb[1]}, but got input.size(2)={sh[-1]}.")
    return sh[:-2] + (sh[-2] // (k[0] * k[1]),) + o, self._dtype


declare('im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor', forward='linear',
        meta=_im2col_meta, method=False,
        derivatives={'self': lambda grad, self_sizes, kernel_size, dilation, padding, stride:
                     aten.col2im.default(grad, tuple(self_sizes[-2:]), kernel_size, dilation, padding, stride)})
declare('col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, '
        'int[2] stride) -> Tensor', forward='linear', meta=_col2im_meta, method=False,
        derivatives={'self': lambda grad, kernel_size, dilation, padding, stride:
                     aten.im2col.default(grad, kernel_size, dilation, padding, stride)})


# --- pooling -------------------------------------------------------------------------

def pool_output_size(i, k, s, p, d, ceil):
    o = (i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def _ntup(v, n, name):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise RuntimeError(f"It is expected {name} equals to {n}, but got size {len(v)}")
    return v


def _pool_args(kernel_size, stride, padding, dilation, nd):
    k = _ntup(kernel_size, nd, 'kernel_size')
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _ntup(stride, nd, 'stride')
    p, d = _ntup(padding, nd, 'padding'), _ntup(dilation, nd, 'dilation')
    if min(s) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got {k}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {d}")
    return k, s, p, d


def _pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode, nd):
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, nd)
    sh = tuple(self.shape)
    if self.dim() not in (nd + 1, nd + 2) or any(x == 0 for x in sh[-nd - 1:]):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    for pp, kk, dd in zip(p, k, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    osz = tuple(pool_output_size(i, kk, ss, pp, dd, ceil_mode) for i, kk, ss, pp, dd in zip(sh[-nd:], k, s, p, d))
    if min(osz) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, sh[-nd - 1:]))}). Calculated output size: "
                           f"({'x'.join(map(str, (sh[-nd - 1],) + osz))}). Output size is too small")
    return sh[:-nd] + osz


def _check_pool_grad(grad_output, expected):
    g, e = tuple(grad_output.shape), tuple(expected)
    if g != e:
        if len(g) != len(e):
            raise RuntimeError(f"Expected a tensor of dimension {len(e)} but got: dimension {len(g)}")
        i = next(i for i in range(len(e)) if g[i] != e[i])
        raise RuntimeError(f"Expected a tensor of dimension {len(e)} and tensor.size[{i}] == {e[i]} but got: "
                           f"dimension {len(g)} and tensor.size[{i}] = {g[i]}")


def _gather_pooled(g, indices, nd=2):
    """out[..., i] = g_plane[..., indices[..., i]]: the adjoint of the max-pool scatter."""
    lead = tuple(indices.shape[:-nd])
    flat = g.reshape(lead + (-1,))
    idx = indices.reshape(lead + (-1,))
    return flat.gather(-1, idx).reshape(tuple(indices.shape))


def _declare_pools(nd, schemas):
    """Declare max_pool{nd}d_with_indices, avg_pool{nd}d and their backwards (schemas written out at the calls)."""
    name = f'max_pool{nd}d'

    def max_meta(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        shape = _pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode, nd)
        if self._dtype.name == 'bool':
            raise RuntimeError(f"\"{name}\" not implemented for 'Bool'")
        from .._core import dtype as D
        return [_with_layout((shape, self._dtype), self), _with_layout((shape, D.int64), self)]

    def max_grad_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
        _check_pool_grad(grad_output, _pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode, nd))
        if tuple(indices.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"Expected indices of shape {_shape_str(grad_output.shape)}, but got "
                               f"{_shape_str(indices.shape)}")
        return _with_layout((tuple(self.shape), self._dtype), self)

    def avg_meta(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        if self._dtype.name == 'bool':
            raise RuntimeError(f"\"avg_pool{nd}d\" not implemented for 'Bool'")
        shape = _pool_meta(self, kernel_size, stride, padding, 1, ceil_mode, nd)
        # torch's avg_pool3d gives contiguous results (ember's kernel keeps a channels_last_3d input's order)
        return _with_layout((shape, self._dtype), self) if nd == 2 else (shape, self._dtype, contiguous_strides(shape))

    def avg_grad_meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override):
        _check_pool_grad(grad_output, _pool_meta(self, kernel_size, stride, padding, 1, ceil_mode, nd))
        return _with_layout((tuple(self.shape), self._dtype), self) if nd == 2 else (tuple(self.shape), self._dtype)

    max_schema, max_backward_schema, avg_schema, avg_backward_schema = schemas
    declare(max_schema, meta=max_meta, method=False, nn=True, forward='transpose',
            derivatives={'self': lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
                         max_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1)})
    max_backward = declare(max_backward_schema, meta=max_grad_meta, method=False, forward='linear',
                           derivatives={'grad_output': lambda grad, indices: _gather_pooled(grad, indices, nd),
                                        'self': lambda grad: aten.zeros_like.default(grad)})
    avg = declare(avg_schema, meta=avg_meta, method=False, nn=True, forward='linear',
                  derivatives={'self': lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override: avg_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                                                              count_include_pad, divisor_override)})
    avg_backward = declare(avg_backward_schema, meta=avg_grad_meta, method=False, forward='linear',
                           derivatives={'grad_output': lambda grad, kernel_size, stride, padding, ceil_mode,
                                        count_include_pad, divisor_override: avg(grad, kernel_size, stride, padding,
                                                                                 ceil_mode, count_include_pad,
                                                                                 divisor_override),
                                        'self': lambda grad: aten.zeros_like.default(grad)})


_declare_pools(2, (
    'max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], '
    'int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)',
    'max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, '
    'int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, '
    'Tensor indices) -> Tensor',
    'avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, '
    'bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor',
    'avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, '
    'int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor'))
_declare_pools(3, (
    'max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], '
    'int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)',
    'max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, '
    'int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, '
    'Tensor indices) -> Tensor',
    'avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, '
    'bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor',
    'avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, '
    'int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor'))


def _declare_adaptive_avg(nd):
    def meta(self, output_size):
        o = _ntup(output_size, nd, 'output_size')
        sh = tuple(self.shape)
        if self.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"adaptive_avg_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                               f"{_shape_str(sh)}")
        for i in range(1, self.dim()):
            if sh[i] == 0:
                raise RuntimeError(f"adaptive_avg_pool{nd}d(): Expected input to have non-zero size for non-batch "
                                   f"dimensions, but input has sizes {_shape_str(sh)} with dimension {i} being empty")
        if min(o) < 0:
            raise RuntimeError(f"adaptive_avg_pool{nd}d: elements of output_size must be greater than or equal to 0 "
                               f"but received {{{', '.join(map(str, o))}}}")
        m = sh[:-nd] + o, self._dtype
        return _with_layout(m, self) if nd == 2 else m       # as avg_pool3d, adaptive_avg_pool3d: contiguous

    name = f'_adaptive_avg_pool{nd}d'
    declare(f'{name}(Tensor self, SymInt[{nd}] output_size) -> Tensor', meta=meta, method=False, forward='linear',
            derivatives={'self': lambda grad, self: getattr(aten, f'{name}_backward').default(grad, self)})
    declare(f'{name}_backward(Tensor grad_output, Tensor self) -> Tensor', method=False, forward='linear',
            meta=lambda grad_output, self: (_with_layout((tuple(self.shape), self._dtype), self) if nd == 2
                                            else (tuple(self.shape), self._dtype)),
            derivatives={'grad_output': lambda grad, grad_output_sizes: getattr(aten, name).default(grad, tuple(grad_output_sizes[-nd:])),
                         'self': lambda grad: aten.zeros_like.default(grad)})


_declare_adaptive_avg(2)
_declare_adaptive_avg(3)


def _declare_adaptive_avg_composite(nd):
    """torch's adaptive_avg_pool2d/3d (CompositeImplicitAutograd): a 1x1 (1x1x1) output is the mean over the
    window dimensions, so the graph shows MeanBackward1 as torch's does (AdaptiveAveragePooling.cpp; torch then
    restrides a channels_last result in place, which only changes the strides of size-1 dimensions)."""
    name = f'adaptive_avg_pool{nd}d'
    pool = getattr(aten, f'_{name}').default

    def composite(self, output_size):
        o = (output_size,) * nd if isinstance(output_size, (int, np.integer)) else tuple(output_size)
        if len(o) != nd:
            raise RuntimeError(f"{name}: output_size must be {nd}")
        if min(o) < 0:
            received = ', '.join(map(str, o)) if nd == 2 else f"{o[0]}, {o[1]},{o[2]}"     # torch's spacing
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                               f"{{{received}}}")
        if all(x == 1 for x in o):
            return aten.mean.dim(self, list(range(-1, -nd - 1, -1)), True)
        return pool(self, o)

    declare(f'{name}(Tensor self, SymInt[{nd}] output_size) -> Tensor', composite=composite, method=False,
            function=False)


_declare_adaptive_avg_composite(2)
_declare_adaptive_avg_composite(3)


def _adaptive_max_meta(self, output_size):
    sh = tuple(self.shape)
    if self.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {_shape_str(sh)}")
    for i in range(1, self.dim()):
        if sh[i] == 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_shape_str(sh)} with dimension {i} being empty")
    o = _pair(output_size, 'output_size')
    if not self._dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_max_pool2d\" not implemented for '{_tname(self._dtype)}'")
    from .._core import dtype as D
    return [_with_layout((sh[:-2] + o, self._dtype), self), _with_layout((sh[:-2] + o, D.int64), self)]


def _adaptive_max_grad_meta(grad_output, self, indices):
    return _with_layout((tuple(self.shape), self._dtype), self)


declare('adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)', forward='transpose', meta=_adaptive_max_meta,
        method=False,
        derivatives={'self': lambda grad, self, result1:
                     aten.adaptive_max_pool2d_backward.default(grad, self, result1)})
declare('adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor', forward='linear',
        meta=_adaptive_max_grad_meta, method=False,
        derivatives={'grad_output': lambda grad, indices: _gather_pooled(grad, indices),
                     'self': lambda grad: aten.zeros_like.default(grad)})


# --- embedding -----------------------------------------------------------------------

def _check_indices(indices, name):
    if indices._dtype.name not in ('int64', 'int32'):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {legacy_type_name(indices._dtype)} instead (while checking arguments "
                           f"for {name})")


def _embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    _check_indices(indices, 'embedding')
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    return tuple(indices.shape) + (weight.shape[1],), weight._dtype


def _embedding_bwd_meta(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    _check_indices(indices, 'embedding_backward')
    return (int(num_weights), grad_output.shape[-1]), grad_output._dtype


def _embedding_double_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The adjoint of embedding_dense_backward: gather the rows again."""
    # torch's embedding_dense_double_backward ignores scale_grad_by_freq; ember matches torch
    r = aten.embedding.default(grad, indices)
    if padding_idx is not None and padding_idx >= 0:
        keep = (indices == padding_idx).logical_not().unsqueeze(-1)
        r = r * keep
    return r


def _embedding_weight_grad(grad, weight_sizes, indices, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        return _embedding_sparse_backward(grad, indices, weight_sizes[0], padding_idx, scale_grad_by_freq)
    return aten.embedding_dense_backward.default(grad, indices, weight_sizes[0], padding_idx, scale_grad_by_freq)


def _embedding_sparse_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """torch's embedding_sparse_backward: a COO gradient with one (uncoalesced) row per looked-up index, those
    at ``padding_idx`` left out, so that an optimizer for sparse gradients (SparseAdam, SGD) touches only the rows
    the batch used."""
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    idx = indices.reshape(-1)
    values = grad.reshape(-1, grad.shape[-1])
    if padding_idx is not None and padding_idx >= 0:
        keep = (idx != padding_idx).nonzero().reshape(-1)
        idx, values = idx.index_select(0, keep), values.index_select(0, keep)
    return aten._sparse_coo_tensor_with_dims_and_tensors.default(
        1, 1, [int(num_weights), grad.shape[-1]], idx.reshape(1, -1).to(_D.int64), values)


declare('embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, '
        'bool sparse=False) -> Tensor', forward='linear', meta=_embedding_meta, method=False,
        derivatives={'weight': _embedding_weight_grad})
declare('embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, '
        'bool scale_grad_by_freq) -> Tensor', forward='linear', meta=_embedding_bwd_meta, method=False,
        derivatives={'grad_output': lambda grad, indices, num_weights, padding_idx, scale_grad_by_freq:
                     _embedding_double_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)})


def _renorm_meta(self, indices, max_norm, norm_type):
    _check_indices(indices, 'embedding_renorm_')
    if self.dim() != 2:
        raise RuntimeError(f"embedding_renorm_(): expected self to be 2-D, but got {self.dim()}-D")
    return tuple(self.shape), self._dtype


# embedding_renorm_ is the public in-place op (F.embedding's max_norm); the functional form is its base.
declare('embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor',
        meta=_renorm_meta, method=False, inplace=True, differentiable=False)


# --- normalisation ---------------------------------------------------------------------
# NOTE [fused normalisation] layer norm and batch norm are primitives with fused forward kernels because the
# composite (mean, sub, mul, sqrt, div) is slower on the GPT benchmark's shapes (figures in BENCHMARKS.md, "Fused
# normalisation"). The recorded backward is the formula below in ember ops (about ten elementwise passes); a
# first-order backward uses the fused kernel (first_order=).

def _ln_meta(input, normalized_shape, weight, bias, eps):
    ns = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(int(x) for x in normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{_shape_str(weight.shape)} and normalized_shape = {_shape_str(ns)}")
    if bias is not None and tuple(bias.shape) != ns:
        raise RuntimeError(f"Expected bias to be of same shape as normalized_shape, but got bias of shape "
                           f"{_shape_str(bias.shape)} and normalized_shape = {_shape_str(ns)}")
    sh = tuple(input.shape)
    if len(sh) < len(ns) or sh[len(sh) - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={_shape_str(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{_shape_str(sh)}")
    if input._dtype.category < 2:
        raise RuntimeError(f"\"LayerNormKernelImpl\" not implemented for '{_tname(input._dtype)}'")
    stat = sh[:len(sh) - len(ns)] + (1,) * len(ns)
    return [(sh, input._dtype), (stat, input._dtype), (stat, input._dtype)]


def _stats(input, mean, rstd, dims, n, eps, recorded):
    """The normalisation statistics for a formula. The saved ones are constants (torch marks those outputs
    non-differentiable), which is exact for a first-order backward; when the backward is itself recorded
    (create_graph: the ``derivatives`` formulas, not the ``first_order`` ones), they are recomputed from
    ``input`` in ember ops so that the second derivative sees them."""
    if not (recorded and input.requires_grad):
        return mean, rstd
    mean = input.sum(dims, keepdim=True) / n
    xc = input - mean
    return mean, 1 / ((xc * xc).sum(dims, keepdim=True) / n + eps).sqrt()


def _norm_input_grad(grad, input, weight, mean, rstd, dims, n, wshape):
    """d/dinput of (input - mean) * rstd * weight, normalising over ``dims`` (n elements each)."""
    xhat = (input - mean) * rstd
    gw = grad if weight is None else grad * weight.reshape(wshape)
    return (gw - gw.sum(dims, keepdim=True) / n - xhat * ((gw * xhat).sum(dims, keepdim=True) / n)) * rstd


def _ln_dims(input, normalized_shape):
    k = 1 if isinstance(normalized_shape, (int, np.integer)) else len(normalized_shape)
    nd = input.dim()
    dims = list(range(nd - k, nd))
    n = 1
    for d in dims:
        n *= input.shape[d]
    return dims, n


def _ln_input(grad, input, normalized_shape, weight, eps, result1, result2):
    dims, n = _ln_dims(input, normalized_shape)
    mean, rstd = _stats(input, result1, result2, dims, n, eps, True)
    return _norm_input_grad(grad, input, weight, mean, rstd, dims, n, tuple(weight.shape) if weight is not None
                            else None)


def _ln_weight(grad, input, normalized_shape, eps, result1, result2):
    dims, n = _ln_dims(input, normalized_shape)
    mean, rstd = _stats(input, result1, result2, dims, n, eps, True)
    return grad * ((input - mean) * rstd)


def _ln_grads(grad, input, normalized_shape, weight, bias, eps, result1, result2, output_mask):
    """All three gradients in ember ops, for a recorded backward (create_graph)."""
    return [_ln_input(grad, input, normalized_shape, weight, eps, result1, result2) if output_mask[0] else None,
            _ln_weight(grad, input, normalized_shape, eps, result1, result2) if output_mask[1] else None,
            grad if output_mask[2] else None]


def _ln_grads_fused(grad, input, normalized_shape, weight, bias, eps, result1, result2, output_mask):
    """A first-order backward runs the fused ``native_layer_norm_backward`` kernel (one op instead of ~15:
    730 -> ~200 us for the GPT's (16, 64, 128))."""
    ns = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    return aten.native_layer_norm_backward.default(grad, input, ns, result1, result2, weight, bias, tuple(output_mask))


declare('native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) '
        '-> (Tensor, Tensor, Tensor)', meta=_ln_meta, method=False, output_differentiability=(True, False, False),
        derivatives={('input', 'weight', 'bias'): _ln_grads}, forward=lambda input, input_t, normalized_shape, weight,
        weight_t, bias_t, result1, result2: _ln_jvp(input, input_t, normalized_shape, weight, weight_t, bias_t, result1, result2),
        first_order={('input', 'weight', 'bias'): _ln_grads_fused})


def _ln_jvp(input, input_t, normalized_shape, weight, weight_t, bias_t, mean, rstd):
    """Forward derivative of layer norm: with x_hat = (x - mean) * rstd and tc the centred tangent,
    d x_hat = rstd * (tc - x_hat * mean(x_hat * tc)); out = x_hat * weight + bias."""
    dims = list(range(input.dim() - (1 if isinstance(normalized_shape, (int, np.integer)) else len(normalized_shape)),
                      input.dim()))
    xhat = (input - mean) * rstd
    out = None
    if input_t is not None:
        tc = input_t - input_t.mean(dims, keepdim=True)
        out = rstd * (tc - xhat * (xhat * tc).mean(dims, keepdim=True))
        if weight is not None:
            out = out * weight
    if weight_t is not None:
        out = xhat * weight_t if out is None else out + xhat * weight_t
    if bias_t is not None:
        out = bias_t if out is None else out + bias_t
    return out, None, None


def _ln_backward_meta(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"native_layer_norm_backward: grad_out of shape {_shape_str(grad_out.shape)} does not "
                           f"match input of shape {_shape_str(input.shape)}")
    _ln_meta(input, normalized_shape, weight, bias, 1e-5)
    mask = tuple(bool(m) for m in output_mask)
    return [(tuple(input.shape), input._dtype) if mask[0] else None,
            (tuple(weight.shape), weight._dtype) if mask[1] and weight is not None else None,
            (tuple(bias.shape), bias._dtype) if mask[2] and bias is not None else None]


declare('native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, '
        'Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)',
        meta=_ln_backward_meta, method=False)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    ns = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    return aten.native_layer_norm.default(input, ns, weight, bias, eps)[0]


declare('layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, '
        'float eps=1e-05, bool cudnn_enable=True) -> Tensor', composite=_layer_norm, method=False)


# group norm: torch's one NativeGroupNormBackward0 node (libraries that walk grad_fn graphs, such as
# torch-pruning, read it as one layer), the layer-norm formulas applied to the (N, group, C // group * HxW) view

def _gn_meta(input, weight, bias, N, C, HxW, group, eps):
    sh = tuple(input.shape)
    if group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {_shape_str(sh)} and num_groups={group}")
    for name, t in (('weight', weight), ('bias', bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {_shape_str(t.shape)} and input of shape {_shape_str(sh)}")
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.")
    if input._dtype.category < 2:
        raise NotImplementedError(f"\"GroupNormKernelImpl\" not implemented for '{_tname(input._dtype)}'")
    return [_with_layout((sh, input._dtype), input), ((N, group), input._dtype), ((N, group), input._dtype)]


def _gn_stats_grad(grads, x, mean, rstd, n):
    """The input's gradient through the statistics, which torch's native_group_norm returns as differentiable
    outputs: mean = sum(x) / n gives gmean / n, rstd = (sum((x - mean)^2) / n + eps)^-1/2 gives
    -grstd * rstd^3 * (x - mean) / n. ``x`` is (N, group, n), the statistics (N, group, 1)."""
    gmean, grstd = grads[1].unsqueeze(-1), grads[2].unsqueeze(-1)
    return gmean / n - (grstd * rstd * rstd * rstd / n) * (x - mean)


def _gn_grads(grads, input, weight, N, C, HxW, group, eps, result1, result2, output_mask):
    """All three gradients in ember ops, for a recorded backward (create_graph): layer norm's over each group."""
    grad, n = grads[0], C // group * HxW
    x = input.reshape(N, group, n)
    mean, rstd = _stats(x, result1.reshape(N, group, 1), result2.reshape(N, group, 1), [2], n, eps, True)
    cshape = (1, C) + (1,) * (input.dim() - 2)
    dims = [0] + list(range(2, input.dim()))
    gi = gw = None
    if output_mask[0]:
        g = grad if weight is None else grad * weight.reshape(cshape)
        gi = _norm_input_grad(g.reshape(N, group, n), x, None, mean, rstd, [2], n, None)
        gi = (gi + _gn_stats_grad(grads, x, mean, rstd, n)).reshape(input.shape)
    if output_mask[1]:
        gw = (grad * ((x - mean) * rstd).reshape(input.shape)).sum(dims)
    return [gi, gw, grad.sum(dims) if output_mask[2] else None]


def _gn_grads_fused(grads, input, weight, N, C, HxW, group, eps, result1, result2, output_mask):
    """A first-order backward runs the fused ``native_group_norm_backward`` kernel, as torch's does, and adds the
    statistics' part (zero unless a loss reads them: the engine gives their unused gradients as zeros)."""
    gi, gw, gb = aten.native_group_norm_backward.default(grads[0], input, result1, result2, weight, N, C, HxW, group,
                                                         tuple(output_mask))
    if output_mask[0]:
        n = C // group * HxW
        x = input.reshape(N, group, n)
        gi = gi + _gn_stats_grad(grads, x, result1.reshape(N, group, 1), result2.reshape(N, group, 1), n).reshape(
            input.shape)
    return [gi, gw, gb]


# torch saves input, weight, both statistics and the sizes (one joint formula in derivatives.yaml), and its
# statistics are differentiable outputs; so are ember's
declare('native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, '
        'float eps) -> (Tensor, Tensor, Tensor)', meta=_gn_meta, method=False, forward='transpose',
        derivatives={('input', 'weight', 'bias'): _gn_grads},
        first_order={('input', 'weight', 'bias'): _gn_grads_fused})


def _gn_backward_meta(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"native_group_norm_backward: grad_out of shape {_shape_str(grad_out.shape)} does not "
                           f"match input of shape {_shape_str(input.shape)}")
    _gn_meta(input, weight, None, N, C, HxW, group, 1e-5)
    for name, t in (('mean', mean), ('rstd', rstd)):
        if t.numel() != N * group:
            raise RuntimeError(f"Expected {name} to have {N * group} elements, but got {t.numel()}")
    mask = tuple(bool(m) for m in output_mask)
    pdt = input._dtype if weight is None else weight._dtype
    return [_with_layout((tuple(input.shape), input._dtype), input) if mask[0] else None,
            ((C,), pdt) if mask[1] else None, ((C,), pdt) if mask[2] else None]


declare('native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, '
        'SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)',
        meta=_gn_backward_meta, method=False)


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """torch's composite: the sizes, a copy in the input's own memory format, then native_group_norm."""
    N, C = input.size(0), input.size(1)
    HxW = 1
    for s in input.shape[2:]:
        HxW *= s
    _gn_meta(input, weight, bias, N, C, HxW, num_groups, eps)
    x = input.contiguous(memory_format=suggest_memory_format(tuple(input.shape), input.stride()))
    return aten.native_group_norm.default(x, weight, bias, N, C, HxW, num_groups, eps)[0]


declare('group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, '
        'bool cudnn_enabled=True) -> Tensor', composite=_group_norm, method=False)


def _bn_meta(input, weight, bias, running_mean, running_var, training, momentum, eps):
    sh = tuple(input.shape)
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm(): expected input to have at least 2 dimensions, but got {input.dim()}")
    C = sh[1]
    for name, t in (('running_mean', running_mean), ('running_var', running_var), ('weight', weight), ('bias', bias)):
        if t is not None and t.numel() != C:
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode")
    if input._dtype.category < 2:
        raise RuntimeError(f"\"batch_norm\" not implemented for '{_tname(input._dtype)}'")
    stat = (C,) if training else (0,)
    return [_with_layout((sh, input._dtype), input), (stat, input._dtype), (stat, input._dtype)]


def _bn_dims(input):
    dims = [0] + list(range(2, input.dim()))
    n = 1
    for d in dims:
        n *= input.shape[d]
    return dims, n, (1, input.shape[1]) + (1,) * (input.dim() - 2)


def _bn_stats(input, training, running_mean, running_var, eps, result1, result2, recorded):
    dims, n, bshape = _bn_dims(input)
    if training:
        return _stats(input, result1.reshape(bshape), result2.reshape(bshape), dims, n, eps, recorded)
    return running_mean.reshape(bshape), (1 / (running_var + eps).sqrt()).reshape(bshape)


def _bn_grads(grad, input, weight, running_mean, running_var, training, eps, result1, result2, output_mask):
    """All three gradients in ember ops, for a recorded backward (create_graph)."""
    dims, n, bshape = _bn_dims(input)
    mean, invstd = _bn_stats(input, training, running_mean, running_var, eps, result1, result2, True)
    gi = gw = None
    if output_mask[0]:
        if training:
            gi = _norm_input_grad(grad, input, weight, mean, invstd, dims, n, bshape)
        else:
            gi = grad * invstd if weight is None else grad * invstd * weight.reshape(bshape)
    if output_mask[1]:
        gw = (grad * ((input - mean) * invstd)).sum(dims)
    return [gi, gw, grad.sum(dims) if output_mask[2] else None]


def _bn_grads_fused(grad, input, weight, running_mean, running_var, training, eps, result1, result2, output_mask):
    """A first-order backward runs the fused ``native_batch_norm_backward`` kernel (torch's formula): two passes
    over the data instead of ~12 ops (NOTE [batch norm kernels] in _backends/cpu/nn_ops.py)."""
    save_mean, save_invstd = (result1, result2) if training else (None, None)
    return list(aten.native_batch_norm_backward.default(grad, input, weight, running_mean, running_var, save_mean,
                                                         save_invstd, training, eps, tuple(output_mask)))


# torch saves input, weight, running_mean, running_var and the two statistics (one joint formula in
# derivatives.yaml); so does ember's
declare('native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, '
        'bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)', forward='transpose', meta=_bn_meta, method=False,
        output_differentiability=(True, False, False),
        derivatives={('input', 'weight', 'bias'): _bn_grads},
        # first order: the saved statistics, not recomputed (exact when the backward is not recorded)
        first_order={('input', 'weight', 'bias'): _bn_grads_fused})


def _bn_backward_meta(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                      output_mask):
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"native_batch_norm_backward: grad_out of shape {_shape_str(grad_out.shape)} does not "
                           f"match input of shape {_shape_str(input.shape)}")
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm(): expected input to have at least 2 dimensions, but got {input.dim()}")
    C = input.shape[1]
    for name, t in (('weight', weight), ('running_mean', running_mean), ('running_var', running_var),
                    ('save_mean', save_mean), ('save_invstd', save_invstd)):
        if t is not None and t.numel() != C:
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    if train and (save_mean is None or save_invstd is None):
        raise RuntimeError("native_batch_norm_backward: save_mean and save_invstd must be defined in training mode")
    if not train and (running_mean is None or running_var is None):
        raise RuntimeError("native_batch_norm_backward: running_mean and running_var must be defined in "
                           "evaluation mode")
    mask = tuple(bool(m) for m in output_mask)
    pdt = input._dtype if weight is None else weight._dtype
    return [_with_layout((tuple(input.shape), input._dtype), input) if mask[0] else None,
            ((C,), pdt) if mask[1] else None, ((C,), pdt) if mask[2] else None]


declare('native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, '
        'Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) '
        '-> (Tensor, Tensor, Tensor)', meta=_bn_backward_meta, method=False)


# --- shuffles (views and copies only) -----------------------------------------------------

def _pixel_shuffle(self, upscale_factor):
    r = int(upscale_factor)
    sh = tuple(self.shape)
    if self.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = sh[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = sh[:-3]
    n = len(lead)
    x = self.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(lead + (c // (r * r), h * r, w * r))


def _pixel_unshuffle(self, downscale_factor):
    r = int(downscale_factor)
    sh = tuple(self.shape)
    if self.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = sh[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                           f"{h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                           f"{w} is not divisible by {r}")
    lead = sh[:-3]
    n = len(lead)
    x = self.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(lead + (c * r * r, h // r, w // r))


def _channel_shuffle(self, groups):
    sh = tuple(self.shape)
    if self.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = sh[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    x = self.reshape((sh[0], groups, c // groups) + sh[2:]).transpose(1, 2)
    return x.reshape(sh)


declare('pixel_shuffle(Tensor self, int upscale_factor) -> Tensor', composite=_pixel_shuffle, method=False, nn=True)


def _norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dimension but ``dim`` (kept, the others as 1s); the whole tensor's norm
    for dim == -1, as torch's (WeightNorm.cpp)."""
    if dim == -1:
        return v.norm(pow)
    last = v.dim() - 1
    if dim == 0:                # torch's three cases, so the same tensors are saved for the backward
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view([v.shape[0]] + [1] * last)
    if dim == last:
        return v.contiguous().view(-1, v.shape[last]).norm(pow, 0).view([1] * last + [v.shape[last]])
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


declare('norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor', composite=_norm_except_dim, method=False)
declare('_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor',
        composite=lambda v, g, dim=0: v * (g / _norm_except_dim(v, 2, dim)), method=False,
        doc="""weight normalisation: v scaled so that its norm over every dimension but ``dim`` is g.""")
declare('pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor', composite=_pixel_unshuffle, method=False,
        nn=True)
declare('channel_shuffle(Tensor self, SymInt groups) -> Tensor', composite=_channel_shuffle, method=False, nn=True)
