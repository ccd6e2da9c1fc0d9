"""ember.vision.transforms: tensor paths against the same computation in torch ops, PIL paths against
Pillow's own calls, and random transforms drawing their parameters in torchvision's order."""
import colorsys
import math

import numpy as np
import pytest
import torch

import ember
from ember.vision import transforms as T
from ember.vision.transforms import functional as F

Image = pytest.importorskip('PIL.Image')


def _img(h=12, w=16, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (h, w, 3)).astype(np.uint8)


def _pil(h=12, w=16, seed=0):
    return Image.fromarray(_img(h, w, seed))


def _close(a, b, atol=1e-5):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), atol=atol, rtol=0)


def test_to_tensor_pil_to_tensor_to_pil_roundtrip():
    im = _pil()
    ref = torch.from_numpy(np.array(im)).permute(2, 0, 1).float() / 255
    _close(F.to_tensor(im), ref)
    assert F.to_tensor(im).dtype == ember.float32
    p = F.pil_to_tensor(im)
    assert p.dtype == ember.uint8 and np.array_equal(p.numpy(), np.array(im).transpose(2, 0, 1))
    assert np.array_equal(np.array(F.to_pil_image(F.to_tensor(im))), np.array(im))
    gray = F.to_pil_image(ember.full((1, 3, 4), 0.5))
    assert gray.mode == 'L' and np.array(gray).tolist() == [[127] * 4] * 3    # 0.5*255 truncates, as torch's byte()
    _close(F.to_tensor(_img()[:, :, 0]), torch.from_numpy(_img()[:, :, :1]).permute(2, 0, 1).float() / 255)
    with pytest.raises(TypeError, match='pic should be PIL Image or ndarray'):
        F.to_tensor([1, 2])


def test_normalize_matches_torch_and_errors():
    x = np.random.RandomState(1).rand(3, 5, 6).astype(np.float32)
    mean, std = [0.1, 0.2, 0.3], [0.5, 0.25, 2.0]
    ref = (torch.from_numpy(x) - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]
    _close(T.Normalize(mean, std)(ember.from_numpy(x)), ref)
    with pytest.raises(TypeError, match='float tensor'):
        F.normalize(ember.zeros(3, 2, 2, dtype=ember.uint8), mean, std)
    with pytest.raises(ValueError, match='std evaluated to zero'):
        F.normalize(ember.zeros(3, 2, 2), mean, [1, 0, 1])
    t = ember.from_numpy(x.copy())
    out = F.normalize(t, mean, std, inplace=True)
    assert out is t
    _close(t, ref)


@pytest.mark.parametrize('mode', ['bilinear', 'bicubic'])
@pytest.mark.parametrize('size', [(5, 7), (20, 9), 6])
def test_resize_tensor_matches_torch_interpolate_antialias(mode, size):
    x = np.random.RandomState(2).rand(2, 3, 12, 16).astype(np.float32)
    out = F.resize(ember.from_numpy(x), size, interpolation=T.InterpolationMode(mode))
    target = list(size) if isinstance(size, tuple) else [6, 8]
    ref = torch.nn.functional.interpolate(torch.from_numpy(x), size=target, mode=mode, align_corners=False,
                                          antialias=True)
    _close(out, ref, atol=2e-5)
    # uint8 images: resampled in float, rounded back, as torchvision
    xu = _img().transpose(2, 0, 1).copy()
    ou = F.resize(ember.from_numpy(xu), [5, 7], interpolation=T.InterpolationMode(mode))
    ru = torch.nn.functional.interpolate(torch.from_numpy(xu)[None].float(), size=[5, 7], mode=mode,
                                         align_corners=False, antialias=True)[0]
    ru = ru.clamp(0, 255).round().to(torch.uint8)
    assert ou.dtype == ember.uint8
    assert np.abs(ou.numpy().astype(int) - ru.numpy().astype(int)).max() <= 1


def test_resize_tensor_nearest_and_no_antialias():
    x = np.random.RandomState(3).rand(1, 9, 10).astype(np.float32)
    _close(F.resize(ember.from_numpy(x), [4, 5], T.InterpolationMode.NEAREST),
           torch.nn.functional.interpolate(torch.from_numpy(x)[None], size=[4, 5], mode='nearest')[0])
    _close(F.resize(ember.from_numpy(x), [4, 5], antialias=False),
           torch.nn.functional.interpolate(torch.from_numpy(x)[None], size=[4, 5], mode='bilinear',
                                           align_corners=False)[0])


