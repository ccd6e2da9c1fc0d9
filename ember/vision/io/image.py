"""``torchvision.io`` image functions: encoded bytes are a 1-D uint8 tensor, images are uint8 ``(C, H, W)``.

torchvision decodes with libjpeg-turbo/libpng; here Pillow does the work (Pillow links libjpeg-turbo too, so
JPEG pixels, and JPEG bytes at the same quality, are identical). The channel conversions follow torchvision's
modes: UNCHANGED keeps the file's channels (a palette PNG gives its indices, CMYK JPEG its raw inverted inks),
GRAY of a JPEG is the decoder's luma, and the other conversions are Pillow's ``convert``. Differences left:
libpng's RGB → gray rounds differently, so GRAY/GRAY_ALPHA of a colour PNG can differ from torchvision's by 1;
for palette and 1-bit PNGs in the *_ALPHA modes torchvision returns scrambled channels (palette) or an alpha of
1 (1-bit), where ember returns the image with an opaque (255) or tRNS alpha. A 16-bit grayscale PNG decodes to
uint16 (UNCHANGED or GRAY), as torchvision's; other 16-bit PNGs are refused, since Pillow reads their colour
channels as 8 bits only.
"""
import io
import os
from enum import Enum

import numpy as np

import ember

from .._pil import pil_image

__all__ = ['ImageReadMode', 'read_file', 'write_file', 'decode_image', 'decode_jpeg', 'decode_png', 'decode_gif',
           'decode_webp', 'read_image', 'encode_jpeg', 'encode_png', 'write_jpeg', 'write_png']


class ImageReadMode(Enum):
    """The channels a decoder returns: the file's own (UNCHANGED), or 1, 2, 3 or 4 converted ones."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODE = {ImageReadMode.GRAY: 'L', ImageReadMode.GRAY_ALPHA: 'LA', ImageReadMode.RGB: 'RGB',
             ImageReadMode.RGB_ALPHA: 'RGBA'}


def _mode(mode):
    return ImageReadMode[mode.upper()] if isinstance(mode, str) else mode


def read_file(path):
    """The bytes of a file as a 1-D uint8 tensor."""
    path = os.fspath(path)
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise RuntimeError(str(e)) from None
    if not data:
        raise RuntimeError("Expected a non empty file")
    return ember.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data):
    """Write a 1-D uint8 tensor's bytes to ``filename``."""
    if data.dtype != ember.uint8:
        raise RuntimeError("Input tensor dtype should be uint8")
    if data.dim() != 1:
        raise RuntimeError("Input data should be a 1-dimensional tensor")
    with open(os.fspath(filename), 'wb') as f:
        f.write(data.numpy().tobytes())


def _encoded_bytes(data):
    if not isinstance(data, ember.Tensor):
        raise TypeError(f"Expected a tensor of encoded bytes, got {type(data).__name__}")
    if data.dtype != ember.uint8:
        raise RuntimeError(f"Input tensor must have uint8 data type, got {data.dtype}")
    if data.dim() != 1 or data.numel() == 0:
        raise RuntimeError(f"Input tensor must be 1-dimensional and non-empty, got {data.dim()} dims and "
                           f"{data.numel()} numels.")
    return data.numpy().tobytes()


def _open(data, formats, what, gray=False):
    """The Pillow image in ``data``, loaded; RuntimeError (torchvision's type) when it is not one of ``formats``.

    ``gray`` asks a colour JPEG's decoder for its luma plane, as libjpeg's grayscale output (what torchvision
    returns for GRAY) rather than a conversion of the decoded RGB, which rounds differently.
    """
    Image = pil_image()
    try:
        im = Image.open(io.BytesIO(_encoded_bytes(data)))
    except Image.UnidentifiedImageError:
        raise RuntimeError(what) from None
    if im.format not in formats:
        raise RuntimeError(what)
    if gray and im.mode in ('RGB', 'YCbCr'):
        im.draft('L', im.size)
    try:
        im.load()
    except (OSError, SyntaxError, ValueError) as e:
        raise RuntimeError(f"Could not decode the {im.format} image: {e}") from None
    return im


def _chw(arr):
    arr = arr[:, :, None] if arr.ndim == 2 else arr
    return ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def _to_tensor(im, mode, apply_exif_orientation):
    """``im`` as a ``(C, H, W)`` uint8 tensor in ``mode``'s channels."""
    if im.mode.startswith('I;16') or (im.mode == 'I' and im.format == 'PNG'):
        if mode not in (ImageReadMode.UNCHANGED, ImageReadMode.GRAY):
            raise RuntimeError(f"a 16-bit grayscale PNG decodes to uint16 with ImageReadMode.UNCHANGED or GRAY only, "
                               f"not {mode}")
        return _chw(np.array(im, dtype=np.int64).astype(np.uint16))
    if apply_exif_orientation:
        from PIL import ImageOps
        im = ImageOps.exif_transpose(im)
    if mode == ImageReadMode.UNCHANGED:
        if im.mode == '1':
            return _chw(np.array(im.convert('L')))
        if im.mode == 'CMYK':       # Pillow inverts Adobe CMYK on reading; torchvision returns the stored values
            return _chw(255 - np.array(im))
        if im.mode not in ('L', 'LA', 'P', 'RGB', 'RGBA'):
            im = im.convert('RGBA' if 'A' in im.getbands() else 'RGB')
        return _chw(np.array(im))
    if im.mode == 'P':              # through the palette's colours (and transparency), as libpng expands it
        im = im.convert('RGBA' if 'transparency' in im.info or im.palette.mode == 'RGBA' else 'RGB')
    return _chw(np.array(im.convert(_PIL_MODE[mode])))


