"""torch.linalg under ``__torch_function__`` and on bad input, compared with torch in the same process: every
function in torch.linalg hands a handler itself (``func is torch.linalg.solve``, not an operator within), returns
the handler's result unchanged, and is seen as itself by Tensor subclasses and TorchFunctionModes; non-converging
SVD/eigh raise torch's LinAlgError (a RuntimeError) with torch's message; linalg.vander, matrix_rank(hermitian)."""
import pytest
import torch
from torch.overrides import TorchFunctionMode

import ember
from _harness import both

NAMES = sorted(n for n in dir(torch.linalg) if not n.startswith('_') and n != 'LinAlgError'
               and callable(getattr(torch.linalg, n)))


def _calls(L, A, B, v, x=None, piv=None):
    """One valid call of each torch.linalg function: A a 3x3 matrix, B 3x2, v 3x3 (rows are 3-vectors), x a
    3-vector (also householder_product's tau), piv int32 pivots."""
    return {
        'cholesky': lambda: L.cholesky(A), 'cholesky_ex': lambda: L.cholesky_ex(A), 'cond': lambda: L.cond(A),
        'cross': lambda: L.cross(v, v), 'det': lambda: L.det(A), 'diagonal': lambda: L.diagonal(A),
        'eig': lambda: L.eig(A), 'eigh': lambda: L.eigh(A), 'eigvals': lambda: L.eigvals(A),
        'eigvalsh': lambda: L.eigvalsh(A), 'householder_product': lambda: L.householder_product(A, x),
        'inv': lambda: L.inv(A), 'inv_ex': lambda: L.inv_ex(A), 'ldl_factor': lambda: L.ldl_factor(A),
        'ldl_factor_ex': lambda: L.ldl_factor_ex(A), 'ldl_solve': lambda: L.ldl_solve(A, piv, B),
        'lstsq': lambda: L.lstsq(A, B), 'lu': lambda: L.lu(A), 'lu_factor': lambda: L.lu_factor(A),
        'lu_factor_ex': lambda: L.lu_factor_ex(A), 'lu_solve': lambda: L.lu_solve(A, piv, B),
        'matmul': lambda: L.matmul(A, B), 'matrix_exp': lambda: L.matrix_exp(A),
        'matrix_norm': lambda: L.matrix_norm(A), 'matrix_power': lambda: L.matrix_power(A, 2),
        'matrix_rank': lambda: L.matrix_rank(A), 'multi_dot': lambda: L.multi_dot([A, A, B]),
        'norm': lambda: L.norm(A), 'pinv': lambda: L.pinv(A), 'qr': lambda: L.qr(A), 'slogdet': lambda: L.slogdet(A),
        'solve': lambda: L.solve(A, B), 'solve_ex': lambda: L.solve_ex(A, B),
        'solve_triangular': lambda: L.solve_triangular(A, B, upper=True), 'svd': lambda: L.svd(A),
        'svdvals': lambda: L.svdvals(A), 'tensorinv': lambda: L.tensorinv(A, ind=1),
        'tensorsolve': lambda: L.tensorsolve(A, B[:, 0]), 'vander': lambda: L.vander(x),
        'vecdot': lambda: L.vecdot(v, v), 'vector_norm': lambda: L.vector_norm(v)}


def test_the_call_table_covers_every_torch_linalg_function():
    assert len(NAMES) > 35 and set(NAMES) == set(_calls(torch.linalg, None, None, None))
    assert [n for n in NAMES if not callable(getattr(ember.linalg, n, None))] == []
    assert [n for n in NAMES if getattr(ember.linalg, n).__name__ != getattr(torch.linalg, n).__name__] == []


@pytest.mark.parametrize('name', NAMES)
def test_a_tensor_like_handler_gets_the_linalg_function_and_its_result_comes_back(name):
    def run(lib):
        class Op:       # not a Tensor: every call on it goes to its handler (linear_operator's LinearOperator)
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ('handled', func is getattr(lib.linalg, name), func.__name__, types == (Op,))
        A = Op()
        return _calls(lib.linalg, A, lib.ones(3, 2, dtype=lib.float64), A, A, lib.ones(3, dtype=lib.int32))[name]()
    t, e = both(run)
    assert t == ('ok', ('handled', True, t[1][2], True)) and e == t


