"""torch's multi-tensor operators (``_foreach_add``, ``_foreach_mul_``, ``_foreach_norm``, ...): one single-tensor
operator applied to every tensor of a list, declared by family from the tables below.

NOTE [foreach operators]: torch gives each ``_foreach_*`` overload a fused CUDA kernel (one launch for a whole
list of parameters) and, for CPU and mixed lists, a "slow path" that calls the single-tensor operator per
tensor. ember declares every overload with torch's schema, as a composite (CompositeImplicitAutograd) that is
that slow path: ``_foreach_add.List(self, other, alpha)`` is ``[aten.add.Tensor(s, o, alpha=alpha) ...]``. So
the values, type promotion and errors are the single-tensor operator's, bit for bit, and autograd, vmap and the
Python modes need nothing of their own. Where ember differs from torch:
  * a composite is decomposed before Python modes see it, so ``__torch_dispatch__``, ``make_fx`` and the
    profiler see the per-tensor ``aten.add.Tensor`` calls rather than one ``aten._foreach_add.List``;
  * gradients flow through per-tensor nodes (``AddBackward0`` per output) rather than torch's
    ``ForeachAddBackward0List``; the values are the same, and some gradients torch has no formula for
    (``_foreach_powsum``, the second list of ``_foreach_mul.Tensor``) simply work;
  * the in-place overloads (``_foreach_add_.Scalar``, ``-> ()``) return None as operators, and their public
    functions return the list they wrote, as torch's generated Python bindings do (overloads.py).
What torch checks before the loop is checked here too, with its messages: an empty list, lists of different
lengths, a scalar list of another length, a ``Tensor`` scalar that is not 0-d. Why ember's optimizers need no
multi-tensor variant of their own: NOTE [foreach] in optim/optimizer.py.
"""
from .._core import dtype as D
from .._dispatch.ops_namespace import aten
from .._dispatch.schema import parse_schema
from .registry import declare
from .overloads import overloads

_UNARY = ('abs', 'acos', 'asin', 'atan', 'ceil', 'cos', 'cosh', 'erf', 'erfc', 'exp', 'expm1', 'floor', 'frac',
          'lgamma', 'log', 'log10', 'log1p', 'log2', 'neg', 'reciprocal', 'round', 'rsqrt', 'sigmoid', 'sign', 'sin',
          'sinh', 'sqrt', 'tan', 'tanh', 'trunc')


# --- the checks torch makes before its per-tensor loop ---------------------------------------------------------

def _check_lists(schema, values):
    """torch's check_foreach_api_restrictions: the first list is not empty, every other Tensor list has as many
    tensors and every scalar list as many numbers."""
    n = None
    for a, v in zip(schema.arguments, values):
        if a.base_type == 'Tensor[]':
            if n is None:
                if len(v) == 0:
                    raise RuntimeError("Tensor list must have at least one tensor.")
                n = len(v)
            elif len(v) != n:
                if not v:       # torch's parser reads an empty list as the scalar-list overload's, and says so
                    raise RuntimeError("Tensor list must have same number of elements as scalar list.")
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(v)}")
        elif a.base_type == 'Scalar[]' and len(v) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return n


def _scalar_tensor(t):
    """The ``Tensor`` overloads of add, mul and div take one 0-d tensor for every element of the list."""
    if t.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {t.dim()} dimensions and {t.numel()} "
                           f"elements.")
    return t


def _packed_scalars(t, n):
    """The ``Tensor`` overloads of addcmul and addcdiv take the scalar list packed into a 1-d tensor, read back as
    numbers (so, as in torch, no gradient reaches it)."""
    if t.dim() != 1:
        raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {t.dim()} instead.")
    if t.numel() != n:
        raise RuntimeError(f"Expected length of scalars to match input of length {n} but got {t.numel()} instead.")
    return t.tolist()


# --- the generator -----------------------------------------------------------------------------------------------

def _packed(arg):
    """``Tensor scalars``: the packed scalar list of addcmul/addcdiv's ``Tensor`` overloads (no other schema of
    the family names a single tensor so)."""
    return arg.name == 'scalars' and arg.base_type == 'Tensor'


def _composite(schema, each, inplace):
    """The slow path of one overload: ``each`` called once per position of the lists, with that position's
    tensor (or number) of every list argument and the other arguments as given."""
    parsed = parse_schema(schema)
    per_item = [a.base_type in ('Tensor[]', 'Scalar[]') or _packed(a) for a in parsed.arguments]

    def foreach(*values):
        n = _check_lists(parsed, values)
        values = [_packed_scalars(v, n) if _packed(a) else v for a, v in zip(parsed.arguments, values)]
        results = [each(*(v[i] if listed else v for v, listed in zip(values, per_item))) for i in range(n)]
        return None if inplace else tuple(results)
    foreach.__qualname__ = f'_foreach_{parsed.full_name}'
    return foreach


