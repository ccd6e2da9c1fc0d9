"""torch.backends.mha: the switch of the fused fast path of nn.MultiheadAttention and nn.TransformerEncoder.
ember has one (NumPy) path; the switch is kept and read as torch's is.

>>> import ember
>>> ember.backends.mha.get_fastpath_enabled()
True
"""
_state = {'fastpath': True}


def get_fastpath_enabled():
    """Whether the fast path of TransformerEncoder and MultiheadAttention is enabled."""
    return _state['fastpath']


def set_fastpath_enabled(value):
    """Enable or disable the fast path (torch stores the value as given)."""
    _state['fastpath'] = value
