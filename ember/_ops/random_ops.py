"""Random operators: sampling (bernoulli, multinomial, normal), the in-place fills (``uniform_``,
``normal_``, ``exponential_``, ...) and dropout.

Every random op takes a ``Generator? generator`` argument; adapters hand the kernel the NumPy
generator of it (or of ember's default generator), so ``ember.manual_seed`` and ``generator=`` make
every op reproducible. Streams differ from torch's; parameters, shapes, dtypes and errors do not.

In-place fills are declared as functional operators (aten's ``uniform``, ``exponential``, ...) with
``inplace=True``; the registry generates ``uniform_`` from them. Their public methods are attached in
ember/_python_functions/random_ops.py, which also picks overloads for ``ember.normal``/``bernoulli``/``randint``.
Parameter errors are checked in the meta functions (before any data is written); the checks that
depend on data (probabilities outside [0, 1]) are made by the kernels.
"""
import math

from .._core import dtype as D
from .._core.dtype import scalar_name as _tname
from .pointwise import broadcast_shapes
from .registry import declare
from .._dispatch.ops_namespace import aten

_G = '*, Generator? generator=None'




def _floating(d, kernel):
    if d.category < 2:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(d)}\'')


def _same(self, *rest):
    return tuple(self._a.shape), self._dtype


def _zeros_grad(grad):
    """torch's derivative of a sample with respect to its input and parameters (derivatives.yaml: zeros)."""
    return grad * 0


def _rand(schema, meta, inplace=True, **kw):
    """A random op with torch's zero derivative: so, as in torch, filling a leaf that requires grad in place
    raises, and a filled non-leaf gets a history with zero gradient."""
    kw.setdefault('method', False)
    kw.setdefault('function', False)
    kw.setdefault('derivatives', {'self': _zeros_grad})
    kw.setdefault('forward', lambda result: aten.zeros_like.default(result))     # a fill forgets its input's tangent
    return declare(schema, meta=meta, inplace=inplace, **kw)


# --- in-place fills (functional forms) ---------------------------------------------------

def _uniform_meta(self, from_=0.0, to=1.0, generator=None):
    _floating(self._dtype, 'check_uniform_bounds')
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(from_)} > to={_num(to)}")
    return _same(self)


def _num(x):
    return int(x) if float(x).is_integer() else x


def _normal_fill_meta(self, mean=0.0, std=1.0, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    if self._a.size:        # torch returns an empty tensor before looking at its dtype
        _floating(self._dtype, 'normal_kernel_cpu')
    return _same(self)


def _exponential_meta(self, lambd=1.0, generator=None):
    if self._dtype.category < 2 and self._a.size:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_tname(self._dtype)}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return _same(self)


def _geometric_meta(self, p, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    return _same(self)


def _cauchy_meta(self, median=0.0, sigma=1.0, generator=None):
    if self._dtype.category < 2:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_CTYPE[self._dtype.name].replace('long', 'long int')}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    return _same(self)


def _log_normal_meta(self, mean=1.0, std=2.0, generator=None):
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    if self._a.size:
        _floating(self._dtype, 'log_normal_cpu')
    return _same(self)


_INT_RANGE = {'uint8': (0, 255), 'int8': (-128, 127), 'int16': (-2 ** 15, 2 ** 15 - 1),
              'int32': (-2 ** 31, 2 ** 31 - 1), 'int64': (-2 ** 63, 2 ** 63 - 1), 'bool': (0, 1)}
_DIGITS = {'float16': 11, 'bfloat16': 8, 'float32': 24, 'float64': 53}
_CTYPE = {'uint8': 'unsigned char', 'int8': 'signed char', 'int16': 'short', 'int32': 'int', 'int64': 'long',
          'bool': 'bool', 'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16', 'float32': 'float',
          'float64': 'double'}


