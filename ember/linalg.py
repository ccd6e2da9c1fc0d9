"""ember.linalg: torch.linalg's functions (products, inverses, solvers, decompositions and norms).

Each is an operator declared in ember/_ops/linalg.py or ember/_ops/products.py (or a composite of
them); this module gives them their torch.linalg names.

>>> import ember
>>> A = ember.tensor([[2.0, 0.0], [0.0, 4.0]])
>>> ember.linalg.inv(A)
tensor([[0.5000, 0.0000],
        [0.0000, 0.2500]])
"""
import functools

from .ops import aten
from ._python_functions._out import write_out as _write_out
from .return_types import _structseq
from ._backends.cpu.linalg import LinAlgError  # noqa: F401  raised by kernels, so defined where they can reach it


def _with_out(op, out_op):
    def fn(*args, out=None, **kwargs):
        if out is None:
            return op(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            names = [a.name for a in out_op.schema.arguments[-len(out):]]
            kwargs.update(zip(names, out))
            return out_op(*args, **kwargs)
        return out_op(*args, out=out, **kwargs)
    fn.__name__ = fn.__qualname__ = op.schema.name.replace('linalg_', '')
    fn.__doc__ = f"See torch.linalg.{fn.__name__}."
    fn.__signature__ = _signature(op)
    return fn


def _signature(op):
    """The schema's arguments and ``out``: what ``inspect.signature`` shows, and what a call is checked against
    before ``__torch_function__`` sees it (``public_function``), as torch's argument parser checks it."""
    import inspect
    P = inspect.Parameter
    params = [P('input' if a.name == 'self' else a.name, P.KEYWORD_ONLY if a.kwarg_only else P.POSITIONAL_OR_KEYWORD,
                default=a.default if a.has_default else P.empty) for a in op.schema.arguments]
    return inspect.Signature(params + [P('out', P.KEYWORD_ONLY, default=None)])


def _plain(op, public, fields=None):
    """The public function of ``op``; ``fields``: its results come back as torch.return_types.linalg_<public>."""
    rt = _structseq(f'linalg_{public}', fields) if fields else tuple

    def fn(*args, out=None, **kwargs):
        r = op(*args, **kwargs)
        if out is None:
            return rt(*r) if fields else r
        if isinstance(r, tuple):
            return rt(*_write_out(out, r, cast=False))
        return _write_out(out, r, cast=False)
    fn.__name__ = fn.__qualname__ = public
    fn.__doc__ = f"See torch.linalg.{public}."
    fn.__signature__ = _signature(op)
    return fn




from ._python_functions.linalg import solve_triangular  # noqa: E402,F401  a composite of linalg_solve
from ._python_functions.linalg import matrix_exp  # noqa: E402,F401  a composite of matmul
from ._python_functions.linalg import lstsq  # noqa: E402,F401  a composite of pinv
from ._python_functions.calculus import linalg_vander as vander  # noqa: E402,F401  a composite of cumprod
from ._python_functions.linalg_more import (cond, solve_ex, tensorinv, tensorsolve,  # noqa: E402,F401
                                            householder_product)
from ._python_functions.lu import (linalg_lu as lu, linalg_lu_factor as lu_factor,  # noqa: E402,F401
                                   linalg_lu_factor_ex as lu_factor_ex, linalg_lu_solve as lu_solve)

matmul = _with_out(aten.matmul.default, aten.matmul.out)
cross = _with_out(aten.linalg_cross.default, aten.linalg_cross.out)
inv = _with_out(aten.linalg_inv.default, aten.linalg_inv.out)
det = _with_out(aten.linalg_det.default, aten.linalg_det.out)
slogdet = _plain(aten.linalg_slogdet.default, 'slogdet', ['sign', 'logabsdet'])
solve = _plain(aten.linalg_solve.default, 'solve')
cholesky = _with_out(aten.linalg_cholesky.default, aten.linalg_cholesky.out)
qr = _plain(aten.linalg_qr.default, 'qr', ['Q', 'R'])


def _with_driver(fn):
    """torch's keyword-only ``driver`` (cuSOLVER's algorithm): None anywhere, a name only for a CUDA input."""
    import inspect

    @functools.wraps(fn)
    def public(A, *args, driver=None, **kwargs):
        if driver is not None and getattr(getattr(A, 'device', None), 'type', 'cpu') != 'cuda':
            raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                               "cuSOLVER backend.")
        return fn(A, *args, **kwargs)
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    public.__signature__ = sig.replace(parameters=params[:-1] + [
        inspect.Parameter('driver', inspect.Parameter.KEYWORD_ONLY, default=None), params[-1]])
    return public


