"""ember.vision.transforms: TenCrop, RandomAffine, RandomPerspective, LinearTransformation and the random colour
ops (invert, equalize, solarize, posterize, autocontrast, sharpness), v1 and v2, and models' WeightsEnum.

PIL paths are compared with Pillow's ImageOps/ImageEnhance, tensor grids with torchvision's formulas written in
torch ops (grid_sample), and the random draws with the same calls made on torch's generator."""
import numpy as np
import pytest
import torch

import ember
from ember.vision import transforms as T
from ember.vision import tv_tensors
from ember.vision.transforms import functional as F
from ember.vision.transforms import v2

Image = pytest.importorskip('PIL.Image')
from PIL import ImageEnhance, ImageOps  # noqa: E402


def _arr(h=10, w=12, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (h, w, 3)).astype(np.uint8)


def _u8(h=10, w=12, seed=0):
    return ember.from_numpy(np.ascontiguousarray(_arr(h, w, seed).transpose(2, 0, 1)))


def _f32(h=10, w=12, seed=0):
    return _u8(h, w, seed).float() / 255


def _pil(h=10, w=12, seed=0):
    return Image.fromarray(_arr(h, w, seed))


def _np(x):
    return np.array(x) if isinstance(x, Image.Image) else x.numpy()


# (transform with p=1, functional form, Pillow's own call); the posterize/equalize tensor paths take uint8 only
COLOUR = [
    (lambda p: T.RandomInvert(p=p), F.invert, ImageOps.invert),
    (lambda p: T.RandomEqualize(p=p), F.equalize, ImageOps.equalize),
    (lambda p: T.RandomSolarize(128, p=p), lambda x: F.solarize(x, 128), lambda im: ImageOps.solarize(im, 128)),
    (lambda p: T.RandomPosterize(3, p=p), lambda x: F.posterize(x, 3), lambda im: ImageOps.posterize(im, 3)),
    (lambda p: T.RandomAutocontrast(p=p), F.autocontrast, ImageOps.autocontrast),
    (lambda p: T.RandomAdjustSharpness(2.0, p=p), lambda x: F.adjust_sharpness(x, 2.0),
     lambda im: ImageEnhance.Sharpness(im).enhance(2.0)),
]


@pytest.mark.parametrize('make, fn, pil_fn', COLOUR)
def test_colour_ops_pil_path_is_pillows(make, fn, pil_fn):
    im = _pil()
    out = make(1.0)(im)
    assert isinstance(out, Image.Image) and out.mode == 'RGB' and out.size == im.size
    assert np.array_equal(np.array(out), np.array(pil_fn(im)))


@pytest.mark.parametrize('make, fn, pil_fn', COLOUR)
def test_colour_ops_uint8_tensor_agrees_with_pillow(make, fn, pil_fn):
    x = _u8()
    out = make(1.0)(x)
    assert out.dtype == ember.uint8 and out.shape == x.shape
    ref = np.array(pil_fn(_pil())).transpose(2, 0, 1).astype(int)
    # torchvision's tensor kernels reproduce Pillow's; sharpness rounds its blend once more (off by one at most)
    assert np.abs(out.numpy().astype(int) - ref).max() <= 1


@pytest.mark.parametrize('make, fn, pil_fn', COLOUR)
def test_colour_ops_batched_tensor_is_per_image(make, fn, pil_fn):
    batch = ember.stack([_u8(seed=1), _u8(seed=2)])
    out = make(1.0)(batch)
    assert out.shape == batch.shape and out.dtype == ember.uint8
    for k in range(2):
        assert ember.equal(out[k], fn(batch[k]))