def _check_range(dtype, from_, to_inc):
    """torch's check_from_to_in_range: both bounds inside the dtype (a float type's finite values), and for a
    float type the warning that past 2**digits not every integer is drawn."""
    name, ctype = dtype.name, _CTYPE[dtype.name]
    if name in _DIGITS:
        top = D.finfo(dtype).max
        lo_ok, hi_ok = -top, top
    else:
        lo_ok, hi_ok = _INT_RANGE[name]
    for value, what in ((from_, 'from'), (to_inc, 'to - 1')):
        if not lo_ok <= value <= hi_ok:
            raise RuntimeError(f"{what} is out of bounds for {ctype}")
    digits = _DIGITS.get(name)
    for value, what in ((from_, 'from'), (to_inc, 'to - 1')):
        if digits and not -2 ** digits <= value <= 2 ** digits:
            from ember._warn import warnings
            warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {ctype} "
                          "can support discrete uniform distribution only within this range. This warning will "
                          "become an error in version 1.7 release, please fix the code in advance", UserWarning)


def random_bounds(dtype, from_, to):
    """torch's checks of ``random_(from, to)`` (random_from_to_impl) for ``dtype``: from below to, both in the
    dtype's range; ``to=None`` means up to the largest value the dtype holds exactly (2**digits for a float type),
    and with from the lowest int64 the full 64-bit range (int64, float32, float64, bfloat16 only). The kernel
    draws from the same range (``random_range`` in _backends/cpu/_torch_random.py); these checks read the
    bounds as given, where torch first moves a float type's bound past 2**digits to one it holds."""
    digits = _DIGITS.get(dtype.name)
    if to is not None:
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        _check_range(dtype, from_, to - 1)
    elif from_ != -2 ** 63:
        to_inc = 2 ** digits if digits else _INT_RANGE[dtype.name][1]
        if digits and from_ >= to_inc:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                               f"to dtype, but got from={from_} > to_inc={to_inc}")
        _check_range(dtype, from_, to_inc)
    elif dtype.name in ('bool', 'float16'):
        raise NotImplementedError(f'"random_full_64_bits_range_kernel_cpu" not implemented for \'{_tname(dtype)}\'')
    elif dtype.name not in ('int64', 'float32', 'float64', 'bfloat16'):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")


def _random_meta(self, from_=0, to=None, generator=None):
    if self._dtype.category > 2:
        raise NotImplementedError(f'"random_from_to_range_calc" not implemented for \'{_tname(self._dtype)}\'')
    random_bounds(self._dtype, from_, to)
    return _same(self)


_rand(f'uniform(Tensor self, float from_=0, float to=1, {_G}) -> Tensor', _uniform_meta)
_rand(f'normal_functional(Tensor self, float mean=0, float std=1, {_G}) -> Tensor', _normal_fill_meta)
_rand(f'exponential(Tensor self, float lambd=1, {_G}) -> Tensor', _exponential_meta)
_rand(f'geometric(Tensor self, float p, {_G}) -> Tensor', _geometric_meta)
_rand(f'cauchy(Tensor self, float median=0, float sigma=1, {_G}) -> Tensor', _cauchy_meta)
_rand(f'log_normal(Tensor self, float mean=1, float std=2, {_G}) -> Tensor', _log_normal_meta)
_rand(f'random.from(Tensor self, int from_, int? to, {_G}) -> Tensor', _random_meta)


# --- bernoulli ----------------------------------------------------------------------------------

def _bernoulli_meta(self, generator=None):
    _floating(self._dtype, 'bernoulli_tensor_cpu_p_')
    return _same(self)


def _bernoulli_p_meta(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    return _same(self)


def _bernoulli_tensor_meta(self, p, generator=None):
    _floating(p._dtype, 'bernoulli_tensor_cpu_p_')
    shape = tuple(self._a.shape)
    if broadcast_shapes(shape, p._a.shape) != shape:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(p._a.shape)}}}, size={list(shape)}): the number of "
                           f"sizes provided ({len(shape)}) must be greater or equal to the number of dimensions in "
                           f"the tensor ({p._a.ndim})")
    return shape, self._dtype