svd = _with_driver(_plain(aten.linalg_svd.default, 'svd', ['U', 'S', 'Vh']))
svdvals = _with_driver(_plain(aten.linalg_svdvals.default, 'svdvals'))
eigh = _plain(aten.linalg_eigh.default, 'eigh', ['eigenvalues', 'eigenvectors'])
eigvalsh = _plain(aten.linalg_eigvalsh.default, 'eigvalsh')
eig = _plain(aten.linalg_eig.default, 'eig', ['eigenvalues', 'eigenvectors'])
eigvals = _plain(aten.linalg_eigvals.default, 'eigvals')
ldl_factor_ex = _plain(aten.linalg_ldl_factor_ex.default, 'ldl_factor_ex', ['LD', 'pivots', 'info'])
ldl_factor = _plain(aten.linalg_ldl_factor.default, 'ldl_factor', ['LD', 'pivots'])
ldl_solve = _plain(aten.linalg_ldl_solve.default, 'ldl_solve')
_norm_num, _norm_str = _plain(aten.linalg_norm.default, 'norm'), _plain(aten.linalg_norm.ord_str, 'norm')
_mnorm_num, _mnorm_str = _plain(aten.linalg_matrix_norm.default, 'matrix_norm'), _plain(aten.linalg_matrix_norm.str_ord, 'matrix_norm')


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """Vector or matrix norm (torch.linalg.norm): a matrix norm when ``dim`` is a pair or ``ord`` is a string.

    >>> import ember
    >>> norm(ember.tensor([3.0, 4.0])).item()
    5.0
    """
    f = _norm_str if isinstance(ord, str) else _norm_num
    return f(A, ord, dim, keepdim, dtype=dtype, out=out)


def matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Frobenius, nuclear, 1, inf, 2 (and negative) matrix norms over ``dim`` (torch.linalg.matrix_norm)."""
    if not isinstance(dim, (tuple, list)):
        raise TypeError(f"linalg_matrix_norm(): argument 'dim' must be tuple of ints, not {type(dim).__name__}")
    f = _mnorm_str if isinstance(ord, str) else _mnorm_num
    return f(A, ord, dim, keepdim, dtype=dtype, out=out)


matrix_power = _plain(aten.linalg_matrix_power.default, 'matrix_power')
multi_dot = _plain(aten.linalg_multi_dot.default, 'multi_dot')
pinv = _plain(aten.linalg_pinv.default, 'pinv')
vecdot = _plain(aten.linalg_vecdot.default, 'vecdot')
matrix_rank = _plain(aten.linalg_matrix_rank.default, 'matrix_rank')


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: ``A.diagonal`` with the last two dimensions as the default."""
    return A.diagonal(offset, dim1, dim2)


