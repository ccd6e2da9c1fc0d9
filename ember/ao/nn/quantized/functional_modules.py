"""FloatFunctional (observed float arithmetic in a float model) and QFunctional (its quantized replacement)."""
import ember
from ember import nn
from ._utils import _OutputQParams

qops = ember.ops.quantized


class FloatFunctional(nn.Module):
    """Float ``add``/``mul``/``cat``/``add_relu`` whose outputs an observer (``activation_post_process``) watches,
    so that ``convert`` can replace the module by a QFunctional with the observed parameters.

    >>> f = FloatFunctional()
    >>> f.add(ember.ones(2), ember.ones(2))
    tensor([2., 2.])
    """

    def __init__(self):
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x, y):
        return self.activation_post_process(ember.add(x, y))

    def add_scalar(self, x, y):
        return ember.add(x, y)

    def mul(self, x, y):
        return self.activation_post_process(ember.mul(x, y))

    def mul_scalar(self, x, y):
        return ember.mul(x, y)

    def cat(self, x, dim=0):
        return self.activation_post_process(ember.cat(x, dim=dim))

    def add_relu(self, x, y):
        return self.activation_post_process(ember.nn.functional.relu(ember.add(x, y)))

    def matmul(self, x, y):
        return self.activation_post_process(ember.matmul(x, y))


class FXFloatFunctional(FloatFunctional):
    """FloatFunctional without an observer of its own (FX graph mode inserts them)."""

    def __init__(self):
        nn.Module.__init__(self)

    def add(self, x, y):
        return ember.add(x, y)

    def mul(self, x, y):
        return ember.mul(x, y)

    def cat(self, x, dim=0):
        return ember.cat(x, dim=dim)

    def add_relu(self, x, y):
        return ember.nn.functional.relu(ember.add(x, y))

    def matmul(self, x, y):
        return ember.matmul(x, y)


class QFunctional(_OutputQParams, nn.Module):
    """Quantized ``add``/``mul``/``cat``/``add_relu`` with the output ``scale`` and ``zero_point`` observed by the
    FloatFunctional it replaces."""

    def __init__(self):
        super().__init__()
        self.scale, self.zero_point = 1.0, 0
        self.activation_post_process = nn.Identity()

    def _get_name(self):
        return 'QFunctional'

    def extra_repr(self):
        return f'scale={self.scale}, zero_point={self.zero_point}'

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def add(self, x, y):
        return self.activation_post_process(qops.add(x, y, float(self.scale), int(self.zero_point)))

    def mul(self, x, y):
        return self.activation_post_process(qops.mul(x, y, float(self.scale), int(self.zero_point)))

    def cat(self, x, dim=0):
        return self.activation_post_process(qops.cat(list(x), dim, float(self.scale), int(self.zero_point)))

    def add_relu(self, x, y):
        return self.activation_post_process(qops.add_relu(x, y, float(self.scale), int(self.zero_point)))

    def add_scalar(self, x, y):
        return qops.add_scalar(x, y)        # not observed, as torch's: the output parameters follow from the input

    def mul_scalar(self, x, y):
        return qops.mul_scalar(x, y)

    def matmul(self, x, y):
        return qops.matmul(x, y, float(self.scale), int(self.zero_point))


    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not FloatFunctional:
            raise AssertionError("QFunctional.from_float expects an instance of FloatFunctional")
        scale, zp = mod.activation_post_process.calculate_qparams()
        new = QFunctional()
        new.scale, new.zero_point = float(scale), int(zp)
        return new
