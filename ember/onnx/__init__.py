"""ember.onnx (torch.onnx): write a model as an ONNX file, through its exported aten graph.

``export(model, args, f, input_names=..., output_names=..., dynamic_axes=..., opset_version=17)`` captures the
model with ``ember.export.export`` (on fake tensors, in eval mode), decomposes what ONNX lacks, folds what is
known at export time into constants and translates the rest operator by operator (``_exporter.py``,
``_translations.py``); the model is checked with ``onnx.checker`` before it is written. It needs the ``onnx``
package (``pip install ember[onnx]``); ``ONNXProgram.__call__`` runs the model with onnxruntime when that is
installed. Opsets 13 and later are written; ``LayerNormalization`` needs 17 (below it layer norm is decomposed),
``Gelu`` 20 (below it gelu is decomposed).

>>> import io, ember
>>> model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
>>> buf = io.BytesIO()
>>> program = ember.onnx.export(model, (ember.randn(3, 4),), buf, input_names=['x'], output_names=['y'],
...                             dynamic_axes={'x': {0: 'batch'}, 'y': {0: 'batch'}})
>>> [n.op_type for n in program.model_proto.graph.node]
['Gemm', 'Relu', 'Gemm']
"""
import enum
import threading

from .._absent import absent
from .errors import OnnxExporterError, UnsupportedOperatorError  # noqa: F401
from . import errors  # noqa: F401

__all__ = ['export', 'is_in_onnx_export', 'ONNXProgram', 'TrainingMode', 'OperatorExportTypes', 'errors',
           'OnnxExporterError']

_state = threading.local()
DEFAULT_OPSET = 17


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def is_in_onnx_export():
    """True while ``ember.onnx.export`` is capturing a model."""
    return bool(getattr(_state, 'exporting', False))


def is_onnxrt_backend_supported():
    return False


class ONNXProgram:
    """The exported model (torch.onnx.ONNXProgram): ``model_proto``, ``save(path)``, and ``__call__`` through
    onnxruntime."""

    def __init__(self, model_proto, exported_program):
        self.model_proto = model_proto
        self.exported_program = exported_program
        self._session = None

    @property
    def model(self):
        return self.model_proto

    def save(self, destination, **kwargs):
        import onnx
        onnx.save_model(self.model_proto, destination)

    def initialize_inference_session(self, initializer=None):
        try:
            import onnxruntime
        except ImportError as e:
            raise ImportError('running an exported ONNX program needs onnxruntime: pip install onnxruntime') from e
        self._session = onnxruntime.InferenceSession(self.model_proto.SerializeToString(),
                                                     providers=['CPUExecutionProvider'])

    def __call__(self, *args, **kwargs):
        import numpy as np
        import ember
        from ember.utils import _pytree as pytree
        if self._session is None:
            self.initialize_inference_session()
        feeds = [a for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, ember.Tensor)]
        names = [i.name for i in self._session.get_inputs()]
        outs = self._session.run(None, {n: np.asarray(t.detach().numpy()) for n, t in zip(names, feeds)})
        return [ember.from_numpy(np.array(o)) for o in outs]

    def release(self):
        self._session = None

    def __repr__(self):
        import onnx
        return f'ONNXProgram(\n{onnx.printer.to_text(self.model_proto)}\n)'


