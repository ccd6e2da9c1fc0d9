"""Data types and torch's type promotion.

A `dtype` is an immutable singleton that knows its NumPy equivalent. Promotion
follows torch, not NumPy: categories bool < integer < floating < complex, and
Python scalars ("wrapped numbers") and 0-dim tensors never raise the result
above the category of the dimensioned tensors (see NOTE [result type]).
"""
import numpy as np

from . import naming

try:  # bfloat16 and the float8 types have no NumPy type of their own; ml_dtypes is the field's standard
    import ml_dtypes
    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - optional
    ml_dtypes = _BF16 = None


def _ml(name):
    return np.dtype(getattr(ml_dtypes, name)) if ml_dtypes is not None and hasattr(ml_dtypes, name) else None

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


_QUANTIZED_SIZES = {'qint8': 1, 'quint8': 1, 'qint32': 4, 'quint4x2': 1, 'quint2x4': 1}
_SUB_BYTE_NAMES = frozenset(f'{u}int{b}' for u in ('u', '') for b in range(1, 8))


class dtype:
    """A tensor element type, e.g. ``ember.float32``.

    >>> import ember
    >>> ember.float32.is_floating_point, ember.float32.itemsize
    (True, 4)
    """
    __slots__ = ('name', '_np', 'itemsize', 'category', 'is_signed', '_rank', '__weakref__')
    __module__ = 'ember'        # torch.dtype's place: pickle finds each dtype as ember.<name> (__reduce__)

    def __init__(self, name, np_dtype, category, rank):
        # immutable: a dtype is shared by the whole process (a checkpoint must not be able to change it)
        init = object.__setattr__
        init(self, 'name', name)
        init(self, '_np', np.dtype(np_dtype) if np_dtype is not None else None)
        init(self, 'itemsize', self._np.itemsize if self._np is not None else 1 if 'float8' in name else
             _QUANTIZED_SIZES.get(name, 4 if name == 'complex32' else 1 if name in _SUB_BYTE_NAMES else 2))
        init(self, 'category', category)
        init(self, 'is_signed', not name.startswith('uint') and name not in ('bool', 'float8_e8m0fnu'))
        init(self, '_rank', rank)

    def __setattr__(self, name, value):
        raise AttributeError(f"ember.{self.name} is immutable: cannot set '{name}'")

    __delattr__ = __setattr__

    @property
    def np(self):
        """The NumPy dtype of the elements. bfloat16 has none in NumPy itself: it needs ml_dtypes, and using
        it without raises here, at the first use, rather than computing with some other type."""
        d = self._np
        if d is None and self.name == 'complex32':
            raise TypeError("ember.complex32 (ComplexHalf) has no NumPy type: ember cannot store or compute "
                            "complex32 tensors; use ember.complex64")
        if d is None and self.name in _QUANTIZED_SIZES:
            raise RuntimeError(f"ember.{self.name} is a quantized dtype: ember has the dtype object (libraries "
                               f"list it in their tables) but no quantized tensors")
        if d is None and self.name in _SUB_BYTE_NAMES:
            raise RuntimeError(f"ember.{self.name} is a sub-byte shell dtype: ember has the dtype object (torchao "
                               f"names it) but no {self.name} tensors; pack the values into ember.uint8")
        if d is None:
            raise ImportError(f"ember.{self.name} needs the optional 'ml_dtypes' package: "
                              f"pip install 'ember[bfloat16]'")
        return d

    is_floating_point = property(lambda self: self.category == _FLOAT)
    is_complex = property(lambda self: self.category == _COMPLEX)

    def to_real(self):
        return {'complex32': float16, 'complex64': float32, 'complex128': float64}.get(self.name, self)

    def to_complex(self):
        return {'float64': complex128, 'complex128': complex128, 'complex32': complex32}.get(self.name, complex64)

    def __repr__(self):
        return f'{naming.shown}.{self.name}'

    def __reduce__(self):
        return self.name        # a global, as torch's: pickle writes ember.float32 (and YAML refuses it, as torch's)


