"""``gradcheck`` / ``gradgradcheck``: analytical derivatives against central finite differences, as torch's.

The numerical Jacobian perturbs each input element by ``±eps`` in place (no version bump: only the data moves,
as torch does through ``.data``) and re-runs the function; a complex input is perturbed along its real and its
imaginary part and its column is ``d/dRe + 1j * d/dIm`` (torch's convention for the gradient of a real output).
The analytical Jacobian comes from reverse mode (one ``autograd.grad`` per output element, run twice to catch
nondeterminism beyond ``nondet_tol``) and, with ``check_forward_ad``, from forward mode (one dual-level run per
input element, reading the output tangents). Both are laid out as torch's: ``J[input element, output element]``.

As torch: complex outputs are checked through their real and imaginary parts in reverse mode, complex inputs
through theirs in forward mode; ``fast_mode`` compares ``v^T J u`` for random ``u``, ``v`` (``J u`` in forward
mode) instead of whole Jacobians, and on failure recomputes them in slow mode for the message;
``check_batched_grad`` compares ``vmap`` over the backward pass with a loop; ``check_undefined_grad`` checks that
zero output gradients (torch passes undefined ones, which ember's engine materialises as zeros) and zero tangents
give zero input gradients.

>>> import ember
>>> x = ember.tensor([1., 2.], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradcheck(lambda t: t * t, (x,))
True
"""
import warnings

import numpy as np

from .._core.tensor_impl import TensorImpl


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when the Jacobians differ (torch.autograd.gradcheck.GradcheckError)."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
"""

FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
If the test manually invokes gradcheck/gradgradcheck, call it with `check_batched_grad=False`
as a keyword argument. Otherwise, to make an operator work with batched gradient computation,
its backward must be vmap-compatible (no in-place writes into a captured tensor, no `.item()`).
""".strip()

FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled when `check_batched_forward_grad=True`; call gradcheck with
`check_batched_forward_grad=False` to disable it.
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode! Call gradcheck/gradgradcheck with `fast_mode=False`.
""".strip()


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _tensors(xs):
    return [x for x in xs if isinstance(x, TensorImpl)]


def _is_float_or_complex(t):
    return isinstance(t, TensorImpl) and (t.is_floating_point() or t.is_complex())


def _diff_inputs(inputs):
    return [x for x in inputs if isinstance(x, TensorImpl) and x.requires_grad]


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if isinstance(o, TensorImpl) and o.requires_grad)


def _np(t):
    """A tensor's values as a flat float64 or complex128 array."""
    return np.array(t.detach()._host(), dtype=np.complex128 if t.is_complex() else np.float64).reshape(-1)


def _tensor(a, like):
    from .. import from_numpy
    return from_numpy(np.ascontiguousarray(a)).to(like.device)


def _show(j):
    from .. import from_numpy
    return repr(from_numpy(np.ascontiguousarray(j)))


# --- numerical ----------------------------------------------------------------------------------------------

def _run(func, inputs):
    outs = _as_tuple(func(*inputs))     # grad mode stays on: gradgradcheck's function calls grad()
    return [_np(o) for o in outs if isinstance(o, TensorImpl)]


def _directions(x):
    """The perturbation directions of one input: its real part, and its imaginary part when complex."""
    return (1.0, 1j) if x.is_complex() else (1.0,)


