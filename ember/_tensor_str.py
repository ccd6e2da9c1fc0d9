"""Printing tensors in torch's format: ``tensor([1.5000, 2.0000])``.

Follows torch/_tensor_str.py's rules: one formatter per tensor picks integer
mode (``1.``), fixed (``1.5000``) or scientific (``1.5000e+05``) notation and
a common width; tensors over ``threshold`` elements are summarised with
``...``; lines wrap at ``linewidth``; non-default dtypes and devices, and
autograd state, are listed after the data.
"""
import contextlib
import math

import numpy as np


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """As torch.set_printoptions ('default', 'short', 'full' profiles)."""
    if profile == 'default':
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == 'short':
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == 'full':
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    for k, v in (('precision', precision), ('threshold', threshold), ('edgeitems', edgeitems),
                 ('linewidth', linewidth)):
        if v is not None:
            setattr(PRINT_OPTS, k, v)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options, as a dict ``set_printoptions`` takes back."""
    return {k: getattr(PRINT_OPTS, k) for k in ('precision', 'threshold', 'edgeitems', 'linewidth', 'sci_mode')}


@contextlib.contextmanager
def printoptions(**kwargs):
    """``set_printoptions(**kwargs)`` for the block, the previous options restored after it.

    >>> import ember
    >>> with ember._tensor_str.printoptions(precision=2):
    ...     print(ember.tensor([1.23456]))
    tensor([1.23])
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values.ravel().tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = values.ravel().astype(np.float64)
        finite = vals[np.isfinite(vals) & (vals != 0)]
        if finite.size == 0:        # only nan/inf/0: torch keeps width 1 (no padding; its lines hold more items)
            return
        mags = np.abs(finite)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        # the notation first (set_printoptions' sci_mode, else by the magnitudes), then the width in it, as torch
        self.sci_mode = hi / lo > 1000. or hi > 1e8 or lo < 1e-4 if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        if self.sci_mode:
            strs = [f'{v:.{p}e}' for v in finite.tolist()]
        elif self.int_mode:
            strs = [f'{v:.0f}.' for v in finite.tolist()]
        else:
            strs = [f'{v:.{p}f}' for v in finite.tolist()]
        self.max_width = max(len(s) for s in strs)

    def width(self):
        return self.max_width

    def format(self, v):
        p = PRINT_OPTS.precision
        if self.floating:
            if not math.isfinite(v):
                s = _fmt_special(v)
            elif self.sci_mode:
                s = f'{v:.{p}e}'
            elif self.int_mode:
                s = f'{v:.0f}.'
            else:
                s = f'{v:.{p}f}'
        else:
            s = str(v)
        return ' ' * (self.max_width - len(s)) + s


def _fmt_special(v):
    return 'nan' if v != v else ('inf' if v > 0 else '-inf')


def _summarized(a):
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * e:
        parts = [_summarized(a[:e]), _summarized(a[-e:])]
        return np.concatenate(parts) if a.ndim == 1 else np.concatenate(parts, 0)
    return np.stack([_summarized(x) for x in a]) if a.ndim > 1 else a