bool_ = dtype('bool', np.bool_, _BOOL, 0)
uint8 = dtype('uint8', np.uint8, _INT, 1)
int8 = dtype('int8', np.int8, _INT, 1)
int16 = dtype('int16', np.int16, _INT, 2)
int32 = dtype('int32', np.int32, _INT, 3)
int64 = dtype('int64', np.int64, _INT, 4)
float16 = dtype('float16', np.float16, _FLOAT, 1)
bfloat16 = dtype('bfloat16', _BF16, _FLOAT, 1)
float32 = dtype('float32', np.float32, _FLOAT, 2)
float64 = dtype('float64', np.float64, _FLOAT, 3)
complex64 = dtype('complex64', np.complex64, _COMPLEX, 2)
complex128 = dtype('complex128', np.complex128, _COMPLEX, 3)
# torch's "barebones" types: storage, conversion and a few kernels, and no promotion with other types (below)
uint16 = dtype('uint16', np.uint16, _INT, 2)
uint32 = dtype('uint32', np.uint32, _INT, 3)
uint64 = dtype('uint64', np.uint64, _INT, 4)
float8_e4m3fn = dtype('float8_e4m3fn', _ml('float8_e4m3fn'), _FLOAT, 0)
float8_e5m2 = dtype('float8_e5m2', _ml('float8_e5m2'), _FLOAT, 0)
float8_e4m3fnuz = dtype('float8_e4m3fnuz', _ml('float8_e4m3fnuz'), _FLOAT, 0)
float8_e5m2fnuz = dtype('float8_e5m2fnuz', _ml('float8_e5m2fnuz'), _FLOAT, 0)
float8_e8m0fnu = dtype('float8_e8m0fnu', _ml('float8_e8m0fnu'), _FLOAT, 0)
# torch's complex32 (chalf): the dtype object, its properties and promotion, and no tensors: NumPy has no complex
# half type to store one in (dtype.np raises). float16's results that torch gives as complex32 (float16 with a complex
# scalar) ember computes in complex64.
complex32 = dtype('complex32', None, _COMPLEX, 1)
# torch's quantized dtypes: the objects only (tensordict and others list them in dtype tables); no tensors
qint8 = dtype('qint8', None, _INT, 0)
quint8 = dtype('quint8', None, _INT, 0)
qint32 = dtype('qint32', None, _INT, 0)
quint4x2 = dtype('quint4x2', None, _INT, 0)
quint2x4 = dtype('quint2x4', None, _INT, 0)
QUANTIZED = (qint8, quint8, qint32, quint4x2, quint2x4)
# torch's sub-byte "shell" dtypes (torch.uint1..uint7, torch.int1..int7): the objects only, as torch gives them
# almost no kernels (torchao builds its packed tensor subclasses over uint8 and names these in its tables)
SUB_BYTE = tuple(dtype(f'{u}int{b}', None, _INT, 0) for u in ('u', '') for b in range(1, 8))
uint1, uint2, uint3, uint4, uint5, uint6, uint7, int1, int2, int3, int4, int5, int6, int7 = SUB_BYTE
_UNSIGNED_WIDE = (uint16, uint32, uint64)
_FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128) + \
    _UNSIGNED_WIDE + _FLOAT8
_BY_NAME = {d.name: d for d in ALL + (complex32,) + QUANTIZED + SUB_BYTE}
# torch's aliases: torch.float, torch.long, torch.half, ...
ALIASES = {'float': float32, 'double': float64, 'half': float16, 'long': int64, 'int': int32,
           'short': int16, 'cfloat': complex64, 'cdouble': complex128, 'bool': bool_, 'chalf': complex32}
_FROM_NP = {d._np: d for d in ALL if d._np is not None}


# The names torch's messages give a dtype: c10's ScalarType ("Float", in "not implemented for 'Float'" and in
# the legacy type names, torch.FloatTensor) and the C++ type ("float", in "float != double").
_SCALAR_NAMES = {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'bfloat16': 'BFloat16', 'int64': 'Long',
                 'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool',
                 'complex32': 'ComplexHalf', 'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble', 'uint16': 'UInt16', 'uint32': 'UInt32',
                 'uint64': 'UInt64', 'float8_e4m3fn': 'Float8_e4m3fn', 'float8_e5m2': 'Float8_e5m2',
                 'float8_e4m3fnuz': 'Float8_e4m3fnuz', 'float8_e5m2fnuz': 'Float8_e5m2fnuz',
                 'float8_e8m0fnu': 'Float8_e8m0fnu', 'qint8': 'QInt8', 'quint8': 'QUInt8', 'qint32': 'QInt32',
                 'quint4x2': 'QUInt4x2', 'quint2x4': 'QUInt2x4',
                 **{n: n[0].upper() + n[1:].replace('int', 'Int') for n in _SUB_BYTE_NAMES}}