def _central_difference(func, inputs, a, idx, step, eps):
    """``(f(x + eps*step) - f(x - eps*step)) / 2eps`` per output, perturbing ``a[idx]`` in place."""
    orig = a[idx].copy()
    a[idx] = orig + eps * step
    plus = _run(func, inputs)
    a[idx] = orig - eps * step
    minus = _run(func, inputs)
    a[idx] = orig
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _numerical(func, inputs, eps):
    """``jac[k][i]``: the ``(numel(input k), numel(output i))`` Jacobian of every tensor output (requiring grad
    or not) with respect to every input that requires grad."""
    base = _run(func, inputs)
    wrt = _diff_inputs(inputs)
    jac = [[np.zeros((x.numel(), o.size), dtype=np.complex128 if x.is_complex() or np.iscomplexobj(o) else
                     np.float64) for o in base] for x in wrt]
    for k, x in enumerate(wrt):
        a = x._a
        for j, idx in enumerate(np.ndindex(a.shape) if a.ndim else [()]):
            for d in _directions(x):
                cols = _central_difference(func, inputs, a, idx, d, eps)
                for i, col in enumerate(cols):
                    # a complex input's imaginary direction adds 1j * d/dIm (real outputs: reverse mode splits
                    # complex outputs first)
                    jac[k][i][j] += col * (1j if d == 1j else 1)
    return jac


def _numerical_Ju(func, inputs, eps, all_u):
    """Fast mode: the directional derivative ``J u`` of every output along each input's ``u`` (for a complex
    input, ``J_re ur + 1j J_im ui``)."""
    wrt = _diff_inputs(inputs)
    out = []
    for x, u in zip(wrt, all_u):
        a = x._a
        full = (slice(None),) * a.ndim
        per_out = None
        for d, ud in zip(_directions(x), u if isinstance(u, tuple) else (u,)):
            cols = _central_difference(func, inputs, a, full if a.ndim else (), d * ud.reshape(a.shape), eps)
            cols = [c * (1j if d == 1j else 1) for c in cols]
            per_out = cols if per_out is None else [p + c for p, c in zip(per_out, cols)]
        out.append(per_out)
    return out


# --- analytical ---------------------------------------------------------------------------------------------

def _backward_rows(output, wrt, grad_outputs):
    """``rows[k]``: the gradients of ``output`` with respect to input k, one flat array per grad_output."""
    from . import grad as autograd_grad
    rows = [[] for _ in wrt]
    sizes_ok, types_ok = True, True
    for go in grad_outputs:
        gs = autograd_grad((output,), wrt, (go,), retain_graph=True, allow_unused=True)
        for k, (g, x) in enumerate(zip(gs, wrt)):
            if g is None:
                rows[k].append(np.zeros(x.numel(), dtype=np.complex128 if x.is_complex() else np.float64))
                continue
            if tuple(g.shape) != tuple(x.shape):
                sizes_ok = False
            if g.dtype != x.dtype:
                types_ok = False
            rows[k].append(_np(g))
    return rows, sizes_ok, types_ok


def _analytical_backward(output, wrt, nondet_tol, check_grad_dtypes, v=None):
    """Slow mode: ``jac[k]`` of shape ``(numel(input k), numel(output))``; fast mode (``v``): ``v^T J`` per input.
    Computed twice, as torch, to report a backward that is not reentrant."""
    from .. import zeros_like

    def one_hot(j):
        g = zeros_like(output).reshape(-1)
        g[j] = 1
        return g.reshape(tuple(output.shape))

    def run():
        if v is None:
            rows, sizes_ok, types_ok = _backward_rows(output, wrt, (one_hot(j) for j in range(output.numel())))
            return [np.stack(r, axis=1) if r else np.zeros((x.numel(), 0)) for r, x in zip(rows, wrt)], \
                sizes_ok, types_ok
        go = _tensor(v, output).to(output.dtype).reshape(tuple(output.shape))
        rows, sizes_ok, types_ok = _backward_rows(output, wrt, (go,))
        return [r[0] for r in rows], sizes_ok, types_ok

    if v is not None and output.numel() == 0:
        return [np.zeros(x.numel()) for x in wrt]
    jac1, sizes_ok, types_ok = run()
    jac2, _, _ = run()
    reentrant = all(a.shape == b.shape and (a.size == 0 or np.max(np.abs(a - b)) <= nondet_tol)
                    for a, b in zip(jac1, jac2))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches "
                             f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
                             + FAILED_NONDET_MSG)
    return jac1


