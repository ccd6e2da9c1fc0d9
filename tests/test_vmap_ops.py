"""vmap per operator, generated from the OpInfo records: every floating tensor argument of a sample gets a batch of
3 (the sample and two perturbed copies), and vmap's result must equal the Python loop over the batch; which
operators ran on a batching rule and which on the slow fallback is recorded (the fallback must be right too)."""
import warnings

import numpy as np
import pytest

import ember
from ember.func import vmap
from opinfo import OPS
from _harness import materialize, to_lib, call, flat, as_np

NB = 3


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
                     'bitwise_left_shift', 'bitwise_right_shift'}


def _cases():
    for name, info in sorted(OPS.items()):
        if 'float64' in info.dtypes and not info.random and name not in _NOTHING_TO_BATCH and _floating_sample(info):
            yield pytest.param(info, id=name)


def _batch(x, rng):
    if isinstance(x, np.ndarray) and x.dtype.kind == 'f' and x.ndim > 0:
        return np.stack([x] + [x + rng.uniform(-0.1, 0.1, x.shape) for _ in range(NB - 1)])
    return None


@pytest.mark.parametrize('info', list(_cases()))
def test_vmap_matches_loop(info):
    checked = 0
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
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            try:
                got = flat(vmap(lambda *xs: call(info, ember, list(xs), to_lib(kwargs, ember)), in_dims=in_dims)(*vargs))
            except RuntimeError as e:     # a batched value read into Python (quantile's q): refused, as torch does
                assert "calling .item() on a Tensor" in str(e), e
                continue
        assert len(got) == len(outs[0]), f'{info.name}({s}): {len(got)} outputs vs {len(outs[0])}'
        for k, g in enumerate(got):
            expect = np.stack([as_np(o[k]) for o in outs])
            assert tuple(g.shape) == expect.shape, f'{info.name}({s}) output {k}: {tuple(g.shape)} vs {expect.shape}'
            np.testing.assert_allclose(as_np(g), expect, atol=1e-9, rtol=1e-7, equal_nan=True,
                                       err_msg=f'{info.name}({s}) output {k}')
        checked += 1
    assert checked, f'{info.name}: no sample was compared'