def _family(name, variants, inplace=True, function=True):
    """Declare ``_foreach_<name>`` with one overload per ``variants`` entry, ``overload: (arguments, each)``,
    and its in-place twin ``_foreach_<name>_`` (``each`` called with the in-place single-tensor operator's
    name: ``'add_'``), then the public function that picks the overload from the arguments."""
    out_names, in_names = [], []
    for ov, (args, each) in variants.items():
        dot = f'.{ov}' if ov else ''
        declare(f'_foreach_{name}{dot}({args}) -> Tensor[]', composite=_composite(
            f'_foreach_{name}{dot}({args}) -> Tensor[]', each(name), False), method=False, function=function,
            tags=('foreach',))
        out_names.append(f'_foreach_{name}{dot}')
        if inplace:
            ip_args = args.replace('Tensor[] self', 'Tensor(a!)[] self', 1)
            schema = f'_foreach_{name}_{dot}({ip_args}) -> ()'
            declare(schema, composite=_composite(schema, each(name + '_'), True), method=False, tags=('foreach',))
            in_names.append(f'_foreach_{name}_{dot}')
    for public, names in ((f'_foreach_{name}', out_names), (f'_foreach_{name}_', in_names)):
        if len(names) > 1:
            overloads(public, *names, method=False)


def _twin(op_name, like):
    """``op_name``, in place where ``like`` is (``_twin('clamp_min', 'maximum_')`` is ``'clamp_min_'``)."""
    return op_name + '_' if like.endswith('_') else op_name


def _written(name):
    """maximum/minimum, which have no in-place operator: ``maximum_`` writes ``maximum``'s result into the tensor,
    as torch's ``maximum_out(t, t, other)``, with its check that the result's dtype can be cast."""
    if not name.endswith('_'):
        return _op(name)
    functional = _op(name[:-1])

    def write(t, other):
        r = functional(t, other)
        D.check_cast(r.dtype, t.dtype)
        aten.copy_.default(t, r)
    return write


def _op(op_name, overload='default'):
    """The single-tensor operator ``aten.<op_name>.<overload>``, looked up when called (the families below are
    declared before every module of the table is imported)."""
    return lambda *args, **kw: getattr(getattr(aten, op_name), overload)(*args, **kw)


for _name in _UNARY:
    _family(_name, {'': ('Tensor[] self', lambda n: _op(n))})

_LIST, _SCALAR, _SCALARS = 'Tensor[] self, Tensor[] other', 'Tensor[] self, Scalar scalar', 'Tensor[] self, Scalar[] scalars'
_ALPHA = ', *, Scalar alpha=1'


def _with_alpha(n):
    return lambda s, o, alpha: _op(n, 'Tensor')(s, o, alpha=alpha)


# binary operators: the list, one number, a number per tensor, one 0-d tensor (torch's add reads it as a number,
# mul and div keep it a tensor: its dtype takes part in their type promotion)
_family('add', {'Scalar': (_SCALAR, lambda n: _op(n, 'Tensor')), 'List': (_LIST + _ALPHA, _with_alpha),
                'ScalarList': (_SCALARS, lambda n: _op(n, 'Tensor')),
                'Tensor': ('Tensor[] self, Tensor other' + _ALPHA,
                           lambda n: lambda s, o, alpha: _op(n, 'Tensor')(s, _scalar_tensor(o).item(), alpha=alpha))})
_family('sub', {'Scalar': (_SCALAR, lambda n: _op(n, 'Tensor')), 'List': (_LIST + _ALPHA, _with_alpha),
                'ScalarList': (_SCALARS, lambda n: _op(n, 'Tensor'))})


def _by_number(n):
    """mul and div by a number. NOTE [half-precision scalars] (_ops/adapters.py): ``mul(x, s)`` computes with
    ``s`` in float32, but torch's in-place ``_foreach_mul_`` with numbers (Scalar and ScalarList, not Tensor)
    multiplies a float16/bfloat16 tensor by ``s`` rounded to its dtype: ``x * bf16(s)``."""
    op = _op(n, 'Tensor')
    if n != 'mul_':
        return op

    def mul_(t, s):
        if t.dtype in (D.float16, D.bfloat16) and isinstance(s, (int, float)):
            s = float(t.dtype.np.type(s))
        return op(t, s)
    return mul_


for _name in ('mul', 'div'):
    _family(_name, {'Scalar': (_SCALAR, _by_number), 'List': (_LIST, lambda n: _op(n, 'Tensor')),
                    'ScalarList': (_SCALARS, _by_number),
                    'Tensor': ('Tensor[] self, Tensor other',
                               lambda n: lambda s, o: _op(n, 'Tensor')(s, _scalar_tensor(o)))})
for _name in ('clamp_min', 'clamp_max'):
    _family(_name, {'Scalar': (_SCALAR, lambda n: _op(n)), 'List': (_LIST, lambda n: _op(n)),
                    'ScalarList': (_SCALARS, lambda n: _op(n))})
