"""Fake quantization modules (quantization-aware training): an observer that keeps the parameters up to date, and
the float fake-quantize operators with their straight-through gradients. Public API only."""
import math

import ember
from ember import nn
from .observer import (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, HistogramObserver,
                       FixedQParamsObserver, default_fixed_qparams_range_0to1_observer,
                       default_fixed_qparams_range_neg1to1_observer, _with_args)

_PER_CHANNEL = (ember.per_channel_affine, ember.per_channel_symmetric, ember.per_channel_affine_float_qparams)
_RANGES = {ember.qint8: (-128, 127), ember.quint8: (0, 255), ember.qint32: (-2 ** 31, 2 ** 31 - 1)}


class FakeQuantizeBase(nn.Module):
    """Switches shared by the fake quantizers: ``fake_quant_enabled`` and ``observer_enabled`` (uint8 buffers)."""

    def __init__(self):
        super().__init__()
        self.register_buffer('fake_quant_enabled', ember.tensor([1], dtype=ember.uint8))
        self.register_buffer('observer_enabled', ember.tensor([1], dtype=ember.uint8))

    with_args = classmethod(_with_args)

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)


class FakeQuantize(FakeQuantizeBase):
    """Observes its input (``observer``), then fake-quantizes it with the observer's parameters.

    >>> fq = FakeQuantize()
    >>> fq(ember.tensor([-1.0, 0.5, 2.0])).shape
    ember.Size([3])
    """

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, is_dynamic=False,
                 **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get('dtype', ember.quint8)
            if hasattr(observer, 'p'):
                dtype = getattr(getattr(observer, 'p', {}), 'keywords', {}).get('dtype', dtype)
            lo, hi = _RANGES.get(dtype, (-math.inf, math.inf))
            if not lo <= quant_min or not quant_max <= hi:
                raise AssertionError("quant_min out of bound" if quant_min < lo else "quant_max out of bound")
            observer_kwargs.update({'quant_min': quant_min, 'quant_max': quant_max})
        observer_kwargs['is_dynamic'] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        app = self.activation_post_process
        self.quant_min, self.quant_max, self.is_dynamic = app.quant_min, app.quant_max, app.is_dynamic
        float_zp = app.qscheme == ember.per_channel_affine_float_qparams
        self.register_buffer('scale', ember.tensor([1.0], dtype=ember.float32))
        self.register_buffer('zero_point', ember.tensor([0], dtype=ember.float32 if float_zp else ember.int32))
        self.dtype, self.qscheme = app.dtype, app.qscheme
        self.ch_axis = getattr(app, 'ch_axis', -1)
        self.is_per_channel = self.qscheme in _PER_CHANNEL

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """A checkpoint's scale and zero point load whatever their length (a per-channel model's, one per channel,
        into a fresh FakeQuantize's one-element buffers), as torch resizes them."""
        for name in ('scale', 'zero_point'):
            if prefix + name in state_dict:
                getattr(self, name).resize_(state_dict[prefix + name].shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _store_qparams(self, scale, zero_point):
        if self.scale.shape != scale.shape:
            self.scale.resize_(scale.shape)
            self.zero_point.resize_(zero_point.shape)
        self.scale.copy_(scale)
        self.zero_point.copy_(zero_point)

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            self._store_qparams(*self.calculate_qparams())
        if self.fake_quant_enabled[0] == 1:
            app = self.activation_post_process
            if self.is_per_channel:
                X = ember.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                           app.quant_min, app.quant_max)
            else:
                X = ember.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, app.quant_min,
                                                          app.quant_max)
        return X

    def extra_repr(self):
        app = self.activation_post_process
        return (f'fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, '
                f'quant_min={app.quant_min}, quant_max={app.quant_max}, dtype={self.dtype}, '
                f'qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}')


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake-quantizes with the fixed parameters of a `FixedQParamsObserver` (sigmoid's, tanh's output range).

    >>> fq = FixedQParamsFakeQuantize(default_fixed_qparams_range_0to1_observer)
    >>> fq(ember.tensor([0.3, 2.0]))
    tensor([0.3008, 0.9961])
    """

    def __init__(self, observer):
        super().__init__(observer=observer)
        if type(self.activation_post_process) is not FixedQParamsObserver:
            raise AssertionError(f"{self.__class__.__name__}'s observer must be a {FixedQParamsObserver.__name__}")
        self._observer_ctr = observer
        self.scale = self.activation_post_process.scale
        self.zero_point = self.activation_post_process.zero_point
        if self.qscheme not in (ember.per_tensor_affine, ember.per_tensor_symmetric):
            raise AssertionError("Only per tensor quantization is supported FixedQParamsFakeQuantize module, got "
                                 f"qscheme:{self.qscheme}")

    def calculate_qparams(self):
        return self.scale, self.zero_point

    def extra_repr(self):
        app = self.activation_post_process
        return (f'fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, '
                f'scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}, '
                f'quant_min={app.quant_min}, quant_max={app.quant_max}, qscheme={self.qscheme}')


def choose_qparams(lo, hi, qmin, qmax, preserve_sparsity=False):
    """fbgemm's ChooseQuantizationParams (torch's fused observer and dynamic quantization): a float32 scale and
    an int zero point covering [lo, hi] and 0; ``preserve_sparsity`` makes the range symmetric."""
    f32 = lambda v: ember.tensor(v, dtype=ember.float32).item()     # noqa: E731  (C++ float arithmetic)
    lo, hi = min(f32(lo), 0.0), max(f32(hi), 0.0)
    if preserve_sparsity and lo < 0 < hi:
        sym_min, sym_max = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2      # integer halves, as ATen
        m = max(abs(lo / sym_min), abs(hi / sym_max))
        lo, hi = f32(m * sym_min), f32(m * sym_max)
    scale = (hi - lo) / (qmax - qmin)
    if f32(scale) == 0.0 or math.isinf(f32(1.0 / f32(scale))):
        scale = 0.1
    if scale < 6.1e-5:          # SMALL_SCALE_THRESHOLD: widen tiny ranges
        org, scale = scale, f32(6.1e-5)
        if lo == 0.0:
            hi = scale * (qmax - qmin)
        elif hi == 0.0:
            lo = -scale * (qmax - qmin)
        else:
            lo, hi = lo * (scale / org), hi * (scale / org)
    zp_min, zp_max = qmin - lo / scale, qmax - hi / scale
    zp = zp_min if abs(qmin) - abs(lo / scale) < abs(qmax) - abs(hi / scale) else zp_max
    if preserve_sparsity and lo < 0 < hi:
        zp = (qmin + qmax) / 2
    zp = qmin if zp < qmin else qmax if zp > qmax else int(round(zp))
    return f32(scale), int(zp)


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """torch's fused observer and fake quantizer (``fused_moving_avg_obs_fake_quant``): moving-average min/max, the
    parameters from fbgemm's ChooseQuantizationParams, then fake quantization, in one module."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process, (MovingAverageMinMaxObserver,
                                                         MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with MovingAverageMinMaxObserver")
        self.register_buffer('fake_quant_enabled', ember.tensor([1], dtype=ember.int64))
        self.register_buffer('observer_enabled', ember.tensor([1], dtype=ember.int64))
        self.is_symmetric_quant = self.qscheme in (ember.per_tensor_symmetric, ember.per_channel_symmetric)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def _fused_qparams(self):
        app = self.activation_post_process
        lo, hi = app.min_val.reshape(-1).tolist(), app.max_val.reshape(-1).tolist()
        pairs = [choose_qparams(a, b, app.quant_min, app.quant_max, self.is_symmetric_quant) for a, b in zip(lo, hi)]
        return (ember.tensor([p[0] for p in pairs], dtype=ember.float32),
                ember.tensor([p[1] for p in pairs], dtype=ember.int32))

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            self._store_qparams(*self._fused_qparams())
        if self.fake_quant_enabled[0] == 1:
            app = self.activation_post_process
            if self.is_per_channel:
                return ember.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                              app.quant_min, app.quant_max)
            return ember.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, app.quant_min, app.quant_max)
        return X


