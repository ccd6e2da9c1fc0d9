"""Activation modules: thin wrappers over ``ember.nn.functional`` with torch's arguments and reprs."""
from ... import _functions as _E
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ['Threshold', 'ReLU', 'ReLU6', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'CELU', 'GELU', 'SiLU', 'Mish',
           'Sigmoid', 'Tanh', 'Softplus', 'Hardtanh', 'Hardswish', 'Hardsigmoid', 'LogSigmoid', 'Softsign',
           'Softmax', 'LogSoftmax', 'Softmin', 'Softmax2d', 'GLU', 'Hardshrink', 'Softshrink', 'Tanhshrink', 'RReLU']


def _ip(inplace):
    return ', inplace=True' if inplace else ''


# Each forward calls the functional form exactly as torch's module does (``F.relu(input, inplace=self.inplace)``,
# ``F.hardtanh(input, self.min_val, self.max_val, self.inplace)``), so a traced graph (ember.fx) records the
# same arguments as torch's.


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f'threshold={self.threshold}, value={self.value}{_ip(self.inplace)}'


class ReLU(Module):
    """max(0, x).

    >>> import ember
    >>> ember.nn.ReLU()(ember.tensor([-1., 2.]))
    tensor([0., 2.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return 'inplace=True' if self.inplace else ''


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f'min_val={self.min_val}, max_val={self.max_val}{_ip(self.inplace)}'


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return 'inplace=True' if self.inplace else ''


class _Plain(Module):
    """An activation with no arguments but ``inplace``."""
    _fn = None
    _repr_inplace = True
    _inplace_keyword = True     # torch's forward passes inplace= by keyword (silu, mish) or by position

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        fn = getattr(F, self._fn)
        return fn(input, inplace=self.inplace) if self._inplace_keyword else fn(input, self.inplace)

    def extra_repr(self):
        return 'inplace=True' if self.inplace and self._repr_inplace else ''


class SiLU(_Plain):
    _fn = 'silu'


class Mish(_Plain):
    _fn = 'mish'


class SELU(_Plain):
    _fn = 'selu'
    _inplace_keyword = False


class Hardswish(_Plain):
    _fn = 'hardswish'
    _repr_inplace = False
    _inplace_keyword = False


class Hardsigmoid(_Plain):
    _fn = 'hardsigmoid'
    _repr_inplace = False
    _inplace_keyword = False


class _NoArg(Module):
    _fn = None

    def forward(self, input):
        return getattr(F, self._fn)(input)


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class LogSigmoid(_NoArg):
    _fn = 'logsigmoid'


class Softsign(_NoArg):
    _fn = 'softsign'


class Tanhshrink(_NoArg):
    _fn = 'tanhshrink'


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f'negative_slope={self.negative_slope}{_ip(self.inplace)}'


class ELU(Module):
    _fn = 'elu'

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f'alpha={self.alpha}{_ip(self.inplace)}'


class CELU(ELU):
    _fn = 'celu'


class GELU(Module):
    def __init__(self, approximate='none'):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate) if self.approximate != 'none' else F.gelu(input)

    def extra_repr(self):
        return f'approximate={self.approximate!r}'


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f'beta={self.beta}, threshold={self.threshold}'


class Hardshrink(Module):
    _fn = 'hardshrink'

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return getattr(F, self._fn)(input, self.lambd)

    def extra_repr(self):
        return f'{self.lambd}'


class Softshrink(Hardshrink):
    _fn = 'softshrink'


class PReLU(Module):
    """max(0, x) + a * min(0, x) with a learnt ``weight`` of shape (num_parameters,), filled with ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_E.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init as _init
        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f'num_parameters={self.num_parameters}'


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f'dim={self.dim}'


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, 'dim'):
            self.dim = None

    def forward(self, input):
        dim = self.dim
        if dim is None:     # torch's implicit dim choice (with its deprecation warning)
            # at the module call's frame inside the library, as torch's (its module.py), so shown once per process
            from ember._warn import warnings
            warnings.warn_in_library(f"Implicit dimension choice for {self._fn} has been deprecated. Change the "
                                     "call to include dim=X as an argument.", stacklevel=2)
            dim = 0 if input.dim() in (0, 1, 3) else 1
        return getattr(F, self._fn)(input, dim)

    def extra_repr(self):
        return f'dim={self.dim}'


class Softmax(_SoftmaxBase):
    _fn = 'softmax'


class LogSoftmax(_SoftmaxBase):
    _fn = 'log_softmax'


class Softmin(_SoftmaxBase):
    _fn = 'softmin'


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class RReLU(Module):
    """Randomised leaky ReLU: slope ~ U(lower, upper) while training, (lower + upper) / 2 in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f'lower={self.lower}, upper={self.upper}{_ip(self.inplace)}'


# torch defines MultiheadAttention in torch.nn.modules.activation; programs name it there (for example in the
# safe-globals list they pass to torch.load), so that path resolves too. Imported last: transformer.py needs
# linear/dropout/normalization, never this module, so there is no cycle.
from .transformer import MultiheadAttention  # noqa: E402
MultiheadAttention.__module__ = __name__      # its torch path (NOTE [torch's module paths] in normalization.py)