_CPP_NAMES = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16',
              'int64': 'long int', 'int32': 'int', 'int16': 'short int', 'int8': 'signed char',
              'uint8': 'unsigned char', 'bool': 'bool', 'complex32': 'c10::complex<c10::Half>',
              'complex64': 'c10::complex<float>',
              'complex128': 'c10::complex<double>', 'uint16': 'unsigned short', 'uint32': 'unsigned int',
              'uint64': 'unsigned long', **{d.name: f'c10::{_SCALAR_NAMES[d.name]}' for d in _FLOAT8}}


# Python's number types where a dtype goes (``torch.tensor(0, dtype=int)``): torch's parser maps them to these
PYTHON_TYPES = {bool: bool_, int: int64, float: float64, complex: complex128}


def scalar_name(d):
    """c10's ScalarType name of a dtype: ``scalar_name(float32) == 'Float'``."""
    return _SCALAR_NAMES[d.name]


def cpp_name(d):
    """The C++ element type torch's messages print: ``cpp_name(float64) == 'double'``."""
    return _CPP_NAMES[d.name]


def legacy_type_name(d):
    """The legacy tensor type name: ``legacy_type_name(float32) == 'ember.FloatTensor'``."""
    return f'{naming.shown}.{_SCALAR_NAMES[d.name]}Tensor'


def _dtype_by_name(name):
    return _BY_NAME[name]


def through_float(a, npd):
    """``a`` ready to cast to ``npd``: a float64 or 32/64-bit integer array headed for float16 or bfloat16 goes
    through float32 first, as torch makes its Half and BFloat16 values from a float (rounding twice where a
    direct cast rounds once; they differ at about one value in 20,000)."""
    if npd.itemsize == 2 and npd.kind in 'fV' and a.dtype.itemsize >= 4 and \
            (a.dtype.kind == 'f' and a.dtype.itemsize == 8 or a.dtype.kind in 'iu'):
        return a.astype(np.float32)
    return a


def from_numpy_dtype(npd):
    """The ember dtype of a NumPy dtype; TypeError for types torch lacks."""
    try:
        return _FROM_NP[npd]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(npd).name}. The only supported "
                        "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
                        "int8, uint64, uint32, uint16, uint8, and bool.") from None


def _promote_pair(a, b):
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        return None         # no promotion: promote_types raises torch's error (_Promotion)
    if a in _UNSIGNED_WIDE or b in _UNSIGNED_WIDE:
        other = b if a in _UNSIGNED_WIDE else a
        return other if other.category == _FLOAT else None
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo.category == _FLOAT:    # the real parts' promotion, made complex
            real = _promote_pair(hi.to_real(), lo)                 # (complex32 with bfloat16: complex64)
            return hi if real is hi.to_real() else real.to_complex()
        return hi
    if a.category == _INT:
        if uint8 in (a, b):  # uint8 with a signed type: the smallest signed type holding both
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a._rank > b._rank else b
    if a.category == _FLOAT and a._rank == b._rank:  # float16 with bfloat16
        return float32
    return a if a._rank > b._rank else b


class _Promotion(dict):
    """(a, b) -> the promoted dtype; the pairs torch refuses to promote are missing and raise its error."""

    def __missing__(self, key):
        a, b = key
        kind = 'Float8 Types' if a in _FLOAT8 or b in _FLOAT8 else 'uint16, uint32, uint64 types'
        raise RuntimeError(f"Promotion for {kind} is not supported, attempted to promote {scalar_name(a)} and "
                           f"{scalar_name(b)}")


_PROMOTE = _Promotion({(a, b): p for a in ALL + (complex32,) for b in ALL + (complex32,)
                       for p in (_promote_pair(a, b),) if p is not None})


def can_cast(from_, to):
    """torch.can_cast: whether a value of dtype ``from_`` may be written into a tensor of dtype ``to`` without
    going down a category (bool < integer < floating < complex), the rule for in-place and ``out=`` results.

    >>> import ember
    >>> ember.can_cast(ember.int64, ember.float16), ember.can_cast(ember.float32, ember.int32)
    (True, False)
    """
    return from_.category <= to.category


def check_cast(res, out):
    """Raise torch's error for writing a result of dtype ``res`` into an output of dtype ``out`` that
    ``can_cast`` refuses."""
    if res.category > out.category:
        raise RuntimeError(f"result type {scalar_name(res)} can't be cast to the desired output type "
                           f"{scalar_name(out)}")


