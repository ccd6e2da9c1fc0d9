"""ember.ao.quantization (also ember.quantization): torch's eager-mode quantization workflow on ember's quantized
tensors (NOTE [quantized tensors] in ember/_core/quantized.py): observers, fake quantizers, QConfigs, stubs,
module fusion, ``prepare``/``convert``, dynamic quantization and quantization-aware training.

>>> import ember
>>> from ember import nn
>>> from ember.ao.quantization import quantize_dynamic
>>> quantize_dynamic(nn.Sequential(nn.Linear(4, 2)), {nn.Linear})(ember.ones(1, 4)).shape
ember.Size([1, 2])
"""
from .observer import *  # noqa: F401,F403
from .quant_type import QuantType  # noqa: F401
from .observer import (ObserverBase, UniformQuantizationObserverBase, MinMaxObserver, MovingAverageMinMaxObserver,
                       PerChannelMinMaxObserver, MovingAveragePerChannelMinMaxObserver, HistogramObserver,
                       PlaceholderObserver, NoopObserver, RecordingObserver, default_observer,
                       default_weight_observer, default_per_channel_weight_observer, default_histogram_observer,
                       default_dynamic_quant_observer, default_float_qparams_observer, default_placeholder_observer,
                       default_debug_observer, get_observer_state_dict, load_observer_state_dict,
                       FixedQParamsObserver, ReuseInputObserver, default_fixed_qparams_range_0to1_observer,
                       default_fixed_qparams_range_neg1to1_observer, default_affine_fixed_qparams_observer,
                       default_symmetric_fixed_qparams_observer, default_reuse_input_observer)
from .fake_quantize import (FakeQuantizeBase, FakeQuantize, FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_weight_fake_quant, default_per_channel_weight_fake_quant,
                            default_dynamic_fake_quant, default_histogram_fake_quant, default_fused_act_fake_quant,
                            default_fused_wt_fake_quant, default_fused_per_channel_wt_fake_quant,
                            disable_fake_quant, enable_fake_quant, disable_observer, enable_observer,
                            FixedQParamsFakeQuantize, default_fixed_qparams_range_0to1_fake_quant,
                            default_fixed_qparams_range_neg1to1_fake_quant, default_affine_fixed_qparams_fake_quant,
                            default_symmetric_fixed_qparams_fake_quant)
from .qconfig import (QConfig, QConfigDynamic, default_qconfig, default_debug_qconfig, default_per_channel_qconfig,
                      default_dynamic_qconfig, float16_dynamic_qconfig, float16_static_qconfig,
                      per_channel_dynamic_qconfig, float_qparams_weight_only_qconfig, default_qat_qconfig,
                      default_dynamic_qat_qconfig, default_weight_only_qconfig, default_activation_only_qconfig,
                      default_qat_qconfig_v2, get_default_qconfig, get_default_qat_qconfig,
                      default_reuse_input_qconfig, default_quint8_weight_qconfig)
from .qconfig_mapping import QConfigMapping, get_default_qconfig_mapping, get_default_qat_qconfig_mapping
from .stubs import QuantStub, DeQuantStub, QuantWrapper
from .fuse_modules import (fuse_modules, fuse_modules_qat, fuse_known_modules, get_fuser_method, fuse_conv_bn,
                           fuse_conv_bn_relu, fuse_linear_bn)
from .quantization_mappings import (get_default_static_quant_module_mappings, get_default_qat_module_mappings,
                                    get_default_dynamic_quant_module_mappings, get_default_qconfig_propagation_list,
                                    DEFAULT_STATIC_QUANT_MODULE_MAPPINGS, DEFAULT_QAT_MODULE_MAPPINGS,
                                    DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)
from .quantize import (propagate_qconfig_, add_quant_dequant, prepare, prepare_qat, convert, quantize,
                       quantize_dynamic, quantize_qat, swap_module)


def default_eval_fn(model, calib_data):
    """Run ``model`` on the inputs of ``calib_data`` (pairs of input and target), e.g. to calibrate observers.

    >>> from ember import nn
    >>> default_eval_fn(nn.Identity(), [(ember.ones(1), 0)])
    """
    for data, _target in calib_data:
        model(data)
