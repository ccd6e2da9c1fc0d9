"""torch.onnx.errors: the exceptions ember.onnx raises."""

__all__ = ['OnnxExporterError', 'UnsupportedOperatorError']


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operator of the exported graph that has no ONNX translation at the requested opset."""

    def __init__(self, name, version, supported_version=None, detail=''):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported. Support for "
                   f"this operator was added in version {supported_version}, try exporting with this version")
        else:
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        super().__init__(msg + (f'. {detail}' if detail else ''))
