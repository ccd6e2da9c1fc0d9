"""torch.distributed.tensor (DTensor): a tensor sharded or replicated over a DeviceMesh.

ember has the layout vocabulary (placements, ``DeviceMesh``, the shape and offset arithmetic of ``_utils``) and not
DTensor itself: a DTensor needs every operator to carry sharding propagation rules, which ember does not have.
``DTensor`` is the type, so ``isinstance(t, DTensor)`` is False for every ember tensor, as it is for an ordinary
torch tensor, and making one (``distribute_tensor``, ``DTensor.from_local``) raises an error saying so. Libraries
(Hugging Face transformers) import these names at start-up and use DTensors only for tensor-parallel models.
"""
from ..device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from .placement_types import Placement, Shard, Replicate, Partial  # noqa: F401

__all__ = ['DTensor', 'DeviceMesh', 'distribute_tensor', 'distribute_module', 'init_device_mesh', 'Shard',
           'Replicate', 'Partial', 'Placement']

_WHY = ("ember has no DTensor: its operators carry no sharding propagation rules. Shard the model by hand over "
        "ember.distributed's collectives, or use DistributedDataParallel")


class DTensor:
    """The distributed tensor type; no ember tensor is one (the module's note)."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(f"DTensor: {_WHY}")

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None):
        raise NotImplementedError(f"DTensor.from_local: {_WHY}")


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    raise NotImplementedError(f"distribute_tensor: {_WHY}")


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None, output_fn=None):
    raise NotImplementedError(f"distribute_module: {_WHY}")
