"""torch names real programs use that are Python around existing operators: constants, predicates,
``tensor_split`` and its h/v/d forms, ``ravel``, ``diagflat``, ``cov``/``corrcoef``, ``dist``, ``isin``,
``trapezoid``, window functions, ``set_default_tensor_type``, the ``is_<device>`` properties, and the
names ember leaves out on purpose (``compile``, ``jit``), which raise an error saying why.

Each function is written in ember operators, so autograd and every backend come with it.
"""
import math
from ember._warn import warnings

from .._tensor import Tensor

__all__ = ['pi', 'e', 'inf', 'nan', 'newaxis', 'is_complex', 'is_nonzero', 'is_same_size', 'is_signed', 'ravel',
           'tensor_split', 'hsplit', 'vsplit', 'dsplit', 'diagflat', 'cov', 'corrcoef', 'dist', 'isin',
           'trapezoid', 'trapz', 'hann_window', 'hamming_window', 'blackman_window', 'bartlett_window',
           'scalar_tensor', 'asarray', 'typename', 'is_storage', 'set_default_tensor_type', 'set_warn_always',
           'is_warn_always_enabled', 'compile', 'get_device_module', 'unravel_index', 'get_num_interop_threads',
           'set_num_interop_threads', 'is_anomaly_enabled', 'set_anomaly_enabled', 'histogram']

pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None


def _E():
    import ember
    return ember


def is_complex(input):
    return input.is_complex()


def is_signed(input):
    """True for signed dtypes (every float and complex, int8..int64), as ``Tensor.is_signed``."""
    return input.dtype.is_signed


def is_nonzero(input):
    """The truth of a one-element tensor; torch's errors for empty and larger tensors."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def ravel(input):
    """``input.reshape(-1)``: a view when the layout allows it. ``ember.ravel(ember.ones(2, 2)).shape`` -> (4,)"""
    return input.reshape(-1)


def tensor_split(input, indices_or_sections, dim=0):
    """Split into ``n`` nearly equal parts (the first ``size % n`` one longer) or at the given indices.

    >>> [t.tolist() for t in ember.tensor_split(ember.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = dim + input.dim() if dim < 0 else dim
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dim() == 0:
            indices_or_sections = indices_or_sections.item()
        else:
            indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for i in range(n - 1):
            start += q + (1 if i < r else 0)
            bounds.append(start)
    else:
        bounds = [int(i) for i in indices_or_sections]
    out, prev = [], 0
    for b in bounds + [size]:
        lo, hi = min(max(prev, 0), size), min(max(b, prev, 0), size)
        out.append(input.narrow(d, lo, max(hi - lo, 0)))
        prev = b
    return tuple(out)


def _hvd(name, dim, min_dims):
    def fn(input, indices_or_sections):
        if input.dim() < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension"
                               f"{'s' if min_dims > 1 else ''}, but got a tensor with {input.dim()} dimensions!")
        d = 0 if (name == 'hsplit' and input.dim() == 1) else dim
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                               f"dimension {input.shape[d]} is not divisible by the split_size "
                               f"{indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = name
    fn.__doc__ = f"``tensor_split`` along dim {dim} into equal parts, as numpy.{name}."
    return fn


hsplit, vsplit, dsplit = _hvd('hsplit', 1, 1), _hvd('vsplit', 0, 2), _hvd('dsplit', 2, 3)


def diagflat(input, offset=0):
    """A 2-D tensor with the flattened input on diagonal ``offset``."""
    return input.reshape(-1).diag(offset)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the columns).

    >>> ember.cov(ember.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    E = _E()
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(E.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        wsum = E.tensor(float(n), dtype=x.dtype)
        norm = wsum - correction
    else:
        w = w.to(x.dtype)
        wsum = w.sum()
        avg = (x * w).sum(1) / wsum
        if aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * aweights).sum() / wsum
    norm = E.clamp(norm, min=0)
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = xw.mm(xm.t().conj()) / norm
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1] as torch does."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal().sqrt()
    c = c / d.unsqueeze(1) / d.unsqueeze(0)
    return c.clamp(-1, 1) if not c.is_complex() else c