def test_colour_ops_float_tensors_follow_torchvisions_formulas():
    x = _f32()
    a = x.numpy()
    np.testing.assert_allclose(T.RandomInvert(p=1)(x).numpy(), 1.0 - a, atol=1e-7)
    np.testing.assert_allclose(T.RandomSolarize(0.5, p=1)(x).numpy(), np.where(a >= 0.5, 1.0 - a, a), atol=1e-7)
    lo, hi = a.min(axis=(1, 2), keepdims=True), a.max(axis=(1, 2), keepdims=True)
    auto = T.RandomAutocontrast(p=1)(x)
    np.testing.assert_allclose(auto.numpy(), np.clip((a - lo) / (hi - lo), 0, 1), atol=1e-6)
    sharp = T.RandomAdjustSharpness(2.0, p=1)(x)
    for out in (auto, sharp):
        assert out.dtype == ember.float32 and out.shape == x.shape
        assert float(out.min()) >= 0.0 and float(out.max()) <= 1.0
    # sharpness: blend with the 3×3 smoothed image inside a border kept as is
    k = torch.tensor([[1., 1., 1.], [1., 5., 1.], [1., 1., 1.]]) / 13
    t = torch.from_numpy(a)
    blur = t.clone()
    blur[:, 1:-1, 1:-1] = torch.nn.functional.conv2d(t[:, None], k[None, None])[:, 0]
    np.testing.assert_allclose(sharp.numpy(), (2.0 * t + (1 - 2.0) * blur).clamp(0, 1).numpy(), atol=1e-6)
    with pytest.raises(TypeError, match='uint8'):
        T.RandomPosterize(3, p=1)(x)
    with pytest.raises(TypeError, match='uint8'):
        T.RandomEqualize(p=1)(x)


@pytest.mark.parametrize('make', [c[0] for c in COLOUR] + [
    lambda p: T.RandomPerspective(p=p), lambda p: T.RandomHorizontalFlip(p=p)])
def test_p0_returns_the_input_and_p1_always_applies(make):
    for img in (_u8(), _pil()):
        ember.manual_seed(0)
        t0 = make(0.0)
        assert all(t0(img) is img for _ in range(5))
        t1 = make(1.0)
        assert all(t1(img) is not img for _ in range(5))


def test_random_colour_ops_draw_one_rand_per_call_like_torchvision():
    x = _u8()
    for seed in (0, 3):
        ember.manual_seed(seed)
        t = T.RandomInvert(p=0.5)
        applied = [not ember.equal(t(x), x) for _ in range(20)]
        torch.manual_seed(seed)
        assert applied == [torch.rand(1).item() < 0.5 for _ in range(20)]
        ember.manual_seed(seed)
        again = [not ember.equal(t(x), x) for _ in range(20)]
        assert again == applied


def test_reprs_are_torchvisions():
    assert repr(T.RandomInvert()) == 'RandomInvert(p=0.5)'
    assert repr(T.RandomPosterize(2, p=0.3)) == 'RandomPosterize(bits=2,p=0.3)'
    assert repr(T.RandomSolarize(100)) == 'RandomSolarize(threshold=100,p=0.5)'
    assert repr(T.RandomAdjustSharpness(2)) == 'RandomAdjustSharpness(sharpness_factor=2,p=0.5)'
    assert repr(T.RandomAffine(10, shear=5)) == 'RandomAffine(degrees=[-10.0, 10.0], shear=[-5.0, 5.0])'
    assert repr(T.TenCrop(4)) == 'TenCrop(size=(4, 4), vertical_flip=False)'
    assert repr(T.RandomPerspective()) == 'RandomPerspective(p=0.5)'


# --- TenCrop ----------------------------------------------------------------------------

@pytest.mark.parametrize('vertical', [False, True])
def test_ten_crop_is_five_crop_of_image_and_mirror(vertical):
    for img in (_u8(), _f32(), ember.stack([_u8(seed=1), _u8(seed=2)])):
        crops = T.TenCrop(4, vertical_flip=vertical)(img)
        assert len(crops) == 10 and all(c.shape[-2:] == (4, 4) and c.dtype == img.dtype for c in crops)
        flipped = F.vflip(img) if vertical else F.hflip(img)
        for a, b in zip(crops, F.five_crop(img, 4) + F.five_crop(flipped, 4)):
            assert ember.equal(a, b)
        assert ember.equal(crops[0], img[..., :4, :4])
    im = _pil()
    crops = F.ten_crop(im, [4, 6])
    assert len(crops) == 10 and all(c.size == (6, 4) for c in crops)
    assert np.array_equal(np.array(crops[5]), np.array(im.transpose(Image.FLIP_LEFT_RIGHT))[:4, :6])
    assert len(F.ten_crop(_u8(), [3])) == 10
    with pytest.raises(ValueError, match='bigger than input size'):
        F.ten_crop(_u8(), 20)


