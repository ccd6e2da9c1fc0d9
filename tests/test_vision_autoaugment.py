"""ember.vision.transforms' automatic augmentation (AutoAugment, RandAugment, TrivialAugmentWide, AugMix) and the
functional ops they apply: each op's pixels against hand computations and Pillow, the policies' tables and
magnitude bins against torch's values, and the ops and magnitudes a seed chooses against the same draws made with
torch's RNG in torchvision's order (NOTE [augmentation draws])."""
import math

import numpy as np
import pytest
import torch
from PIL import Image, ImageEnhance, ImageOps

import ember
from ember.vision import transforms as T
from ember.vision.transforms import autoaugment as AA
from ember.vision.transforms import functional as F
from ember.vision.transforms import v2


def _hwc(h=6, w=7, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (h, w, 3)).astype(np.uint8)


def _chw(h=6, w=7, seed=0):
    return ember.from_numpy(np.ascontiguousarray(_hwc(h, w, seed).transpose(2, 0, 1)))


def _pil_chw(im):
    return np.array(im).transpose(2, 0, 1)


# --- functional ops ---------------------------------------------------------------------

def test_invert_posterize_solarize_by_hand_and_pil():
    a, t, im = _hwc().transpose(2, 0, 1), _chw(), Image.fromarray(_hwc())
    assert F.invert(t).dtype == ember.uint8
    np.testing.assert_array_equal(F.invert(t).numpy(), 255 - a)
    np.testing.assert_array_equal(_pil_chw(F.invert(im)), 255 - a)
    for bits in (1, 3, 8):
        np.testing.assert_array_equal(F.posterize(t, bits).numpy(), a & (256 - 2 ** (8 - bits)))
        np.testing.assert_array_equal(_pil_chw(F.posterize(im, bits)), a & (256 - 2 ** (8 - bits)))
    assert not F.posterize(t, 0).numpy().any()
    np.testing.assert_array_equal(F.solarize(t, 100).numpy(), np.where(a >= 100, 255 - a, a))
    np.testing.assert_array_equal(_pil_chw(F.solarize(im, 100)), np.where(a >= 100, 255 - a, a))
    x = ember.tensor([[[0.25, 0.75]]])
    assert F.invert(x).tolist() == [[[0.75, 0.25]]]
    assert F.solarize(x, 0.5).tolist() == [[[0.25, 0.25]]]


def test_op_errors_match_torchvision():
    x = ember.rand(3, 4, 4)
    with pytest.raises(TypeError, match=r"Only torch.uint8 image tensors are supported, but found ember.float32"):
        F.posterize(x, 2)
    with pytest.raises(ValueError, match=r"The number if bits should be between 0 and 8. Got 9"):
        F.posterize(_chw(), 9)
    with pytest.raises(TypeError, match=r"Threshold should be less than bound of img."):
        F.solarize(x, 1.5)
    with pytest.raises(TypeError, match=r"Input image tensor should have 3 or 4 dimensions, but found 5"):
        F.equalize(ember.zeros(1, 1, 3, 4, 4, dtype=ember.uint8))
    with pytest.raises(TypeError, match=r"permitted channel values are \[1, 3\], but found 2"):
        F.invert(ember.zeros(2, 4, 4))
    with pytest.raises(ValueError, match=r"sharpness_factor \(-1\) is not non-negative."):
        F.adjust_sharpness(x, -1)


