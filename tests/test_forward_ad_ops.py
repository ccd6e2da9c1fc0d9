"""Forward-mode AD per operator, generated from the OpInfo records: the tangent of every output of every sample
against torch.autograd.forward_ad's, and against central finite differences (float64)."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as efw
from opinfo import OPS
from _harness import materialize, to_lib, call, flat, as_np, complexify

_SKIP_FD = {'round', 'floor', 'ceil', 'trunc', 'frac', 'sign', 'sgn', 'fmod', 'remainder', 'floor_divide',
            # floating inputs that are not differentiable (class weights, total_weight): torch's tangent and ember's
            # leave them out, a finite difference would not
            'nll_loss_forward', 'nll_loss2d_forward', 'nll_loss_backward', 'nll_loss2d_backward',
            'nn.functional.nll_loss', 'nn.functional.cross_entropy', 'binary_cross_entropy',
            # hermitian=True reads one triangle of a non-symmetric sample: no finite-difference reference
            'linalg.pinv'}
_XFAIL_COMPLEX = {
    'log2': "complex log2 of inf/nan samples: the primal differs from torch's (not a forward-AD question)",
    'sgn': "complex sgn of inf/nan samples: the primal differs from torch's (not a forward-AD question)",
    'nan_to_num': "no finite-difference reference across the replaced infinities",
    'silu': "torch's complex silu tangent is conj(f'(z)) * t, which finite differences contradict; ember gives "
            "f'(z) * t (checked by hand against central differences)",
}
# complex samples with no finite-difference reference
_SKIP_FD_COMPLEX = {'cumprod': "the dtype=float64 sample casts the complex input to real; torch's tangent there (which "
                               "ember's matches) is not the finite difference of the cast"}
# complex derivatives ember's backward formulas do not have (tests/test_complex_autograd.py's KNOWN): the forward
# derivative, derived from them ('transpose'), raises the same NotImplementedError. strict: fails once written
_NO_COMPLEX_BACKWARD = {'linalg.cholesky', 'linalg.qr', 'linalg.slogdet', 'slogdet', 'logdet'}
# known differences from torch, each with its reason
_XFAIL = {'nn.functional.cross_entropy': "with class weights and label smoothing ember divides the smoothing term by "
                                         "nll_loss's total_weight (not differentiable); torch by a differentiable sum "
                                         "of the weights, so a weight tangent counts in torch only"}
# inputs that must be symmetric: the tangent is made symmetric too (torch's and ember's formulas read different
# triangles of a non-symmetric one)
_SYMMETRIC = {'linalg.cholesky', 'linalg.eigh', 'linalg.eigvalsh', 'linalg_cholesky', 'linalg_eigh', 'linalg_eigvalsh',
              'linalg.pinv'}


def _cases():
    for name, info in sorted(OPS.items()):
        if info.grad and not info.random and 'float64' in info.grad_dtypes:
            for dtype in ('float64', 'complex'):
                if _torch_answers(info, dtype):     # otherwise there is no reference to compare with
                    yield pytest.param(info, dtype, id=name if dtype == 'float64' else f'{name}-complex')


def _samples(info, dtype):
    """(sample, args, kwargs, tangents of args, tangents of kwargs) for the samples that have a tangent."""
    for i, s in enumerate(info.samples('float64')):
        args, kwargs = materialize(s, 'float64', seed=i)
        if dtype == 'complex':
            rng = np.random.default_rng(i + 50)
            args, kwargs = complexify(args, rng), {k: complexify(v, rng) for k, v in kwargs.items()}
        targs, tkw = _tangents(args, kwargs, i, info.name in _SYMMETRIC)
        if any(t is not None for t in flat(targs) + flat(list(tkw.values()))):
            yield s, args, kwargs, targs, tkw


def _torch_answers(info, dtype):
    """Whether torch gives a forward derivative for some sample (many ops refuse complex tensors)."""
    for s, args, kwargs, targs, tkw in _samples(info, dtype):
        try:
            call(info, torch, to_lib(args, torch), to_lib(kwargs, torch))
            _jvp(info, torch, tfw, args, kwargs, targs, tkw)
            return True
        except Exception:
            continue
    return False



def _tangents(args, kwargs, seed, symmetric=False):
    """One random tangent per floating array argument (the same for both libraries)."""
    rng = np.random.default_rng(seed + 7)

    def conv(x):
        if isinstance(x, np.ndarray) and x.dtype.kind in 'fc':
            t = rng.uniform(-1, 1, x.shape).astype(x.dtype)
            if x.dtype.kind == 'c':
                t = t + 1j * rng.uniform(-1, 1, x.shape)
            if symmetric and t.ndim >= 2 and t.shape[-1] == t.shape[-2]:
                tT = np.swapaxes(t, -1, -2)      # Hermitian for a complex input: the other triangle is the conjugate
                return (t + (tT.conj() if x.dtype.kind == 'c' else tT)) / 2
            return t
        if isinstance(x, list):
            return [conv(y) for y in x]
        if isinstance(x, tuple):
            return tuple(conv(y) for y in x)
        return None
    return conv(list(args)), {k: conv(v) for k, v in kwargs.items()}


def _duals(lib, fw, x, t):
    if isinstance(x, list):
        return [_duals(lib, fw, a, b) for a, b in zip(x, t)]
    if isinstance(x, tuple):
        return tuple(_duals(lib, fw, a, b) for a, b in zip(x, t))
    if isinstance(x, dict):
        return {k: _duals(lib, fw, x[k], t[k]) for k in x}
    if isinstance(x, np.ndarray) and t is not None:
        return fw.make_dual(to_lib(x, lib), to_lib(t, lib))
    return to_lib(x, lib)


def _jvp(info, lib, fw, args, kwargs, targs, tkw):
    with fw.dual_level():
        out = call(info, lib, _duals(lib, fw, args, targs), _duals(lib, fw, kwargs, tkw))
        res = []
        for o in flat(out):
            if isinstance(o, (torch.Tensor, ember.Tensor)) and (o.dtype.is_floating_point or o.dtype.is_complex):
                p, t = fw.unpack_dual(o)
                res.append((as_np(p).copy(), None if t is None else as_np(t).copy()))
        return res


def _shift(x, t, eps):
    if isinstance(x, list):
        return [_shift(a, b, eps) for a, b in zip(x, t)]
    if isinstance(x, tuple):
        return tuple(_shift(a, b, eps) for a, b in zip(x, t))
    if isinstance(x, np.ndarray) and t is not None:
        return np.asarray(x + eps * t)
    return x


def _values(info, args, kwargs):
    out = call(info, ember, to_lib(args, ember), to_lib(kwargs, ember))
    return [as_np(o).copy() for o in flat(out) if isinstance(o, ember.Tensor) and (o.dtype.is_floating_point or
                                                                                    o.dtype.is_complex)]


@pytest.mark.parametrize('info,dtype', list(_cases()))
def test_jvp_matches_torch_and_finite_differences(info, dtype):
    if info.name in _XFAIL:
        pytest.xfail(_XFAIL[info.name])
    if dtype == 'complex' and info.name in _XFAIL_COMPLEX:
        pytest.xfail(_XFAIL_COMPLEX[info.name])
    if dtype == 'complex' and info.name in _NO_COMPLEX_BACKWARD:
        with pytest.raises(NotImplementedError, match='for complex inputs is not implemented'):
            for s, args, kwargs, targs, tkw in _samples(info, dtype):
                _jvp(info, ember, efw, args, kwargs, targs, tkw)
        return
    checked = 0
    for s, args, kwargs, targs, tkw in _samples(info, dtype):
        try:
            call(info, torch, to_lib(args, torch), to_lib(kwargs, torch))     # an error sample: test_ops checks it
            expect = _jvp(info, torch, tfw, args, kwargs, targs, tkw)
        except Exception:       # torch has no forward derivative here, or the sample is an error sample
            continue
        got = _jvp(info, ember, efw, args, kwargs, targs, tkw)
        assert len(got) == len(expect), f'{info.name}({s}): {len(got)} outputs vs {len(expect)}'
        for k, ((ep, et), (tp, tt)) in enumerate(zip(got, expect)):
            np.testing.assert_allclose(ep, tp, atol=1e-6, rtol=1e-6, equal_nan=True, err_msg=f'{info.name}({s}) primal {k}')
            if tt is None:      # torch gives no tangent (scatter_reduce 'prod'): the finite differences judge
                continue
            if not np.any(tt) and not np.any(np.isnan(tt)):
                assert et is None or np.allclose(et, 0, atol=1e-6), f'{info.name}({s}) tangent {k} should be zero'
                continue
            assert et is not None, f'{info.name}({s}): no tangent for output {k}'
            finite = np.isfinite(tp)        # where the value is infinite the tangent is a matter of convention
            et, tt = (et[finite], tt[finite]) if et.shape == tt.shape else (et, tt)
            np.testing.assert_allclose(et, tt, atol=1e-6, rtol=1e-5, equal_nan=True,
                                       err_msg=f'{info.name}({s}) tangent {k}')
        checked += 1
        if info.name in _SKIP_FD or not got or dtype == 'complex' and info.name in _SKIP_FD_COMPLEX:
            continue
        eps = 1e-6
        plus = _values(info, _shift(args, targs, eps), {k: _shift(v, tkw[k], eps) for k, v in kwargs.items()})
        minus = _values(info, _shift(args, targs, -eps), {k: _shift(v, tkw[k], -eps) for k, v in kwargs.items()})
        for k, ((ep, et), a, b) in enumerate(zip(got, plus, minus)):
            if et is None or a.shape != ep.shape or not np.all(np.isfinite(a - b)) or ep.dtype not in (np.float64, np.complex128):
                continue
            fd = (a - b) / (2 * eps)
            # a finite difference across a kink (max ties, abs at 0, sort swaps) is no reference: only where the
            # two one-sided quotients agree
            fwd = (a - ep) / eps
            smooth = np.abs(fwd - fd) < 1e-3 * (1 + np.abs(fd))
            np.testing.assert_allclose(et[smooth], fd[smooth], atol=1e-4, rtol=1e-4,
                                       err_msg=f'{info.name}({s}) tangent {k} vs finite differences')
    assert checked, f'{info.name} [{dtype}]: torch answers some sample (see _cases) but none was compared'