def _forward_tangents(func, inputs, tangents, check_grad_dtypes):
    """Output tangents (flat arrays; zeros where an output has none) of ``func`` at duals of the inputs that
    require grad, with the given tangents."""
    from . import forward_ad as fwAD
    with fwAD.dual_level():
        duals = []
        it = iter(tangents)
        for x in inputs:
            if isinstance(x, TensorImpl) and x.requires_grad:
                x = fwAD.make_dual(x.detach(), next(it))
            duals.append(x)
        res = []
        for o in _as_tuple(func(*duals)):
            if not _is_float_or_complex(o):
                continue
            val, t = fwAD.unpack_dual(o)
            if check_grad_dtypes and t is not None and val.is_complex() != t.is_complex():
                raise GradcheckError("Forward AD gradient has dtype mismatch.")
            res.append(np.zeros(o.numel()) if t is None else _np(t))
    return res


def _analytical_forward(func, inputs, check_grad_dtypes, all_u=None):
    """``jac[k][i]``: ``(numel(input k), numel(output i))`` from one forward-mode run per input element, or in fast
    mode (``all_u``) the output tangents ``J u`` for each input's ``u`` (the other inputs' tangents zero)."""
    from .. import zeros_like
    wrt = _diff_inputs(inputs)
    if any(x.is_complex() for x in wrt):
        raise ValueError("Expected inputs to be non-complex for _get_analytical_jacobian_forward_ad.")
    jac = []
    for k, x in enumerate(wrt):
        def tangents(t):
            return [t if i == k else zeros_like(y).detach() for i, y in enumerate(wrt)]
        if all_u is not None:
            jac.append(_forward_tangents(func, inputs, tangents(_tensor(all_u[k], x).to(x.dtype)
                                                                .reshape(tuple(x.shape))), check_grad_dtypes))
            continue
        # a column of zeros first: the output sizes, even for an input with no elements
        cols = [_forward_tangents(func, inputs, tangents(zeros_like(x).detach()), check_grad_dtypes)]
        for j in range(x.numel()):
            e = zeros_like(x).detach().reshape(-1)
            e[j] = 1
            cols.append(_forward_tangents(func, inputs, tangents(e.reshape(tuple(x.shape))), check_grad_dtypes))
        jac.append([np.stack([c[i] for c in cols])[1:] for i in range(len(cols[0]))])
    return jac


# --- the checks ---------------------------------------------------------------------------------------------

def _notallclose_msg(a, n, output_idx, input_idx, complex_indices, test_imag=False, is_forward_ad=False):
    out_is_complex = not is_forward_ad and complex_indices and output_idx in complex_indices
    inp_is_complex = is_forward_ad and complex_indices and input_idx in complex_indices
    part = "imaginary" if test_imag else "real"
    element = "inputs" if is_forward_ad else "outputs"
    prefix = f"While considering the {part} part of complex {element} only, " if out_is_complex or inp_is_complex \
        else ""
    mode = "computed with forward mode " if is_forward_ad else ""
    return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{_show(n)}\nanalytical:{_show(a)}\n")


def _check_no_differentiable_outputs(func, inputs, eps):
    for per_input in _numerical(func, inputs, eps):
        for j in per_input:
            if np.any(j != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _slow_check(func, inputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, *, use_forward_ad=False,
                complex_indices=None, test_imag=False):
    func_out = _as_tuple(func(*inputs))
    outputs = _differentiable_outputs(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, inputs, eps)
    tensor_outs = [o for o in func_out if isinstance(o, TensorImpl)]
    numerical = _numerical(func, inputs, eps)
    # numerical[k][i] over every tensor output; keep those that require grad (torch's [numerical vs analytical
    # output length])
    keep = [i for i, o in enumerate(tensor_outs) if o.requires_grad]
    numerical = [[per_input[i] for i in keep] for per_input in numerical]
    wrt = _diff_inputs(inputs)
    if use_forward_ad:
        # forward mode reads the tangents of the floating outputs; those requiring grad are among them, in order
        fw_keep = [i for i, o in enumerate(o for o in tensor_outs if _is_float_or_complex(o)) if o.requires_grad]
        analytical = _analytical_forward(func, inputs, check_grad_dtypes)
        for i in range(len(outputs)):
            for k in range(len(wrt)):
                a, n = analytical[k][fw_keep[i]], numerical[k][i]
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(_notallclose_msg(a, n, i, k, complex_indices, test_imag, True))
        return True
    for i, o in enumerate(outputs):
        analytical = _analytical_backward(o, wrt, nondet_tol, check_grad_dtypes)
        for k, (a, n) in enumerate(zip(analytical, (numerical[k][i] for k in range(len(wrt))))):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_notallclose_msg(a, n, i, k, complex_indices, test_imag))
    return True


