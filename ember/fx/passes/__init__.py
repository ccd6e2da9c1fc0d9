"""Passes over fx graphs (torch.fx.passes): shape propagation, module splitting, graph drawing, matching."""
from . import graph_drawer, shape_prop, split_module  # noqa: F401