def _vector(a, indent, summarize, fmt):
    e = PRINT_OPTS.edgeitems
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width() + 2))))
    if summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [' ...'] + [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [', '.join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return '[' + (',\n' + ' ' * (indent + 1)).join(lines) + ']'


def _nested(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(e)] + ['...'] + \
                 [_nested(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - e, a.shape[0])]
    else:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return '[' + (',' + '\n' * (a.ndim - 1) + ' ' * (indent + 1)).join(slices) + ']'


def _data_str(a, indent):
    summarize = a.size > PRINT_OPTS.threshold
    if a.dtype.kind == 'c':
        real = _Formatter(_summarized(a.real) if summarize else a.real, True)
        imag = _Formatter(_summarized(a.imag) if summarize else a.imag, True)

        class _C:
            def width(self):
                return real.width() + imag.width() + 2

            def format(self, v):
                im = imag.format(abs(v.imag)).lstrip()
                return f'{real.format(v.real)}{"+" if v.imag >= 0 else "-"}{im}j'
        return _nested(a, indent, summarize, _C())
    floating = a.dtype.kind == 'f' or a.dtype.name == 'bfloat16' or a.dtype.name.startswith('float8')
    vals = a.astype(np.float64) if floating else a
    fmt = _Formatter(_summarized(vals) if summarize else vals, floating)
    return _nested(vals, indent, summarize, fmt)


def tensor_repr(t, prefix=None):
    if prefix is None:      # a subclass prints its name, as torch's does (Parameter and Buffer print as tensors)
        name = type(t).__name__
        plain = name in ('Tensor', 'Parameter', 'Buffer') and type(t).__module__.split('.')[0] in ('ember', 'torch')
        text = _tensor_repr(t, 'tensor(' if plain else name + '(')
        # a subclass of Parameter is wrapped as torch wraps it: Parameter(MyParam([...], requires_grad=True))
        if not plain and any(c.__name__ == 'Parameter' and c.__module__ in ('ember.nn.parameter', 'torch.nn.parameter')
                             for c in type(t).__mro__):
            return f'Parameter({text})'
        return text
    return _tensor_repr(t, prefix)


def _tensor_repr(t, prefix):
    from ._core import dtype as D
    if t._a.__class__.__name__ == 'COOArray':
        return _sparse_repr(t)
    if t._a.__class__.__name__ == 'CompressedArray':
        return _compressed_repr(t, prefix)
    if t._a.__class__.__name__ == 'QArray':
        return _quantized_repr(t, prefix)
    indent = len(prefix)
    suffixes = []
    dt = t._dtype
    default_dt = dt in (D.get_default_dtype(), D.int64, D.bool_) or (dt.is_complex and dt is D.default_complex())
    if t._device.type != 'cpu':
        suffixes.append(f"device='{t._device}'")
    a = t._a
    if t._device.type == 'meta':
        body = '...'
        suffixes.append(f'size={tuple(a.shape)}')
        if not default_dt:
            suffixes.append(f'dtype={dt}')
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append(f'size={tuple(a.shape)}')
        if dt is not D.get_default_dtype():
            suffixes.append(f'dtype={dt}')
        body = '[]'
    else:
        if not default_dt:
            suffixes.append(f'dtype={dt}')
        body = _data_str(np.asarray(t._host()), indent)
    if t._grad_fn is not None:
        suffixes.append(f'grad_fn=<{type(t._grad_fn).__name__}>')   # torch's repr: the class's name
    elif t._requires_grad:
        suffixes.append('requires_grad=True')
    return _add_suffixes(prefix + body, suffixes, indent)


def _add_suffixes(text, suffixes, indent, force_newline=False):
    """``, dtype=...``, ``, grad_fn=<...>``: each on the last line while it fits in ``linewidth``, else on a new
    line indented under the values (torch's rule; ``force_newline`` puts the first one on a new line)."""
    parts = [text]
    last = len(text) - text.rfind('\n') + 1
    for s in suffixes:
        if force_newline or last + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(',\n' + ' ' * indent + s)
            last = indent + len(s)
            force_newline = False
        else:
            parts.append(', ' + s)
            last += len(s) + 2
    parts.append(')')
    return ''.join(parts)


def _quantized_repr(t, prefix):
    """torch's form: the dequantized values, then size, dtype and the quantizer (NOTE [quantized tensors])."""
    from ._creation import tensor as _t
    a, indent = t._a, len(prefix)
    body = '[]' if a.size == 0 else _data_str(a.dequantize(), indent)
    suffixes = [f'size={tuple(a.shape)}', f'dtype={t._dtype}', f'quantization_scheme={a.scheme}']
    if a.axis is None:
        suffixes += [f'scale={a.scale}', f'zero_point={a.zero_point}']
    else:
        suffixes += [f'scale={tensor_repr(_t(a.scale))}', f'zero_point={tensor_repr(_t(a.zero_point))}',
                     f'axis={a.axis}']
    return _add_suffixes(prefix + body, suffixes, indent)


def _sparse_repr(t):
    """torch's form: ``tensor(indices=..., values=..., size=(2, 3), nnz=3, layout=ember.sparse_coo)``."""
    from ._creation import tensor as _t
    a = t._a
    if a.nnz == 0:        # torch gives both sizes and no dtype here
        ind = f'tensor(indices=tensor([], size={tuple(a.indices.shape)})'
        val = f'       values=tensor([], size={tuple(a.values.shape)})'
    else:
        ind = tensor_repr(_t(a.indices), prefix='tensor(indices=tensor(')
        val = tensor_repr(_t(a.values), prefix=' ' * 7 + 'values=tensor(')
        val = val.replace(f', dtype={t._dtype})', ')')      # torch names the dtype once, after nnz
    suffixes = _sparse_suffixes(t)
    return ind + ',\n' + val + ',\n' + ' ' * 7 + ', '.join(suffixes) + ')'


def _sparse_suffixes(t):
    """What follows a sparse tensor's parts: its size, nnz, a dtype other than the defaults, layout, history."""
    from ._core import dtype as D
    a = t._a
    suffixes = [f'size={tuple(a.shape)}', f'nnz={a.nnz}']
    if t._dtype not in (D.get_default_dtype(), D.int64, D.bool_):
        suffixes.append(f'dtype={t._dtype}')
    suffixes.append(f'layout={t.layout}')
    if t._grad_fn is not None:
        suffixes.append(f'grad_fn=<{type(t._grad_fn).__name__}>')   # torch's repr: the class's name
    elif t._requires_grad:
        suffixes.append('requires_grad=True')
    return suffixes


def _compressed_repr(t, prefix):
    """torch's form for CSR/CSC: ``tensor(crow_indices=..., col_indices=..., values=..., size=(2, 3), nnz=3,
    layout=ember.sparse_csr)``, the suffixes wrapped at the line width as a dense tensor's."""
    from ._creation import tensor as _t
    a = t._a
    indent = len(prefix)
    names = ('crow_indices', 'col_indices') if a.is_csr else ('ccol_indices', 'row_indices')
    parts = []
    for name, arr in zip(names + ('values',), (a.compressed_indices, a.plain_indices, a.values)):
        head = f'{name}=tensor('
        body = _tensor_str(_t(arr), indent + len(head))
        if arr.size == 0:
            body += f', size={arr.shape}'
        parts.append(head + body + ')')
    suffixes = _sparse_suffixes(t)
    return _add_suffixes(prefix + (',\n' + ' ' * indent).join(parts), suffixes, indent)


def _tensor_str(self, indent):
    """torch._tensor_str._tensor_str: the data part of a tensor's repr, laid out for ``indent`` leading columns
    (what libraries' own tensor-like reprs reuse)."""
    import numpy as np
    if self.numel() == 0:
        return '[]'
    return _data_str(np.asarray(self.detach()._host()), indent)
