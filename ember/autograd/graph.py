"""ember.autograd.graph: Node, hooks on saved tensors."""
from .node import Node
from .saved_hooks import saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks
