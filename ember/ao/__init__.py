"""ember.ao (torch.ao): quantization (``ember.ao.quantization``) and its modules (``ember.ao.nn``)."""
from . import nn, quantization  # noqa: F401