def decode_png(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode PNG bytes (a 1-D uint8 tensor) to a uint8 ``(C, H, W)`` tensor."""
    im = _open(input, ('PNG',), "Content is not png!")
    return _to_tensor(im, _mode(mode), apply_exif_orientation)


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device='cpu', apply_exif_orientation=False):
    """Decode JPEG bytes to a uint8 ``(C, H, W)`` tensor; a list of inputs gives a list of images."""
    mode = _mode(mode)
    if str(device) != 'cpu':
        raise RuntimeError(f"ember decodes JPEG on the CPU only, got device={device!r}")
    if isinstance(input, (list, tuple)):
        if not input:
            raise ValueError("Input list must contain at least one element")
        if not all(isinstance(t, ember.Tensor) for t in input):
            raise ValueError("All elements of the input list must be tensors.")
        return [decode_jpeg(t, mode, device, apply_exif_orientation) for t in input]
    if mode in (ImageReadMode.GRAY_ALPHA, ImageReadMode.RGB_ALPHA):
        raise RuntimeError("The provided mode is not supported for JPEG files")
    raw = _encoded_bytes(input)
    if raw[:2] != b'\xff\xd8':
        raise RuntimeError(f"Not a JPEG file: starts with 0x{raw[0]:02x} 0x{raw[1] if len(raw) > 1 else 0:02x}")
    im = _open(input, ('JPEG', 'MPO'), "Not a JPEG file", gray=mode == ImageReadMode.GRAY)
    return _to_tensor(im, mode, apply_exif_orientation)


def decode_gif(input):
    """Decode GIF bytes: ``(3, H, W)`` for one frame, ``(N, 3, H, W)`` for an animation."""
    im = _open(input, ('GIF',), "Input is not a GIF")
    frames = []
    for k in range(getattr(im, 'n_frames', 1)):
        im.seek(k)
        frames.append(_chw(np.array(im.convert('RGB'))))
    return frames[0] if len(frames) == 1 else ember.stack(frames)


def decode_webp(input, mode=ImageReadMode.UNCHANGED):
    """Decode WebP bytes to a uint8 ``(C, H, W)`` tensor (RGB or RGBA)."""
    mode = _mode(mode)
    if mode not in (ImageReadMode.UNCHANGED, ImageReadMode.RGB, ImageReadMode.RGB_ALPHA):
        raise RuntimeError("Unsupported mode for WebP, only UNCHANGED, RGB and RGB_ALPHA are supported")
    im = _open(input, ('WEBP',), "Input is not a WebP image")
    return _to_tensor(im, mode, False)


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode JPEG, PNG, GIF or WebP bytes (or the file at a path) to a uint8 tensor, by the content's format."""
    if not isinstance(input, ember.Tensor):
        input = read_file(str(input))
    mode = _mode(mode)
    raw = _encoded_bytes(input)
    if raw[:3] == b'\xff\xd8\xff':
        return decode_jpeg(input, mode, apply_exif_orientation=apply_exif_orientation)
    if raw[:8] == b'\x89PNG\r\n\x1a\n':
        return decode_png(input, mode, apply_exif_orientation)
    if raw[:6] in (b'GIF87a', b'GIF89a'):
        return decode_gif(input)
    if raw[:4] == b'RIFF' and raw[8:12] == b'WEBP':
        return decode_webp(input, mode)
    raise RuntimeError("Unsupported image file. Only jpeg, png, webp and gif are currently supported. "
                       "ember does not decode avif or heic.")


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """``decode_image(read_file(path))``."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


def _pil_for_encoding(input):
    if input.dtype != ember.uint8:
        raise RuntimeError("Input tensor dtype should be uint8")
    if input.dim() != 3:
        raise RuntimeError("Input data should be a 3-dimensional tensor")
    if input.shape[0] not in (1, 3):
        raise RuntimeError(f"The number of channels should be 1 or 3, got: {input.shape[0]}")
    arr = input.detach().numpy().transpose(1, 2, 0)
    return pil_image().fromarray(np.ascontiguousarray(arr[:, :, 0] if arr.shape[2] == 1 else arr))


def _save(im, **kwargs):
    buf = io.BytesIO()
    im.save(buf, **kwargs)
    return ember.from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def encode_jpeg(input, quality=75):
    """Encode a uint8 ``(1 or 3, H, W)`` tensor (or a list of them) as JPEG bytes."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, (list, tuple)):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is passed")
        return [encode_jpeg(t, quality) for t in input]
    return _save(_pil_for_encoding(input), format='JPEG', quality=quality)


def encode_png(input, compression_level=6):
    """Encode a uint8 ``(1 or 3, H, W)`` tensor as PNG bytes (zlib ``compression_level`` 0–9)."""
    if compression_level < 0 or compression_level > 9:
        raise RuntimeError("Compression level should be between 0 and 9")
    return _save(_pil_for_encoding(input), format='PNG', compress_level=compression_level)


def write_jpeg(input, filename, quality=75):
    write_file(filename, encode_jpeg(input, quality))


def write_png(input, filename, compression_level=6):
    write_file(filename, encode_png(input, compression_level))