@pytest.mark.parametrize('name', NAMES)
def test_a_tensor_subclass_sees_the_linalg_function_first_and_keeps_its_type(name):
    def run(lib):
        class Sub(lib.Tensor):
            seen = []

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                Sub.seen.append(func)
                return super().__torch_function__(func, types, args, kwargs or {})
        A = (lib.eye(3, dtype=lib.float64) * 2).as_subclass(Sub)
        v = lib.arange(1., 10., dtype=lib.float64).reshape(3, 3).as_subclass(Sub)
        x, piv = v[0], lib.ones(3, dtype=lib.int32)
        Sub.seen.clear()
        r = _calls(lib.linalg, A, lib.ones(3, 2, dtype=lib.float64), v, x, piv)[name]()
        kinds = [type(x).__name__ for x in r] if isinstance(r, tuple) else type(r).__name__
        return Sub.seen[0] is getattr(lib.linalg, name), kinds
    t, e = both(run)
    assert t == ('ok', (True, t[1][1])) and e == t


@pytest.mark.parametrize('name', NAMES)
def test_a_torch_function_mode_sees_the_linalg_function(name):
    def run(lib):
        class Mode(lib.overrides.TorchFunctionMode):
            seen = []

            def __torch_function__(self, func, types, args=(), kwargs=None):
                Mode.seen.append(func)
                return func(*args, **(kwargs or {}))
        A, v = lib.eye(3, dtype=lib.float64) * 2, lib.arange(1., 10., dtype=lib.float64).reshape(3, 3)
        with Mode():
            _calls(lib.linalg, A, lib.ones(3, 2, dtype=lib.float64), v, v[0], lib.ones(3, dtype=lib.int32))[name]()
        return Mode.seen[0] is getattr(lib.linalg, name)
    t, e = both(run)
    assert t[0] == 'ok' and e == t


def test_torch_level_linalg_functions_hand_over_as_themselves():
    def run(lib):
        class Op:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return func
        A = Op()
        fs = [lib.inverse, lib.svd, lib.det, lib.logdet, lib.slogdet, lib.pinverse, lib.matrix_exp, lib.cholesky,
              lib.qr, lib.matmul, lib.matrix_power]
        return [f(A, 2) if f is lib.matrix_power else f(A, A) if f is lib.matmul else f(A) for f in fs] == fs
    t, e = both(run)
    assert t == ('ok', True) and e == t


# --- non-converging SVD / eigh ----------------------------------------------------------------------------------

_NAN_CALLS = {
    'svd': lambda L, A, S: L.linalg.svd(A), 'svd_thin': lambda L, A, S: L.linalg.svd(A, full_matrices=False),
    'torch.svd': lambda L, A, S: L.svd(A), 'svdvals': lambda L, A, S: L.linalg.svdvals(A),
    'eigh': lambda L, A, S: L.linalg.eigh(S), 'eigvalsh': lambda L, A, S: L.linalg.eigvalsh(S, UPLO='U'),
    'pinv': lambda L, A, S: L.linalg.pinv(A), 'pinv_hermitian': lambda L, A, S: L.linalg.pinv(S, hermitian=True),
    'matrix_rank': lambda L, A, S: L.linalg.matrix_rank(A),
    'matrix_rank_hermitian': lambda L, A, S: L.linalg.matrix_rank(S, hermitian=True),
    'cond': lambda L, A, S: L.linalg.cond(A), 'matrix_norm_2': lambda L, A, S: L.linalg.matrix_norm(A, 2),
    'nuc': lambda L, A, S: L.linalg.matrix_norm(A, 'nuc'), 'pinverse': lambda L, A, S: L.pinverse(A),
    'svd_complex': lambda L, A, S: L.linalg.svd(A.cdouble()), 'svd_float': lambda L, A, S: L.linalg.svd(A.float()),
    'one_matrix': lambda L, A, S: L.linalg.svdvals(A[1]), 'eig': lambda L, A, S: L.linalg.eig(A),
}


