"""ember.vision.transforms.v2 and tv_tensors: v2's dispatch (any leading dims, tv_tensors keep their class, masks
follow images, plain-tensor heuristic), ToDtype(scale=...), against torch ops and Pillow, and (with
EMBER_TV_ORACLE) against torchvision.transforms.v2 itself."""
import copy
import pickle

import numpy as np
import pytest
import torch

import ember
from ember.vision import tv_tensors
from ember.vision.transforms import v2
from ember.vision.transforms.v2 import functional as F

Image = pytest.importorskip('PIL.Image')

RS = np.random.RandomState(0)
U8 = RS.randint(0, 256, (2, 3, 3, 10, 14)).astype(np.uint8)      # [B, T, C, H, W]
F32 = RS.rand(2, 3, 10, 14).astype(np.float32)


def test_tv_tensors_are_thin_subclasses():
    img = tv_tensors.Image(ember.zeros(4, 5))
    assert isinstance(img, ember.Tensor) and img.shape == (1, 4, 5)
    assert type(img + 1) is ember.Tensor                   # operators give plain tensors, as torchvision
    for kept in (img.clone(), img.to(ember.float64), img.detach(), copy.deepcopy(img), pickle.loads(pickle.dumps(img))):
        assert type(kept) is tv_tensors.Image
    assert tv_tensors.Image(Image.fromarray(U8[0, 0].transpose(1, 2, 0))).tolist() == U8[0, 0].tolist()
    with pytest.raises(ValueError):
        tv_tensors.Video(ember.zeros(3, 4, 5))
    boxes = tv_tensors.BoundingBoxes([1, 2, 3, 4], format='xyxy', canvas_size=(10, 10))
    assert boxes.shape == (1, 4) and boxes.format is tv_tensors.BoundingBoxFormat.XYXY
    assert tv_tensors.wrap(boxes + 1, like=boxes).canvas_size == (10, 10)
    x = ember.rand(3, 2, 2, requires_grad=True)
    tv_tensors.Image(x * 2).sum().backward()              # the same autograd history
    assert x.grad.tolist() == (ember.ones(3, 2, 2) * 2).tolist()
    plain = v2.ToPureTensor()(img)
    assert type(plain) is ember.Tensor and plain.tolist() == img.tolist()


@pytest.mark.parametrize('interp', ['nearest', 'bilinear', 'bicubic', 'lanczos'])
def test_resize_any_leading_dims_against_torch(interp):
    x = torch.from_numpy(F32)
    ref = torch.nn.functional.interpolate(x, size=(5, 9), mode=interp, antialias=interp != 'nearest',
                                          **({} if interp == 'nearest' else {'align_corners': False}))
    got = F.resize(ember.from_numpy(F32), [5, 9], interpolation=interp)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=2e-5)
    five = F.resize(ember.from_numpy(U8), [5, 7], interpolation=v2.InterpolationMode.NEAREST)
    assert five.shape == (2, 3, 3, 5, 7) and five.dtype == ember.uint8
    np.testing.assert_array_equal(five.numpy(), torch.nn.functional.interpolate(
        torch.from_numpy(U8).reshape(-1, 3, 10, 14), size=(5, 7)).reshape(2, 3, 3, 5, 7).numpy())
    with pytest.raises(ValueError, match='LANCZOS requires antialias'):
        F.resize(ember.from_numpy(F32), [5, 9], interpolation='lanczos', antialias=False)


def test_tv_tensor_dispatch_and_masks():
    img = tv_tensors.Image(ember.from_numpy(U8[0, 0]))
    mask = tv_tensors.Mask(ember.from_numpy((U8[0, 0, 0] % 3).astype(np.int64)))
    out_img, out_mask, label = v2.Resize((5, 7))(img, mask, 7)
    assert type(out_img) is tv_tensors.Image and type(out_mask) is tv_tensors.Mask and label == 7
    assert out_mask.shape == (5, 7) and set(out_mask.unique().tolist()) <= {0, 1, 2}    # nearest: no new labels
    ember.manual_seed(0)
    both = v2.Compose([v2.RandomResizedCrop(6), v2.RandomHorizontalFlip(1.0)])({'image': img, 'mask': mask})
    ember.manual_seed(0)
    alone = v2.Compose([v2.RandomResizedCrop(6, interpolation='nearest'), v2.RandomHorizontalFlip(1.0)])(mask[None])
    assert both['mask'].tolist() == alone[0].tolist()           # one set of parameters for the whole sample
    normed = v2.Normalize([0.5], [0.5])(tv_tensors.Image(ember.ones(1, 2, 2)), mask)
    assert normed[1] is mask                                        # colour transforms leave masks alone
    with pytest.raises(NotImplementedError, match='BoundingBoxes'):
        v2.Resize(4)(img, tv_tensors.BoundingBoxes([0, 0, 2, 2], format='XYXY', canvas_size=(10, 14)))


def test_plain_tensor_heuristic():
    a, b = ember.zeros(3, 8, 8), ember.zeros(3, 8, 8)
    ra, rb = v2.Resize(4)(a, b)
    assert ra.shape == (3, 4, 4) and rb is b                     # only the first plain tensor is an image
    pil = Image.fromarray(U8[0, 0].transpose(1, 2, 0))
    rp, ra = v2.Resize(4)(pil, a)
    assert rp.size == (5, 4) and ra is a                           # a PIL image is the image: tensors pass


