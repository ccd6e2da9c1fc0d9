"""Calculus on samples, written in ember operators (so autograd and every backend come with them):
``vander`` (powers of a vector), ``cumulative_trapezoid`` (running trapezoid rule; ``trapezoid`` lives in
surface.py) and ``gradient`` (central differences inside, one-sided of order 1 or 2 at the edges, on a
uniform grid or at given coordinates)."""
import numbers

from .._core.dtype import scalar_name
from .._tensor import Tensor
from ..ops import aten

__all__ = ['vander', 'cumulative_trapezoid', 'gradient']


def _E():
    import ember
    return ember


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D tensor ``x``: columns x^(N-1), ..., x^0 (``increasing``: x^0 first).
    Integer and bool inputs give int64, as torch's (a running product promoted like ``cumprod``).

    >>> import ember
    >>> ember.vander(ember.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    E = _E()
    dtype = x.dtype if (x.is_floating_point() or x.is_complex()) else E.int64
    ones = E.ones(x.shape[0], 1, dtype=dtype, device=x.device)
    if n == 0:
        return ones[:, :0]
    powers = x.to(dtype).unsqueeze(1).expand(x.shape[0], n - 1).cumprod(1)
    result = aten.cat.default([ones, powers], 1)
    return result if increasing else result.flip(1)


def linalg_vander(x, *, N=None):
    """torch.linalg.vander: powers x^0, x^1, ..., x^(N-1) of each element along a new last dimension (batched over
    x's leading dimensions; a 0-d x reads as one element). Integer inputs give int64 (a running product, as torch's).

    >>> import ember
    >>> ember.linalg.vander(ember.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    E = _E()
    if x.dtype not in (E.float32, E.float64, E.complex64, E.complex128) and (x.is_floating_point() or x.is_complex()
                                                                           or x.dtype == E.bool):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{scalar_name(x.dtype)}")
    x = x.unsqueeze(-1) if x.dim() == 0 else x
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return aten.cat.default([powers.new_ones(*x.shape, 1), powers], -1)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along ``dim``: one fewer element than ``y`` there, the i-th the integral up
    to sample i+1, with sample points ``x`` (1-D, or shaped like ``y``) or the spacing ``dx`` (default 1).

    >>> import ember
    >>> ember.cumulative_trapezoid(ember.tensor([1., 2., 4.]))
    tensor([1.5000, 4.5000])
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments - got both x and dx; "
                        "expected one of (Tensor y, Tensor x, *, int dim = -1) or (Tensor y, *, Number dx = 1, "
                        "int dim = -1)")
    if y.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    n = y.shape[dim]
    if n == 0:
        return _float(y)
    left, right = y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)
    if x is None:
        return ((left + right) * ((1.0 if dx is None else dx) / 2)).cumsum(dim)
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = n - 1
        dxs = (x[1:] - x[:-1]).reshape(shape)
    else:
        dxs = x.diff(dim=dim)
    return ((left + right) * dxs / 2).cumsum(dim)


def _float(t):
    return t if (t.is_floating_point() or t.is_complex()) else t.to(_E().get_default_dtype())


def _normalize_dims(input, dim):
    nd = input.dim()
    dims = list(range(nd)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    out = []
    for d in dims:
        if not -max(nd, 1) <= d < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, "
                             f"{max(nd, 1) - 1}], but got {d})")
        out.append(d % max(nd, 1))
    return out


def _spacings(input, spacing, dims, dim_given):
    """One entry per dim: a Python number (uniform step) or a 1-D coordinate tensor."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, (numbers.Number, Tensor)) and not (isinstance(spacing, Tensor) and spacing.dim()):
        return [spacing.item() if isinstance(spacing, Tensor) else spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if dim_given:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.dim()}', since dim argument was not given, but got a list of "
                           f"length {len(spacing)}")
    out = []
    for s, d in zip(spacing, dims):
        if isinstance(s, Tensor) and s.dim() == 0:
            s = s.item()
        if isinstance(s, Tensor):
            if s.dim() != 1 or s.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor in spacing to be 1-dimensional with "
                                   f"input.size(dim) = {input.shape[d]} elements, but got size {list(s.shape)} "
                                   f"for dim {d}")
        out.append(s)
    return out