def test_resize_gradient_flows():
    x = ember.rand(1, 3, 8, 8, requires_grad=True)
    F.resize(x, [4, 4]).sum().backward()
    tx = torch.from_numpy(x.detach().numpy()).requires_grad_()
    torch.nn.functional.interpolate(tx, size=[4, 4], mode='bilinear', antialias=True).sum().backward()
    _close(x.grad, tx.grad)


@pytest.mark.parametrize('interp', [Image.NEAREST, Image.BILINEAR, Image.BICUBIC])
def test_pil_resize_crop_flip_match_pillow(interp):
    im = _pil()
    mode = F._interp(interp)
    assert np.array_equal(np.array(F.resize(im, 6, mode)), np.array(im.resize((8, 6), interp)))
    assert np.array_equal(np.array(F.resize(im, [5, 9], mode)), np.array(im.resize((9, 5), interp)))
    assert np.array_equal(np.array(F.crop(im, 2, 3, 4, 5)), np.array(im.crop((3, 2, 8, 6))))
    assert np.array_equal(np.array(F.hflip(im)), np.array(im)[:, ::-1])
    assert np.array_equal(np.array(F.vflip(im)), np.array(im)[::-1])
    assert np.array_equal(np.array(F.center_crop(im, 6)), np.array(im)[3:9, 5:11])


def test_center_crop_and_crop_tensor_pad_outside():
    x = ember.arange(1.0, 13.0).view(1, 3, 4)
    assert F.center_crop(x, 2).tolist() == [[[2.0, 3.0], [6.0, 7.0]]]    # round(0.5) == 0, as torchvision
    out = F.center_crop(x, [5, 6])
    ref = torch.nn.functional.pad(torch.arange(1.0, 13.0).view(1, 3, 4), [1, 1, 1, 1])
    _close(out, ref)
    _close(F.crop(x, -1, 2, 3, 3), torch.nn.functional.pad(torch.arange(1.0, 13.0).view(1, 3, 4), [0, 1, 1, 0])
           [:, 0:3, 2:5])


@pytest.mark.parametrize('mode,torch_mode', [('constant', 'constant'), ('edge', 'replicate'),
                                             ('reflect', 'reflect'), ('symmetric', None)])
def test_pad_tensor_and_pil(mode, torch_mode):
    x = np.random.RandomState(4).rand(3, 5, 6).astype(np.float32)
    out = F.pad(ember.from_numpy(x), [1, 2, 3, 4], padding_mode=mode)
    if torch_mode is None:
        ref = np.pad(x, ((0, 0), (2, 4), (1, 3)), mode='symmetric')
    else:
        ref = torch.nn.functional.pad(torch.from_numpy(x)[None], [1, 3, 2, 4], mode=torch_mode)[0]
    _close(out, ref)
    im = _pil()
    np_mode = {'constant': 'constant', 'edge': 'edge', 'reflect': 'reflect', 'symmetric': 'symmetric'}[mode]
    assert np.array_equal(np.array(F.pad(im, 2, padding_mode=mode)),
                          np.pad(np.array(im), ((2, 2), (2, 2), (0, 0)), mode=np_mode))
    with pytest.raises(ValueError, match='Padding mode'):
        T.Pad(1, padding_mode='wrap')


def _torch_rotate(x, angle, mode, fill=None):
    """torchvision's tensor rotate recipe, written in torch ops: inverse matrix, affine grid, grid_sample."""
    h, w = x.shape[-2:]
    m = F._inverse_affine_matrix([0.0, 0.0], -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    theta = torch.tensor(m, dtype=torch.float32).reshape(1, 2, 3)
    xs = torch.linspace(-w * 0.5 + 0.5, w * 0.5 - 0.5, w)
    ys = torch.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, h)
    base = torch.stack([xs.expand(h, w), ys[:, None].expand(h, w), torch.ones(h, w)], -1).reshape(1, h * w, 3)
    grid = base.bmm(theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h])).view(1, h, w, 2)
    img = x[None]
    if fill is not None:
        img = torch.cat([img, torch.ones(1, 1, h, w)], 1)
    out = torch.nn.functional.grid_sample(img, grid, mode=mode, padding_mode='zeros', align_corners=False)
    if fill is not None:
        out, mask = out[:, :-1], out[:, -1:]
        f = torch.tensor(fill).view(1, -1, 1, 1)
        out = torch.where(mask < 0.5, f, out) if mode == 'nearest' else out * mask + (1 - mask) * f
    return out[0]


