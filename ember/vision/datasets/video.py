"""HMDB51 and UCF101: action-recognition videos, as clips of ``frames_per_clip`` frames.

torchvision cuts the videos into clips with ``video_utils.VideoClips``, which decodes them with its video
reader; torchvision 0.26 removed video decoding (in favour of TorchCodec), and ember.vision has none either
(ember.vision.io). The classes are here so that programs importing them load; making one raises saying so.
"""

__all__ = ['HMDB51', 'UCF101']

_WHY = ("{name}: ember.vision cannot decode videos (torchvision removed its video reader in 0.26, and ember.vision.io "
        "has none), so it cannot cut {name}'s videos into clips; decode them with torchcodec or PyAV and wrap the "
        "clips in a Dataset")


class _VideoDataset:
    def __init__(self, root, annotation_path, frames_per_clip, *args, **kwargs):
        raise RuntimeError(_WHY.format(name=type(self).__name__))


class HMDB51(_VideoDataset):
    data_url = 'https://serre-lab.clps.brown.edu/wp-content/uploads/2013/10/hmdb51_org.rar'


class UCF101(_VideoDataset):
    data_url = 'https://www.crcv.ucf.edu/data/UCF101/UCF101.rar'
