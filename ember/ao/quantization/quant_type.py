"""QuantType: the kinds of quantization (torch.ao.quantization.quant_type), numbered as torch's C++ enum."""
import enum

__all__ = ['QuantType']


class QuantType(enum.IntEnum):
    """DYNAMIC (weights quantized ahead, activations at run time), STATIC (both ahead, with observers), QAT
    (static, trained with fake quantization), WEIGHT_ONLY.

    >>> QuantType.STATIC
    <QuantType.STATIC: 1>
    """
    DYNAMIC = 0
    STATIC = 1
    QAT = 2
    WEIGHT_ONLY = 3


_quant_type_to_str = {QuantType.STATIC: 'static', QuantType.DYNAMIC: 'dynamic', QuantType.QAT: 'qat',
                      QuantType.WEIGHT_ONLY: 'weight_only'}


def _get_quant_type_to_str(quant_type):
    return _quant_type_to_str[quant_type]


def _quant_type_from_str(name):
    for quant_type, s in _quant_type_to_str.items():
        if name == s:
            return quant_type
    raise ValueError(f"Unknown QuantType name '{name}'")