def _random_vectors(wrt, outputs, use_forward_ad):
    """torch's _make_vectors: non-negative random ``u`` per input (a pair for a complex one) and ``v`` per output
    (none in forward mode), from a generator of their own so the caller's random state is untouched."""
    rng = np.random.default_rng(0)
    all_u = [(rng.random(x.numel()), rng.random(x.numel())) if x.is_complex() else rng.random(x.numel())
             for x in wrt]
    all_v = None if use_forward_ad else [rng.random(o.numel()) for o in outputs]
    return all_u, all_v


def _adjusted_atol(atol, u, v):
    """``|v^T (A - B) u| <= atol * sum(u) * sum(v)`` is the elementwise bound summed (torch's _adjusted_atol)."""
    sum_v = 1.0 if v is None else float(v.sum())
    sum_u = float(u[0].sum() + u[1].sum()) if isinstance(u, tuple) else float(u.sum())
    return atol * sum_u * sum_v


def _vJu(vJ, u):
    """``(v^T J) . u``; for a complex input ``Re(vJ) . ur + 1j Im(vJ) . ui`` (matching _numerical_Ju)."""
    if isinstance(u, tuple):
        return np.dot(vJ.real, u[0]) + 1j * np.dot(vJ.imag, u[1])
    return np.dot(vJ, u)


