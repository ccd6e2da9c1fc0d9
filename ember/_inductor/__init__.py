"""ember._inductor: the code-generating compiler backend (torch._inductor's place in the stack).

An aten graph (from capture, or a forward/backward graph from AOTAutograd) goes through graph passes
(``passes``: dead code, common subexpressions, constant folding), fusion of pointwise chains (``fusion``, NOTE
[blocked fusion]), buffer planning (``buffers``, NOTE [buffer planning]) and code generation (``codegen``, NOTE
[array code generation]) into one Python function that calls the CPU backend's array kernels directly on NumPy
arrays.
"""
from .codegen import generate, CompiledGraph
from . import passes

__all__ = ['generate', 'CompiledGraph', 'passes', 'compile_graph']


def compile_graph(graph, attrs, name='call', take_list=False):
    """Run the passes on ``graph`` (modified in place) and generate its array function."""
    passes.cse(graph)
    passes.fold_constants(graph, attrs)
    passes.dce(graph)
    return generate(graph, attrs, name, take_list=take_list)