def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: info is 0 where the inverse exists, else the (1-based) position of the first zero pivot
    of A's LU factorisation, and that matrix's inverse is undefined (NaN here); ``check_errors`` raises instead.
    GPyTorch and linear_operator read info to decide what to do with a singular matrix."""
    from . import full_like
    result = _structseq('linalg_inv_ex', ['inverse', 'info'])
    try:
        return result(inv(A), _zero_info(A))
    except LinAlgError:
        if check_errors:
            raise
    # LAPACK getrf's info: the first zero pivot
    return result(*_per_matrix(A, inv, lambda M: (full_like(M, float('nan')), int(lu_factor_ex(M).info))))


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: info is 0 where A is positive-definite, else the order of its first leading minor that is
    not; there L holds what the column-by-column factorisation had computed when it stopped (the failing
    diagonal entry unrooted, the rest of the lower triangle as in A), as LAPACK's. ``check_errors`` raises."""
    result = _structseq('linalg_cholesky_ex', ['L', 'info'])
    try:
        return result(cholesky(A, upper=upper), _zero_info(A))
    except LinAlgError:
        pass
    L, info = _per_matrix(A, cholesky, _partial_cholesky)
    if check_errors:
        k = next(i for i in info.reshape(-1).tolist() if i)
        raise LinAlgError(f"linalg.cholesky_ex: The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {k} is not positive-definite).")
    return result(L.mH if upper else L, info)


def _zero_info(A):
    from . import zeros, int32
    return zeros(tuple(A.shape[:-2]), dtype=int32)


def _per_matrix(A, factor, failed):
    """(results, int32 info) of ``factor`` on each matrix of the batch ``A``; ``failed(M)`` gives (result, info)
    for a matrix that ``factor`` refuses."""
    from . import stack, int32
    results, infos = [], []
    for M in A.reshape(-1, *A.shape[-2:]):
        try:
            results.append(factor(M))
            infos.append(0)
        except LinAlgError:
            r, k = failed(M)
            results.append(r)
            infos.append(k)
    return stack(results).reshape(A.shape), _tensor(infos, dtype=int32).reshape(tuple(A.shape[:-2]))


def _partial_cholesky(M):
    """(the lower factor as far as it goes, the order of the first leading minor that is not positive-definite)."""
    with _no_grad():
        L = M.tril().clone()
        for j in range(M.shape[-1]):
            d = M[j, j] - L[j, :j].dot(L[j, :j]) if j else M[j, j].clone()
            if not bool(d > 0):
                L[j, j] = d
                return L, j + 1
            L[j, j] = d.sqrt()
            if j + 1 < M.shape[-1]:
                L[j + 1:, j] = (M[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return L, 0


def _tensor(data, dtype):
    from . import tensor
    return tensor(data, dtype=dtype)


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


from ._python_functions.reductions import vector_norm  # noqa: E402,F401  declared with the reductions (linalg_vector_norm)

# public functions written in Python: they honour __torch_function__ and NumPy's keyword names (axis=, keepdims=)
from .overrides import public_function as _public  # noqa: E402
norm, vector_norm = _public(norm), _public(vector_norm)
norm.__name__, vector_norm.__name__ = 'linalg_norm', 'linalg_vector_norm'
# and every other torch.linalg function: a handler gets ``func is torch.linalg.solve`` (not the operator within)
# and its result is returned as it is (linear_operator's LinearOperator answers solve/cholesky/eigh/svd)
for _name in ('solve_triangular', 'matrix_exp', 'lstsq', 'cond', 'solve_ex', 'tensorinv', 'tensorsolve',
              'householder_product', 'lu', 'lu_factor', 'lu_factor_ex', 'lu_solve', 'matmul', 'cross', 'inv', 'det',
              'slogdet', 'solve', 'cholesky', 'qr', 'svd', 'svdvals', 'eigh', 'eigvalsh', 'eig', 'eigvals',
              'ldl_factor_ex', 'ldl_factor', 'ldl_solve', 'matrix_norm', 'matrix_power', 'multi_dot', 'pinv',
              'vecdot', 'matrix_rank', 'diagonal', 'inv_ex', 'cholesky_ex', 'vander'):
    if not getattr(globals()[_name], '__ember_public__', False):
        globals()[_name] = _public(globals()[_name])
    globals()[_name].__name__ = 'linalg_' + _name      # torch's builtins' names (pickled by __qualname__)
del _name
