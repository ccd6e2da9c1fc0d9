"""ember.export (torch.export): capture a module as an ExportedProgram, and save and load one.

``export(module, args)`` runs the module's forward on fake tensors (no data is read) under make_fx's
dispatch mode at the pre-dispatch level: composite operators are decomposed as the dispatcher does, ember's
fused ``linear``/``matmul`` and the rest of its operators are kept, in-place operators stay in-place (torch's
training IR). Parameters, buffers, lifted constants and the user's inputs are the graph's placeholders
(``p_fc_weight``, ``b_bn_running_mean``, ``c_lifted_tensor_0``, ``x``), described by ``graph_signature``.
Python control flow on a tensor's value cannot be traced on fake tensors: export raises
``GuardOnDataDependentSymNode`` naming the line. Shapes are those of the example inputs unless
``dynamic_shapes`` names dimensions that may vary: those are traced as symbols (NOTE [symbolic sizes]), the
graph reads them with ``sym_size_int`` nodes, ``range_constraints`` maps each symbol to its range, and a spec
the code contradicts (a size it specialised, a bound it needs) is a ``UserError`` naming the dimension, the
guard and a fix (NOTE [dynamic export] in ``dynamic_shapes.py``).

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
>>> batch = ember.export.Dim('batch', min=2, max=64)
>>> ep = ember.export.export(ember.nn.Linear(3, 2), (ember.randn(4, 3),), dynamic_shapes={'input': {0: batch}})
>>> ep.range_constraints
{s0: VR[2, 64]}
>>> ep.module()(ember.randn(9, 3)).shape
ember.Size([9, 2])
"""
from . import dynamic_shapes as _dyn
from .dynamic_shapes import Dim, ShapesCollection, dims  # noqa: F401
from .exported_program import ExportedProgram
from .graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,  # noqa: F401
                              TensorArgument, ConstantArgument)  # noqa: F401

__all__ = ['export', 'save', 'load', 'ExportedProgram', 'ExportGraphSignature', 'InputKind', 'InputSpec',
           'OutputKind', 'OutputSpec', 'Dim', 'ShapesCollection', 'dims', 'default_decompositions',
           'register_dataclass']


def default_decompositions():
    """The decomposition table ``ExportedProgram.run_decompositions()`` uses by default (ember's core aten
    decompositions and torch's definitions of linear and matmul), as a dict to edit and pass back: delete an
    operator to keep it in the graph. (torch returns a CustomDecompTable, a dict-like class.)

    >>> import ember
    >>> table = default_decompositions()
    >>> ember.ops.aten.linear.default in table
    True
    """
    from ember._decomp import core_aten_decompositions, torch_composite_decompositions
    return {**torch_composite_decompositions(), **core_aten_decompositions()}


def register_dataclass(cls, *, serialized_type_name=None):
    """Make dataclass ``cls`` a valid input and output of ``export`` (a pytree node whose children are its
    fields that are not None).

    >>> import dataclasses, ember
    >>> @dataclasses.dataclass
    ... class Pair:
    ...     a: ember.Tensor
    ...     b: ember.Tensor
    >>> register_dataclass(Pair)
    >>> len(ember.utils._pytree.tree_leaves(Pair(ember.ones(1), ember.zeros(1))))
    2
    """
    from ember.utils import _pytree
    _pytree.register_dataclass(cls, serialized_type_name=serialized_type_name)


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()):
    """Capture ``mod(*args, **kwargs)`` as an ExportedProgram (see the module docstring).

    ``dynamic_shapes``: which input sizes may vary (NOTE [dynamic export] in ``dynamic_shapes.py``): a dict by
    argument name or a tuple by position, each tensor's entry a dict ``{dim: Dim(...)}`` or a tuple with one
    entry per dimension (``Dim``, ``2*dim``, ``Dim.AUTO``, ``Dim.DYNAMIC``, ``Dim.STATIC``/None, an int), or a
    ``ShapesCollection``. ``strict=True`` (torch's TorchDynamo front end) traces the same way: ember has no
    bytecode tracer.
    """
    import ember
    from ._trace import trace_module, _positional_names
    if not isinstance(mod, ember.nn.Module):
        raise ValueError(f'Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.')
    if not isinstance(args, tuple):
        raise ValueError(f'Expecting `args` to be a tuple of example positional inputs, got {type(args)}')
    kwargs = dict(kwargs or {})
    names = _positional_names(mod, len(args))
    specs = _dyn.leaf_specs(names, args, kwargs, dynamic_shapes)
    ranges = {}
    if specs is not None and any(specs):
        graph, signature, state_dict, constants, in_spec, out_spec, ranges = _trace_dynamic(mod, args, kwargs, specs)
    else:
        graph, signature, state_dict, constants, in_spec, out_spec = trace_module(mod, args, kwargs)
    return ExportedProgram(ember.nn.Module(), graph, signature, state_dict, ranges, constants, (args, kwargs),
                           in_spec=in_spec, out_spec=out_spec, forward_arg_names=names)