# --- RandomAffine / F.affine ------------------------------------------------------------

def test_random_affine_identity_parameters_give_the_input_back():
    for img in (_u8(), _f32(), ember.stack([_u8(seed=1), _u8(seed=2)])):
        assert ember.equal(T.RandomAffine(0)(img), img)
        assert ember.equal(T.RandomAffine(0, scale=(1, 1), shear=0)(img), img)
    im = _pil()
    assert np.array_equal(np.array(T.RandomAffine(0)(im)), np.array(im))


@pytest.mark.parametrize('tx, ty', [(2, 1), (-3, 2)])
def test_affine_translation_moves_pixels(tx, ty):
    x = _u8()
    h, w = x.shape[-2:]
    for img, get in ((x, lambda o: o.numpy()), (_pil(), lambda o: np.array(o).transpose(2, 0, 1))):
        out = get(F.affine(img, 0.0, [tx, ty], 1.0, [0.0, 0.0]))
        a = x.numpy()
        ys, xs = slice(max(ty, 0), h + min(ty, 0)), slice(max(tx, 0), w + min(tx, 0))
        src_y, src_x = slice(max(-ty, 0), h - max(ty, 0)), slice(max(-tx, 0), w - max(tx, 0))
        assert np.array_equal(out[:, ys, xs], a[:, src_y, src_x])
        uncovered = np.ones((h, w), bool)
        uncovered[ys, xs] = False
        assert (out[:, uncovered] == 0).all()


def test_random_affine_translation_follows_its_draws():
    x = _f32(12, 12)
    t = T.RandomAffine(0, translate=(0.25, 0.25), fill=0.5)
    ember.manual_seed(5)
    angle, (tx, ty), scale, shear = T.RandomAffine.get_params([0.0, 0.0], (0.25, 0.25), None, None, [12, 12])
    ember.manual_seed(5)
    out = t(x)
    assert angle == 0.0 and scale == 1.0 and shear == (0.0, 0.0) and abs(tx) <= 3 and abs(ty) <= 3
    assert ember.equal(out, F.affine(x, 0.0, [tx, ty], 1.0, [0.0, 0.0], fill=[0.5] * 3))


def test_random_affine_draws_torchvisions_calls_in_order():
    def torch_params(seed, degrees, translate, scale, shears, size):
        torch.manual_seed(seed)
        u = lambda lo, hi: float(torch.empty(1).uniform_(lo, hi).item())   # noqa: E731
        angle = u(degrees[0], degrees[1])
        tr = (int(round(u(-translate[0] * size[0], translate[0] * size[0]))),
              int(round(u(-translate[1] * size[1], translate[1] * size[1]))))
        sc = u(scale[0], scale[1])
        sh = (u(shears[0], shears[1]), u(shears[2], shears[3]))
        return angle, tr, sc, sh
    args = ([-30.0, 30.0], (0.2, 0.1), (0.8, 1.2), [-10.0, 10.0, -5.0, 5.0], [40, 30])
    for seed in (0, 1, 7):
        ember.manual_seed(seed)
        assert T.RandomAffine.get_params(*args) == torch_params(seed, *args)


def _torch_affine_grid(matrix, h, w):
    """torchvision's _gen_affine_grid in torch ops."""
    theta = torch.tensor(matrix, dtype=torch.float32).reshape(1, 2, 3)
    base = torch.empty(1, h, w, 3)
    base[..., 0].copy_(torch.linspace(-w * 0.5 + 0.5, w * 0.5 - 0.5, steps=w))
    base[..., 1].copy_(torch.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, steps=h).unsqueeze(-1))
    base[..., 2].fill_(1)
    rescaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h])
    return base.view(1, h * w, 3).bmm(rescaled).view(1, h, w, 2)


