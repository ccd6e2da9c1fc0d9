"""Helpers the model files share (torchvision's ``models/_utils.py``)."""


def _make_divisible(v, divisor, min_value=None):
    """Round channels to a multiple of ``divisor``, never more than 10% below ``v``."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v