def _fq(observer, **kw):
    return FakeQuantize.with_args(observer=observer, **kw)


default_fake_quant = _fq(MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=ember.quint8,
                         qscheme=ember.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = _fq(MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
                                qscheme=ember.per_tensor_symmetric, reduce_range=False)
default_dynamic_fake_quant = _fq(MovingAverageMinMaxObserver, quant_min=0, quant_max=255, is_dynamic=True,
                                 dtype=ember.quint8, averaging_constant=1)
default_per_channel_weight_fake_quant = _fq(MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
                                            dtype=ember.qint8, qscheme=ember.per_channel_symmetric,
                                            reduce_range=False, ch_axis=0)
default_embedding_fake_quant = _fq(MovingAveragePerChannelMinMaxObserver,
                                   qscheme=ember.per_channel_affine_float_qparams, dtype=ember.quint8, quant_min=0,
                                   quant_max=255, ch_axis=0, averaging_constant=1)
default_histogram_fake_quant = _fq(HistogramObserver, quant_min=0, quant_max=255, dtype=ember.quint8,
                                   qscheme=ember.per_tensor_affine, reduce_range=True)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=ember.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_channel_symmetric)


default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer)
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer)
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant


def disable_fake_quant(mod):
    """``model.apply(disable_fake_quant)``."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


def disable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()