# torch's messages for an out= tensor whose dtype must equal the result's (non-TensorIterator kernels: diag, sort,
# inverse, cross; TensorIterator kernels that check all operands alike: hardshrink, round, conj_physical)
SAME_DTYPE = "Expected out tensor to have dtype {res_cpp}, but got {out_cpp} instead"
FOUND_DTYPE = "Found dtype {out} but expected {res}"


def check_same_dtype(template, res, out):
    """Raise ``template`` (placeholders ``res``/``out``: ScalarType names, ``res_cpp``/``out_cpp``: C++ names) when
    an out= tensor's dtype ``out`` is not the result's ``res``."""
    if res != out:
        raise RuntimeError(template.format(res=scalar_name(res), out=scalar_name(out), res_cpp=cpp_name(res),
                                           out_cpp=cpp_name(out)))


def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` convert to, as torch.promote_types.

    >>> import ember
    >>> ember.promote_types(ember.uint8, ember.int8)
    ember.int16
    """
    return _PROMOTE[a, b]


_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def default_complex():
    return complex128 if _default[0] is float64 else complex64


def scalar_dtype(x):
    """The dtype a Python scalar takes when it becomes a tensor on its own."""
    t = type(x)
    if t is bool or isinstance(x, (bool, np.bool_)):
        return bool_
    if t is int or isinstance(x, (int, np.integer)):
        return int64
    if t is float or isinstance(x, (float, np.floating)):
        return _default[0]
    if isinstance(x, complex):
        return default_complex()
    raise TypeError(f"expected a number, got {type(x).__name__}")


# NOTE [result type]
# torch keeps three running results: dimensioned tensors, 0-dim tensors and
# wrapped Python numbers. A lower tier only counts when it is of a higher
# category than the tier above it (c10's combine_categories), which is why
# `int64_tensor + 2.5` is float32 (the default dtype) while NumPy says float64.

def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool_ or lower.category == _FLOAT:
        return _PROMOTE[higher, lower]
    return higher


def result_type_of(dim_result, zero_result, wrapped_result):
    return _combine(dim_result, _combine(zero_result, wrapped_result))


def _tier_update(acc, d):
    return d if acc is None else _PROMOTE[acc, d]


def result_type(*operands):
    """torch.result_type over tensors (anything with ``dtype`` and ``ndim``) and Python numbers."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, 'dtype', None)
        if isinstance(d, dtype):
            if x.ndim:
                dim = _tier_update(dim, d)
            else:
                zero = _tier_update(zero, d)
        else:
            wrapped = _tier_update(wrapped, scalar_dtype(x))
    return result_type_of(dim, zero, wrapped)


def _of_python_type(t):
    """finfo/iinfo of a Python type: its dtype as torch's parser reads it (float is float64, whatever the default)."""
    return {float: float64, complex: complex128, int: int64, bool: bool_}.get(t, t) if isinstance(t, type) else t


class finfo:
    """Machine limits of a floating dtype (torch.finfo)."""

    def __init__(self, type=None):
        type = _of_python_type(type or _default[0])
        if type.category not in (_FLOAT, _COMPLEX):
            raise TypeError(f"finfo expects a floating point dtype, got {type}")
        real = type.to_real()
        info = ml_dtypes.finfo(real.np) if real is bfloat16 or real in _FLOAT8 else np.finfo(real.np)
        self.dtype = type.to_real().name
        self.bits = type.to_real().itemsize * 8
        for k in ('eps', 'max', 'min', 'tiny'):
            setattr(self, k, float(getattr(info, k)))
        if real is float8_e5m2fnuz:
            self.eps = 0.125        # torch's value (ml_dtypes gives 2**-2 for the two mantissa bits)
        self.resolution = 10.0 ** -int(-np.log10(self.eps))     # torch's: the decimal digits eps resolves
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):
        type = _of_python_type(type)
        if type.category not in (_INT, _BOOL) or type is bool_:
            raise TypeError(f"iinfo expects an integer dtype, got {type}")
        if type.name in _SUB_BYTE_NAMES:        # torch's words for its shell dtypes
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.dtype, self.bits, self.min, self.max = type.name, info.bits, int(info.min), int(info.max)

    def __repr__(self):         # torch prints the limits as doubles, %g
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