_rand(f'bernoulli(Tensor self, {_G}) -> Tensor', _bernoulli_meta, inplace=False, function=True, method=True, out=True)
_rand(f'bernoulli.p(Tensor self, float p=0.5, {_G}) -> Tensor', _bernoulli_p_meta, name='_bernoulli_p')
_rand(f'bernoulli.Tensor(Tensor self, Tensor p, {_G}) -> Tensor', _bernoulli_tensor_meta, name='_bernoulli_tensor',
      derivatives={'self': _zeros_grad, 'p': _zeros_grad})


def _poisson_meta(self, generator=None):
    _floating(self._dtype, 'poisson_cpu')
    return _same(self)


_rand(f'poisson(Tensor self, {_G}) -> Tensor', _poisson_meta, inplace=False, function=True, method=False)


# --- multinomial ---------------------------------------------------------------------------------

def _multinomial_meta(self, num_samples, replacement=False, generator=None):
    shape = tuple(self._a.shape)
    if len(shape) not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if self._dtype.category < 2:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_tname(self._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    return shape[:-1] + (num_samples,), D.int64


declare(f'multinomial(Tensor self, int num_samples, bool replacement=False, {_G}) -> Tensor',
        meta=_multinomial_meta, out=True, differentiable=False)


# --- normal ----------------------------------------------------------------------------------------

def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def _normal_tf_meta(mean, std=1.0, generator=None):
    _check_std(std)
    _floating(mean._dtype, 'normal_kernel_cpu')
    return tuple(mean._a.shape), mean._dtype


def _normal_ft_meta(mean, std, generator=None):
    _floating(std._dtype, 'normal_kernel_cpu')
    return tuple(std._a.shape), std._dtype


def _normal_tt_meta(mean, std, generator=None):
    _floating(mean._dtype, 'normal_kernel_cpu')
    return broadcast_shapes(mean._a.shape, std._a.shape), D.promote_types(mean._dtype, std._dtype)


def _normal_ff_meta(mean, std, size, generator=None, dtype=None, device=None):
    from .factories import _size
    _check_std(std)
    return _size(size), dtype if dtype is not None else D.get_default_dtype()


declare(f'normal.Tensor_float(Tensor mean, float std=1, {_G}) -> Tensor', forward='transpose', meta=_normal_tf_meta, method=False,
        out=True, derivatives={'mean': _zeros_grad}, grad_name='NormalBackward1')
declare(f'normal.float_Tensor(float mean, Tensor std, {_G}) -> Tensor', forward='transpose', meta=_normal_ft_meta, method=False,
        function=False, name='_normal_float_tensor', out=True, derivatives={'std': _zeros_grad},
        grad_name='NormalBackward2')
declare(f'normal.Tensor_Tensor(Tensor mean, Tensor std, {_G}) -> Tensor', forward='transpose', meta=_normal_tt_meta, method=False,
        function=False, name='_normal_tensor_tensor', out=True,
        derivatives={'mean': _zeros_grad, 'std': _zeros_grad}, grad_name='NormalBackward3')
declare(f'normal.float_float(float mean, float std, SymInt[] size, {_G}, ScalarType? dtype=None, '
        f'Device? device=None) -> Tensor', kind='factory', meta=_normal_ff_meta, method=False, function=False,
        name='_normal_float_float', differentiable=False)


# --- dropout ----------------------------------------------------------------------------------------
# native_dropout is one primitive returning (output, mask): one random draw and two passes over the
# data, against four for torch's CPU composite (bernoulli_ on a buffer, div_, mul); the backward
# needs only the saved mask (result1, as torch saves): grad * mask / (1 - p), so the output may be changed in
# place before the backward (speechbrain's Conformer masks it).

def _native_dropout_meta(input, p, train, generator=None):
    shape = tuple(input._a.shape)
    training = train is None or bool(train)
    if input._dtype.category < 2 and training:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_tname(input._dtype)}")
    empty = training and input._a.size == 0     # torch's CPU kernel returns a float mask then
    return [(shape, input._dtype), (shape, input._dtype if empty else D.bool_)]