def _trace_dynamic(mod, args, kwargs, specs):
    """Trace with symbolic sizes and run the two checks of NOTE [dynamic export]; an AUTO dim that specialises
    becomes static and the module is traced again."""
    from ember.utils import _pytree as pytree
    from ._trace import trace_module, _user_input_names
    flat_user, in_spec = pytree.tree_flatten((tuple(args), dict(kwargs)))
    leaf_names = _user_input_names(mod, args, kwargs)
    specs = [dict(s) if s else s for s in specs]

    def traced(flat, specs):
        fake_mode = _fake_mode()
        dyn = _dyn.make_fakes(fake_mode, flat, specs, leaf_names)
        a, k = pytree.tree_unflatten(list(flat), in_spec)
        return dyn, trace_module(mod, a, k, fake_mode=fake_mode)

    while True:
        dyn, pieces = traced(flat_user, specs)
        static, ties = _dyn.check_guards(dyn)
        if ties:
            _dyn.apply_ties(dyn, specs, ties)
            continue
        if not static:
            values = _dyn.probe_values(dyn)
            if values:
                _, other = traced(_dyn.probe_inputs(flat_user, dyn, values), specs)
                if _dyn.first_difference(pieces[0], other[0]) is not None:
                    static = _culprits(dyn, values, flat_user, specs, pieces[0], traced)
        if not static:
            return (*pieces, _dyn.range_constraints(dyn))
        for sym_name in static:            # AUTO dims that specialised: static, and trace again
            for leaf, d in dyn.roots[sym_name]['at']:
                specs[leaf][d] = None


def _culprits(dyn, values, flat_user, specs, graph, traced):
    """Which symbols became constants: trace once per symbol moved alone. AUTO ones are returned (to make static);
    a Dim or DYNAMIC one raises."""
    static = []
    for sym_name, v in values.items():
        _, other = traced(_dyn.probe_inputs(flat_user, dyn, {sym_name: v}), specs)
        why = _dyn.first_difference(graph, other[0])
        if why is None:
            continue
        if dyn.roots[sym_name]['kind'] == 'auto':
            static.append(sym_name)
        else:
            raise _dyn.specialization_error(dyn, sym_name, (v, why))
    if static:
        return static
    fixed = [s for s in values if dyn.roots[s]['kind'] != 'auto']
    if not fixed:
        return list(values)
    why = _dyn.first_difference(graph, traced(_dyn.probe_inputs(flat_user, dyn, values), specs)[1][0])
    raise _dyn.specialization_error(dyn, fixed[0], (values[fixed[0]], why))


def _fake_mode():
    from ember._subclasses.fake_tensor import FakeTensorMode
    from ember.fx.experimental.symbolic_shapes import ShapeEnv
    return FakeTensorMode(shape_env=ShapeEnv())


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ``ep`` to ``f`` (a path or a binary file object) in the format of ``_serialize.py``."""
    from ._serialize import save_program
    save_program(ep, f, extra_files=extra_files)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Read an ExportedProgram written by ``save``; no code from the file runs (``_serialize.py``)."""
    from ._serialize import load_program
    return load_program(f, extra_files=extra_files)
