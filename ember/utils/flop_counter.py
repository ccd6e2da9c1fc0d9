"""torch.utils.flop_counter: count the FLOPs of the operators a program runs, per operator and per module.

``FlopCounterMode`` is a context manager over a Python dispatch mode: every operator that has a formula in
``flop_registry`` (matrix products, convolutions) adds its FLOPs to ``'Global'`` and to each module running
at the time (ember.utils.module_tracker names them as torch does: ``'Sequential'``, ``'Sequential.0'``). A
formula gets the operator's arguments with every tensor replaced by its shape, and the output's as
``out_shape``; ``register_flop_formula`` adds one.

The counts are torch's. Where ember runs one fused operator in place of torch's composite, the mode runs
torch's composite instead (``linear`` -> ``t`` + ``addmm``, ``matmul`` -> ``mm``/``bmm``/``mv``, and ember's
``linear_backward`` -> ``mm``s), so the keys are torch's too; ``einsum`` and ``tensordot`` are counted as the
``bmm`` and ``mm`` torch's composites end in. Where no operator of torch's exists, ember's own is the key: a
convolution's backward is ``convolution`` (the gradient of the input: a transposed convolution) plus
``convolution_backward_weight``, where torch has one ``convolution_backward`` with the same total.

torch's registry has no formula for the CPU flash-attention kernel that scaled_dot_product_attention runs on
the CPU (``_scaled_dot_product_flash_attention_for_cpu``), so it counts nothing there, in torch as here;
``custom_mapping={aten._scaled_dot_product_flash_attention_for_cpu: sdpa_flop.__wrapped__,
aten._scaled_dot_product_flash_attention_for_cpu_backward: sdpa_backward_flop.__wrapped__}`` counts it (a
registered formula is already wrapped to take shapes; ``__wrapped__`` is the formula itself).

>>> import ember
>>> with FlopCounterMode(display=False) as counter:
...     _ = ember.ones(4, 8) @ ember.ones(8, 3)
>>> counter.get_total_flops(), counter.get_flop_counts()
(192, {'Global': {<OpOverloadPacket(op='aten.mm')>: 192}})
"""
import warnings
from collections import defaultdict
from functools import wraps
from math import prod

from .. import ops
from ..ops import OpOverloadPacket
from ._python_dispatch import TorchDispatchMode
from ._pytree import tree_map
from .module_tracker import ModuleTracker

__all__ = ['FlopCounterMode', 'register_flop_formula']

aten = ops.aten


def get_shape(i):
    from .._tensor import Tensor
    return i.shape if isinstance(i, Tensor) else i


flop_registry = {}


