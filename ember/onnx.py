"""ember.onnx: deliberately absent. Exporting to ONNX needs a traced graph of the model (issue 11, ember.fx
and export) and an ONNX writer; neither exists in ember yet. ``import torch.onnx`` succeeds, so programs that
only export on request run; each export function raises an error saying so.

>>> import ember
>>> ember.onnx.is_in_onnx_export()
False
"""


from ._absent import absent


def _absent(name):
    return absent(f'ember.onnx.{name}', ": ONNX export is not available in ember (it needs graph capture, issue 11, "
                  "and an ONNX writer). Save the weights with ember.save and export from PyTorch, which reads "
                  "ember's checkpoints.")


export = _absent('export')
_export = _absent('_export')
dynamo_export = _absent('dynamo_export')
export_to_pretty_string = _absent('export_to_pretty_string')
register_custom_op_symbolic = _absent('register_custom_op_symbolic')


def is_in_onnx_export():
    """False: ember never runs a model under ONNX export."""
    return False


def is_onnxrt_backend_supported():
    return False
