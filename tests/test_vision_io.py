"""ember.vision.io: round trips through files and bytes, every ImageReadMode against Pillow's own decoding, errors,
and (with EMBER_TV_ORACLE) pixel-for-pixel against torchvision.io."""
import io

import numpy as np
import pytest

import ember
from ember.vision.io import (ImageReadMode, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg,
                             encode_png, read_file, read_image, write_file, write_jpeg, write_png)

Image = pytest.importorskip('PIL.Image')

RS = np.random.RandomState(0)
RGB = RS.randint(0, 256, (6, 9, 3)).astype(np.uint8)
RGBA = RS.randint(0, 256, (6, 9, 4)).astype(np.uint8)


def _bytes(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _t(raw):
    return ember.from_numpy(np.frombuffer(raw, np.uint8).copy())


def _hwc(t):
    return t.numpy().transpose(1, 2, 0)


def _samples():
    """name → encoded bytes covering the PNG colour types and JPEG's gray, RGB and CMYK."""
    pal = Image.fromarray(RGB).convert('P')
    exif = Image.Exif()
    exif[0x0112] = 6        # rotate 90° clockwise when displayed
    return {
        'rgb.png': _bytes(Image.fromarray(RGB), 'PNG'),
        'gray.png': _bytes(Image.fromarray(RGB[:, :, 0]), 'PNG'),
        'rgba.png': _bytes(Image.fromarray(RGBA), 'PNG'),
        'la.png': _bytes(Image.fromarray(RGBA[:, :, :2], 'LA'), 'PNG'),
        'pal.png': _bytes(pal, 'PNG'),
        'bit.png': _bytes(Image.fromarray(RGB[:, :, 0] > 128), 'PNG'),
        'rgb.jpg': _bytes(Image.fromarray(RGB), 'JPEG', quality=90),
        'gray.jpg': _bytes(Image.fromarray(RGB[:, :, 0]), 'JPEG'),
        'cmyk.jpg': _bytes(Image.fromarray(RGB).convert('CMYK'), 'JPEG'),
        'exif.jpg': _bytes(Image.fromarray(RGB), 'JPEG', exif=exif),
    }


def test_read_write_file_round_trip(tmp_path):
    data = _t(b'\x00\x01\xffember')
    write_file(tmp_path / 'f.bin', data)
    back = read_file(str(tmp_path / 'f.bin'))
    assert back.dtype == ember.uint8 and back.dim() == 1 and back.tolist() == data.tolist()
    (tmp_path / 'empty').write_bytes(b'')
    with pytest.raises(RuntimeError, match='non empty'):
        read_file(tmp_path / 'empty')
    with pytest.raises(RuntimeError, match='No such file'):
        read_file(tmp_path / 'missing')
    with pytest.raises(RuntimeError, match='dtype should be uint8'):
        write_file(tmp_path / 'g', ember.zeros(3))
    with pytest.raises(RuntimeError, match='1-dimensional'):
        write_file(tmp_path / 'g', ember.zeros(2, 2, dtype=ember.uint8))


@pytest.mark.parametrize('channels', [1, 3])
def test_png_and_jpeg_round_trips_through_bytes_and_files(tmp_path, channels):
    x = ember.from_numpy(np.ascontiguousarray(RGB[:, :, :channels].transpose(2, 0, 1)))
    png = encode_png(x, compression_level=9)
    assert png.dtype == ember.uint8 and png.dim() == 1 and bytes(png[:8].tolist()) == b'\x89PNG\r\n\x1a\n'
    assert decode_png(png).tolist() == x.tolist()
    write_png(x, tmp_path / 'a.png')
    assert read_image(str(tmp_path / 'a.png')).tolist() == x.tolist()
    jpg = encode_jpeg(x, quality=95)
    # Pillow's JPEG encoder is libjpeg-turbo's, as torchvision's: the same bytes at the same quality
    ref = _bytes(Image.fromarray(RGB[:, :, 0] if channels == 1 else RGB), 'JPEG', quality=95)
    assert bytes(jpg.numpy()) == ref
    write_jpeg(x, str(tmp_path / 'a.jpg'), quality=95)
    got = read_image(tmp_path / 'a.jpg')
    assert np.array_equal(_hwc(got).reshape(RGB[:, :, :channels].shape), np.atleast_3d(Image.open(tmp_path / 'a.jpg')))
    assert [t.tolist() for t in decode_jpeg(encode_jpeg([x, x], 95))] == [decode_jpeg(jpg).tolist()] * 2


def test_modes_match_pillow_conversions():
    s = _samples()
    for name in ('rgb.png', 'rgba.png', 'la.png', 'gray.png', 'pal.png', 'rgb.jpg', 'gray.jpg'):
        im = Image.open(io.BytesIO(s[name]))
        for mode, pil_mode in ((ImageReadMode.GRAY, 'L'), (ImageReadMode.GRAY_ALPHA, 'LA'), (ImageReadMode.RGB, 'RGB'),
                               (ImageReadMode.RGB_ALPHA, 'RGBA')):
            if name.endswith('.jpg') and mode in (ImageReadMode.GRAY_ALPHA, ImageReadMode.RGB_ALPHA):
                with pytest.raises(RuntimeError, match='not supported for JPEG'):
                    decode_image(_t(s[name]), mode)
                continue
            src = im.convert('RGBA') if im.mode == 'P' and mode.name.endswith('ALPHA') else im
            ref = np.array(src.convert(pil_mode))
            if name == 'rgb.jpg' and mode == ImageReadMode.GRAY:     # the decoder's luma plane, as libjpeg's
                src = Image.open(io.BytesIO(s[name]))
                src.draft('L', src.size)
                ref = np.array(src)
            got = decode_image(_t(s[name]), mode)
            assert got.dtype == ember.uint8 and got.shape[0] == len(pil_mode), (name, mode)
            assert np.array_equal(_hwc(got).reshape(ref.shape), ref), (name, mode)
    unchanged = {'rgb.png': 3, 'gray.png': 1, 'rgba.png': 4, 'la.png': 2, 'pal.png': 1, 'bit.png': 1, 'rgb.jpg': 3,
                 'gray.jpg': 1, 'cmyk.jpg': 4}
    for name, c in unchanged.items():
        assert decode_image(_t(s[name])).shape[0] == c, name
    pal = Image.open(io.BytesIO(s['pal.png']))
    assert np.array_equal(decode_png(_t(s['pal.png']))[0].numpy(), np.array(pal))    # the palette indices
    assert decode_png(_t(s['bit.png'])).unique().tolist() == [0, 255]
    assert decode_image(_t(s['rgb.png']), 'rgb').shape == (3, 6, 9)      # modes by name, as torchvision
    assert ImageReadMode.RGBA is ImageReadMode.RGB_ALPHA


def test_exif_orientation_and_gif():
    s = _samples()
    assert decode_jpeg(_t(s['exif.jpg'])).shape == (3, 6, 9)
    turned = decode_image(_t(s['exif.jpg']), apply_exif_orientation=True)
    from PIL import ImageOps
    ref = np.array(ImageOps.exif_transpose(Image.open(io.BytesIO(s['exif.jpg']))))
    assert np.array_equal(_hwc(turned), ref)
    frames = [Image.fromarray(np.full((4, 5, 3), v, np.uint8)) for v in (0, 255)]
    buf = io.BytesIO()
    frames[0].save(buf, 'GIF', save_all=True, append_images=frames[1:])
    gif = decode_gif(_t(buf.getvalue()))
    assert gif.shape == (2, 3, 4, 5) and gif[1].min().item() == 255
    assert decode_image(_t(_bytes(frames[1], 'GIF'))).shape == (3, 4, 5)


def test_errors_match_torchvision():
    png = _t(_samples()['rgb.png'])
    with pytest.raises(RuntimeError, match='uint8 data type'):
        decode_png(png.float())
    with pytest.raises(RuntimeError, match='1-dimensional and non-empty'):
        decode_image(png.view(1, -1))
    with pytest.raises(RuntimeError, match='Content is not png'):
        decode_png(_t(_samples()['rgb.jpg']))
    with pytest.raises(RuntimeError, match='Not a JPEG file'):
        decode_jpeg(png)
    with pytest.raises(RuntimeError, match='Unsupported image file'):
        decode_image(_t(bytes(range(16))))
    x = ember.zeros(3, 4, 4, dtype=ember.uint8)
    for enc in (encode_png, encode_jpeg):
        with pytest.raises(RuntimeError, match='dtype should be uint8'):
            enc(x.float())
        with pytest.raises(RuntimeError, match='3-dimensional'):
            enc(x[0])
        with pytest.raises(RuntimeError, match='should be 1 or 3, got: 4'):
            enc(ember.zeros(4, 2, 2, dtype=ember.uint8))
    with pytest.raises(ValueError, match='between 1 and 100'):
        encode_jpeg(x, quality=0)
    with pytest.raises(ValueError, match='at least one input tensor'):
        encode_jpeg([])
    with pytest.raises(RuntimeError, match='between 0 and 9'):
        encode_png(x, compression_level=10)
    sixteen = _bytes(Image.fromarray(np.arange(12, dtype=np.uint16).reshape(3, 4) * 5000), 'PNG')
    img = decode_png(_t(sixteen))         # a 16-bit grayscale PNG: uint16, as torchvision's
    assert img.dtype is ember.uint16 and img[0, 2].tolist() == [40000, 45000, 50000, 55000]
    with pytest.raises(RuntimeError, match='16-bit grayscale PNG decodes to uint16'):
        decode_png(_t(sixteen), ImageReadMode.RGB)
    import ember.vision.io as vio
    assert not hasattr(vio, 'read_video')
    with pytest.raises(AttributeError, match='video'):
        vio.VideoReader
