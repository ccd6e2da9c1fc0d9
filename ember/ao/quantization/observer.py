"""Observers: modules that watch the values flowing through them and turn what they saw into quantization
parameters (``calculate_qparams``), as torch.ao.quantization.observer's, with its results.

Built on the public API only. ``calculate_qparams`` follows torch's rules: affine schemes give
``scale = (max(max, 0) - min(min, 0)) / (quant_max - quant_min)`` (at least ``eps``) and
``zero_point = quant_min - round(min / scale)``, clamped; symmetric schemes give
``scale = max(-min, max) / ((quant_max - quant_min) / 2)`` with the zero point at the middle of an unsigned range
(128) or 0; ``reduce_range`` drops one bit of the range (x86/fbgemm's activations).
"""
import functools
import math
import warnings

import ember
from ember import nn


class _PartialWrapper:
    """``Observer.with_args(...)``: a factory whose repr names the class and arguments as torch's functools.partial
    does."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__() + self.callable_args.__repr__()

    with_args = lambda self, **kwargs: _with_args(self, **kwargs)  # noqa: E731


def _with_args(cls_or_self, **kwargs):
    """A factory building ``cls_or_self`` with ``kwargs`` (torch's ``with_args``).

    >>> obs = MinMaxObserver.with_args(quant_min=0, quant_max=127)()
    >>> obs.quant_max
    127
    """
    return _PartialWrapper(functools.partial(cls_or_self, **kwargs))


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The quantized range actually used (torch.ao.quantization.utils.calculate_qmin_qmax)."""
    if has_customized_qrange:
        n = quant_max - quant_min + 1
        if dtype in (ember.qint8, ember.int8) and not 0 < n <= 256:
            raise AssertionError("quantization range should be positive and not exceed the maximum bit range "
                                 "(=256).")
        return (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)
    if dtype in (ember.qint8, ember.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (ember.quint8, ember.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (ember.qint32, ember.int32):
        return -(2 ** 31), 2 ** 31 - 1
    return 0, 15


class ObserverBase(nn.Module):
    """The base of every observer: it has a ``dtype`` and answers ``calculate_qparams()``."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    with_args = classmethod(_with_args)

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError


_SCHEMES = (ember.per_tensor_affine, ember.per_tensor_symmetric, ember.per_channel_affine,
            ember.per_channel_symmetric, ember.per_channel_affine_float_qparams)


class UniformQuantizationObserverBase(ObserverBase):
    """Observers of a uniform (affine or symmetric) quantization: range, scheme and the qparams rule."""

    def __init__(self, dtype=ember.quint8, qscheme=ember.per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=ember.finfo(ember.float32).eps, is_dynamic=False,
                 **kwargs):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for observers. reduce_range "
                          "will be deprecated in a future release of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer('eps', ember.tensor([eps]))
        if qscheme not in _SCHEMES:
            raise AssertionError("Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                                 "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            if not quant_min <= 0 <= quant_max:
                raise AssertionError("Used-specified quantization range must include 0.")
            if quant_min >= quant_max:
                raise AssertionError("qmin must be strictly less than qmax for user-specified quantization range.")
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.has_customized_qrange,
                                                             dtype, reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """(scale, zero_point) tensors for the observed range, per tensor or per channel."""
        if not _valid(min_val, max_val):
            return ember.tensor([1.0]), ember.tensor([0])
        qmin, qmax = self.quant_min, self.quant_max
        min_neg = ember.minimum(min_val, ember.zeros_like(min_val))
        max_pos = ember.maximum(max_val, ember.zeros_like(max_val))
        zero_point = ember.zeros(min_neg.shape, dtype=ember.int64)
        if self.qscheme in (ember.per_tensor_symmetric, ember.per_channel_symmetric):
            max_pos = ember.maximum(-min_neg, max_pos)
            scale = ember.maximum(max_pos / (float(qmax - qmin) / 2), self.eps)
            if self.dtype in (ember.quint8, ember.uint8):
                mid = (qmin + qmax) // 2 if self.has_customized_qrange else 128
                zero_point = ember.full(zero_point.shape, mid, dtype=ember.int64)
        elif self.qscheme == ember.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(qmax - qmin)
            scale = ember.where(scale > self.eps, scale, ember.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = ember.maximum((max_pos - min_neg) / float(qmax - qmin), self.eps)
            zero_point = qmin - ember.round(min_neg / scale).to(ember.int32)
            zero_point = ember.clamp(zero_point, qmin, qmax)
        if scale.dim() == 0:
            scale = ember.tensor([float(scale)], dtype=scale.dtype)
        if zero_point.dim() == 0:
            zero_point = ember.tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point


def _valid(min_val, max_val):
    if min_val.numel() == 0 or max_val.numel() == 0 or (
            min_val.dim() == 0 and float(min_val) == math.inf and float(max_val) == -math.inf):
        warnings.warn("must run observer before calling calculate_qparams. Returning default values.", stacklevel=3)
        return False
    if bool((min_val > max_val).any()):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True


class MinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum of everything seen.

    >>> obs = MinMaxObserver()
    >>> _ = obs(ember.tensor([-1.0, 2.0]))
    >>> obs.calculate_qparams()
    (tensor([0.0118]), tensor([85], dtype=ember.int32))
    """

    def __init__(self, dtype=ember.quint8, qscheme=ember.per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=ember.finfo(ember.float32).eps, is_dynamic=False,
                 **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.register_buffer('min_val', ember.tensor(float('inf')))
        self.register_buffer('max_val', ember.tensor(float('-inf')))
        if qscheme == ember.per_tensor_symmetric and reduce_range and dtype == ember.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = ember.aminmax(x)
        self.min_val.copy_(ember.minimum(lo, self.min_val))
        self.max_val.copy_(ember.maximum(hi, self.max_val))
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f'min_val={self.min_val}, max_val={self.max_val}'

    def reset_min_max_vals(self):
        self.min_val.copy_(ember.tensor(float('inf')))
        self.max_val.copy_(ember.tensor(float('-inf')))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Minimum and maximum as exponential moving averages (``averaging_constant``, 0.01 by default)."""

    def __init__(self, averaging_constant=0.01, dtype=ember.quint8, qscheme=ember.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=ember.finfo(ember.float32).eps,
                 is_dynamic=False, **kwargs):
        self.averaging_constant = averaging_constant
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = ember.aminmax(x)
        if float(self.min_val) == math.inf and float(self.max_val) == -math.inf:
            self.min_val.copy_(lo)
            self.max_val.copy_(hi)
        else:
            c = self.averaging_constant
            self.min_val.copy_(self.min_val + c * (lo - self.min_val))
            self.max_val.copy_(self.max_val + c * (hi - self.max_val))
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum per index of dimension ``ch_axis`` (weights: one scale per output channel)."""

    def __init__(self, ch_axis=0, dtype=ember.quint8, qscheme=ember.per_channel_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=ember.finfo(ember.float32).eps,
                 is_dynamic=False, **kwargs):
        if qscheme not in (ember.per_channel_affine, ember.per_channel_symmetric,
                           ember.per_channel_affine_float_qparams):
            raise NotImplementedError("PerChannelObserver's qscheme only support torch.per_channel_symmetric, "
                                      "torch.per_channel_affine and torch.per_channel_affine_float_qparams.")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.ch_axis = ch_axis
        self.register_buffer('min_val', ember.tensor([]))
        self.register_buffer('max_val', ember.tensor([]))

    def _channel_minmax(self, x):
        dims = list(range(x.dim()))
        dims[self.ch_axis], dims[0] = 0, self.ch_axis
        return ember.aminmax(ember.flatten(x.permute(dims), start_dim=1), dim=1)

    def _update(self, lo, hi):
        self.min_val.resize_(lo.shape)
        self.max_val.resize_(hi.shape)
        self.min_val.copy_(lo)
        self.max_val.copy_(hi)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        lo, hi = self._channel_minmax(x_orig.detach().to(self.min_val.dtype))
        if self.min_val.numel() and self.max_val.numel():
            lo, hi = ember.minimum(lo, self.min_val), ember.maximum(hi, self.max_val)
        self._update(lo, hi)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f'min_val={self.min_val}, max_val={self.max_val}'

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for name in ('min_val', 'max_val'):      # buffers of any length load into the empty ones
            if prefix + name in state_dict:
                getattr(self, name).resize_(state_dict[prefix + name].shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def reset_min_max_vals(self):
        self.min_val = ember.tensor([])
        self.max_val = ember.tensor([])


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel minimum and maximum as exponential moving averages."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=ember.quint8, qscheme=ember.per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=ember.finfo(ember.float32).eps,
                 is_dynamic=False, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        lo, hi = self._channel_minmax(x_orig.detach().to(self.min_val.dtype))
        if self.min_val.numel() and self.max_val.numel():
            c = self.averaging_constant
            lo, hi = self.min_val + c * (lo - self.min_val), self.max_val + c * (hi - self.max_val)
        self._update(lo, hi)
        return x_orig


class PlaceholderObserver(ObserverBase):
    """Observes nothing; carries the dtype (and the scheme) a conversion should use (``float16``, dynamic)."""

    def __init__(self, dtype=ember.float32, custom_op_name='', compute_dtype=None, quant_min=None, quant_max=None,
                 qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme if qscheme is not None else ember.per_tensor_affine
        self.quant_min, self.quant_max, self.eps = quant_min, quant_max, eps
        self.custom_op = custom_op_name
        if compute_dtype:
            self.is_dynamic = True

    def forward(self, x):
        return x

    def extra_repr(self):
        return f'dtype={self.dtype}, is_dynamic={self.is_dynamic}'

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")  # noqa: TRY002


class NoopObserver(ObserverBase):
    """Observes nothing (float16 and custom operators)."""

    def __init__(self, dtype=ember.float16, custom_op_name=''):
        super().__init__(dtype=dtype)
        self.dtype = dtype
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for NoopObserver")  # noqa: TRY002


class RecordingObserver(ObserverBase):
    """Keeps every tensor it sees (debugging)."""

    def __init__(self, dtype=ember.quint8):
        super().__init__(dtype=dtype)
        self.tensor_val = []

    def forward(self, x):
        self.tensor_val.append(x.clone())
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for RecordingObserver")  # noqa: TRY002

    def get_tensor_value(self):
        return self.tensor_val


class FixedQParamsObserver(ObserverBase):
    """Observes nothing; answers fixed parameters (``scale``, ``zero_point`` buffers), for operators whose output
    range is known (sigmoid: [0, 1], tanh: [-1, 1]). Per tensor only.

    >>> FixedQParamsObserver(1.0 / 256, 0).calculate_qparams()
    (tensor([0.0039]), tensor([0], dtype=ember.int32))
    """

    def __init__(self, scale, zero_point, dtype=ember.quint8, qscheme=ember.per_tensor_affine, quant_min=0,
                 quant_max=255, is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.quant_min, self.quant_max = quant_min, quant_max
        self.register_buffer('scale', ember.tensor([scale], dtype=ember.float))
        self.register_buffer('zero_point', ember.tensor([zero_point], dtype=ember.int))
        self.dtype, self.qscheme = dtype, qscheme

    def forward(self, X):
        return X

    def calculate_qparams(self):
        return self.scale, self.zero_point


class ReuseInputObserver(ObserverBase):
    """Observes nothing: the operator (reshape) reuses its input's observer (FX graph mode quantization)."""

    def __init__(self):
        super().__init__(ember.quint8, is_dynamic=False)

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for ReuseInputObserver")  # noqa: TRY002


def load_observer_state_dict(mod, obs_dict):
    """Load observers' buffers saved by `get_observer_state_dict` back into ``mod``'s observers (per-channel ones
    resized to the saved length); a missing or unexpected observer key raises."""
    from .fake_quantize import FakeQuantizeBase     # it imports this module
    missing_keys, unexpected_keys = [], []
    for name, module in mod.named_modules():
        if isinstance(module, (ObserverBase, FakeQuantizeBase)):
            module._load_from_state_dict(obs_dict, name + '.', {}, False, missing_keys, unexpected_keys, [])
    for k in missing_keys:
        if 'observer' in k or 'activation_post_process' in k:
            raise Exception(f"Missing keys for observer {k} in state_dict")  # noqa: TRY002
    for k in unexpected_keys:
        if 'observer' in k or 'activation_post_process' in k:
            raise Exception(f"Unexpected keys for observer {k} in state_dict")  # noqa: TRY002


from ._histogram import HistogramObserver  # noqa: E402  (its own file: the histogram search is long)
HistogramObserver.__module__ = __name__     # torch's path for it (pickles and printed qconfigs name it)


def get_observer_state_dict(mod):
    """The observers' buffers of ``mod``'s state dict (keys naming ``activation_post_process``)."""
    from collections import OrderedDict
    return OrderedDict((k, v) for k, v in mod.state_dict().items() if 'activation_post_process' in k)


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = RecordingObserver
default_weight_observer = MinMaxObserver.with_args(dtype=ember.qint8, qscheme=ember.per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_tensor_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=ember.quint8, quant_min=0, quant_max=255,
                                                               is_dynamic=True)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=ember.quint8, qscheme=ember.per_channel_affine_float_qparams, ch_axis=0)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=ember.quint4x2, qscheme=ember.per_channel_affine_float_qparams, ch_axis=0)
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=ember.quint8, quant_min=0, quant_max=255)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=ember.quint8, quant_min=0, quant_max=255)
default_symmetric_fixed_qparams_observer = default_fixed_qparams_range_neg1to1_observer
default_affine_fixed_qparams_observer = default_fixed_qparams_range_0to1_observer
default_reuse_input_observer = ReuseInputObserver
