"""torch._inductor.decomposition: the compiler's decomposition table, ember's core ATen decompositions
(ember._decomp) plus those a program registers with ``register_decomposition``; ``select_decomp_table()``
hands it out. ember's compiler lowers the operators of its graphs itself (NOTE [array code generation]), so the
table serves the programs and passes that read it (make_fx and export take it as ``decomposition_table``).

>>> import ember
>>> from ember._inductor.decomposition import register_decomposition, select_decomp_table
>>> @register_decomposition(ember.ops.aten.special_entr.default)
... def entr(x):
...     return -x * x.log()
>>> select_decomp_table()[ember.ops.aten.special_entr.default] is entr
True
"""
import logging

from .._decomp import core_aten_decompositions, register_decomposition as _register

__all__ = ['decompositions', 'register_decomposition', 'select_decomp_table']

log = logging.getLogger(__name__)
decompositions = dict(core_aten_decompositions())


def register_decomposition(ops):
    """Decorator: register the function as the compiler's decomposition of each operator in ``ops`` (a
    duplicate is logged and replaces the old entry, as torch's)."""
    for op in [ops] if callable(ops) else ops:
        if op in decompositions:
            log.warning("duplicate decomp: %s", ops)
    return _register(ops, decompositions)


def select_decomp_table():
    """The decomposition table the compiler uses."""
    return decompositions