def _torch_grid_sample(x, grid, mode, fill):
    """torchvision's _apply_grid_transform (float input) in torch ops."""
    img = torch.from_numpy(x.numpy()).unsqueeze(0)
    img = torch.cat((img, torch.ones_like(img[:, :1])), dim=1)
    out = torch.nn.functional.grid_sample(img, grid, mode=mode, padding_mode='zeros', align_corners=False)
    mask, out = out[:, -1:].expand_as(out[:, :-1]), out[:, :-1]
    fill_img = torch.tensor(fill).view(1, -1, 1, 1).expand_as(out)
    if mode == 'nearest':
        out = torch.where(mask < 0.5, fill_img, out)
    else:
        out = out * mask + (1.0 - mask) * fill_img
    return out[0]


@pytest.mark.parametrize('mode', ['nearest', 'bilinear'])
def test_affine_tensor_matches_torchvisions_grid(mode):
    x = _f32(9, 11)
    params = (23.0, [1, -2], 0.9, [7.0, -4.0])
    out = F.affine(x, *params, interpolation=mode, fill=[0.2, 0.4, 0.6])
    matrix = F._inverse_affine_matrix([0.0, 0.0], *params)
    ref = _torch_grid_sample(x, _torch_affine_grid(matrix, 9, 11), mode, [0.2, 0.4, 0.6])
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-5)


# --- RandomPerspective / F.perspective --------------------------------------------------

def test_perspective_identity_corners_give_the_input_back():
    corners = [[0, 0], [11, 0], [11, 9], [0, 9]]
    x = _u8()
    for mode in ('nearest', 'bilinear'):
        assert ember.equal(F.perspective(x, corners, corners, mode), x)
        np.testing.assert_allclose(F.perspective(_f32(), corners, corners, mode).numpy(), _f32().numpy(), atol=1e-6)
        im = _pil()
        assert np.array_equal(np.array(F.perspective(im, corners, corners, mode)), np.array(im))
    assert ember.equal(T.RandomPerspective(distortion_scale=0.0, p=1.0)(x), x)


def test_perspective_shift_moves_pixels():
    x = _u8()
    start = [[0, 0], [11, 0], [11, 9], [0, 9]]
    end = [[px + 2, py + 1] for px, py in start]       # a pure translation by (2, 1)
    for img, get in ((x, lambda o: o.numpy()), (_pil(), lambda o: np.array(o).transpose(2, 0, 1))):
        out = get(F.perspective(img, start, end, 'nearest'))
        assert np.array_equal(out[:, 1:, 2:], x.numpy()[:, :-1, :-2])
        assert (out[:, 0] == 0).all() and (out[:, :, :2] == 0).all()


@pytest.mark.parametrize('mode', ['nearest', 'bilinear'])
def test_perspective_tensor_matches_torchvisions_grid(mode):
    x = _f32(9, 11)
    start, end = [[0, 0], [10, 0], [10, 8], [0, 8]], [[1, 2], [9, 0], [10, 7], [2, 8]]
    out = F.perspective(x, start, end, mode, fill=[0.1, 0.5, 0.9])
    c = F._get_perspective_coeffs(start, end)
    a = torch.zeros(8, 8, dtype=torch.float64)     # torchvision's least squares, in torch
    for i, (p1, p2) in enumerate(zip(end, start)):
        a[2 * i] = torch.tensor([p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]])
        a[2 * i + 1] = torch.tensor([0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]])
    ref_c = torch.linalg.lstsq(a, torch.tensor(start, dtype=torch.float64).view(8), driver='gels').solution
    np.testing.assert_allclose(c, ref_c.to(torch.float32).tolist(), rtol=1e-6, atol=1e-7)
    oh, ow = 9, 11
    t1 = torch.tensor([[[c[0], c[1], c[2]], [c[3], c[4], c[5]]]])
    t2 = torch.tensor([[[c[6], c[7], 1.0], [c[6], c[7], 1.0]]])
    base = torch.empty(1, oh, ow, 3)
    base[..., 0].copy_(torch.linspace(0.5, ow - 0.5, steps=ow))
    base[..., 1].copy_(torch.linspace(0.5, oh - 0.5, steps=oh).unsqueeze(-1))
    base[..., 2].fill_(1)
    g1 = base.view(1, oh * ow, 3).bmm(t1.transpose(1, 2) / torch.tensor([0.5 * ow, 0.5 * oh]))
    g2 = base.view(1, oh * ow, 3).bmm(t2.transpose(1, 2))
    grid = (g1 / g2 - 1.0).view(1, oh, ow, 2)
    ref = _torch_grid_sample(x, grid, mode, [0.1, 0.5, 0.9])
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-5)
    im = _pil(9, 11)
    pil_ref = im.transform(im.size, Image.PERSPECTIVE, c, Image.NEAREST if mode == 'nearest' else Image.BILINEAR)
    assert np.array_equal(np.array(F.perspective(im, start, end, mode)), np.array(pil_ref))