@pytest.mark.parametrize('mode', ['nearest', 'bilinear'])
@pytest.mark.parametrize('fill', [None, [0.25, 0.5, 1.0]])
def test_rotate_tensor_matches_grid_sample(mode, fill):
    x = np.random.RandomState(5).rand(3, 9, 11).astype(np.float32)
    out = F.rotate(ember.from_numpy(x), 33.0, T.InterpolationMode(mode), fill=fill)
    _close(out, _torch_rotate(torch.from_numpy(x), 33.0, mode, fill), atol=1e-4)


def test_rotate_pil_matches_pillow():
    im = _pil()
    assert np.array_equal(np.array(F.rotate(im, 30)), np.array(im.rotate(30, Image.NEAREST)))
    assert np.array_equal(np.array(F.rotate(im, 30, T.InterpolationMode.BILINEAR, expand=True, fill=7)),
                          np.array(im.rotate(30, Image.BILINEAR, True, fillcolor=(7, 7, 7))))


def test_color_adjustments_tensor_match_formulas():
    x = np.random.RandomState(6).rand(3, 4, 5).astype(np.float32)
    tx = torch.from_numpy(x)
    gray = (0.2989 * tx[0] + 0.587 * tx[1] + 0.114 * tx[2])[None]
    _close(F.adjust_brightness(ember.from_numpy(x), 1.7), (tx * 1.7).clamp(0, 1))
    _close(F.adjust_saturation(ember.from_numpy(x), 0.3), (0.3 * tx + 0.7 * gray).clamp(0, 1))
    _close(F.adjust_contrast(ember.from_numpy(x), 1.5), (1.5 * tx + (1 - 1.5) * gray.mean()).clamp(0, 1))
    _close(F.rgb_to_grayscale(ember.from_numpy(x)), gray)
    # hue against Python's colorsys, pixel by pixel
    out = F.adjust_hue(ember.from_numpy(x), 0.2).numpy()
    for i in range(4):
        for j in range(5):
            h, s, v = colorsys.rgb_to_hsv(*x[:, i, j])
            np.testing.assert_allclose(out[:, i, j], colorsys.hsv_to_rgb((h + 0.2) % 1.0, s, v), atol=1e-5)
    xu = _img(4, 5).transpose(2, 0, 1).copy()
    ref = (torch.from_numpy(xu).float() * 1.7).clamp(0, 255).to(torch.uint8)
    assert np.array_equal(F.adjust_brightness(ember.from_numpy(xu), 1.7).numpy(), ref.numpy())
    with pytest.raises(ValueError, match='hue_factor'):
        F.adjust_hue(ember.from_numpy(x), 0.7)


def test_color_adjustments_pil_match_pillow():
    from PIL import ImageEnhance
    im = _pil()
    assert np.array_equal(np.array(F.adjust_brightness(im, 1.3)), np.array(ImageEnhance.Brightness(im).enhance(1.3)))
    assert np.array_equal(np.array(F.adjust_contrast(im, 0.6)), np.array(ImageEnhance.Contrast(im).enhance(0.6)))
    assert np.array_equal(np.array(F.adjust_saturation(im, 0.4)), np.array(ImageEnhance.Color(im).enhance(0.4)))
    assert np.array_equal(np.array(T.Grayscale()(im)), np.array(im.convert('L')))
    assert np.array(T.Grayscale(3)(im)).shape == (12, 16, 3)
    h, s, v = im.convert('HSV').split()
    nh = (np.array(h).astype(int) + int(np.uint8(0.1 * 255))) % 256
    ref = Image.merge('HSV', (Image.fromarray(nh.astype(np.uint8), 'L'), s, v)).convert('RGB')
    assert np.array_equal(np.array(F.adjust_hue(im, 0.1)), np.array(ref))


