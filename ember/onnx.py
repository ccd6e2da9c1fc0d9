"""``torch.onnx`` seen through ember: importable, so programs that only import it run; exporting is not supported.

ember has no ONNX exporter (it would need the ``onnx`` package and a graph
exporter over ember's fx graphs). Programs such as pytorch/examples'
word_language_model ``import torch.onnx`` at the top and export only on request,
so the module exists and ``export`` raises an error that names the gap.
"""

__all__ = ['export', 'is_in_onnx_export']


def export(model, args=(), f=None, *unused_args, **unused_kwargs):
    """Not supported: ember cannot write ONNX files.

    Example::

        >>> import ember.onnx
        >>> ember.onnx.export(model, (x,), 'model.onnx')   # raises NotImplementedError
    """
    raise NotImplementedError('ember does not implement torch.onnx.export: ember has no ONNX exporter; '
                              'save the model with ember.save or trace it with ember.fx instead')


def is_in_onnx_export():
    """False: ember never runs an ONNX export (torch answers the same outside an export).

    Example::

        >>> ember.onnx.is_in_onnx_export()
        False
    """
    return False