def test_random_perspective_draws_torchvisions_calls_in_order():
    def torch_draws(seed, w, h, d):
        torch.manual_seed(seed)
        coin = torch.rand(1).item()
        hw, hh = int(d * (w // 2)), int(d * (h // 2))
        r = lambda lo, hi: int(torch.randint(lo, hi, size=(1,)).item())    # noqa: E731
        tl = [r(0, hw + 1), r(0, hh + 1)]
        tr = [r(w - hw - 1, w), r(0, hh + 1)]
        br = [r(w - hw - 1, w), r(h - hh - 1, h)]
        bl = [r(0, hw + 1), r(h - hh - 1, h)]
        return coin, [tl, tr, br, bl]
    for seed in (0, 2, 9):
        ember.manual_seed(seed)
        coin = ember.rand(1).item()
        start, end = T.RandomPerspective.get_params(12, 10, 0.5)
        assert start == [[0, 0], [11, 0], [11, 9], [0, 9]]
        assert (coin, end) == torch_draws(seed, 12, 10, 0.5)


def test_random_perspective_all_inputs():
    for img in (_u8(), _f32(), ember.stack([_u8(seed=1), _u8(seed=2)])):
        ember.manual_seed(1)
        out = T.RandomPerspective(p=1.0, fill=0)(img)
        assert out.shape == img.shape and out.dtype == img.dtype
        assert float(out.min()) >= 0 and float(out.max()) <= (255 if img.dtype == ember.uint8 else 1.0)
        ember.manual_seed(1)
        assert ember.equal(T.RandomPerspective(p=1.0)(img), out)
    ember.manual_seed(1)
    im = T.RandomPerspective(p=1.0, interpolation=Image.NEAREST)(_pil())
    assert isinstance(im, Image.Image) and im.size == (12, 10)
    batch = ember.stack([_u8(seed=1), _u8(seed=2)])
    ember.manual_seed(4)
    out = T.RandomPerspective(p=1.0)(batch)
    ember.manual_seed(4)
    ember.rand(1)
    start, end = T.RandomPerspective.get_params(12, 10, 0.5)
    for k in range(2):       # one warp for the whole batch
        assert ember.equal(out[k], F.perspective(batch[k], start, end, fill=[0.0] * 3))


# --- LinearTransformation ---------------------------------------------------------------

def test_linear_transformation_is_torchvisions_formula():
    g = np.random.RandomState(0)
    m = ember.from_numpy(g.randn(12, 12).astype(np.float32))
    mean = ember.from_numpy(g.randn(12).astype(np.float32))
    x = ember.from_numpy(g.rand(2, 3, 2, 2).astype(np.float32))
    out = T.LinearTransformation(m, mean)(x)
    ref = (torch.from_numpy(x.numpy()).view(-1, 12) - torch.from_numpy(mean.numpy())) @ torch.from_numpy(m.numpy())
    assert out.shape == x.shape
    np.testing.assert_allclose(out.numpy(), ref.view(2, 3, 2, 2).numpy(), atol=1e-5)
    with pytest.raises(ValueError, match='should be square'):
        T.LinearTransformation(ember.zeros(3, 4), ember.zeros(3))
    with pytest.raises(ValueError, match='same length'):
        T.LinearTransformation(ember.zeros(3, 3), ember.zeros(4))
    with pytest.raises(ValueError, match='same dtype'):
        T.LinearTransformation(ember.zeros(3, 3), ember.zeros(3, dtype=ember.float64))
    with pytest.raises(ValueError, match='incompatible shape'):
        T.LinearTransformation(m, mean)(ember.zeros(1, 2, 2))


# --- v2, exports, WeightsEnum ---------------------------------------------------------------

NEW = ['TenCrop', 'RandomAffine', 'RandomInvert', 'RandomEqualize', 'RandomSolarize', 'RandomPosterize',
       'RandomPerspective', 'RandomAutocontrast', 'LinearTransformation', 'RandomAdjustSharpness']


def test_exported_from_transforms_and_v2():
    import ember.vision.transforms as tv1
    for name in NEW:
        assert name in tv1.__all__ and hasattr(tv1, name)
        assert name in v2.__all__ and hasattr(v2, name)
    for name in ('affine', 'perspective', 'ten_crop', 'five_crop'):
        assert callable(getattr(v2.functional, name))
    assert callable(F.ten_crop) and callable(F.perspective)


def test_v2_transforms_keep_tv_tensors_and_pass_masks_through_colour_ops():
    img = tv_tensors.Image(_u8())
    mask = tv_tensors.Mask(ember.ones(10, 12, dtype=ember.int64))
    for t, fn in ((v2.RandomInvert(p=1), F.invert), (v2.RandomEqualize(p=1), F.equalize),
                  (v2.RandomSolarize(128, p=1), lambda x: F.solarize(x, 128)),
                  (v2.RandomPosterize(3, p=1), lambda x: F.posterize(x, 3)),
                  (v2.RandomAutocontrast(p=1), F.autocontrast),
                  (v2.RandomAdjustSharpness(2.0, p=1), lambda x: F.adjust_sharpness(x, 2.0))):
        out_img, out_mask = t(img, mask)
        assert isinstance(out_img, tv_tensors.Image) and out_mask is mask
        assert ember.equal(out_img.as_subclass(ember.Tensor), fn(_u8()))
        assert v2.RandomInvert(p=0)(img) is img
    ember.manual_seed(3)
    out_img, out_mask = v2.RandomAffine(20, translate=(0.1, 0.1))(img, mask)
    assert isinstance(out_img, tv_tensors.Image) and isinstance(out_mask, tv_tensors.Mask)
    ember.manual_seed(3)
    angle, tr, sc, sh = T.RandomAffine.get_params([-20.0, 20.0], (0.1, 0.1), None, None, [12, 10])
    assert ember.equal(out_img.as_subclass(ember.Tensor), F.affine(_u8(), angle, tr, sc, sh, fill=[0.0] * 3))
    ember.manual_seed(3)
    out = v2.RandomPerspective(p=1.0)(img)
    ember.manual_seed(3)
    assert ember.equal(out.as_subclass(ember.Tensor), T.RandomPerspective(p=1.0)(_u8()))
    crops = v2.TenCrop(4)(img)
    assert len(crops) == 10 and all(isinstance(c, tv_tensors.Image) for c in crops)
    with pytest.raises(TypeError):
        v2.TenCrop(4)(img, mask)
    lt = v2.LinearTransformation(ember.eye(360), ember.zeros(360))
    out = lt(tv_tensors.Image(_f32()))
    assert isinstance(out, tv_tensors.Image) and ember.equal(out.as_subclass(ember.Tensor), _f32())
    with pytest.raises(TypeError, match='PIL'):
        lt(_pil())


def test_weights_enum():
    from ember.vision import models
    from ember.vision.models._api import Weights, WeightsEnum
    assert models.WeightsEnum is WeightsEnum and models.Weights is Weights
    w = models.ResNet18_Weights.IMAGENET1K_V1
    assert isinstance(w, WeightsEnum) and isinstance(w.value, Weights)
    assert w.url.endswith('.pth') and len(w.meta['categories']) == 1000 and w.transforms is None
    assert repr(w) == 'ResNet18_Weights.IMAGENET1K_V1'
    assert models.ResNet18_Weights.verify('IMAGENET1K_V1') is w

    class Mine(WeightsEnum):
        V1 = Weights(url='https://example.com/mine-v1.pth', transforms=None, meta={'acc': 0.5})
        V2 = Weights(url='https://example.com/mine-v2.pth', transforms=None, meta={'acc': 0.7})

    assert Mine.verify('Mine.V2') is Mine.V2 and Mine.V1.meta['acc'] == 0.5 and Mine.verify(None) is None
    assert [m.name for m in Mine] == ['V1', 'V2']
    with pytest.raises(RuntimeError, match='not found'):
        Mine.V1.get_state_dict(progress=False)
