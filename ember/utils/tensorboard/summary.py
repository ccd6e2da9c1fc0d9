"""torch.utils.tensorboard.summary: the functions that build TensorBoard's Summary protocol buffers (``scalar``,
``histogram``, ``image``, ``hparams``, ...). As the writer (this package's ``__init__``), they are tensorboardX's,
the package torch's module was derived from, with the same names and arguments; each takes ember Tensors where
torch's takes torch Tensors (converted to arrays first, anywhere in its arguments).

>>> from ember.utils.tensorboard.summary import hparams        # doctest: +SKIP
>>> experiment, start, end = hparams({'lr': 0.1}, {'loss': 1.0})        # doctest: +SKIP
"""
import functools

import tensorboardX.summary as _tbx_summary
from tensorboardX.summary import (HistogramProto, PrCurvePluginData, Summary, SummaryMetadata,  # noqa: F401
                                  TensorProto, TensorShapeProto, TextPluginData)

from . import _arrays

_BUILDERS = ('scalar', 'histogram', 'histogram_raw', 'image', 'image_boxes', 'video', 'audio', 'text', 'hparams',
             'custom_scalars', 'pr_curve', 'pr_curve_raw', 'mesh', 'make_histogram', 'make_image', 'make_video',
             'draw_boxes', 'compute_curve', 'convert_to_HWC', 'make_np')

__all__ = list(_BUILDERS) + ['HistogramProto', 'PrCurvePluginData', 'Summary', 'SummaryMetadata', 'TensorProto',
                             'TensorShapeProto', 'TextPluginData']


def _converting(fn):
    @functools.wraps(fn)
    def build(*args, **kwargs):
        return fn(*_arrays(args), **_arrays(kwargs))
    build.__module__ = __name__
    return build


globals().update({_name: _converting(getattr(_tbx_summary, _name)) for _name in _BUILDERS})