def dist(input, other, p=2):
    """The p-norm of ``input - other``. ``ember.dist(ember.zeros(2), ember.ones(2)).item()`` -> 1.414..."""
    return _E().linalg.vector_norm(input - other, p)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element is in ``test_elements`` (either may be a Python scalar)."""
    E = _E()
    if not isinstance(elements, Tensor):
        elements = E.tensor(elements)
    if not isinstance(test_elements, Tensor):
        test_elements = E.tensor(test_elements)
    if test_elements.numel() == 0:
        hit = E.zeros(elements.shape, dtype=E.bool)
    else:
        hit = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along ``dim`` with sample points ``x`` or spacing ``dx`` (default 1)."""
    n = y.shape[dim] if y.dim() else 0
    if n == 0:
        return y.sum(dim)
    left, right = y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)
    if x is None:
        return (left + right).sum(dim) * ((1.0 if dx is None else dx) / 2)
    if x.dim() == 1:
        dxs = x[1:] - x[:-1]
        shape = [1] * y.dim()
        shape[dim] = n - 1
        dxs = dxs.reshape(shape)
    else:
        dxs = x.diff(dim=dim)
    return ((left + right) * dxs).sum(dim) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def _window(name, fn):
    def window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
               requires_grad=False, **kw):
        E = _E()
        dt = dtype or E.get_default_dtype()
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
        if window_length == 0:
            out = E.empty(0, dtype=dt, device=device)
        elif window_length == 1:
            out = E.ones(1, dtype=dt, device=device)
        else:
            n = window_length + 1 if periodic else window_length
            k = E.arange(window_length, dtype=E.float64)
            out = fn(E, k, n, **kw).to(dt)
            if device is not None:
                out = out.to(device)
        return out.requires_grad_() if requires_grad else out
    window.__name__ = name
    window.__doc__ = f"torch.{name}: the window of ``window_length`` points (``periodic`` drops the last of n+1)."
    return window


hann_window = _window('hann_window', lambda E, k, n: 0.5 - 0.5 * (2 * math.pi * k / (n - 1)).cos())
hamming_window = _window('hamming_window', lambda E, k, n, alpha=0.54, beta=0.46:
                         alpha - beta * (2 * math.pi * k / (n - 1)).cos())
blackman_window = _window('blackman_window', lambda E, k, n: 0.42 - 0.5 * (2 * math.pi * k / (n - 1)).cos()
                          + 0.08 * (4 * math.pi * k / (n - 1)).cos())
bartlett_window = _window('bartlett_window', lambda E, k, n: 1 - (2 * k / (n - 1) - 1).abs())


def scalar_tensor(s, *, dtype=None, device=None, layout=None, pin_memory=None, requires_grad=False):
    E = _E()
    return E.tensor(s, dtype=dtype or E.get_default_dtype(), device=device, requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """Like ``as_tensor``; ``copy=True`` always copies, ``copy=False`` refuses to. A tensor given without
    ``requires_grad`` keeps its own (and its history, warning once as torch does); ``requires_grad=False`` gives
    a view of it that records nothing."""
    E = _E()
    if isinstance(obj, Tensor) and requires_grad is None and obj.requires_grad and not _asarray_warned:
        _asarray_warned.append(True)
        from ember._warn import warnings
        warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. "
                      "Pass requires_grad=False explicitly to get the old behavior and silence this warning.",
                      UserWarning, stacklevel=2)
    if isinstance(obj, (E.UntypedStorage, E.TypedStorage)) and not copy:
        t = _storage_as_tensor(obj, dtype, device)
    elif copy:
        t = E.tensor(obj, dtype=dtype, device=device)
    else:
        t = E.as_tensor(obj, dtype=dtype, device=device)
    if requires_grad is None or (requires_grad and t.requires_grad):
        return t
    if not requires_grad:
        return t.detach() if t.requires_grad else t
    return t.requires_grad_()


_asarray_warned = []


def _storage_as_tensor(storage, dtype, device):
    """``asarray(storage)``: the storage's memory read as ``dtype`` without a copy, as torch's (safetensors'
    ``load_file`` reads every tensor so, from a mapped file); an untyped storage without a dtype is read as int64,
    as torch reads it."""
    E = _E()
    typed = isinstance(storage, E.TypedStorage)
    untyped = storage.untyped() if typed else storage
    dtype = (storage.dtype if typed else E.int64) if dtype is None else dtype
    if untyped.device.type != 'cpu' or not untyped.nbytes():
        return E.as_tensor(storage.tolist() if typed else list(untyped.data.tolist()), dtype=dtype, device=device)
    t = E.frombuffer(untyped.data, dtype=dtype)
    return t if device is None else t.to(device)


