"""Which quantized (or QAT, or dynamic) module replaces which float module in ``convert``."""
from ember import nn
from ember.ao.nn import quantized as nnq, intrinsic as nni, qat as nnqat
from ember.ao.nn.quantized import dynamic as nnqd
from ember.ao.nn.intrinsic import qat as nniqat, quantized as nniq
from .stubs import QuantStub, DeQuantStub

DEFAULT_STATIC_QUANT_MODULE_MAPPINGS = {
    QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize,
    nn.Conv2d: nnq.Conv2d, nn.Linear: nnq.Linear, nn.ReLU6: nnq.ReLU6, nn.Hardswish: nnq.Hardswish,
    nni.ConvReLU2d: nniq.ConvReLU2d, nni.LinearReLU: nniq.LinearReLU,
    nnqat.Linear: nnq.Linear, nnqat.Conv2d: nnq.Conv2d,
    nniqat.ConvBn2d: nnq.Conv2d, nniqat.ConvBnReLU2d: nniq.ConvReLU2d, nniqat.ConvReLU2d: nniq.ConvReLU2d,
    nniqat.LinearReLU: nniq.LinearReLU,
    nnq.FloatFunctional: nnq.QFunctional, nn.Embedding: nnq.Embedding, nn.EmbeddingBag: nnq.EmbeddingBag,
}
DEFAULT_QAT_MODULE_MAPPINGS = {
    nn.Conv2d: nnqat.Conv2d, nn.Linear: nnqat.Linear,
    nni.ConvBn2d: nniqat.ConvBn2d, nni.ConvBnReLU2d: nniqat.ConvBnReLU2d, nni.ConvReLU2d: nniqat.ConvReLU2d,
    nni.LinearReLU: nniqat.LinearReLU,
}
DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS = {nn.Linear: nnqd.Linear, nn.LSTM: nnqd.LSTM, nn.GRU: nnqd.GRU,
                                         nn.LSTMCell: nnqd.LSTMCell, nn.GRUCell: nnqd.GRUCell,
                                         nn.RNNCell: nnqd.RNNCell, nn.Embedding: nnq.Embedding,
                                         nn.EmbeddingBag: nnq.EmbeddingBag}


def get_default_static_quant_module_mappings():
    return dict(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS)


def get_default_qat_module_mappings():
    return dict(DEFAULT_QAT_MODULE_MAPPINGS)


def get_default_dynamic_quant_module_mappings():
    return dict(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)


def get_default_qconfig_propagation_list():
    """Module types that receive a qconfig (and an output observer when they are leaves)."""
    return set(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS) | set(DEFAULT_QAT_MODULE_MAPPINGS) | \
        set(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS) | {nn.Sequential}