def _normalize_dynamic_axes(dynamic_axes):
    out = {}
    for name, axes in (dynamic_axes or {}).items():
        if isinstance(axes, dict):
            out[name] = {int(a): str(d) for a, d in axes.items()}
        else:
            out[name] = {int(a): f'{name}_dynamic_axes_{i + 1}' for i, a in enumerate(axes)}
    return out


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None, custom_translation_table=None,
           report=False, optimize=True, verify=False, profile=False, dump_exported_program=False, artifacts_dir='.',
           fallback=False, export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True,
           custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True):
    """Export ``model`` (an nn.Module or an ExportedProgram) called on ``args`` to ONNX; write it to ``f`` (a
    path or a binary file) when given, and return the ONNXProgram.

    ``custom_translation_table`` maps aten OpOverloads to ember translation functions
    ``fn(builder, out, *args, **kwargs)`` (see ``_translations.py``), not to onnxscript functions.
    ``dynamic_shapes`` (torch.export's form) is refused as ember.export refuses it; use ``dynamic_axes``.
    """
    try:
        import onnx
    except ImportError as e:
        raise ImportError('ember.onnx.export needs the onnx package: pip install onnx (or ember[onnx])') from e
    from ._exporter import capture, translate, symbolic_sizes
    if dynamic_shapes is not None:
        raise NotImplementedError('ember.onnx.export(dynamic_shapes=...) needs symbolic sizes, which ember does not '
                                  'have: name the dynamic dimensions with dynamic_axes={input name: {axis: name}}')
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not 13 <= opset <= onnx.defs.onnx_opset_version():
        raise OnnxExporterError(f'ember.onnx.export writes opset versions 13 to {onnx.defs.onnx_opset_version()}, '
                                f'not {opset}')
    args = args if isinstance(args, tuple) else (args,)
    if kwargs is None and args and isinstance(args[-1], dict):     # torch's legacy form: kwargs last in args
        args, kwargs = args[:-1], args[-1]
    kwargs = dict(kwargs or {})
    custom = dict(custom_translation_table or {})
    _state.exporting = True
    try:
        ep = capture(model, args, kwargs, opset, custom, training)
        syms, dims = {}, {}
        axes = _normalize_dynamic_axes(dynamic_axes)
        if axes:
            syms, dims = _dynamic(model, args, kwargs, ep, axes, input_names, output_names, opset, custom, training,
                                  capture, symbolic_sizes)
        proto = translate(ep, opset, input_names, output_names, syms, dims, custom, export_params,
                          keep_initializers_as_inputs, do_constant_folding)
    finally:
        _state.exporting = False
    if verbose:
        print(onnx.printer.to_text(proto))
    if f is not None:
        onnx.save_model(proto, f)
    return ONNXProgram(proto, ep)


def _dynamic(model, args, kwargs, ep, axes, input_names, output_names, opset, custom, training, capture,
             symbolic_sizes):
    """(SymInts of the graph's arguments, {(name, axis): dim name}) for ``dynamic_axes`` (see _exporter.py)."""
    import ember
    from ember.utils import _pytree as pytree
    leaves, spec = pytree.tree_flatten((args, kwargs))
    tensor_pos = [i for i, a in enumerate(leaves) if isinstance(a, ember.Tensor)]
    user = [s for s in ep.graph_signature.input_specs if s.kind.name == 'USER_INPUT']
    placeholder_names = [s.arg.name for s, a in zip(user, leaves) if isinstance(a, ember.Tensor)]
    names = [input_names[i] if input_names and i < len(input_names) else n for i, n in enumerate(placeholder_names)]
    out_names = [s.arg.name for s in ep.graph_signature.output_specs]
    out_names = [output_names[i] if output_names and i < len(output_names) else n for i, n in enumerate(out_names)]
    unknown = set(axes) - set(names) - set(out_names)
    if unknown:
        raise OnnxExporterError(f'dynamic_axes names {sorted(unknown)}, which are neither inputs {names} nor '
                                f'outputs {out_names} of the model')
    variants, dims, dim_names = [], [], {}
    for k, name in enumerate(names):
        for axis, dim_name in axes.get(name, {}).items():
            t = leaves[tensor_pos[k]]
            shape = list(t.shape)
            shape[axis] += 1
            changed = list(leaves)
            changed[tensor_pos[k]] = ember.zeros(shape, dtype=t.dtype)
            a, kw = pytree.tree_unflatten(changed, spec)
            variants.append(capture(model, a, kw, opset, custom, training))
            dims.append((name, axis, t.shape[axis]))
            dim_names[(name, axis)] = dim_name
    syms = symbolic_sizes(ep, variants, dims)
    # an output's dimension is dynamic where it changed in some variant
    outs = [pytree.tree_leaves(next(n for n in e.graph.nodes if n.op == 'output').args[0]) for e in [ep] + variants]
    for i, name in enumerate(out_names):
        base = outs[0][i].meta['val'].shape
        for axis in range(len(base)):
            moved = [j for j, o in enumerate(outs[1:]) if o[i].meta['val'].shape[axis] != base[axis]]
            if not moved:
                continue
            default = f'{name}_dim_{axis}'
            if len(moved) == 1 and base[axis] == dims[moved[0]][2]:     # the size of one dynamic input axis
                default = dim_names[dims[moved[0]][:2]]
            dim_names[('out', i, axis)] = axes.get(name, {}).get(axis, default)
    return syms, dim_names


def _absent(name):
    return absent(f'ember.onnx.{name}', ': ember exports to ONNX through ember.onnx.export (the exported aten '
                  'graph); TorchScript symbolic functions and this entry point have no counterpart in it.')


dynamo_export = _absent('dynamo_export')
export_to_pretty_string = _absent('export_to_pretty_string')
register_custom_op_symbolic = _absent('register_custom_op_symbolic')
unregister_custom_op_symbolic = _absent('unregister_custom_op_symbolic')
_export = _absent('_export')
