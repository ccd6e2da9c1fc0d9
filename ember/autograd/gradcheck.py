"""``gradcheck`` / ``gradgradcheck``: analytical gradients against central finite differences.

The numerical Jacobian perturbs each input element by ``±eps`` in place (no
version bump: only the data moves, as torch does through ``.data``) and
re-runs the function without grad; the analytical one runs backward once per
output element with a one-hot ``grad_output``. Both are laid out as torch's:
``J[input element, output element]``.

>>> import ember
>>> x = ember.tensor([1., 2.], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradcheck(lambda t: t * t, (x,))
True
"""
from ember._warn import warnings

import numpy as np

from .._core.tensor_impl import TensorImpl


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when the Jacobians differ (torch.autograd.gradcheck.GradcheckError)."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _tensors(xs):
    return [x for x in xs if isinstance(x, TensorImpl)]


def _run(func, inputs):
    outs = _as_tuple(func(*inputs))     # grad mode stays on: gradgradcheck's function calls grad()
    return [np.array(o.detach()._host(), dtype=np.complex128 if o.is_complex() else np.float64).reshape(-1)
            for o in outs if isinstance(o, TensorImpl)]


def _numerical(func, inputs, wrt, eps):
    """One ``(numel(input), numel(output))`` array per (input, output) pair."""
    base = _run(func, inputs)
    jac = [[np.zeros((x.numel(), o.size)) for o in base] for x in wrt]
    for k, x in enumerate(wrt):
        a = x._a
        flat_idx = list(np.ndindex(a.shape)) if a.ndim else [()]
        for j, idx in enumerate(flat_idx):
            orig = a[idx].copy()
            a[idx] = orig + eps
            plus = _run(func, inputs)
            a[idx] = orig - eps
            minus = _run(func, inputs)
            a[idx] = orig
            for i, (p, m) in enumerate(zip(plus, minus)):
                jac[k][i][j] = ((p - m) / (2 * eps)).real
    return jac


def _analytical(func, inputs, wrt):
    from .. import from_numpy
    from . import grad as autograd_grad
    outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, TensorImpl)]
    jac = [[np.zeros((x.numel(), o.numel())) for o in outs] for x in wrt]
    for i, o in enumerate(outs):
        if not o.requires_grad:
            continue
        n = o.numel()
        for j in range(n):
            e = np.zeros(n, dtype=o.dtype.np)
            e[j] = 1
            gs = autograd_grad((o,), wrt, (from_numpy(e).reshape(tuple(o.shape)).to(o.device),), retain_graph=True,
                               allow_unused=True)
            for k, g in enumerate(gs):
                if g is not None:
                    jac[k][i][:, j] = np.asarray(g.detach()._host(), dtype=np.float64).reshape(-1)
    return jac, outs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Returns True when every analytical Jacobian is within ``atol + rtol * |numerical|``;
    otherwise raises GradcheckError naming the output and input, with both Jacobians
    (or returns False when ``raise_exception=False``).
    """
    inputs = _as_tuple(inputs)
    wrt = [x for x in _tensors(inputs) if x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, x in enumerate(wrt):
        if x.dtype.name not in ('float64', 'complex128'):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", UserWarning, stacklevel=2)
    analytical, outs = _analytical(func, inputs, wrt)
    numerical = _numerical(func, inputs, wrt, eps)
    for i in range(len(outs)):
        for k in range(len(wrt)):
            a, n = analytical[k][i], numerical[k][i]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(raise_exception, f"Jacobian mismatch for output {i} with respect to input {k},\n"
                                              f"numerical:{_show(n)}\nanalytical:{_show(a)}\n")
    for i, o in enumerate(outs):
        if not o.requires_grad and any(np.any(numerical[k][i]) for k in range(len(wrt))):
            return _fail(raise_exception, f"Numerical gradient for function expected to be zero (output {i} does "
                                          f"not require grad)")
    return True


def _show(j):
    from .. import from_numpy
    return repr(from_numpy(np.ascontiguousarray(j)))


def _fail(raise_exception, msg):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of ``(inputs, grad_outputs) -> autograd.grad(func(inputs), ...)``
    with ``create_graph=True``. ``grad_outputs`` default to random double tensors that require grad."""
    from .. import from_numpy
    from . import grad as autograd_grad
    inputs = _as_tuple(inputs)
    n_in = len(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, TensorImpl) and o.requires_grad]
        grad_outputs = tuple(from_numpy(rng.standard_normal(tuple(o.shape)).astype(o.dtype.np))
                             .to(o.device).requires_grad_(True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _as_tuple(func(*ins)) if isinstance(o, TensorImpl) and o.requires_grad]
        wrt = [x for x in _tensors(ins) if x.requires_grad]
        gs = autograd_grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
