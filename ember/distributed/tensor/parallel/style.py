"""torch.distributed.tensor.parallel.style: how ``parallelize_module`` shards a module over a DeviceMesh.

Each style records torch's options (input and output placements, the sequence dimension, whether outputs are
local tensors); applying one distributes the module's parameters as DTensors, which ember does not have
(``ember.distributed.tensor``), so ``_apply`` raises saying so. Programs that build a plan only when tensor
parallelism is asked for (torchtune, torchtitan) import and configure these freely.

>>> from ember.distributed.tensor.parallel.style import ColwiseParallel
>>> from ember.distributed.tensor.placement_types import Shard
>>> ColwiseParallel(output_layouts=Shard(1)).output_layouts
(Shard(dim=1),)
"""
import abc

from ..placement_types import Placement, Replicate, Shard
from .. import distribute_module

__all__ = ['ParallelStyle', 'RowwiseParallel', 'SequenceParallel', 'ColwiseParallel', 'PrepareModuleInput',
           'PrepareModuleInputOutput', 'PrepareModuleOutput']


class ParallelStyle(abc.ABC):
    """What ``parallelize_module`` applies to a module: ``_apply(module, device_mesh)``."""
    src_data_rank = 0

    @abc.abstractmethod
    def _apply(self, module, device_mesh):
        ...


class _Distributing(ParallelStyle):
    def _apply(self, module, device_mesh):
        return distribute_module(module, device_mesh)       # raises: ember has no DTensor


class ColwiseParallel(_Distributing):
    """Shard a Linear's weight by output features (an Embedding's by columns): replicated input, output
    sharded on the last dimension."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = (input_layouts or Replicate(),)
        self.output_layouts = (output_layouts or Shard(-1),)
        self.desired_input_layouts = (Replicate(),)
        self.use_local_output = use_local_output


class RowwiseParallel(_Distributing):
    """Shard a Linear's weight by input features (an Embedding's by rows): input sharded on the last dimension,
    output replicated (reduced)."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = (input_layouts or Shard(-1),)
        self.output_layouts = (output_layouts or Replicate(),)
        self.use_local_output = use_local_output


class SequenceParallel(_Distributing):
    """Replicate a norm or dropout's parameters and run it on inputs sharded along ``sequence_dim``."""

    def __init__(self, *, sequence_dim=1, use_local_output=False):
        self.sequence_sharding = (Shard(sequence_dim),)
        self.use_local_output = use_local_output


def _tuple(layouts):
    return (layouts,) if isinstance(layouts, Placement) else layouts


class PrepareModuleInput(_Distributing):
    """Redistribute a module's inputs from ``input_layouts`` to ``desired_input_layouts`` before forward."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None, input_kwarg_layouts=None,
                 desired_input_kwarg_layouts=None, use_local_output=False):
        self.input_layouts = _tuple(input_layouts)
        self.desired_input_layouts = _tuple(desired_input_layouts)
        self.use_local_output = use_local_output
        if self.input_layouts is not None and len(self.input_layouts) != len(self.desired_input_layouts):
            raise AssertionError("input_layouts and desired_input_layouts should have same length!")
        self.with_kwargs = input_kwarg_layouts is not None
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        if self.with_kwargs and len(self.input_kwarg_layouts) != len(self.desired_input_kwarg_layouts):
            raise AssertionError("input_kwarg_layouts and desired_input_kwarg_layouts should have same length!")


class PrepareModuleOutput(_Distributing):
    """Redistribute a module's outputs from ``output_layouts`` to ``desired_output_layouts`` after forward."""

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output=True):
        self.output_layouts = _tuple(output_layouts)
        self.desired_output_layouts = _tuple(desired_output_layouts)
        self.use_local_output = use_local_output
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError("output_layouts and desired_output_layouts should have same length!")


class PrepareModuleInputOutput(_Distributing):
    """``PrepareModuleInput`` and ``PrepareModuleOutput`` together."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None, input_kwarg_layouts=None,
                 desired_input_kwarg_layouts=None, use_local_input=False, output_layouts, desired_output_layouts,
                 use_local_output=True):
        self.prepare_module_input = PrepareModuleInput(
            input_layouts=input_layouts, desired_input_layouts=desired_input_layouts,
            input_kwarg_layouts=input_kwarg_layouts, desired_input_kwarg_layouts=desired_input_kwarg_layouts,
            use_local_output=use_local_input)
        self.prepare_module_output = PrepareModuleOutput(
            output_layouts=output_layouts, desired_output_layouts=desired_output_layouts,
            use_local_output=use_local_output)