def _slow_mode_details(func, inputs, input_idx, output_idx, rtol, atol, eps, is_forward_ad):
    """The message tail torch adds to a fast-mode failure: the same Jacobians computed element by element."""
    tensor_outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, TensorImpl)]
    diff_idx = [i for i, o in enumerate(tensor_outs) if o.requires_grad][output_idx]
    n = _numerical(func, inputs, eps)[input_idx][diff_idx]
    if is_forward_ad:
        floats = [i for i, o in enumerate(tensor_outs) if _is_float_or_complex(o)]
        a = _analytical_forward(func, inputs, False)[input_idx][floats.index(diff_idx)]
    else:
        a = _analytical_backward(tensor_outs[diff_idx], _diff_inputs(inputs), float('inf'), False)[input_idx]
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
           "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {_show(n)}\nAnalytical:\n{_show(a)}\n\n"
           f"The max per-element difference (slow mode) is: {np.max(np.abs(n - a)) if n.size else 0.0}.\n")
    if np.allclose(a, n, rtol=rtol, atol=atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_check(func, inputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, *, use_forward_ad=False,
                complex_indices=None, test_imag=False):
    func_out = _as_tuple(func(*inputs))
    outputs = _differentiable_outputs(func_out)
    wrt = _diff_inputs(inputs)
    if not outputs:
        return _check_no_differentiable_outputs(func, inputs, eps)
    all_u, all_v = _random_vectors(wrt, outputs, use_forward_ad)
    tensor_outs = [o for o in func_out if isinstance(o, TensorImpl)]
    keep = [i for i, o in enumerate(tensor_outs) if o.requires_grad]
    Ju = [[per_input[i] for i in keep] for per_input in _numerical_Ju(func, inputs, eps, all_u)]
    if use_forward_ad:
        floats = [o for o in tensor_outs if _is_float_or_complex(o)]
        fw_keep = [i for i, o in enumerate(floats) if o.requires_grad]
        analytical = _analytical_forward(func, inputs, check_grad_dtypes, all_u=all_u)
        for k in range(len(wrt)):
            for i in range(len(outputs)):
                a, n = analytical[k][fw_keep[i]], Ju[k][i]
                if not np.allclose(a, n, rtol=rtol, atol=_adjusted_atol(atol, all_u[k], None)):
                    raise GradcheckError(_notallclose_msg(a, n, i, k, complex_indices, test_imag, True)
                                         + _slow_mode_details(func, inputs, k, i, rtol, atol, eps, True))
        return True
    for i, o in enumerate(outputs):
        vJ = _analytical_backward(o, wrt, nondet_tol, check_grad_dtypes, v=all_v[i])
        for k in range(len(wrt)):
            a = np.asarray(_vJu(vJ[k], all_u[k]))
            n = np.asarray(np.dot(all_v[i], Ju[k][i]))
            if not np.allclose(a, n, rtol=rtol, atol=_adjusted_atol(atol, all_u[k], all_v[i])):
                raise GradcheckError(_notallclose_msg(a, n, i, k, complex_indices, test_imag)
                                     + _slow_mode_details(func, inputs, k, i, rtol, atol, eps, False))
    return True


def _real_and_imag_output(func):
    """``func`` with its complex outputs replaced by their real, or their imaginary, parts."""
    def apply(part):
        def wrapped(*inputs):
            return tuple(part(o) if isinstance(o, TensorImpl) and o.is_complex() else o
                         for o in _as_tuple(func(*inputs)))
        return wrapped
    return apply(lambda o: o.real), apply(lambda o: o.imag)


def _real_and_imag_input(func, complex_idx, inputs):
    """``x -> func(x + orig.imag * 1j)`` and ``y -> func(orig.real + y * 1j)`` for the complex inputs."""
    def apply(rebuild):
        def wrapped(*args):
            args = list(args)
            for i in complex_idx:
                args[i] = rebuild(args[i], inputs[i])
            return _as_tuple(func(*args))
        return wrapped
    return (apply(lambda x, orig: x + orig.imag.detach() * 1j),
            apply(lambda y, orig: orig.real.detach() + y * 1j))


def _part_inputs(inputs, complex_idx, part):
    """Fresh real leaves holding the real (or imaginary) parts of the complex inputs, requiring grad as they
    did (fresh so that the numerical Jacobian can perturb them in place)."""
    out = list(inputs)
    for i in complex_idx:
        out[i] = part(inputs[i]).detach().clone().requires_grad_(inputs[i].requires_grad)
    return out


def _check_real_imag(check, func, inputs, check_forward_ad, check_backward_ad, check_undefined_grad, **kw):
    func_out = _as_tuple(func(*inputs))
    if check_backward_ad:
        complex_out = [i for i, o in enumerate(_differentiable_outputs(func_out)) if o.is_complex()]
        if any(isinstance(o, TensorImpl) and o.is_complex() for o in func_out):
            real_fn, imag_fn = _real_and_imag_output(func)
            check(imag_fn, inputs, complex_indices=complex_out, test_imag=True, **kw)
            check(real_fn, inputs, complex_indices=complex_out, **kw)
        else:
            check(func, inputs, **kw)
    if check_forward_ad:
        complex_in = [i for i, x in enumerate(inputs) if isinstance(x, TensorImpl) and x.is_complex()]
        if complex_in:
            real_fn, imag_fn = _real_and_imag_input(func, complex_in, inputs)
            imag_inputs = _part_inputs(inputs, complex_in, lambda x: x.imag)
            check(imag_fn, imag_inputs, complex_indices=complex_in, test_imag=True, use_forward_ad=True, **kw)
            real_inputs = _part_inputs(inputs, complex_in, lambda x: x.real)
            check(real_fn, real_inputs, complex_indices=complex_in, use_forward_ad=True, **kw)
            if check_undefined_grad:
                _test_undefined_forward_mode(imag_fn, imag_inputs)
                _test_undefined_forward_mode(real_fn, real_inputs)
        else:
            check(func, inputs, use_forward_ad=True, **kw)
            if check_undefined_grad:
                _test_undefined_forward_mode(func, inputs)


def _test_undefined_forward_mode(func, inputs):
    """A dual input with a zero tangent and a plain input must give outputs with the same tangents."""
    from .. import zeros_like, allclose
    from . import forward_ad as fwAD
    wrt_idx = [i for i, x in enumerate(inputs) if isinstance(x, TensorImpl) and x.requires_grad]
    rng = np.random.default_rng(1)
    with fwAD.dual_level():
        duals = list(inputs)
        for i in wrt_idx:
            x = inputs[i]
            duals[i] = fwAD.make_dual(x.detach(), _tensor(rng.random(x.numel()), x).to(x.dtype)
                                      .reshape(tuple(x.shape)))
        for i in wrt_idx:
            x, keep = inputs[i], duals[i]
            duals[i] = fwAD.make_dual(x.detach(), zeros_like(x).detach())
            outs1 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = x.detach()
            outs2 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = keep
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                t1, t2 = fwAD.unpack_dual(o1).tangent, fwAD.unpack_dual(o2).tangent
                if t1 is not None and t2 is not None and not allclose(t1, t2):
                    raise GradcheckError(f"Mismatch in tangent values for output with index: {index_o} when input: "
                                         f"{x} has an undefined tangent value.  Got: {t1} but expected: {t2}")
    return True


def _test_batched_grad(inputs, output, output_idx):
    """``vmap`` over the backward pass (two grad_outputs at once) against running it once per grad_output."""
    from .. import randn_like, zeros
    from . import grad as autograd_grad
    wrt = _diff_inputs(inputs)

    def vjp(v):
        gs = autograd_grad(output, wrt, v, retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else zeros([], dtype=x.dtype, device=x.device).expand(tuple(x.shape))
                     for g, x in zip(gs, wrt))

    _compare_batched(vjp, [randn_like(output) for _ in range(2)], FAILED_BATCHED_GRAD_MSG,
                     lambda i: (output_idx, i))
    return True


def _compare_batched(fn, samples, note, indices):
    """``vmap(fn)`` over the stacked ``samples`` against ``fn`` on each; ``indices(i)``: the (output, input) pair
    result ``i`` is named by in the error."""
    from .. import stack
    from ..func import vmap
    expected = [stack(shards) for shards in zip(*[fn(x) for x in samples])]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="There is a performance drop")
        try:
            result = vmap(fn)(stack(samples))
        except RuntimeError as ex:
            raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{note}") from ex
    for i, (res, exp) in enumerate(zip(result, expected)):
        if not np.allclose(_np(res), _np(exp), rtol=1e-05, atol=1e-08):
            raise GradcheckError(_batched_msg(*indices(i), res, exp, note))