# torch's maximum/minimum with numbers are clamp_min/clamp_max (whose result dtype promotes with the number)
for _name, _clamp in (('maximum', 'clamp_min'), ('minimum', 'clamp_max')):
    _family(_name, {'Scalar': (_SCALAR, lambda n, c=_clamp: _op(_twin(c, n))), 'List': (_LIST, _written),
                    'ScalarList': (_SCALARS, lambda n, c=_clamp: _op(_twin(c, n)))})
_family('pow', {'List': ('Tensor[] self, Tensor[] exponent', lambda n: _op(n, 'Tensor_Tensor')),
                'Scalar': ('Tensor[] self, Scalar exponent', lambda n: _op(n, 'Tensor_Tensor')),
                'ScalarList': ('Tensor[] self, Scalar[] exponent', lambda n: _op(n, 'Tensor_Tensor'))})
# a number raised to each tensor of the list (no in-place twin: there is no tensor to write)
declare('_foreach_pow.ScalarAndTensor(Scalar self, Tensor[] exponent) -> Tensor[]', method=False, tags=('foreach',),
        composite=_composite('_foreach_pow.ScalarAndTensor(Scalar self, Tensor[] exponent) -> Tensor[]',
                             _op('pow', 'Tensor_Tensor'), False))
overloads('_foreach_pow', '_foreach_pow.List', '_foreach_pow.Scalar', '_foreach_pow.ScalarList',
          '_foreach_pow.ScalarAndTensor', method=False)

# pointwise with a scalar: addcmul/addcdiv's value, lerp's weight
_T3 = 'Tensor[] self, Tensor[] tensor1, Tensor[] tensor2'


def _addc(name):
    def each(self, tensor1, tensor2, value):
        if name.startswith('addcdiv') and tensor1.dtype.category < 2 and tensor2.dtype.category < 2:
            raise RuntimeError(_INTEGER_ADDCDIV)
        return _op(name)(self, tensor1, tensor2, value=value)
    return each


# torch's foreach addcdiv words its refusal of integer division unlike torch.addcdiv's (the last sentence)
_INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")
for _name in ('addcmul', 'addcdiv'):
    _family(_name, {'Scalar': (_T3 + ', Scalar value=1', _addc), 'ScalarList': (_T3 + ', Scalar[] scalars', _addc),
                    'Tensor': (_T3 + ', Tensor scalars', _addc)})


_T2 = 'Tensor[] self, Tensor[] tensors1'
_family('lerp', {'List': (_T2 + ', Tensor[] weights', lambda n: _op(n, 'Tensor')),
                 'Scalar': (_T2 + ', Scalar weight', lambda n: _op(n, 'Tensor')),
                 'ScalarList': (_T2 + ', Scalar[] weight', lambda n: _op(n, 'Tensor'))})


# --- reductions, products, copies ------------------------------------------------------------------------------

def _max(t):
    if t.numel() == 0:
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over zero elements is "
                           "undefined.")
    return aten.max.default(t)


def _powsum(t, ord, dtype):
    """sum(|t| ** ord): a vector norm before its root (torch's kernel for clipping several norms at once)."""
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise NotImplementedError(f'"powsum_cpu" not implemented for \'{D.scalar_name(t.dtype)}\'')
    a = aten.abs.default(t if dtype is None else t.to(dtype))
    return aten.sum.dim_IntList(aten.pow.Tensor_Tensor(a, ord), None)


def _simple(schema, each, inplace=False, function=True):
    declare(schema, composite=_composite(schema, each, inplace), method=False, function=function, tags=('foreach',))


def _norm(t, ord, dtype):
    if ord == float('inf') and t.numel() == 0:
        raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor because the operation "
                           "does not have an identity")
    return aten.linalg_vector_norm.default(t, ord, dtype=dtype)


_simple('_foreach_norm.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> Tensor[]', _norm)
_simple('_foreach_powsum.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> Tensor[]', _powsum)
_simple('_foreach_max(Tensor[] self) -> Tensor[]', _max)
_simple('_foreach_mm(Tensor[] self, Tensor[] mat2) -> Tensor[]', lambda a, b: aten.mm.default(a, b))
_simple('_foreach_clone(Tensor[] self, *, MemoryFormat? memory_format=None) -> Tensor[]',
        lambda t, memory_format: aten.clone.default(t, memory_format=memory_format))
# the functional copy and zero are operators only (torch has no torch._foreach_copy, torch._foreach_zero)
_simple('_foreach_copy(Tensor[] self, Tensor[] src, bool non_blocking=False) -> Tensor[] self_out',
        lambda t, src, non_blocking: aten.copy_.default(aten.clone.default(t), src, non_blocking), function=False)
_simple('_foreach_copy_(Tensor(a!)[] self, Tensor[] src, bool non_blocking=False) -> ()',
        lambda t, src, non_blocking: aten.copy_.default(t, src, non_blocking), inplace=True)
_simple('_foreach_zero(Tensor[] self) -> Tensor[] self_out', lambda t: aten.zeros_like.default(t), function=False)
_simple('_foreach_zero_(Tensor(a!)[] self) -> ()', lambda t: aten.zero_.default(t), inplace=True)