@pytest.mark.parametrize('name', sorted(_NAN_CALLS))
def test_non_finite_input_raises_torchs_linalg_error(name):
    def run(lib):
        A = lib.rand(3, 4, 4, dtype=lib.float64)
        A[1, 0, 0] = float('nan')
        try:
            _NAN_CALLS[name](lib, A, A + A.mT)
        except RuntimeError as err:
            # torch's eigh adds LAPACK's info, "(error code: k)", which NumPy does not report
            return type(err).__name__.lstrip('_'), isinstance(err, lib.linalg.LinAlgError), \
                str(err).split(' (error code')[0].rstrip('.')
    t, e = both(run)
    assert t[0] == 'ok' and t[1][0] in ('LinAlgError', 'RuntimeError') and e == t


# --- linalg.vander, matrix_rank -------------------------------------------------------------------------------

@pytest.mark.parametrize('case', ['int', 'uint8_N10', 'float_batched', 'complex', 'zero_dim', 'empty', 'N1', 'N0',
                                  'half', 'bool', 'positional_N'])
def test_vander(case):
    def run(lib):
        x = {'int': lib.tensor([1, 2, 3]), 'uint8_N10': lib.tensor([1, 2], dtype=lib.uint8),
             'float_batched': lib.tensor([[1., 2.], [3., -4.]], dtype=lib.float64), 'complex': lib.tensor([1j, 2.]),
             'zero_dim': lib.tensor(2.), 'empty': lib.ones(2, 0), 'N1': lib.tensor([1., 2.]), 'N0': lib.ones(2, 1),
             'half': lib.ones(2, dtype=lib.float16), 'bool': lib.tensor([True]),
             'positional_N': lib.tensor([1., 2.])}[case]
        kw = {'uint8_N10': {'N': 10}, 'float_batched': {'N': 4}, 'zero_dim': {'N': 2}, 'empty': {'N': 2},
              'N1': {'N': 1}, 'N0': {'N': 0}}.get(case, {})
        r = lib.linalg.vander(x, 3) if case == 'positional_N' else lib.linalg.vander(x, **kw)
        return str(r.dtype).split('.')[-1], tuple(r.shape), r.tolist()
    t, e = both(run)
    assert e == t


def test_vander_gradient():
    def run(lib):
        x = lib.tensor([1., 2., -3.], dtype=lib.float64, requires_grad=True)
        (lib.linalg.vander(x, N=4) * lib.arange(12., dtype=lib.float64).reshape(3, 4)).sum().backward()
        return x.grad.tolist()
    t, e = both(run)
    assert t[0] == 'ok' and e == t


@pytest.mark.parametrize('kw', [{}, {'hermitian': True}, {'atol': 0.0}, {'atol': 0.0, 'hermitian': True},
                                {'atol': 0.5}, {'rtol': 0.3}, {'atol': 0.1, 'rtol': 0.2, 'hermitian': True}])
@pytest.mark.parametrize('which', ['near_singular', 'symmetric', 'lower_triangular'])
def test_matrix_rank_tolerances_and_hermitian(kw, which):
    def run(lib):
        g = torch.Generator().manual_seed(0)
        A = torch.randn(4, 4, dtype=torch.float64, generator=g)
        A[:, 3] = A[:, 0] * 1e-17 + A[:, 1]
        M = {'near_singular': A, 'symmetric': A + A.mT, 'lower_triangular': torch.randn(5, 5, generator=g,
                                                                                  dtype=torch.float64).tril()}[which]
        M = lib.tensor(M.tolist(), dtype=lib.float64)
        return lib.linalg.matrix_rank(M, **kw).item(), lib.linalg.matrix_rank(M.float(), **kw).item()
    t, e = both(run)
    assert t[0] == 'ok' and e == t
