"""torch.nn.utils.parametrizations: ready-made parametrizations on ``ember.nn.utils.parametrize``.

``weight_norm(module, name='weight', dim=0)`` writes the weight as ``g * v / ||v||`` (the norm over every
dimension but ``dim``; the whole tensor for ``dim=None``): ``parametrizations.weight.original0`` is g,
``original1`` is v, torch's names, and a state dict of the older ``torch.nn.utils.weight_norm`` (``weight_g``,
``weight_v``) loads into it as in torch.

``spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None)`` divides the weight by its
largest singular value, estimated by power iteration: buffers ``_u`` and ``_v`` (the singular vectors, 15
iterations at registration) take ``n_power_iterations`` more steps at each read in training mode and none in
eval mode, as torch's. The weight is seen as a matrix with ``dim`` first (1 for ConvTranspose, else 0); a
1-D weight is simply normalised.

``orthogonal(module, name='weight', orthogonal_map=None, *, use_trivialization=True)`` keeps a matrix (or a batch
of them) orthogonal, or unitary when complex: orthonormal columns when it is tall, rows when wide. The map from
the unconstrained original is ``"matrix_exp"`` or ``"cayley"`` of a skew-symmetric (skew-Hermitian) matrix made
from the original's lower triangle, or ``"householder"``, a product of reflectors (real only); the default is
``"matrix_exp"`` for square or complex matrices, ``"householder"`` otherwise. With ``use_trivialization`` the
result is ``base @ Q``, where the buffer ``base`` holds the last value assigned (torch's dynamic trivialization).

>>> import ember
>>> from ember.nn.utils.parametrizations import weight_norm
>>> m = weight_norm(ember.nn.Linear(4, 3))
>>> [n for n, _ in m.named_parameters()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
import enum

from ... import (Tensor, _weight_norm, add, allclose, cat, eye, finfo, geqrf, linalg, matrix_exp, mv, no_grad,
                 norm_except_dim, randn, vdot, zeros_like)
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .weight_norm import _matrix_dim_first, _spectral_dim

__all__ = ['orthogonal', 'spectral_norm', 'weight_norm']


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name='weight', dim=0):
    """Weight normalisation of ``module.<name>`` (Salimans & Kingma, 2016); returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f'{prefix}{name}_g', f'{prefix}{name}_v'
        if g_key in state_dict and v_key in state_dict:
            state_dict[f'{prefix}parametrizations.{name}.original0'] = state_dict.pop(g_key)
            state_dict[f'{prefix}parametrizations.{name}.original1'] = state_dict.pop(v_key)
    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        nd = weight.ndim
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{nd}, {nd - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % nd
        self.eps = eps
        if nd > 1:
            self.n_power_iterations = n_power_iterations
            w = self._as_matrix(weight)
            h, k = w.shape
            self.register_buffer('_u', F.normalize(w.new_empty(h).normal_(0, 1), dim=0, eps=eps))
            self.register_buffer('_v', F.normalize(w.new_empty(k).normal_(0, 1), dim=0, eps=eps))
            self._power_method(w, 15)

    def _as_matrix(self, weight):
        return _matrix_dim_first(weight, self.dim)

    def _power_method(self, w, steps):
        """u and v towards the first left and right singular vectors of w (in place: the buffers keep their
        identity)."""
        with no_grad():
            for _ in range(steps):
                self._u.copy_(F.normalize(mv(w, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mv(w.H, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._as_matrix(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()     # the buffers change in place at the next read
        return weight / vdot(u, mv(w, v))

    def right_inverse(self, value):
        return value


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalisation of ``module.<name>`` (Miyato et al., 2018); returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations,
                                                                     _spectral_dim(module, dim), eps))
    return module


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    return allclose(Q.mH @ Q, Id, atol=10.0 * n * finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q of a tall A = QR (A may be complex) with diag(R) real and non-negative."""
    X, tau = geqrf(A)
    Q = linalg.householder_product(X, tau)
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)   # diag(X) is diag(R): make it non-negative
    return Q


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


class _Orthogonal(Module):
    """Maps a matrix (batch) to an orthogonal one of its shape; ``base`` (a buffer, with
    ``use_trivialization``) multiplies the result on the left."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        # Complex reflectors give n(n-1) real parameters, fewer than the n^2 of a unitary matrix (and a free
        # tau would leave the constraint): torch refuses the combination.
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer('base', None)

    def forward(self, X):
        transposed = X.size(-2) < X.size(-1)
        if transposed:
            X = X.mT
        if self.orthogonal_map == _OrthMaps.householder:
            Q = self._householder(X)
        else:
            Q = self._skew_map(X)
        if hasattr(self, 'base'):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def _skew_map(self, X):
        """matrix_exp or Cayley map of the skew-symmetric matrix built from X's lower triangle (X tall, n x k:
        n*k - k(k-1)/2 parameters), its first k columns."""
        n, k = X.size(-2), X.size(-1)
        X = X.tril()
        if n != k:
            X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
        A = X - X.mH
        if self.orthogonal_map == _OrthMaps.matrix_exp:
            Q = matrix_exp(A)
        else:       # Cayley retraction (I + A/2)(I - A/2)^{-1}
            Id = eye(n, dtype=A.dtype, device=A.device)
            Q = linalg.solve(add(Id, A, alpha=-0.5), add(Id, A, alpha=0.5))
        return Q[..., :k] if n != k else Q

    @staticmethod
    def _householder(X):
        """The reflectors below X's diagonal; X's diagonal (+-1, not differentiated: cast to int) signs the
        columns."""
        A = X.tril(diagonal=-1)
        tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
        Q = linalg.householder_product(A, tau)
        return Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

    @no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        transpose = Q.size(-2) < Q.size(-1)
        if transpose:
            Q = Q.mT
        if not hasattr(self, 'base'):
            A = self._householder_inverse(Q)
            return A.mT if transpose else A
        self.base = self._orthogonal_completion(Q)
        # -Id, so that the householder map of zeros (its diagonal -1s) is the identity
        neg_Id = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id

    def _householder_inverse(self, Q):
        """Reflectors and signs whose householder map is Q's orthogonal factor (no inverse exists for the
        other maps: which skew matrix's exp or Cayley map has these first k columns is not known in closed
        form)."""
        if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
            raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                      "parametrizations when use_trivialization=False.")
        A, tau = geqrf(Q)
        # diag(R) > 0, or Q = (-Q)(-Id) would be another QR; LAPACK's tau == 0 means "no reflection there"
        A.diagonal(dim1=-2, dim2=-1).sign_()
        A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
        return A

    @staticmethod
    def _orthogonal_completion(Q):
        """A square orthogonal matrix whose first columns are Q's (Q itself when square and orthogonal; the
        QR of Q, or of Q next to random columns, otherwise)."""
        n, k = Q.size(-2), Q.size(-1)
        if n == k:
            return Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
        return _make_orthogonal(cat([Q, N], dim=-1))


def orthogonal(module, name='weight', orthogonal_map=None, *, use_trivialization=True):
    """An orthogonal (or unitary) parametrization of the matrix ``module.<name>`` (a batch when it has more
    than two dimensions); returns the module.

    >>> import ember
    >>> from ember.nn.utils.parametrizations import orthogonal
    >>> m = orthogonal(ember.nn.Linear(3, 5))
    >>> Q = m.weight
    >>> bool(ember.dist(Q.T @ Q, ember.eye(3)) < 1e-5), type(m.parametrizations.weight[0]).__name__
    (True, '_Orthogonal')
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:     # maps on the sphere would bite more people than they would help (torch)
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = 'matrix_exp' if square or weight.is_complex() else 'householder'
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f'Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
