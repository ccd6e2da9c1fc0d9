"""``Identity``, ``Linear`` and ``Bilinear``, with torch's parameter names, shapes and initialisation."""
import math

from ... import _functions as _E
from .. import functional as F
from .. import init
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ['Identity', 'Linear', 'Bilinear', 'LazyLinear']


class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as in torch)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x Wᵀ + b, with W of shape (out_features, in_features) ~ U(-1/√in, 1/√in).

    >>> import ember
    >>> m = ember.nn.Linear(20, 30)
    >>> m(ember.randn(128, 20)).shape
    ember.Size([128, 30])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_E.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_E.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch's default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f'in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}'


class NonDynamicallyQuantizableLinear(Linear):
    """torch's name for MultiheadAttention's output projection (it shows in reprs and checkpoints' safe-global
    lists, as ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``).

    Example::

        >>> ember.nn.MultiheadAttention(4, 2).out_proj.__class__.__name__
        'NonDynamicallyQuantizableLinear'
    """


class Bilinear(Module):
    """y = x1ᵀ A x2 + b, A of shape (out_features, in1_features, in2_features)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_E.empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_E.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        # y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j]: one matmul, then a product summed over j
        O, I1, I2 = self.weight.shape
        lead = tuple(input1.shape[:-1])
        x1 = input1.reshape(-1, I1)
        x2 = input2.reshape(-1, I2)
        y = ((x1 @ self.weight.transpose(0, 1).reshape(I1, O * I2)).view(-1, O, I2) * x2.unsqueeze(1)).sum(-1)
        if self.bias is not None:
            y = y + self.bias
        return y.view(lead + (O,))

    def extra_repr(self):
        return (f'in1_features={self.in1_features}, in2_features={self.in2_features}, '
                f'out_features={self.out_features}, bias={self.bias is not None}')


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is read from the last dimension of its first input (NOTE [lazy
    parameters]); it becomes a :class:`Linear` then."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
