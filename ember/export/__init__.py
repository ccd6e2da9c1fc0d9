"""ember.export (torch.export): capture a module as an ExportedProgram, and save and load one.

``export(module, args)`` runs the module's forward on fake tensors (no data is read) under make_fx's
dispatch mode at the pre-dispatch level: composite operators are decomposed as the dispatcher does, ember's
fused ``linear``/``matmul`` and the rest of its operators are kept, in-place operators stay in-place (torch's
training IR). Parameters, buffers, lifted constants and the user's inputs are the graph's placeholders
(``p_fc_weight``, ``b_bn_running_mean``, ``c_lifted_tensor_0``, ``x``), described by ``graph_signature``.
Python control flow on a tensor's value cannot be traced on fake tensors: export raises
``GuardOnDataDependentSymNode`` naming the line. Shapes are those of the example inputs (ember has no
symbolic sizes): ``range_constraints`` is empty and ``dynamic_shapes`` naming a dynamic dimension is refused.

``save(ep, f)`` / ``load(f)`` use the file format documented in ``_serialize.py``: a zip archive with the
graph as a JSON list of nodes and the tensors in ember's (torch's) checkpoint format, read back with
``weights_only`` unpickling; loading rebuilds the graph from the JSON and never runs code from the file.

>>> import ember
>>> ep = ember.export.export(ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU()), (ember.randn(4, 3),))
>>> print(ep.graph_signature)
# inputs
p_0_weight: PARAMETER target='0.weight'
p_0_bias: PARAMETER target='0.bias'
input: USER_INPUT
<BLANKLINE>
# outputs
relu: USER_OUTPUT
>>> [str(n.target) for n in ep.graph.nodes if n.op == 'call_function']
['aten.linear.default', 'aten.relu.default']
"""
from .exported_program import ExportedProgram
from .graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,  # noqa: F401
                              TensorArgument, ConstantArgument)  # noqa: F401

__all__ = ['export', 'save', 'load', 'ExportedProgram', 'ExportGraphSignature', 'InputKind', 'InputSpec',
           'OutputKind', 'OutputSpec', 'Dim', 'ShapesCollection']


class Dim:
    """A named dimension for ``dynamic_shapes`` (torch.export.Dim). ember traces static shapes only, so an
    export that names one is refused (see ``export``); ``Dim.STATIC``/``Dim.AUTO`` ask for the static shape."""
    STATIC = 'static'
    AUTO = 'auto'
    DYNAMIC = 'dynamic'

    def __init__(self, name, *, min=None, max=None):
        self.__name__, self.min, self.max = name, min, max

    def __repr__(self):
        return f'Dim({self.__name__!r}, min={self.min}, max={self.max})'


class ShapesCollection(dict):
    """torch.export.ShapesCollection: ``dynamic_shapes`` keyed by the example tensors (see ``Dim``)."""


def _is_dynamic(spec):
    if spec is None or spec == Dim.STATIC or isinstance(spec, int):
        return False
    if isinstance(spec, (list, tuple)):
        return any(_is_dynamic(s) for s in spec)
    if isinstance(spec, dict):
        return any(_is_dynamic(s) for s in spec.values())
    return True       # a Dim, Dim.AUTO or Dim.DYNAMIC


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()):
    """Capture ``mod(*args, **kwargs)`` as an ExportedProgram (see the module docstring).

    ``strict=True`` (torch's TorchDynamo front end) traces the same way: ember has no bytecode tracer.
    """
    import ember
    from ._trace import trace_module, _positional_names
    if not isinstance(mod, ember.nn.Module):
        raise ValueError(f'Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.')
    if not isinstance(args, tuple):
        raise ValueError(f'Expecting `args` to be a tuple of example positional inputs, got {type(args)}')
    kwargs = dict(kwargs or {})
    if _is_dynamic(dynamic_shapes):
        raise NotImplementedError(
            'ember.export traces the example inputs\' shapes only: ember has no symbolic sizes (SymInt), so the '
            f'dynamic dimensions in dynamic_shapes={dynamic_shapes!r} cannot be kept. Export once per shape, or '
            'export from PyTorch (it reads ember\'s checkpoints).')
    graph, signature, state_dict, constants, in_spec, out_spec = trace_module(mod, args, kwargs)
    return ExportedProgram(ember.nn.Module(), graph, signature, state_dict, {}, constants, (args, kwargs),
                           in_spec=in_spec, out_spec=out_spec, forward_arg_names=_positional_names(mod, len(args)))


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ``ep`` to ``f`` (a path or a binary file object) in the format of ``_serialize.py``."""
    from ._serialize import save_program
    save_program(ep, f, extra_files=extra_files)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Read an ExportedProgram written by ``save``; no code from the file runs (``_serialize.py``)."""
    from ._serialize import load_program
    return load_program(f, extra_files=extra_files)