def _side(y, d, start, length):
    return y.narrow(d, start % y.shape[d], length)


def _on_dim(c, d, nd):
    """A 1-D tensor of coefficients laid along dim ``d`` of an ``nd``-dim tensor."""
    shape = [1] * nd
    shape[d] = c.shape[0]
    return c.reshape(shape)


def _uniform(y, d, h, edge_order):
    center = (_side(y, d, 2, y.shape[d] - 2) - _side(y, d, 0, y.shape[d] - 2)) / (2 * h)
    if edge_order == 1:
        first = (_side(y, d, 1, 1) - _side(y, d, 0, 1)) / h
        last = (_side(y, d, -1, 1) - _side(y, d, -2, 1)) / h
    else:
        first = (-1.5 * _side(y, d, 0, 1) + 2 * _side(y, d, 1, 1) - 0.5 * _side(y, d, 2, 1)) / h
        last = (0.5 * _side(y, d, -3, 1) - 2 * _side(y, d, -2, 1) + 1.5 * _side(y, d, -1, 1)) / h
    return aten.cat.default([first, center, last], d)


def _coordinates(y, d, x, edge_order):
    """numpy.gradient's second-order-accurate differences on an uneven grid (Fornberg's weights)."""
    h = x[1:] - x[:-1]
    h1, h2 = h[:-1], h[1:]
    a = _on_dim(-h2 / (h1 * (h1 + h2)), d, y.dim())
    b = _on_dim((h2 - h1) / (h1 * h2), d, y.dim())
    c = _on_dim(h1 / (h2 * (h1 + h2)), d, y.dim())
    n = y.shape[d]
    center = a * _side(y, d, 0, n - 2) + b * _side(y, d, 1, n - 2) + c * _side(y, d, 2, n - 2)
    if edge_order == 1:
        first = (_side(y, d, 1, 1) - _side(y, d, 0, 1)) / h[0]
        last = (_side(y, d, -1, 1) - _side(y, d, -2, 1)) / h[-1]
    else:
        p, q = h[0], h[1]
        first = (-(2 * p + q) / (p * (p + q)) * _side(y, d, 0, 1) + (p + q) / (p * q) * _side(y, d, 1, 1)
                 - p / (q * (p + q)) * _side(y, d, 2, 1))
        p, q = h[-1], h[-2]
        last = (p / (q * (p + q)) * _side(y, d, -3, 1) - (p + q) / (p * q) * _side(y, d, -2, 1)
                + (2 * p + q) / (p * (p + q)) * _side(y, d, -1, 1))
    return aten.cat.default([first, center, last], d)


def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """The derivative of sampled values along each dim in ``dim`` (all by default), as a tuple: central
    differences inside, one-sided differences of order ``edge_order`` (1 or 2) at the ends. ``spacing`` is a
    number (the step on every dim), a list of numbers (one step per dim) or a list of 1-D tensors (the sample
    coordinates on each dim).

    >>> import ember
    >>> ember.gradient(ember.tensor([1., 4., 9., 16., 25.]))
    (tensor([3., 4., 6., 8., 9.]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _normalize_dims(input, dim) if input.dim() or dim is not None else []
    steps = _spacings(input, spacing, dims, dim is not None)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, s in zip(dims, steps):
        if isinstance(s, Tensor):
            common = _float(input.new_empty(0, dtype=_E().promote_types(input.dtype, s.dtype))).dtype
            out.append(_coordinates(input.to(common), d, s.to(common), edge_order))
        else:
            out.append(_uniform(_float(input), d, s, edge_order))
    return tuple(out)
