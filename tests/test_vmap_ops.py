"""vmap per operator, generated from the OpInfo records: every floating tensor argument of a sample gets a batch of
3 (the sample and two perturbed copies), and vmap's result must equal the Python loop over the batch; which
operators ran on a batching rule and which on the slow fallback is recorded (the fallback must be right too)."""
import os
import warnings

import numpy as np
import pytest

import ember
from ember.func import vmap
from opinfo import OPS
from _harness import materialize, to_lib, call, flat, as_np

NB = 3
# OpInfo ops whose samples reach the per-sample fallback (torch's performance warning), and through which
# operators: a case no rule covers (data-dependent shapes, transposed convolutions, batched class weights, 0-d or
# empty samples of whole-tensor reductions, slices or masks among index_put's indices, ...). Any other fallback
# fails the test: a rule that stops applying is a regression. `python bench/vmap_coverage.py` lists the operators
# with no rule at all; test_fallback_operator_count bounds how many there are.
_SLOW = {
    '_trilinear': {'aten::_trilinear'},
    'aminmax': {'aten::aminmax'},
    'argwhere': {'aten::nonzero'},
    'bilinear': {'aten::_trilinear'},
    'combinations': {'aten::masked_select'},
    'conv_transpose1d': {'aten::convolution'},
    'conv_transpose2d': {'aten::convolution'},
    'conv_transpose3d': {'aten::convolution'},
    'convolution': {'aten::convolution'},
    'embedding_renorm': {'aten::embedding_renorm'},
    # batched quantization parameters (one scale per sample): per sample; a shared scale has a rule
    'fake_quantize_per_channel_affine': {'aten::fake_quantize_per_channel_affine_cachemask'},
    'fake_quantize_per_tensor_affine': {'aten::_fake_quantize_per_tensor_affine_cachemask_tensor_qparams'},
    'histc': {'aten::histc'},
    'index': {'aten::index.Tensor'},
    'index_put': {'aten::index_put'},
    'linalg.qr': {'aten::linalg_qr'},
    'linalg.solve': {'aten::_linalg_solve'},
    'masked_scatter': {'aten::masked_scatter'},
    'masked_select': {'aten::masked_select'},
    'median': {'aten::median'},
    'nanmedian': {'aten::nanmedian'},
    'native_batch_norm': {'aten::native_batch_norm'},
    'nll_loss2d_backward': {'aten::nll_loss2d_backward'},
    'nll_loss2d_forward': {'aten::nll_loss2d_forward'},
    'nll_loss_backward': {'aten::nll_loss_backward'},
    'nll_loss_forward': {'aten::nll_loss_forward'},
    'nn.functional.batch_norm': {'aten::native_batch_norm'},
    'nn.functional.cross_entropy': {'aten::nll_loss2d_forward', 'aten::nll_loss_forward'},
    'nn.functional.nll_loss': {'aten::nll_loss2d_forward'},
    'nn.functional.pdist': {'aten::_pdist_forward'},
    'nonzero': {'aten::nonzero'},
    'linalg.ldl_solve': {'aten::linalg_ldl_solve'},
    'unfold_backward': {'aten::unfold_backward'},
}
# operators with no batching rule: 126 before issue 13's batching work, 26 after; then linalg_ldl_solve (a LAPACK
# solve of three batched operands) and the random _sample_dirichlet, per sample as binomial and multinomial are
# then the Sobol engine's four state operators (torch.quasirandom: no tensor a user vmaps over; torch has no
# batching rule for them either), and the fused optimizer steps _fused_adam_/_fused_adamw_ (an optimizer step is
# not vmapped; torch has no rule for them either)
_MAX_FALLBACK_OPERATORS = 34


def _floating_sample(info):
    """Whether some sample of the op has a floating tensor argument with dimensions, the thing vmap batches."""
    for i, s in enumerate(info.samples('float64')):
        args, _ = materialize(s, 'float64', seed=i)
        if any(isinstance(a, np.ndarray) and a.dtype.kind == 'f' and a.ndim > 0 for a in args):
            return True
    return False


