"""ember.vision against real torchvision, run by hand where a torchvision build can be loaded beside torch
(``EMBER_TV_ORACLE=/path/to/torchvision/site python -m pytest tests_torchvision``): the CI's test environment has
no torchvision, so these are not part of ``tests/`` (which must not skip). ``tests/test_vision_io.py`` and
``tests/test_vision_v2.py`` test the same functions against Pillow and torch there."""
import sys
import os

import numpy as np  # noqa: F401
import pytest  # noqa: F401

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'tests'))
import _tv_oracle  # noqa: E402
import ember  # noqa: E402
from test_vision_io import ImageReadMode, RGB, _samples, _t, decode_image, encode_jpeg  # noqa: E402
from test_vision_v2 import F, F32, U8, tv_tensors  # noqa: E402


def test_against_torchvision(tmp_path):
    s = _samples()
    for name, raw in s.items():
        (tmp_path / name).write_bytes(raw)
    x = ember.from_numpy(np.ascontiguousarray(RGB.transpose(2, 0, 1)))
    np.save(tmp_path / 'x.npy', x.numpy())
    _tv_oracle.run('''
        import os
        from torchvision.io import decode_image, encode_jpeg, ImageReadMode
        from torchvision.io.image import _has_image_ops
        if not _has_image_ops():
            print("torchvision's image codecs did not load"); sys.exit(3)
        for name in sorted(os.listdir('.')):
            if name.endswith(('.png', '.jpg')):
                data = torch.frombuffer(bytearray(open(name, 'rb').read()), dtype=torch.uint8)
                for m in ImageReadMode.__members__:
                    try:
                        np.save(f'{name}.{m}.npy', decode_image(data, m, apply_exif_orientation=True).numpy())
                    except RuntimeError:
                        pass
        np.save('enc.npy', encode_jpeg(torch.from_numpy(np.load('x.npy')), quality=80).numpy())
    ''', tmp_path)
    assert bytes(np.load(tmp_path / 'enc.npy')) == bytes(encode_jpeg(x, quality=80).numpy())
    bad = []
    for name, raw in s.items():
        for m in ImageReadMode.__members__:
            ref_path = tmp_path / f'{name}.{m}.npy'
            if not ref_path.exists():       # torchvision refused this mode: so must ember
                with pytest.raises(RuntimeError):
                    decode_image(_t(raw), m, apply_exif_orientation=True)
                continue
            if name in ('pal.png', 'bit.png') and m.endswith('A'):
                continue    # torchvision's output is scrambled (palette) or has alpha 1 (1-bit): see io/image.py
            ref = np.load(ref_path)
            got = decode_image(_t(raw), m, apply_exif_orientation=True).numpy()
            assert got.shape == ref.shape and got.dtype == ref.dtype, (name, m)
            # libpng's RGB → gray rounds differently from Pillow's (by at most 1); everything else is exact
            tol = 1 if name in ('rgb.png', 'rgba.png', 'pal.png') and m.startswith('GRAY') else 0
            if np.abs(got.astype(int) - ref.astype(int)).max() > tol:
                bad.append((name, m))
    assert bad == []


def test_against_torchvision_v2(tmp_path):
    np.save(tmp_path / 'u8.npy', U8)
    np.save(tmp_path / 'f32.npy', F32)
    _tv_oracle.run('''
        from torchvision.transforms.v2 import functional as F
        from torchvision import tv_tensors
        u8, f32 = torch.from_numpy(np.load('u8.npy')), torch.from_numpy(np.load('f32.npy'))
        out = {}
        for m in ('nearest', 'bilinear', 'bicubic', 'lanczos'):
            out[f'resize_{m}_f'] = F.resize(f32, [5, 9], interpolation=F.InterpolationMode(m))
            out[f'resize_{m}_u8'] = F.resize(u8, [7, 20], interpolation=F.InterpolationMode(m))
        out['resize_int'] = F.resize(f32, 6, max_size=9)
        out['mask'] = F.resize(tv_tensors.Mask(u8[0, 0, 0]), [5, 7])
        out['dtype_f'] = F.to_dtype(u8, torch.float32, scale=True)
        out['dtype_back'] = F.to_dtype(out['dtype_f'], torch.uint8, scale=True)
        out['dtype_i16'] = F.to_dtype(u8, torch.int16, scale=True)
        out['gray_u8'] = F.rgb_to_grayscale(u8)
        out['gray3_f'] = F.rgb_to_grayscale(f32, num_output_channels=3)
        out['g2rgb'] = F.grayscale_to_rgb(u8[:, :, :1])
        out['norm'] = F.normalize(f32, [0.1, 0.2, 0.3], [0.5, 0.25, 2.0])
        out['pad_sym'] = F.pad(u8, [1, 2, 3, 4], padding_mode='symmetric')
        out['pad_fill'] = F.pad(f32, [2, 1], fill=0.5)
        out['ccrop_big'] = F.center_crop(f32, [13, 15])
        out['crop_out'] = F.crop(u8, -2, 3, 6, 14)
        out['cvt'] = F.convert_image_dtype(f32, torch.uint8)
        out['to_image'] = F.to_image(np.load('u8.npy')[0, 0, 0])
        np.savez('out.npz', **{k: v.numpy() for k, v in out.items()})
    ''', tmp_path)
    ref = np.load(tmp_path / 'out.npz')
    u8, f32 = ember.from_numpy(U8), ember.from_numpy(F32)
    got = {}
    for m in ('nearest', 'bilinear', 'bicubic', 'lanczos'):
        got[f'resize_{m}_f'] = F.resize(f32, [5, 9], interpolation=m)
        got[f'resize_{m}_u8'] = F.resize(u8, [7, 20], interpolation=m)
    got['resize_int'] = F.resize(f32, 6, max_size=9)
    got['mask'] = F.resize(tv_tensors.Mask(u8[0, 0, 0]), [5, 7])
    got['dtype_f'] = F.to_dtype(u8, ember.float32, scale=True)
    got['dtype_back'] = F.to_dtype(got['dtype_f'], ember.uint8, scale=True)
    got['dtype_i16'] = F.to_dtype(u8, ember.int16, scale=True)
    got['gray_u8'] = F.rgb_to_grayscale(u8)
    got['gray3_f'] = F.rgb_to_grayscale(f32, num_output_channels=3)
    got['g2rgb'] = F.grayscale_to_rgb(u8[:, :, :1])
    got['norm'] = F.normalize(f32, [0.1, 0.2, 0.3], [0.5, 0.25, 2.0])
    got['pad_sym'] = F.pad(u8, [1, 2, 3, 4], padding_mode='symmetric')
    got['pad_fill'] = F.pad(f32, [2, 1], fill=0.5)
    got['ccrop_big'] = F.center_crop(f32, [13, 15])
    got['crop_out'] = F.crop(u8, -2, 3, 6, 14)
    got['cvt'] = F.convert_image_dtype(f32, ember.uint8)
    got['to_image'] = F.to_image(U8[0, 0, 0])
    for k, v in got.items():
        g, r = v.numpy(), ref[k]
        assert g.shape == r.shape and g.dtype == r.dtype, k
        # torch resizes uint8 bilinear/bicubic/lanczos with its own integer kernel: off by one at most
        atol = 1 if k.endswith('_u8') else 2e-5
        np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), atol=atol, rtol=0, err_msg=k)
