"""``torchvision.io`` on ember: image files and bytes ↔ uint8 CHW tensors, decoded and encoded with Pillow.

torchvision 0.28 has no video reading (``read_video``/``VideoReader`` were removed in 0.26), and neither has
ember: the names raise AttributeError with that explanation, so ``hasattr`` checks (as transformers makes)
see them absent.
"""
from .image import (ImageReadMode, read_file, write_file, decode_image, decode_jpeg, decode_png, decode_gif,
                    decode_webp, read_image, encode_jpeg, encode_png, write_jpeg, write_png)

__all__ = ['ImageReadMode', 'read_file', 'write_file', 'decode_image', 'decode_jpeg', 'decode_png', 'decode_gif',
           'decode_webp', 'read_image', 'encode_jpeg', 'encode_png', 'write_jpeg', 'write_png']

_VIDEO = ('read_video', 'read_video_timestamps', 'write_video', 'VideoReader', 'decode_avif', 'decode_heic')


def __getattr__(name):
    if name in _VIDEO:
        raise AttributeError(f"ember.vision.io does not implement {name}: video I/O (removed from torchvision in "
                             "0.26) and AVIF/HEIC decoding are not available; decode video with torchcodec or PyAV")
    raise AttributeError(f"module 'ember.vision.io' has no attribute '{name}'")