# ops with float64 samples that vmap has nothing to batch in: a Python bool per call, or integer-only ops whose
# float64 samples are all error samples (test_ops checks those errors)
_NOTHING_TO_BATCH = {'allclose', 'equal', 'gcd', 'lcm', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_not',
                     'bitwise_left_shift', 'bitwise_right_shift',
                     'linalg.ldl_factor'}     # reads its info into Python to raise (vmap refuses, as torch's)


def _cases():
    for name, info in sorted(OPS.items()):
        if 'float64' in info.dtypes and not info.random and name not in _NOTHING_TO_BATCH and _floating_sample(info):
            yield pytest.param(info, id=name)


def _batch(x, rng):
    if isinstance(x, np.ndarray) and x.dtype.kind == 'f' and x.ndim > 0:
        # each sample keeps the argument's dtype (fake quantization's float32 scales stay float32)
        return np.stack([x] + [(x + rng.uniform(-0.1, 0.1, x.shape)).astype(x.dtype) for _ in range(NB - 1)])
    return None


@pytest.mark.parametrize('info', list(_cases()))
def test_vmap_matches_loop(info):
    checked = 0
    slow = set()
    for i, s in enumerate(info.samples('float64')):
        args, kwargs = materialize(s, 'float64', seed=i)
        rng = np.random.default_rng(i)
        batched = [_batch(a, rng) for a in args]
        if all(b is None for b in batched):
            continue
        try:
            per = [call(info, ember, to_lib([b[k] if b is not None else a for a, b in zip(args, batched)], ember),
                        to_lib(kwargs, ember)) for k in range(NB)]
        except Exception:       # an error sample: test_ops checks it
            continue
        outs = [flat(p) for p in per]
        if not all(isinstance(o, ember.Tensor) for o in outs[0]):
            continue        # Python values per sample (item, tolist): vmap cannot batch them, as torch's
        in_dims = tuple(0 if b is not None else None for b in batched)
        vargs = [to_lib(b if b is not None else a, ember) for a, b in zip(args, batched)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            try:
                got = flat(vmap(lambda *xs: call(info, ember, list(xs), to_lib(kwargs, ember)), in_dims=in_dims)(*vargs))
            except RuntimeError as e:     # a batched value read into Python (quantile's q): refused, as torch does
                assert "calling .item() on a Tensor" in str(e), e
                continue
        slow |= {str(w.message).split('batching rule for ')[1].split('. ')[0] for w in caught
                 if 'performance drop' in str(w.message)}
        assert len(got) == len(outs[0]), f'{info.name}({s}): {len(got)} outputs vs {len(outs[0])}'
        for k, g in enumerate(got):
            expect = np.stack([as_np(o[k]) for o in outs])
            assert tuple(g.shape) == expect.shape, f'{info.name}({s}) output {k}: {tuple(g.shape)} vs {expect.shape}'
            np.testing.assert_allclose(as_np(g), expect, atol=1e-9, rtol=1e-7, equal_nan=True,
                                       err_msg=f'{info.name}({s}) output {k}')
        checked += 1
    assert checked, f'{info.name}: no sample was compared'
    if os.environ.get('EMBER_VMAP_FALLBACK_LOG'):
        with open(os.environ['EMBER_VMAP_FALLBACK_LOG'], 'a') as f:
            f.write(f"{info.name}\t{' '.join(sorted(slow))}\n")
    assert slow <= _SLOW.get(info.name, set()), \
        f'{info.name}: ran per sample (the fallback) for {sorted(slow - _SLOW.get(info.name, set()))}'


def test_fallback_operator_count():
    """The operators that take a tensor and have no batching rule (bench/vmap_coverage.py) stay few."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / 'bench' / 'vmap_coverage.py'
    spec = importlib.util.spec_from_file_location('vmap_coverage', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    names = mod.fallback_operators()
    assert len(names) > 0       # the count is computed (a broken import would give none)
    assert len(names) <= _MAX_FALLBACK_OPERATORS, f'{len(names)} operators without a batching rule: {names}'
    for name in ('gather', 'scatter.src', 'index_select', 'index_add', 'cat', 'stack', 'where.self', 'cumsum', 'sort',
                 'topk', 'linalg_vector_norm', 'convolution', 'embedding', 'nll_loss_forward', 'einsum', 'addmm'):
        assert name not in names, name