def test_autocontrast_stretches_each_channel():
    a = _hwc().transpose(2, 0, 1).astype(np.float32)
    a[2] = 17      # a constant channel stays as it is
    t = ember.from_numpy(a.astype(np.uint8))
    lo, hi = a.min(axis=(1, 2), keepdims=True), a.max(axis=(1, 2), keepdims=True)
    scale = np.where(hi > lo, np.float32(255) / np.where(hi > lo, hi - lo, 1), 1).astype(np.float32)
    lo = np.where(hi > lo, lo, 0)
    want = np.clip((a - lo) * scale, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(F.autocontrast(t).numpy(), want)
    assert F.autocontrast(t).numpy()[2].tolist() == a[2].astype(np.uint8).tolist()
    f = ember.tensor([[[0.2, 0.4], [0.6, 0.3]]])
    np.testing.assert_allclose(F.autocontrast(f).numpy(), [[[0.0, 0.5], [1.0, 0.25]]], atol=1e-6)
    im = Image.fromarray(_hwc())
    assert np.array_equal(np.array(F.autocontrast(im)), np.array(ImageOps.autocontrast(im)))


def test_equalize_matches_pillow_and_a_hand_histogram():
    for seed in range(3):
        im = Image.fromarray(_hwc(9, 11, seed))
        t = ember.from_numpy(_pil_chw(im).copy())
        np.testing.assert_array_equal(F.equalize(t).numpy(), _pil_chw(ImageOps.equalize(im)))
        np.testing.assert_array_equal(np.array(F.equalize(im)), np.array(ImageOps.equalize(im)))
    # two levels, 3 pixels of 10 and 1 of 200: step = 3 // 255 = 0, so the channel is returned unchanged
    few = ember.tensor([[[10, 10], [10, 200]]], dtype=ember.uint8)
    assert F.equalize(few).tolist() == few.tolist()
    batch = ember.stack([_chw(seed=1), _chw(seed=2)])
    assert F.equalize(batch).tolist() == ember.stack([F.equalize(_chw(seed=1)), F.equalize(_chw(seed=2))]).tolist()


def test_adjust_sharpness_blends_with_the_smoothed_interior():
    a = _hwc().transpose(2, 0, 1).astype(np.float32)
    k = np.ones((3, 3), np.float32)
    k[1, 1] = 5
    k /= 13
    smooth = a.copy()
    for c in range(3):
        for i in range(1, a.shape[1] - 1):
            for j in range(1, a.shape[2] - 1):
                smooth[c, i, j] = np.round((a[c, i - 1:i + 2, j - 1:j + 2] * k).sum())
    for factor in (0.0, 0.3, 1.8):
        want = np.clip(np.float32(factor) * a + np.float32(1 - factor) * smooth, 0, 255).astype(np.uint8)
        got = F.adjust_sharpness(_chw(), factor).numpy()
        assert np.abs(got.astype(int) - want).max() <= 1 and (got == want).mean() > 0.95
    im = Image.fromarray(_hwc())
    assert np.array_equal(np.array(F.adjust_sharpness(im, 0.3)), np.array(ImageEnhance.Sharpness(im).enhance(0.3)))
    tiny = ember.ones(3, 2, 5, dtype=ember.uint8)
    assert F.adjust_sharpness(tiny, 2.0) is tiny


def test_affine_translate_and_shear_by_hand():
    a = _hwc().transpose(2, 0, 1)
    t = ember.from_numpy(a.copy())
    moved = F.affine(t, angle=0.0, translate=[2, -1], scale=1.0, shear=[0.0, 0.0]).numpy()
    want = np.zeros_like(a)
    want[:, :-1, 2:] = a[:, 1:, :-2]
    np.testing.assert_array_equal(moved, want)
    filled = F.affine(t, 0.0, [2, 0], 1.0, [0.0, 0.0], fill=[7.0, 8.0, 9.0]).numpy()
    assert filled[:, :, :2].reshape(3, -1).tolist() == [[7] * 12, [8] * 12, [9] * 12]
    # ShearX about the top-left corner, slope 0.5: the output pixel centred at (x + 0.5, y + 0.5) samples the input
    # at x + 0.5 + 0.5 (y + 0.5), i.e. the pixel x + 0.5 (y + 0.5) rounded (never a tie here)
    sheared = F.affine(t, 0.0, [0, 0], 1.0, [math.degrees(math.atan(0.5)), 0.0], center=[0, 0]).numpy()
    want = np.zeros_like(a)
    for y in range(a.shape[1]):
        for x in range(a.shape[2]):
            sx = int(np.rint(x + 0.5 * (y + 0.5)))
            if 0 <= sx < a.shape[2]:
                want[:, y, x] = a[:, y, sx]
    np.testing.assert_array_equal(sheared, want)
    im = Image.fromarray(_hwc())
    pil = F.affine(im, 0.0, [2, -1], 1.0, [0.0, 0.0])
    assert np.array_equal(_pil_chw(pil), moved)


def test_affine_tensor_equals_torch_grid_sample():
    """The same sampling in torch ops: affine_grid with the inverse matrix (as torchvision builds it) and
    grid_sample, for a rotation + shear + scale, nearest and bilinear, on a batch of float images."""
    x = np.random.RandomState(3).rand(2, 3, 9, 8).astype(np.float32)
    angle, translate, scale, shear = 20.0, [1, 2], 1.2, [10.0, -5.0]
    m = F._inverse_affine_matrix([0.0, 0.0], angle, translate, scale, shear)
    theta = torch.tensor([[m[0], m[1] * 9 / 8, m[2] * 2 / 8], [m[3] * 8 / 9, m[4], m[5] * 2 / 9]])
    grid = torch.nn.functional.affine_grid(theta.expand(2, 2, 3), [2, 3, 9, 8], align_corners=False)
    for mode in ('nearest', 'bilinear'):
        want = torch.nn.functional.grid_sample(torch.from_numpy(x), grid, mode=mode, align_corners=False)
        got = F.affine(ember.from_numpy(x), angle, translate, scale, shear, interpolation=T.InterpolationMode(mode))
        diff = np.abs(got.numpy() - want.numpy())
        assert diff.shape == (2, 3, 9, 8) and (diff < 1e-5).mean() > 0.97


# --- the policies -------------------------------------------------------------------------

def test_policy_tables():
    tables = {p: T.AutoAugment(p).policies for p in T.AutoAugmentPolicy}
    assert [p.value for p in T.AutoAugmentPolicy] == ['imagenet', 'cifar10', 'svhn']
    assert all(len(t) == 25 for t in tables.values())
    imagenet, cifar, svhn = tables.values()
    assert imagenet[0] == (('Posterize', 0.4, 8), ('Rotate', 0.6, 9))
    assert imagenet[1] == (('Solarize', 0.6, 5), ('AutoContrast', 0.6, None))
    assert imagenet[24] == (('Equalize', 0.8, None), ('Equalize', 0.6, None))
    assert cifar[3] == (('ShearY', 0.5, 8), ('TranslateY', 0.7, 9))
    assert cifar[14] == (('Solarize', 0.5, 2), ('Invert', 0.0, None))
    assert svhn[15] == (('Invert', 0.8, None), ('TranslateY', 0.0, 2))
    assert svhn[24] == (('ShearX', 0.7, 2), ('Invert', 0.1, None))
    space = T.AutoAugment()._augmentation_space(10, (32, 32))
    for table in tables.values():
        for step in table:
            for name, p, magnitude_id in step:
                assert name in space and 0.0 <= p <= 1.0
                assert (magnitude_id is None) == (space[name][0].ndim == 0)
    with pytest.raises(ValueError, match="The provided policy imagenet is not recognized."):
        T.AutoAugment('imagenet')


def _bins(t):
    return t.numpy().tolist()


def test_magnitude_bins_equal_torchs_values():
    """The bins are torch's float32 values to the bit (ember.linspace follows torch's CPU kernel)."""
    h, w = 20, 33
    lin = lambda hi, n=31: torch.linspace(0.0, hi, n).tolist()     # noqa: E731
    ra = T.RandAugment()._augmentation_space(31, (h, w))
    assert list(ra) == ['Identity', 'ShearX', 'ShearY', 'TranslateX', 'TranslateY', 'Rotate', 'Brightness', 'Color',
                        'Contrast', 'Sharpness', 'Posterize', 'Solarize', 'AutoContrast', 'Equalize']
    assert _bins(ra['ShearX'][0]) == lin(0.3) and _bins(ra['Brightness'][0]) == lin(0.9)
    assert _bins(ra['TranslateX'][0]) == lin(150.0 / 331.0 * w) and _bins(ra['TranslateY'][0]) == lin(150.0 / 331.0 * h)
    assert _bins(ra['Solarize'][0]) == torch.linspace(255.0, 0.0, 31).tolist()
    assert _bins(ra['Posterize'][0]) == (8 - (torch.arange(31) / 7.5).round().int()).tolist()
    assert ra['Posterize'][0].dtype == ember.int32 and ra['Identity'][0].ndim == 0
    assert [signed for _, signed in ra.values()] == [False] + [True] * 9 + [False] * 4
    ta = T.TrivialAugmentWide()._augmentation_space(31)
    assert list(ta) == list(ra)
    assert _bins(ta['ShearY'][0]) == lin(0.99) and _bins(ta['Rotate'][0]) == lin(135.0)
    assert _bins(ta['TranslateY'][0]) == lin(32.0)
    assert _bins(ta['Posterize'][0]) == (8 - (torch.arange(31) / 5).round().int()).tolist()
    am = T.AugMix()._augmentation_space(10, (h, w))
    assert list(am) == ['ShearX', 'ShearY', 'TranslateX', 'TranslateY', 'Rotate', 'Posterize', 'Solarize',
                        'AutoContrast', 'Equalize', 'Brightness', 'Color', 'Contrast', 'Sharpness']
    assert _bins(am['TranslateX'][0]) == lin(w / 3.0, 10)
    assert _bins(am['Posterize'][0]) == (4 - (torch.arange(10) / (9 / 4)).round().int()).tolist()
    assert list(T.AugMix(all_ops=False)._augmentation_space(10, (h, w))) == list(am)[:9]
    aa = T.AutoAugment()._augmentation_space(10, (h, w))
    assert list(aa) == list(ra)[1:] + ['Invert'] and _bins(aa['Rotate'][0]) == lin(30.0, 10)


def test_linspace_values_equal_torchs():
    for dtype in ('float32', 'float64', 'float16', 'bfloat16', 'int64'):
        for start, end in ((0.0, 0.9), (-3.7, 11.1), (255.0, 0.0), (2, 250)):
            for steps in (0, 1, 2, 5, 31, 100, 1001):
                e = ember.linspace(start, end, steps, dtype=getattr(ember, dtype))
                t = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
                assert e.dtype == getattr(ember, dtype) and e.shape == t.shape
                assert e.double().tolist() == t.double().tolist(), (dtype, start, end, steps)


# --- the draws ----------------------------------------------------------------------------

@pytest.fixture
def recorded(monkeypatch):
    """The (op, magnitude) pairs the transforms apply, in order."""
    calls = []
    apply = AA._apply_op

    def record(img, op_name, magnitude, interpolation, fill):
        calls.append((op_name, magnitude))
        return apply(img, op_name, magnitude, interpolation, fill)
    monkeypatch.setattr(AA, '_apply_op', record)
    return calls


def _signed_ops(space):
    return {name for name, (_, signed) in space.items() if signed}


def test_randaugment_draws_torchvisions_ops(recorded):
    """torchvision's RandAugment: per op, randint(14, (1,)) for the op, then randint(2, (1,)) for the sign of a
    signed op; the magnitude is bin ``magnitude`` of the op's bins."""
    img = _chw(16, 20)
    space = T.RandAugment()._augmentation_space(31, (16, 20))
    names, signed = list(space), _signed_ops(space)
    for seed in range(25):
        ember.manual_seed(seed)
        T.RandAugment(num_ops=3, magnitude=13)(img)
        torch.manual_seed(seed)
        want = []
        for _ in range(3):
            name = names[int(torch.randint(len(names), (1,)).item())]
            bins = space[name][0]
            magnitude = float(bins[13].item()) if bins.ndim > 0 else 0.0
            if name in signed and torch.randint(2, (1,)):
                magnitude = -magnitude
            want.append((name, magnitude))
        assert recorded == want, seed
        recorded.clear()


def test_trivialaugment_draws_torchvisions_ops(recorded):
    img = _chw(16, 20)
    space = T.TrivialAugmentWide()._augmentation_space(31)
    names, signed = list(space), _signed_ops(space)
    seen = set()
    for seed in range(40):
        ember.manual_seed(seed)
        T.TrivialAugmentWide()(img)
        torch.manual_seed(seed)
        name = names[int(torch.randint(len(names), (1,)).item())]
        bins = space[name][0]
        magnitude = float(bins[torch.randint(31, (1,), dtype=torch.long)].item()) if bins.ndim > 0 else 0.0
        if name in signed and torch.randint(2, (1,)):
            magnitude = -magnitude
        assert recorded == [(name, magnitude)], seed
        seen.add(name)
        recorded.clear()
    assert len(seen) > 8


def test_autoaugment_draws_torchvisions_ops(recorded):
    """get_params: randint(25, (1,)) for the sub-policy, rand((2,)) for the probabilities, randint(2, (2,)) for
    the signs; an op runs when its probability draw is <= p."""
    img = _chw(16, 20)
    for policy in T.AutoAugmentPolicy:
        t = T.AutoAugment(policy)
        space = t._augmentation_space(10, (16, 20))
        applied = 0
        for seed in range(20):
            ember.manual_seed(seed)
            t(img)
            torch.manual_seed(seed)
            policy_id = int(torch.randint(25, (1,)).item())
            probs, signs = torch.rand((2,)), torch.randint(2, (2,))
            want = []
            for i, (name, p, magnitude_id) in enumerate(t.policies[policy_id]):
                if probs[i] <= p:
                    magnitude = float(space[name][0][magnitude_id].item()) if magnitude_id is not None else 0.0
                    if space[name][1] and signs[i] == 0:
                        magnitude = -magnitude
                    want.append((name, magnitude))
            assert recorded == want, (policy, seed)
            applied += len(want)
            recorded.clear()
        assert applied > 10


def test_augmix_draws_and_mixes_as_torchvision(recorded):
    """Two Dirichlet draws, then per chain randint(1, 4) for the depth and per op: the op, a bin below severity,
    the sign; the result is m0 * img + sum_i w_i * chain_i, cast back (truncated) to uint8."""
    img = _chw(16, 20)
    t = T.AugMix(interpolation=T.InterpolationMode.NEAREST)
    space = t._augmentation_space(10, (16, 20))
    names, signed = list(space), _signed_ops(space)
    for seed in range(8):
        ember.manual_seed(seed)
        out = t(img)
        torch.manual_seed(seed)
        m = torch._sample_dirichlet(torch.tensor([1.0, 1.0]).expand(1, -1))
        w = torch._sample_dirichlet(torch.tensor([1.0] * 3).expand(1, -1)) * m[:, 1].view(1, -1)
        want, chains = [], []
        for _ in range(3):
            depth = int(torch.randint(low=1, high=4, size=(1,)).item())
            for _ in range(depth):
                name = names[int(torch.randint(len(names), (1,)).item())]
                bins = space[name][0]
                magnitude = float(bins[torch.randint(3, (1,), dtype=torch.long)].item()) if bins.ndim > 0 else 0.0
                if name in signed and torch.randint(2, (1,)):
                    magnitude = -magnitude
                want.append((name, magnitude))
            chains.append(depth)
        assert recorded == want, seed
        # replay the chains with ember's ops to check the mixture
        ops, k, mix = iter(want), 0, m[0, 0].item() * img.double().numpy()
        for i, depth in enumerate(chains):
            aug = img.unsqueeze(0)
            for _ in range(depth):
                name, magnitude = next(ops)
                aug = AA._OPS[name](aug, magnitude, T.InterpolationMode.NEAREST, None)
            mix = mix + w[0, i].item() * aug[0].double().numpy()
        assert out.dtype == ember.uint8
        assert np.abs(out.numpy().astype(int) - mix.astype(np.uint8)).max() <= 1
        recorded.clear()


def test_same_seed_same_result_and_different_seeds_differ():
    img = _chw(16, 20)
    for make in (T.RandAugment, T.TrivialAugmentWide, T.AutoAugment, T.AugMix):
        outs = []
        for seed in (5, 5, 6, 7):
            ember.manual_seed(seed)
            outs.append(make()(img).numpy())
        assert np.array_equal(outs[0], outs[1])
        assert not all(np.array_equal(outs[0], o) for o in outs[2:]), make


# --- inputs, outputs, repr ------------------------------------------------------------------

@pytest.mark.parametrize('make', [T.RandAugment, T.TrivialAugmentWide, T.AutoAugment, T.AugMix,
                                  lambda: T.RandAugment(num_ops=4, magnitude=20, fill=5)])
def test_shapes_and_dtypes_preserved(make):
    ember.manual_seed(0)
    for seed in range(6):
        for x in (_chw(10, 12, seed), ember.stack([_chw(10, 12, seed), _chw(10, 12, seed + 1)]),
                  ember.zeros(1, 1, 10, 12, dtype=ember.uint8) + seed):
            out = make()(x)
            assert out.shape == x.shape and out.dtype == ember.uint8
        im = Image.fromarray(_hwc(10, 12, seed))
        out = make()(im)
        assert isinstance(out, Image.Image) and out.size == im.size and out.mode == 'RGB'


def test_float_images_and_every_op():
    x, u = ember.rand(2, 3, 8, 9), _chw(8, 9)
    im = Image.fromarray(_hwc(8, 9))
    for name in AA._OPS:
        for img in (x, u, im):
            if img is x and name in ('Posterize', 'Equalize'):
                with pytest.raises(TypeError, match="Only torch.uint8 image tensors are supported"):
                    AA._apply_op(img, name, 4.0, T.InterpolationMode.NEAREST, None)
                continue
            magnitude = {'Posterize': 4.0, 'Solarize': 0.5 if img is x else 128.0}.get(name, 0.3)
            out = AA._apply_op(img, name, magnitude, T.InterpolationMode.BILINEAR, [0.5] * 3 if img is x else None)
            if img is im:
                assert isinstance(out, Image.Image) and out.size == im.size
            else:
                assert out.shape == img.shape and out.dtype == img.dtype
    with pytest.raises(ValueError, match="The provided operator Blur is not recognized."):
        AA._apply_op(u, 'Blur', 0.0, T.InterpolationMode.NEAREST, None)


def test_repr_and_arguments():
    assert repr(T.RandAugment()) == ('RandAugment(num_ops=2, magnitude=9, num_magnitude_bins=31, '
                                     'interpolation=InterpolationMode.NEAREST, fill=None)')
    assert repr(T.AutoAugment(T.AutoAugmentPolicy.SVHN, fill=[1])) == \
        'AutoAugment(policy=AutoAugmentPolicy.SVHN, fill=[1])'
    assert repr(T.TrivialAugmentWide(num_magnitude_bins=11)) == \
        'TrivialAugmentWide(num_magnitude_bins=11, interpolation=InterpolationMode.NEAREST, fill=None)'
    assert repr(T.AugMix()) == ('AugMix(severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True, '
                                'interpolation=InterpolationMode.BILINEAR, fill=None)')
    with pytest.raises(ValueError, match=r"The severity must be between \[1, 10\]. Got 11 instead."):
        T.AugMix(severity=11)
    assert isinstance(T.RandAugment(), ember.nn.Module)
    assert v2.RandAugment is T.RandAugment and v2.AutoAugmentPolicy is T.AutoAugmentPolicy
    assert v2.functional.invert(_chw()).tolist() == F.invert(_chw()).tolist()
    composed = T.Compose([T.RandAugment(), T.ConvertImageDtype(ember.float32)])
    assert composed(_chw()).dtype == ember.float32