def test_to_dtype_scale_against_torch_arithmetic():
    u8 = ember.from_numpy(U8[0, 0])
    f = F.to_dtype(u8, ember.float32, scale=True)
    np.testing.assert_array_equal(f.numpy(), (torch.from_numpy(U8[0, 0]).float() * (1.0 / 255)).numpy())
    assert F.to_dtype(u8, ember.float32).tolist() == u8.float().tolist()
    back = F.to_dtype(f, ember.uint8, scale=True)
    assert back.tolist() == u8.tolist()
    assert F.to_dtype(u8, ember.int32, scale=True).tolist() == (torch.from_numpy(U8[0, 0]).int() << 23).tolist()
    assert F.to_dtype(ember.tensor([32767], dtype=ember.int16), ember.uint8, scale=True).tolist() == [255]
    with pytest.raises(RuntimeError, match='cannot be performed safely'):
        F.to_dtype(f, ember.int64, scale=True)
    mask = tv_tensors.Mask(ember.zeros(2, 2, dtype=ember.uint8))
    img = tv_tensors.Image(u8)
    out_img, out_mask = v2.ToDtype(ember.float32, scale=True)(img, mask)
    assert out_img.dtype == ember.float32 and out_mask.dtype == ember.uint8 and type(out_img) is tv_tensors.Image
    out_img, out_mask = v2.ToDtype({tv_tensors.Image: ember.float64, 'others': ember.int64})(img, mask)
    assert out_img.dtype == ember.float64 and out_mask.dtype == ember.int64


def test_pil_pipeline_matches_pillow_and_v1():
    arr = U8[0, 0].transpose(1, 2, 0).copy()
    pil = Image.fromarray(arr)
    img = v2.ToImage()(pil)
    assert type(img) is tv_tensors.Image and img.dtype == ember.uint8 and img.tolist() == arr.transpose(2, 0, 1).tolist()
    assert v2.ToImage()(arr).tolist() == img.tolist()
    pipe = v2.Compose([v2.Resize(6, interpolation=v2.InterpolationMode.BICUBIC), v2.CenterCrop(5), v2.PILToTensor()])
    out = pipe(pil)
    ref = np.array(pil.resize((8, 6), Image.BICUBIC).crop((2, 0, 7, 5)))
    assert out.tolist() == ref.transpose(2, 0, 1).tolist()
    gray = F.rgb_to_grayscale(pil)
    assert gray.mode == 'L' and F.grayscale_to_rgb(gray).mode == 'RGB'
    assert F.get_size(pil) == [10, 14] and F.get_dimensions(img) == [3, 10, 14]


def test_functional_kernels_against_torch():
    x = ember.from_numpy(F32)
    t = torch.from_numpy(F32)
    mean, std = [0.1, 0.2, 0.3], [0.5, 0.25, 2.0]
    np.testing.assert_allclose(F.normalize(x, mean, std).numpy(),
                               ((t - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]).numpy(),
                               atol=1e-6)
    assert F.hflip(x).tolist() == t.flip(-1).tolist() and F.vflip(x).tolist() == t.flip(-2).tolist()
    assert F.crop(x, 1, 2, 4, 5).tolist() == t[..., 1:5, 2:7].tolist()
    assert F.center_crop(x, [4, 6]).tolist() == t[..., 3:7, 4:10].tolist()
    for mode, tmode in (('constant', 'constant'), ('edge', 'replicate'), ('reflect', 'reflect')):
        ref = torch.nn.functional.pad(t, (1, 2, 3, 1), mode=tmode)
        assert F.pad(x, [1, 3, 2, 1], padding_mode=mode).tolist() == ref.tolist()
    r, g, b = t.unbind(-3)
    np.testing.assert_allclose(F.rgb_to_grayscale(x).numpy(), (0.2989 * r + 0.587 * g + 0.114 * b)[:, None].numpy(),
                               atol=1e-6)
    one = x[:, :1]
    assert F.grayscale_to_rgb(one).shape == (2, 3, 10, 14) and F.grayscale_to_rgb(x) is x
    with pytest.raises(TypeError, match='supports inputs of type'):
        F.normalize('not an image', mean, std)


def test_transform_classes_smoke():
    ember.manual_seed(0)
    img = tv_tensors.Image(ember.from_numpy(U8[0, 0]))
    pipe = v2.Compose([v2.RandomCrop(12, pad_if_needed=True), v2.Pad(1), v2.RandomRotation(15),
                       v2.ColorJitter(0.3, 0.3, 0.3, 0.1), v2.RandomGrayscale(0.5), v2.Grayscale(3), v2.RGB(),
                       v2.RandomVerticalFlip(), v2.ToDtype(ember.float32, scale=True), v2.ConvertImageDtype(),
                       v2.Identity()])
    out = pipe(img)
    assert type(out) is tv_tensors.Image and out.shape == (3, 14, 14) and out.dtype == ember.float32
    zeroed = v2.RandomApply([v2.Lambda(lambda t: t * 0)], p=1.0)(out)
    assert type(zeroed) is ember.Tensor and zeroed.abs().sum().item() == 0     # Lambda does not re-wrap
    assert 'RandomCrop' in repr(pipe)