def test_random_transforms_draw_torchvision_order():
    """Re-draw each transform's parameters by hand, in torchvision's documented order, from the same seed."""
    x = ember.rand(3, 12, 16)
    ember.manual_seed(3)
    out = T.RandomCrop(5)(x)
    ember.manual_seed(3)
    i = ember.randint(0, 12 - 5 + 1, size=(1,)).item()
    j = ember.randint(0, 16 - 5 + 1, size=(1,)).item()
    assert ember.equal(out, x[:, i:i + 5, j:j + 5])

    ember.manual_seed(4)
    out = T.RandomResizedCrop(6, antialias=True)(x)
    ember.manual_seed(4)
    area, lr = 12 * 16, [math.log(3 / 4), math.log(4 / 3)]
    while True:
        ta = area * ember.empty(1).uniform_(0.08, 1.0).item()
        ar = math.exp(ember.empty(1).uniform_(lr[0], lr[1]).item())
        w, h = int(round(math.sqrt(ta * ar))), int(round(math.sqrt(ta / ar)))
        if 0 < w <= 16 and 0 < h <= 12:
            i = ember.randint(0, 12 - h + 1, size=(1,)).item()
            j = ember.randint(0, 16 - w + 1, size=(1,)).item()
            break
    assert ember.allclose(out, F.resized_crop(x, i, j, h, w, [6, 6]))

    ember.manual_seed(5)
    out = T.ColorJitter(0.5, 0.5, 0.5, 0.2)(x)
    ember.manual_seed(5)
    order = ember.randperm(4).tolist()
    b, c, s, hh = (ember.empty(1).uniform_(lo, hi).item() for lo, hi in ((0.5, 1.5), (0.5, 1.5), (0.5, 1.5),
                                                                           (-0.2, 0.2)))
    y = x
    fns = [lambda t: F.adjust_brightness(t, b), lambda t: F.adjust_contrast(t, c),
           lambda t: F.adjust_saturation(t, s), lambda t: F.adjust_hue(t, hh)]
    for k in order:
        y = fns[k](y)
    assert sorted(order) == [0, 1, 2, 3]
    assert ember.allclose(out, y, atol=1e-6)

    ember.manual_seed(6)
    flips = [ember.equal(T.RandomHorizontalFlip()(x), x.flip(-1)) for _ in range(20)]
    ember.manual_seed(6)
    assert flips == [bool(ember.rand(1) < 0.5) for _ in range(20)]
    assert any(flips) and not all(flips)

    ember.manual_seed(7)
    out = T.RandomRotation(20, interpolation=T.InterpolationMode.BILINEAR)(x)
    ember.manual_seed(7)
    angle = ember.empty(1).uniform_(-20.0, 20.0).item()
    assert ember.allclose(out, F.rotate(x, angle, T.InterpolationMode.BILINEAR, fill=[0.0] * 3))

    ember.manual_seed(8)
    out = T.RandomErasing(p=1.0, value=0.5)(x)
    assert bool((out == 0.5).any()) and out.shape == x.shape and not ember.equal(out, x)


def test_seeded_pipeline_reproducible_on_pil_and_tensor():
    pipe = T.Compose([T.RandomResizedCrop(8), T.RandomHorizontalFlip(), T.RandomVerticalFlip(),
                      T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.7), T.RandomRotation(15),
                      T.ToTensor(), T.Normalize([0.5] * 3, [0.2] * 3), T.RandomErasing(p=0.8, value='random')])
    outs = []
    for _ in range(2):
        ember.manual_seed(11)
        outs.append([pipe(_pil(seed=k)) for k in range(4)])
    assert all(ember.equal(a, b) for a, b in zip(outs[0], outs[1])) and len(outs[0]) == 4
    assert not ember.equal(outs[0][0], outs[0][1])


def test_misc_transforms_and_errors():
    assert T.Lambda(lambda v: v * 3)(2) == 6
    with pytest.raises(TypeError, match='should be callable'):
        T.Lambda(3)
    with pytest.raises(ValueError, match='larger than input image size'):
        T.RandomCrop(20)(ember.zeros(1, 4, 4))
    assert T.RandomCrop(6, pad_if_needed=True)(ember.zeros(1, 4, 4)).shape == (1, 6, 6)
    assert T.RandomCrop(6, padding=1)(ember.zeros(1, 4, 4)).shape == (1, 6, 6)
    with pytest.raises(ValueError, match='brightness values should be between'):
        T.ColorJitter(brightness=(-1, 2))
    assert T.ColorJitter().brightness is None
    assert T.Resize((3, 4))(_pil()).size == (4, 3)
    assert T.PILToTensor()(_pil()).dtype == ember.uint8
    with pytest.raises(TypeError, match='PIL Image or Tensor'):
        F.hflip([1])