def shape_wrapper(f):
    """The formula ``f`` called with shapes in place of tensors, and the output's as ``out_shape``."""
    @wraps(f)
    def nf(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = tree_map(get_shape, (args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)
    return nf


def register_flop_formula(targets, get_raw=False):
    """Decorator: ``formula`` counts the FLOPs of the operators ``targets`` (a packet such as
    ``ember.ops.aten.mm``, or a list of them). It receives the operator's arguments as shapes and the output's
    as ``out_shape``; with ``get_raw`` it receives the tensors themselves and the output as ``out_val``."""
    def register_fun(flop_formula):
        if not get_raw:
            flop_formula = shape_wrapper(flop_formula)

        def register(target):
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(f"register_flop_formula(targets): expected each target to be OpOverloadPacket "
                                 f"(i.e. torch.ops.mylib.foo), got {target} which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = flop_formula

        tree_map(register, targets)
        return flop_formula
    return register_fun


def _defined(*names):
    """The packets of those of torch's operators ``names`` that ember defines."""
    return [getattr(aten, n) for n in names if hasattr(aten, n)]


# --- matrix products: 2 FLOPs (a multiply and an add) per term of each dot product -----------------------

@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    """Count flops for matmul."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for addmm (the product's; the addition is not counted)."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the bmm operation."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the baddbmm operation."""
    return bmm_flop(a_shape, b_shape)


def _einsum_labels(equation, shapes):
    """Each operand's labels and the output's, with an ellipsis spelled as labels of its own (right-aligned,
    so that broadcast dimensions share them), and each label's size."""
    eq = equation.replace(' ', '')
    lhs, arrow, rhs = eq.partition('->')
    terms = lhs.split(',')
    ell = max((len(s) - len(t.replace('...', '')) for t, s in zip(terms, shapes) if '...' in t), default=0)
    ell_labels = [f'...{i}' for i in range(ell)]

    def labels(term, ndim=None):
        if '...' not in term:
            return list(term)
        head, tail = term.split('...')
        n = ell if ndim is None else ndim - len(head) - len(tail)
        return list(head) + ell_labels[ell - n:] + list(tail)

    ops = [labels(t, len(s)) for t, s in zip(terms, shapes)]
    sizes = {}
    for ls, s in zip(ops, shapes):
        for label, d in zip(ls, s):
            sizes[label] = max(sizes.get(label, 1), d)
    if arrow:
        out = labels(rhs)
    else:       # implicit output: the ellipsis, then the labels used once, in alphabetical order
        counts = defaultdict(int)
        for ls in ops:
            for label in ls:
                counts[label] += 1
        out = [x for x in ell_labels if x in counts] + sorted(x for x, c in counts.items()
                                                              if c == 1 and not x.startswith('...'))
    return ops, out, sizes


@register_flop_formula(aten.einsum)
def einsum_flop(equation, operand_shapes, *args, out_shape=None, **kwargs):
    """Count flops for einsum as torch's composite runs it: operands contracted left to right, each pair whose
    product sums over a shared label by one bmm (counted as ``aten.bmm``), a pair that sums nothing by a
    multiplication, which is not counted."""
    ops, out, sizes = _einsum_labels(equation, operand_shapes)
    flops, left = 0, set(ops[0])
    for i in range(1, len(ops)):
        right = set(ops[i])
        kept = set(out).union(*ops[i + 1:])
        contracted = {x for x in left & right if x not in kept}
        if contracted:
            flops += 2 * prod(sizes[x] for x in (left | right) if x in kept or x in contracted)
        left = (left | right) & kept
    return flops


@register_flop_formula(aten.tensordot)
def tensordot_flop(a_shape, b_shape, dims_a, dims_b, out_shape=None, **kwargs):
    """Count flops for tensordot as the one mm of torch's composite (counted as ``aten.mm``)."""
    summed_a = {d % len(a_shape) for d in dims_a}
    summed_b = {d % len(b_shape) for d in dims_b}
    m = prod(n for d, n in enumerate(a_shape) if d not in summed_a)
    n = prod(n for d, n in enumerate(b_shape) if d not in summed_b)
    return 2 * m * n * prod(a_shape[d] for d in summed_a)


# --- convolutions --------------------------------------------------------------------------------------

def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """Count flops for convolution: 2 per weight element per (output, or for a transposed convolution input)
    position, per sample and channel pair; the bias is not counted, nor is padding subtracted.

    Args:
        x_shape (list(int)): The input shape before convolution.
        w_shape (list(int)): The filter shape.
        out_shape (list(int)): The output shape after convolution.
        transposed (bool): is the convolution transposed
    Returns:
        int: the number of flops
    """
    batch_size = x_shape[0]
    positions = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(positions) * prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula(_defined('convolution', '_convolution', 'cudnn_convolution', '_slow_conv2d_forward',
                                'convolution_overrideable'))
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args, out_shape=None, **kwargs):
    """Count flops for convolution."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


@register_flop_formula(aten.convolution_backward_weight)
def conv_backward_weight_flop(grad_out_shape, x_shape, weight_sizes, *args, out_shape=None, **kwargs):
    """Count flops for the weight's gradient of a convolution: a convolution of the input by the output's
    gradient, batch and channels swapped (ember's kernel is called with the two swapped for a transposed
    convolution, whose weight's gradient is that of the gradient by the input: the same count as torch's)."""
    def t(shape):
        return [shape[1], shape[0]] + list(shape[2:])
    return conv_flop_count(t(x_shape), t(grad_out_shape), t(weight_sizes), transposed=False)


# --- attention -----------------------------------------------------------------------------------------

def _check_attention(query_shape, key_shape, value_shape):
    b, h_q, s_q, d_q = query_shape
    b2, h_kv, s_k, d_k = key_shape
    b3, h_v, s_v, d_v = value_shape
    if not (b == b2 == b3 and h_kv == h_v and d_q == d_k and s_k == s_v):
        raise AssertionError(f"sdpa_flop_count: query/key/value shapes are incompatible: "
                             f"q={query_shape}, k={key_shape}, v={value_shape}")
    if h_q < h_kv or h_q % h_kv != 0:
        raise AssertionError(f"sdpa_flop_count: query heads ({h_q}) must be a multiple of key/value heads ({h_kv})")
    return b * h_q, s_q, s_k, d_q, d_v


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """Count flops for self-attention: the two batched products Q K^T and scores V, every query head
    against its (possibly shared, grouped-query) key/value head."""
    bh, s_q, s_k, d_q, d_v = _check_attention(query_shape, key_shape, value_shape)
    return bmm_flop((bh, s_q, d_q), (bh, d_q, s_k)) + bmm_flop((bh, s_q, s_k), (bh, s_k, d_v))


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    """Count flops for self-attention's backward: the scores again, then the gradients of the scores, of V,
    of Q and of K, one batched product each."""
    bh, s_q, s_k, d_q, d_v = _check_attention(query_shape, key_shape, value_shape)
    if tuple(grad_out_shape) != (query_shape[0], query_shape[1], s_q, d_v):
        raise AssertionError("sdpa_backward_flop_count: grad_out/value/key/query shapes are incompatible")
    return (bmm_flop((bh, s_q, d_q), (bh, d_q, s_k))        # scores
            + bmm_flop((bh, s_q, d_v), (bh, d_v, s_k))      # grad of the scores: grad_out V^T
            + bmm_flop((bh, s_k, s_q), (bh, s_q, d_v))      # grad of V: scores^T grad_out
            + bmm_flop((bh, s_q, s_k), (bh, s_k, d_q))      # grad of Q: grad_scores K
            + bmm_flop((bh, d_q, s_q), (bh, s_q, s_k)))     # grad of K: Q^T grad_scores


@register_flop_formula(_defined('_scaled_dot_product_efficient_attention', '_scaled_dot_product_flash_attention',
                                '_scaled_dot_product_cudnn_attention'))
def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    """Count flops for self-attention (a causal mask is not taken into account)."""
    return sdpa_flop_count(query_shape, key_shape, value_shape)


@register_flop_formula(_defined('_scaled_dot_product_efficient_attention_backward',
                                '_scaled_dot_product_flash_attention_backward',
                                '_scaled_dot_product_cudnn_attention_backward'))
def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    """Count flops for self-attention backward."""
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


# the operators of ember's that torch runs as a composite of the operator their FLOPs are counted under
_COUNTED_AS = {aten.einsum: aten.bmm, aten.tensordot: aten.mm}


def _composites():
    """ember's fused operators whose torch counterparts are composites of counted ones (OpOverload ->
    torch's decomposition): the mode runs the composite, so that its pieces are counted as torch's are."""
    from .._decomp.decompositions import DECOMPOSITIONS, TORCH_COMPOSITES
    table = {op: DECOMPOSITIONS[op] for op in TORCH_COMPOSITES}
    table[aten.linear_backward.default] = DECOMPOSITIONS[aten.linear_backward.default]
    return table


# --- the table -----------------------------------------------------------------------------------------

suffixes = ['', 'K', 'M', 'B', 'T']


def get_suffix_str(number):
    """The suffix the table writes ``number`` with: one more per three digits past the fourth (so 1001M, not
    1.001B)."""
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix):
    return f'{number / 1000 ** suffixes.index(suffix):.3f}' + suffix


def convert_to_percent_str(num, denom):
    return '0%' if denom == 0 else f'{num / denom:.2%}'


def _number(s):
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return None


def _tabulate(rows, headers, colalign):
    """``tabulate.tabulate(rows, headers, colalign=colalign)`` in its 'simple' format, leading spaces kept: a
    column of numbers only is written as numbers (``'512.000'`` as ``512``); each column is two wider than its
    header at least; columns are two spaces apart."""
    cols = [list(c) for c in zip(*rows)] if rows else [[] for _ in headers]
    for i, col in enumerate(cols):
        nums = [_number(c) for c in col]
        if col and all(n is not None for n in nums):
            as_float = any(isinstance(n, float) for n in nums)
            cols[i] = [format(float(n), 'g') if as_float else str(n) for n in nums]
    widths = [max([len(h) + 2] + [len(c) for c in col]) for h, col in zip(headers, cols)]

    def line(cells):
        return '  '.join(c.ljust(w) if a == 'left' else c.rjust(w) for c, w, a in zip(cells, widths, colalign))

    out = [line(headers), '  '.join('-' * w for w in widths)]
    out += [line(cells) for cells in zip(*cols)]
    return '\n'.join(out)


class FlopCounterMode:
    """Context manager that counts the FLOPs run inside it, per operator and per module.

    ``mods`` is accepted and ignored, as torch's (modules are found as they run); ``depth`` is how many levels
    of modules the table shows; ``display`` prints it on exit; ``custom_mapping`` maps operator packets to
    formulas that add to or override ``flop_registry`` (called with shapes, unless ``formula._get_raw``).

    >>> import ember
    >>> mod = ember.nn.Linear(8, 4)
    >>> with FlopCounterMode(display=False) as counter:
    ...     mod(ember.ones(2, 8)).sum().backward()
    >>> counter.get_flop_counts()['Linear']
    {<OpOverloadPacket(op='aten.addmm')>: 128, <OpOverloadPacket(op='aten.mm')>: 128}
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        if custom_mapping is None:
            custom_mapping = {}
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self.flop_registry = {**flop_registry,
                              **{k: v if getattr(v, '_get_raw', False) else shape_wrapper(v)
                                 for k, v in custom_mapping.items()}}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self):
        return sum(self.flop_counts['Global'].values())

    def get_flop_counts(self):
        """The counts as ``{module name: {operator packet: flops}}``, ``'Global'`` holding all of them."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The counts as a table: each module down to ``depth`` levels (sorted by name, indented by level) and
        its operators, with ``'Global'`` first where some FLOPs ran outside every module."""
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        is_global_subsumed = False

        def process_mod(mod_name, indent):
            nonlocal is_global_subsumed
            total = sum(self.flop_counts[mod_name].values())
            is_global_subsumed |= total >= global_flops
            pad = ' ' * indent
            rows = [[pad + mod_name, convert_num_with_suffix(total, global_suffix),
                     convert_to_percent_str(total, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                rows.append([pad + ' - ' + str(k), convert_num_with_suffix(v, global_suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        values = []
        for mod in sorted(self.flop_counts.keys()):
            if mod == 'Global':
                continue
            mod_depth = mod.count('.') + 1
            if mod_depth > depth:
                continue
            values.extend(process_mod(mod, mod_depth - 1))
        # 'Global' only where some FLOPs are not already inside one module
        if 'Global' in self.flop_counts and not is_global_subsumed:
            for row in values:
                row[0] = ' ' + row[0]
            values = process_mod('Global', 0) + values
        if not values:
            values = [['Global', '0', '0%']]
        return _tabulate(values, ['Module', 'FLOP', '% Total'], ('left', 'right', 'right'))

    # NB: not reentrant
    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        if self.mode is None:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        b = self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return b

    def _count_flops(self, func_packet, out, args, kwargs):
        if func_packet in self.flop_registry:
            flop_count = self.flop_registry[func_packet](*args, **kwargs, out_val=out)
            key = _COUNTED_AS.get(func_packet, func_packet)
            if key is not func_packet and not flop_count:
                return out      # torch's composite ran no such operator (an einsum that sums nothing)
            for par in set(self.mod_tracker.parents):
                self.flop_counts[par][key] += flop_count
        return out


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter):
        self.counter = counter
        self.composites = _composites()
        self.packets = {}       # OpOverload -> its packet

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        packet = self.packets.get(func)
        if packet is None:
            packet = self.packets[func] = getattr(getattr(ops, func.namespace), func.schema.name)
        composite = self.composites.get(func)
        if composite is not None and packet not in self.counter.flop_registry:
            with self:
                r = composite(*args, **kwargs)
            if r is not NotImplemented:
                return r
        out = func(*args, **kwargs)
        return self.counter._count_flops(packet, out, args, kwargs)