def _dropout_scale(p):
    return 0.0 if p >= 1 else 1.0 / (1.0 - p)


declare(f'native_dropout(Tensor input, float p, bool? train, {_G}) -> (Tensor, Tensor)', forward='transpose', meta=_native_dropout_meta,
        method=False, derivatives={'input': lambda grads, result1, p: grads[0] * _dropout_noise(result1, p, grads[0])})


def _dropout_noise(mask, p, grad):
    """torch's dropout noise, mask / (1 - p) in the gradient's dtype (a half-precision scale rounds: 1.109375 for
    p = 0.1 in bfloat16), which its backward multiplies by."""
    return (mask * _dropout_scale(p)).to(grad.dtype)


def _check_p(p):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    out = aten.native_dropout.default(input, p, True)[0]
    return input.copy_(out) if inplace else out


def _feature_noise(input, p, unbatched=False):
    shape = tuple(input.shape)
    noise_shape = shape[:2] + (1,) * (len(shape) - 2) if not unbatched else shape[:1] + (1,) * (len(shape) - 1)
    return aten.empty.default(noise_shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def _apply_noise(input, noise, b=None, inplace=False):
    if inplace:
        input.mul_(noise)
        return input.add_(b) if b is not None else input
    out = input * noise
    return out + b if b is not None else out


_ALPHA = 1.7580993408473766   # -selu's negative saturation value, the value dropped units take


def _dropout_impl(input, p, training, inplace, feature, alpha, unbatched=False):
    """torch's _dropout_impl: (alpha/feature) dropout from a Bernoulli(1 - p) noise tensor."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    if feature:
        noise = _feature_noise(input, p, unbatched)
    else:
        noise = aten.empty_like.default(input).bernoulli_(1 - p)
    if not alpha:
        return _apply_noise(input, noise / (1 - p), inplace=inplace)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = (noise - 1) * (_ALPHA * a) + _ALPHA * a * p
    return _apply_noise(input, noise * a, b, inplace)


def _alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout_impl(input, p, training, inplace, False, True)


def _feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout_impl(input, p, training, inplace, True, True)


def _feature_dropout(input, p=0.5, training=True, inplace=False):
    return _dropout_impl(input, p, training, inplace, True, False)


def _dropout_nd(name, spatial):
    full = spatial + 2

    def fn(input, p=0.5, training=True, inplace=False):
        _check_p(p)
        n = input.dim()
        if name == 'dropout1d':
            if n not in (2, 3):
                raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {n}D input. Note that "
                                   "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                                   "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
                                   "inputs).")
            unbatched = n == 2
        else:
            from ember._warn import warnings
            if n not in (full - 1, full):
                warnings.warn(f"{name}: Received a {n}-D input to {name}, which is deprecated and will result in an "
                              f"error in a future release. To retain the behavior and silence this warning, please "
                              f"use dropout instead. Note that {name} exists to provide channel-wise dropout on "
                              f"inputs with {spatial} spatial dimensions, a channel dimension, and an optional batch "
                              f"dimension (i.e. {full - 1}D or {full}D inputs).", stacklevel=3)
            if name == 'dropout2d' and n == 3:      # torch keeps treating 3-D input as batched (N, C, L)
                warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                              "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
                              "dim. This behavior will change in a future release to interpret the input as one "
                              "without a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                              "dropout behavior, please switch to using dropout1d instead.", stacklevel=3)
            unbatched = name == 'dropout3d' and n != full
        return _dropout_impl(input, p, training, inplace, True, False, unbatched=unbatched)
    fn.__qualname__ = name
    return fn


_DROP = 'float p=0.5, bool training=True, bool inplace=False'
declare(f'dropout(Tensor input, {_DROP}) -> Tensor', composite=_dropout, nn=True, method=False)
declare(f'feature_dropout(Tensor input, {_DROP}) -> Tensor', composite=_feature_dropout, method=False)
declare('alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor',
        composite=_alpha_dropout, nn=True, method=False)
declare('feature_alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor',
        composite=_feature_alpha_dropout, nn=True, method=False)
for _n, _k in (('dropout1d', 1), ('dropout2d', 2), ('dropout3d', 3)):
    declare(f'{_n}(Tensor input, {_DROP}) -> Tensor', composite=_dropout_nd(_n, _k), nn=True, method=False,
            function=False)


# --- randint_like -------------------------------------------------------------------------------------

def _randint_like(self, low=0, high=None, dtype=None, device=None, memory_format=None, generator=None):
    if high is None:        # torch's overloads: (self, high) and (self, low, high); high= alone means low 0
        low, high = 0, low
    # torch's: empty_like(self) (its layout, for a dense self) filled by random_, in memory order
    out = aten.empty_like.default(self, dtype=dtype or self.dtype, device=device if device is not None else self.device,
                                  memory_format=memory_format)
    return out.random_(low, high, generator=generator)


declare('randint_like(Tensor self, SymInt low=0, SymInt? high=None, *, ScalarType? dtype=None, Device? device=None, '
        'MemoryFormat? memory_format=None, Generator? generator=None) -> Tensor', composite=_randint_like,
        method=False, differentiable=False)


# --- gamma sampling with an implicit-reparameterisation gradient ----------------------------------------
# torch.distributions' Gamma/Beta/Dirichlet rsample differentiate a sample x ~ Gamma(alpha, 1) through
# alpha by implicit differentiation of the CDF: dx/dalpha = -(dF/dalpha)(x; alpha) / p(x; alpha). That
# derivative is its own (non-differentiable) operator, as in aten.

def _float_or_double(d, kernel):
    if d.name not in ('float32', 'float64'):     # torch's kernels dispatch float and double only
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(d)}\'')


def _standard_gamma_meta(self, generator=None):
    _float_or_double(self._dtype, 'gamma_cpu')
    return _same(self)


def _standard_gamma_grad_meta(self, output):
    _float_or_double(self._dtype, '_standard_gamma_grad_cpu')
    return broadcast_shapes(self._a.shape, output._a.shape), D.promote_types(self._dtype, output._dtype)


declare('_standard_gamma_grad(Tensor self, Tensor output) -> Tensor', meta=_standard_gamma_grad_meta, method=False,
        differentiable=False)
declare(f'_standard_gamma(Tensor self, {_G}) -> Tensor', forward='transpose', meta=_standard_gamma_meta, method=False,
        derivatives={'self': lambda grad, self, result: grad * aten._standard_gamma_grad.default(self, result)})


def _sample_dirichlet_meta(self, generator=None):
    _float_or_double(self._dtype, 'dirichlet')
    return _same(self)


def _sample_dirichlet_no_grad(grad, self):
    raise RuntimeError("derivative for aten::_sample_dirichlet is not implemented")     # as torch


# torch.distributions.Dirichlet differentiates its samples with its own autograd Function, not through this
declare(f'_sample_dirichlet(Tensor self, {_G}) -> Tensor', meta=_sample_dirichlet_meta, method=False,
        derivatives={'self': _sample_dirichlet_no_grad}, forward='not_implemented')


def _binomial_meta(count, prob, generator=None):
    if count._dtype.category < 2:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_tname(count._dtype)}")
    if prob._dtype is not count._dtype:
        raise RuntimeError(f"Found dtype {_tname(prob._dtype)} but expected {_tname(count._dtype)}")
    _float_or_double(count._dtype, 'binomial_cpu')
    return broadcast_shapes(count._a.shape, prob._a.shape), count._dtype


declare(f'binomial(Tensor count, Tensor prob, {_G}) -> Tensor', meta=_binomial_meta, method=False,
        differentiable=False)
