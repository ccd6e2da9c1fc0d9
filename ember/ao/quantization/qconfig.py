"""QConfig: which observer (or fake quantizer) to attach to a module's activations and weights."""
from collections import namedtuple

import ember
from ember import nn
from .observer import (default_observer, default_weight_observer, default_debug_observer,
                       default_per_channel_weight_observer, default_dynamic_quant_observer, PlaceholderObserver,
                       default_placeholder_observer, default_float_qparams_observer, HistogramObserver,
                       MovingAverageMinMaxObserver, MinMaxObserver, NoopObserver, ReuseInputObserver)
from .fake_quantize import (FakeQuantize, FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_weight_fake_quant, default_dynamic_fake_quant,
                            default_per_channel_weight_fake_quant, default_fused_act_fake_quant,
                            default_fused_wt_fake_quant, default_fused_per_channel_wt_fake_quant)


class QConfig(namedtuple('QConfig', ['activation', 'weight'])):
    """How to observe a module: ``activation`` and ``weight`` are observer factories (classes or ``with_args``).

    >>> QConfig(activation=default_observer, weight=default_weight_observer).weight().dtype
    ember.qint8
    """
    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


class QConfigDynamic(namedtuple('QConfigDynamic', ['activation', 'weight'])):
    """Deprecated spelling of a dynamic QConfig (torch warns and keeps it)."""
    __slots__ = ()

    def __new__(cls, activation=nn.Identity, weight=nn.Identity):
        if isinstance(weight, nn.Module):
            raise ValueError("QConfigDynamic received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_debug_qconfig = QConfig(weight=default_weight_observer, activation=default_debug_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=ember.float16, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=ember.float16))
float16_static_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=ember.float16),
                                 weight=PlaceholderObserver.with_args(dtype=ember.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_dynamic_qat_qconfig = QConfig(activation=default_dynamic_fake_quant, weight=default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=nn.Identity, weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=nn.Identity)
default_reuse_input_qconfig = QConfig(activation=ReuseInputObserver, weight=NoopObserver)
default_quint8_weight_qconfig = QConfig(activation=HistogramObserver, weight=MinMaxObserver)
default_qat_qconfig_v2 = QConfig(activation=default_fused_act_fake_quant, weight=default_fused_wt_fake_quant)

_BACKENDS = ['fbgemm', 'x86', 'qnnpack', 'onednn']


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of {_BACKENDS}")


def get_default_qconfig(backend='x86', version=0):
    """The default post-training QConfig of ``backend``: a histogram observer for activations (with
    ``reduce_range`` on x86 and fbgemm) and per-channel symmetric weights (per-tensor on qnnpack).

    >>> get_default_qconfig('qnnpack').weight().qscheme
    ember.per_tensor_symmetric
    """
    _check_backend(backend)
    if version != 0:
        raise AssertionError(f"Version number: {version} in get_default_qconfig is not supported. Version number "
                             "must be 0")
    reduce = backend in ('x86', 'fbgemm')
    weight = default_weight_observer if backend == 'qnnpack' else default_per_channel_weight_observer
    return QConfig(activation=HistogramObserver.with_args(reduce_range=reduce), weight=weight)


def get_default_qat_qconfig(backend='x86', version=1):
    """The default quantization-aware-training QConfig of ``backend`` (version 1: the fused fake quantizers)."""
    _check_backend(backend)
    reduce = backend in ('x86', 'fbgemm')
    per_tensor = backend == 'qnnpack'
    if version == 0:
        act = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                     reduce_range=reduce) if backend != 'onednn' else \
            FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
        return QConfig(activation=act, weight=default_weight_fake_quant if per_tensor else
                       default_per_channel_weight_fake_quant)
    if version == 1:
        kw = dict(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
        if backend != 'onednn':
            kw['reduce_range'] = reduce
        return QConfig(activation=FusedMovingAvgObsFakeQuantize.with_args(**kw),
                       weight=default_fused_wt_fake_quant if per_tensor else default_fused_per_channel_wt_fake_quant)
    raise AssertionError(f"Version number: {version} in get_default_qat_qconfig is not supported. Version number "
                         "must be 0 or 1")


