"""ember.nn.utils: gradient clipping, parameter <-> vector conversion, packed sequences and parametrizations."""
from . import rnn, parametrize, parametrizations, fusion, prune
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .weight_norm import weight_norm, remove_weight_norm, spectral_norm, remove_spectral_norm
from . import stateless
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights

__all__ = ['rnn', 'parametrize', 'parametrizations', 'fusion', 'prune', 'clip_grad_norm_', 'clip_grad_norm', 'clip_grad_value_', 'get_total_norm', 'clip_grads_with_norm_',
           'parameters_to_vector', 'vector_to_parameters', 'weight_norm', 'remove_weight_norm', 'spectral_norm',
           'remove_spectral_norm', 'fuse_conv_bn_eval', 'fuse_conv_bn_weights', 'fuse_linear_bn_eval',
           'fuse_linear_bn_weights', 'stateless', 'skip_init', 'convert_conv2d_weight_memory_format',
           'convert_conv3d_weight_memory_format']