def _batched_msg(output_idx, input_idx, res, exp, note):
    return f"For output {output_idx} and input {input_idx}:\n\n{note}\n\nGot:\n{res}\n\nExpected:\n{exp}".strip()


def _test_batched_grad_forward_ad(func, inputs):
    """``vmap`` over a forward-mode pass (two tangents at once) against one pass per tangent."""
    from .. import randn_like, zeros
    from . import forward_ad as fwAD
    for input_idx, current in enumerate(inputs):
        if not (isinstance(current, TensorImpl) and current.requires_grad and _is_float_or_complex(current)):
            continue

        def jvp(tangent):
            with fwAD.dual_level():
                dual = fwAD.make_dual(current.detach(), tangent)
                args = tuple(dual if i == input_idx else (x.detach() if isinstance(x, TensorImpl) else x)
                             for i, x in enumerate(inputs))
                ret = []
                for o in _as_tuple(func(*args)):
                    if o is None:
                        continue
                    p, t = fwAD.unpack_dual(o)
                    ret.append(t if t is not None else zeros([], dtype=p.dtype, device=p.device)
                               .expand(tuple(p.shape)))
                return tuple(ret)

        _compare_batched(jvp, [randn_like(current) for _ in range(2)], FAILED_BATCHED_GRAD_MSG_FWD_AD,
                         lambda i: (i, i))
    return True