def typename(obj):
    """'ember.FloatTensor' for a float32 tensor (its legacy type name), else the object's qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)     # a class names itself, as torch's typename does
    mod = getattr(cls, '__module__', '')
    name = cls.__qualname__
    return name if mod in ('builtins', '') else f'{mod}.{name}'


def is_storage(obj):
    """True for an UntypedStorage or a TypedStorage (``Tensor.storage()``), as torch's."""
    return isinstance(obj, (_E().UntypedStorage, _E().TypedStorage))


def set_default_tensor_type(t):
    """Deprecated in torch; sets the default floating dtype from a legacy type or its name."""
    from .._legacy_types import parse_type
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    _E().set_default_dtype(parse_type(t))


_warn_always = [False]


def set_warn_always(b):
    _warn_always[0] = bool(b)


def is_warn_always_enabled():
    return _warn_always[0]


def compile(model=None, *, fullgraph=False, dynamic=None, backend='inductor', mode=None, options=None,
            disable=False):
    """Compile a function or module: capture, guards, AOTAutograd and generated array code (ember._dynamo,
    NOTE [capture and guards]). torch.compile's signature and behaviour."""
    from .._dynamo import compile as _compile        # imported on first use: import ember stays fast
    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                    disable=disable)


def get_device_module(device=None):
    """The device namespace for ``device`` (``'cpu'`` -> ember.cpu, ``'cuda'`` -> ember.cuda)."""
    import importlib
    E = _E()
    name = E.device(device).type if not isinstance(device, str) or ':' in device else device
    if device is None:
        name = 'cpu'
    try:
        return importlib.import_module(f'ember.{name}')
    except ImportError:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.") \
            from None


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape``, one tensor per dimension.

    >>> [t.tolist() for t in ember.unravel_index(ember.tensor([4, 1]), (2, 3))]
    [[1, 0], [1, 1]]
    """
    E = _E()
    if not isinstance(indices, Tensor):
        indices = E.tensor(indices)
    if indices.is_floating_point() or indices.is_complex() or indices.dtype is E.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    rest = indices.long()     # floor division and modulo per dimension, as torch (no bounds check)
    out = []
    for s in reversed(shape):
        out.append(rest % s)
        rest = rest // s
    return tuple(reversed(out))


_interop = [1]


def get_num_interop_threads():
    """ember runs independent operators one after another (no inter-op pool); the value set is recorded."""
    return _interop[0]


def set_num_interop_threads(n):
    if int(n) <= 0:
        raise RuntimeError("Expected positive number of threads")
    _interop[0] = int(n)


def is_anomaly_enabled():
    return _E().autograd.is_anomaly_enabled()


def set_anomaly_enabled(enabled, check_nan=True):
    _E().autograd.set_detect_anomaly(enabled, check_nan)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """``(hist, bin_edges)``: counts (or summed ``weight``) of ``input`` in ``bins`` equal bins over ``range``
    (default: the data's min and max) or between the given edges; the last bin includes its right edge.

    >>> ember.histogram(ember.tensor([1., 2., 1.]), bins=2).hist.tolist()
    [2.0, 1.0]
    """
    E = _E()
    from ..return_types import _structseq
    histogram_t = _structseq('histogram', ['hist', 'bin_edges'])
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.type().split('.')[-1][:-6]}'")
    x = input.reshape(-1)
    w = None if weight is None else weight.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
        nb = edges.numel() - 1
        pos = E.searchsorted(edges, x, right=True) - 1
        lo_ok, hi_ok = x >= edges[0], x <= edges[-1]
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = x.min().item(), x.max().item()
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               f"dimension 0")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        nb = int(bins)
        edges = E.linspace(lo, hi, nb + 1, dtype=input.dtype)
        pos = ((x - lo) * (nb / (hi - lo))).floor().long().clamp(0, nb - 1)
        # the formula can miss by one at an edge's rounding: the edges tensor decides, as in torch
        pos = pos - (x < edges[pos]).long() + ((x >= edges[pos + 1]) & (pos + 1 < nb)).long()
        lo_ok, hi_ok = x >= lo, x <= hi
    keep = lo_ok & hi_ok
    pos = pos.clamp(0, max(nb - 1, 0))[keep]
    if w is None:
        hist = E.bincount(pos, minlength=nb).to(input.dtype)
    else:
        hist = E.bincount(pos, weights=w[keep].to(input.dtype), minlength=nb)
    hist = hist[:nb]
    if density:
        hist = hist / (hist.sum() * edges.diff())
    res = histogram_t(hist, edges)
    if out is not None:
        from .reductions import _write_out
        return histogram_t(*_write_out(out, tuple(res)))
    return res


# --- Tensor methods and properties ---------------------------------------------------

for _n in ('is_signed', 'is_nonzero', 'is_same_size', 'ravel', 'tensor_split', 'hsplit', 'vsplit', 'dsplit',
           'diagflat', 'cov', 'corrcoef', 'dist', 'histogram'):
    setattr(Tensor, _n, globals()[_n])
for _dev in ('mps', 'xpu', 'ipu', 'xla', 'mtia', 'maia', 'vulkan', 'mkldnn', 'sparse', 'sparse_csr', 'quantized',
             'nested'):
    if not hasattr(Tensor, f'is_{_dev}'):
        setattr(Tensor, f'is_{_dev}', property(lambda self, d=_dev: self.device.type == d))
Tensor.name = None
Tensor.names = property(lambda self: (None,) * self.dim())


def _pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked host memory, which the GPU copies from directly (``x.to('cuda',
    non_blocking=True)``); it needs an accelerator, as in torch."""
    import ember
    if not ember.cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != 'cpu':
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if self.is_pinned():
        return self
    out = ember.from_numpy(ember.cuda._pinned_empty(tuple(self.shape), self.numpy(force=True).dtype))
    out.copy_(self)
    out._pinned = True
    return out


def _is_pinned(self, device=None):
    return getattr(self, '_pinned', False)


def _absent_device_move(name):
    def move(self, device=None, non_blocking=False, **kw):
        return self.to(name if device is None else device)
    move.__name__ = name
    return move


Tensor.pin_memory = _pin_memory
Tensor.is_pinned = _is_pinned
Tensor.xpu = _absent_device_move('xpu')
Tensor.mtia = _absent_device_move('mtia')
Tensor.ipu = _absent_device_move('ipu')


def _sum_to_size(self, *size):
    """Sum broadcast dimensions away so the result has ``size`` (the reverse of ``expand``)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(size)
    lead = self.dim() - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size)


def _fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal in place (all dims equal, or a tall 2-D matrix)."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    idx = _E().arange(n)
    if self.dim() == 2:
        rows = idx
        if wrap and self.shape[0] > self.shape[1] + 1:
            step = self.shape[1] + 1
            flat_pos = _E().arange(0, self.shape[0] * self.shape[1], step)
            rows = flat_pos // self.shape[1]
            cols = flat_pos % self.shape[1]
            self[rows, cols] = fill_value
            return self
        self[rows, idx] = fill_value
    else:
        self[(idx,) * self.dim()] = fill_value
    return self


def _map_(self, *others_and_callable, name='map_'):
    """CPU only: ``self[i] = callable(self[i], other[i], ...)`` in place, ``others`` broadcast to self's shape and of
    its dtype (torch's apply_ with none, map_ / map2_ with one or two; slow: Python per element). captum's
    TextTokenInput masks tokens with map_."""
    E = _E()
    *others, fn = others_and_callable
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    for o in others:
        if o.dtype != self.dtype:
            raise TypeError(f"{name}: expected {self.type()} for 'other' (got {o.type()})")
    columns = [self.reshape(-1).tolist()] + [o.expand(self.shape).reshape(-1).tolist() for o in others]
    flat = [fn(*values) for values in zip(*columns)]
    with E.no_grad():
        self.copy_(E.tensor(flat, dtype=self.dtype).reshape(self.shape))
    return self


def _apply_(self, callable):
    return _map_(self, callable, name='apply_')


def _map1_(self, tensor, callable):
    return _map_(self, tensor, callable)


def _map2_(self, x, y, callable):
    return _map_(self, x, y, callable, name='map2_')


def _new(self, *args, **kwargs):
    """Legacy ``x.new(...)``: ``Tensor(...)`` with x's dtype and device; of a sparse COO ``x``, a sparse tensor
    (``g.new(indices, values, size)``, pytorch_optimizer's SM3 builds its sparse updates so)."""
    if self.is_sparse and not kwargs:
        return _sparse_new(self, args)
    from .._legacy_types import construct
    return construct(self.dtype, args, dict(kwargs), keep_tensor_dtype=True)


def _sparse_new(self, args):
    E = _E()
    if args and isinstance(args[0], Tensor):        # (indices, values[, size]): as sparse_coo_tensor, unchecked
        return E.sparse_coo_tensor(*args[:3], check_invariants=False)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        raise TypeError("SparseTensor.new(sequence) only accepts sizes.  Please use torch.sparse_coo_tensor() or "
                        "construct a strided tensor and convert it to sparse via to_sparse.")
    size = tuple(int(n) for n in args) if args else (0,)
    return E.sparse_coo_tensor(E.zeros(len(size), 0, dtype=E.int64), E.zeros(0, dtype=self.dtype), size,
                               check_invariants=False, is_coalesced=True)


Tensor.sum_to_size = _sum_to_size
Tensor.fill_diagonal_ = _fill_diagonal_
Tensor.apply_ = _apply_
Tensor.map_ = _map1_
Tensor.map2_ = _map2_
Tensor.new = _new


def _volatile(self):
    """Removed in torch 0.4: always False, with torch's warning."""
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning)
    return False


Tensor.volatile = property(_volatile)


# --- function forms of tensor methods, and frombuffer -----------------------------------------------------
def is_inference(input):
    """Whether ``input`` was made under inference mode (``Tensor.is_inference``)."""
    return input.is_inference()


def get_device(input):
    """The device index of ``input``: -1 for a CPU tensor (``Tensor.get_device``)."""
    return input.get_device()


def zero_(input):
    """Fill ``input`` with zeros in place and return it (``Tensor.zero_``)."""
    return input.zero_()


def detach_(input):
    """Detach ``input`` from the graph in place and return it (``Tensor.detach_``)."""
    return input.detach_()


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the bytes of ``buffer`` (any object with the buffer protocol), read as ``count``
    elements of ``dtype`` (all that fit by default) from byte ``offset``; it shares the memory of a writable
    buffer. torch also shares a read-only one (``bytes``), warning that writes would change it; ember warns
    the same and copies it, since a write would fail (NumPy keeps read-only memory read-only).

    >>> import ember
    >>> ember.frombuffer(bytearray(b'\\x01\\x00\\x02\\x00'), dtype=ember.int16)
    tensor([1, 2], dtype=ember.int16)
    """
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, size = view.nbytes, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    if offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    import numpy as np
    a = np.frombuffer(view.cast('B') if view.ndim != 1 or view.format != 'B' else view, dtype=dtype.np,
                      count=count, offset=offset)
    if not a.flags.writeable:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to "
                      "a tensor. This type of warning will be suppressed for the rest of this program.", UserWarning)
        a = a.copy()
    t = _E().from_numpy(a)
    return t.requires_grad_() if requires_grad else t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-D CPU tensor of ``size`` elements over a memory-mapped file (tensordict's MemoryMappedTensor):
    ``shared=True`` writes go to the file, which is created or grown to ``size`` elements as needed; otherwise
    the mapping is private (copy on write) and the file must hold them."""
    import os
    import numpy as np
    E = _E()
    dt = dtype or E.get_default_dtype()
    nbytes = size * dt.itemsize
    if shared:
        with open(filename, 'ab') as f:         # creates it; grows it to the mapping's length
            if f.tell() < nbytes:
                f.truncate(nbytes)
    elif not os.path.exists(filename) or os.path.getsize(filename) < nbytes:
        have = os.path.getsize(filename) if os.path.exists(filename) else 0
        raise RuntimeError(f"unexpected EOF, expected {nbytes} bytes but the file {filename} has {have}")
    a = np.memmap(filename, dtype=dt.np, mode='r+' if shared else 'c', shape=(size,)) if size else np.empty(0, dt.np)
    t = E.from_numpy(a.view(np.ndarray))
    t = t if device is None else t.to(device)
    return t.requires_grad_() if requires_grad else t


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                       requires_grad=False):
    """An uninitialized tensor with the given sizes and strides, of ``self``'s dtype and device by default."""
    t = _E().empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device)
    return t.requires_grad_() if requires_grad else t


__all__ += ['is_inference', 'get_device', 'zero_', 'detach_', 'frombuffer', 'from_file']
Tensor.new_empty_strided = _new_empty_strided
