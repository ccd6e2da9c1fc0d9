"""ember._decomp (torch._decomp): tables that express operators in other aten operators, for make_fx and export.

A table maps an OpOverload to a Python function written in ``ember.ops.aten`` operators
(``decompositions.py``). ``make_fx(f, decomposition_table=table)`` runs the function instead of the operator
and records what it calls; ``ExportedProgram.run_decompositions(table)`` does the same to an exported graph.

* ``get_decompositions([aten.gelu, aten.addmm.default])``: the entries for those operators (a packet such as
  ``aten.gelu`` stands for all its overloads), as torch's;
* ``core_aten_decompositions()``: every decomposition into ember's core operator set, torch's core ATen
  minus what ember lacks. Like torch's it keeps ``addmm``, ``gelu``, ``native_layer_norm``, ``softmax``
  (torch's ``_softmax``) and ``log_softmax`` as core operators.

ember's composite operators (CompositeImplicitAutograd: ``t``, ``conv2d``, ``layer_norm``...) decompose in
the dispatcher before any mode sees them, so their entries never run; they are listed for torch's tables.
``aten.mse_loss`` and the other losses written as Python functions in ember.nn.functional are not operators
in ember, so there is nothing to decompose.

>>> import ember
>>> from ember._decomp import get_decompositions
>>> from ember.fx.experimental.proxy_tensor import make_fx
>>> table = get_decompositions([ember.ops.aten.silu])
>>> gm = make_fx(ember.nn.functional.silu, decomposition_table=table)(ember.randn(3))
>>> [str(n.target) for n in gm.graph.nodes if n.op == 'call_function']
['aten.sigmoid.default', 'aten.mul.Tensor']
"""
from .decompositions import DECOMPOSITIONS, TORCH_COMPOSITES, register_decomposition

__all__ = ['get_decompositions', 'core_aten_decompositions', 'register_decomposition', 'decomposition_table']

decomposition_table = DECOMPOSITIONS

# operators torch's core ATen set keeps (ember's softmax.int/log_softmax.int are torch's _softmax/_log_softmax)
_CORE = ('addmm.default', 'gelu.default', 'native_layer_norm.default', 'softmax.int', 'log_softmax.int')


def _overloads(op):
    if hasattr(op, 'overloads'):            # a packet: every overload that has a decomposition
        return [getattr(op, o) for o in op.overloads()]
    return [op]


def get_decompositions(aten_ops, type=None):
    """``{OpOverload: function}`` for the given operators (OpOverloads or OpOverloadPackets) that have one."""
    table = {}
    for op in aten_ops:
        for ov in _overloads(op):
            if ov in DECOMPOSITIONS:
                table[ov] = DECOMPOSITIONS[ov]
    return table


def core_aten_decompositions():
    """The decompositions into ember's core aten operators (see the module docstring)."""
    core = {f'aten.{c}' for c in _CORE}
    return {op: fn for op, fn in DECOMPOSITIONS.items() if str(op) not in core}


def torch_composite_decompositions():
    """torch's CompositeImplicitAutograd definitions of the operators ember gives fused kernels (linear,
    matmul): make_fx applies them unless ``pre_dispatch=True``, so its graphs show torch's operators."""
    return {op: DECOMPOSITIONS[op] for op in TORCH_COMPOSITES}