def _test_backward_mul_by_grad_output(outputs, inputs):
    from .. import zeros_like
    from . import grad as autograd_grad
    wrt = _diff_inputs(inputs)
    if not wrt:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads = autograd_grad(outputs, wrt, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, wrt):
        if gi is None:
            continue
        if np.any(_np(gi) != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(func, outputs, inputs):
    """torch runs backward with undefined output gradients (all of them, then one at a time); ember's engine has
    no undefined gradient, so zero ones stand in: backward must accept them and give zero input gradients."""
    from .. import zeros_like
    from . import grad as autograd_grad
    wrt = _diff_inputs(inputs)
    if not wrt:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by "
                      "default, but it may break existing callers of this function. If this is true for you, you "
                      "can call this function with \"check_undefined_grad=False\" to disable the feature",
                      stacklevel=3)

    outs = _differentiable_outputs(func(*inputs))
    try:
        grads = autograd_grad(outs, wrt, [zeros_like(o) for o in outs], allow_unused=True)
    except RuntimeError as e:
        warn_bc_breaking()
        raise GradcheckError("Expected backward function to handle undefined output grads. Please look at "
                             "\"Notes about undefined output gradients\" in \"tools/autograd/derivatives.yaml\"") \
            from e
    for gi in grads:
        if gi is not None and np.any(_np(gi) != 0):
            warn_bc_breaking()
            raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                 "undefined or zero. Please look at \"Notes about undefined output gradients\" in "
                                 "\"tools/autograd/derivatives.yaml\"")
    return True


def _check_inputs(inputs):
    any_requires_grad = False
    for idx, x in enumerate(inputs):
        if isinstance(x, TensorImpl) and x.requires_grad:
            if x.dtype.name not in ('float64', 'complex128'):
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ", UserWarning, stacklevel=4)
            if not all(st > 0 or sz <= 1 for st, sz in zip(x.stride(), x.shape)):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                                   "that are non-overlapping to be able to compute the numerical gradients "
                                   "correctly. You should call .contiguous on the input before passing it to "
                                   "gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Check the derivatives of ``func`` at ``inputs`` against finite differences (torch.autograd.gradcheck).

    Reverse mode (``check_backward_ad``) and forward mode (``check_forward_ad``) are each compared with the
    numerical Jacobian within ``atol + rtol * |numerical|``. Returns True; on a mismatch raises GradcheckError
    naming the output and input with both Jacobians (or returns False when ``raise_exception=False``).

    >>> import ember
    >>> x = ember.tensor([0.5, 1.5], dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradcheck(ember.sin, (x,), check_forward_ad=True, check_backward_ad=False)
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_batched_grad, check_batched_forward_grad, check_forward_ad,
                          check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode):
    _check_inputs(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    _check_real_imag(_fast_check if fast_mode else _slow_check, func, inputs, check_forward_ad, check_backward_ad,
                     check_undefined_grad, eps=eps, rtol=rtol, atol=atol, check_grad_dtypes=check_grad_dtypes,
                     nondet_tol=nondet_tol)
    if check_batched_forward_grad:
        _test_batched_grad_forward_ad(func, inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(inputs, o, i)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, inputs)
    if check_undefined_grad and outputs:
        _test_undefined_backward_mode(func, outputs, inputs)
    return True


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

    needs_grad = [isinstance(x, TensorImpl) and x.requires_grad for x in inputs + grad_outputs]

    def first_derivative(*args):
        # forward mode passes detached duals: restore requires_grad, as torch's gradgradcheck does
        args = tuple(x.requires_grad_() if need and not x.requires_grad else x for x, need in zip(args, needs_grad))
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _as_tuple(func(*ins)) if isinstance(o, TensorImpl) and o.requires_grad]
        wrt = [x for x in _tensors(ins) if x.requires_grad]
        gs = autograd_grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
