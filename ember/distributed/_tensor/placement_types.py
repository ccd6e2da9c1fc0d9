"""torch.distributed._tensor.placement_types: the old path of the placements and the layout record."""
from ..tensor.placement_types import Placement, Shard, Replicate, Partial  # noqa: F401
from ..tensor._dtensor_spec import DTensorSpec, TensorMeta  # noqa: F401

__all__ = ['Placement', 'Shard', 'Replicate', 'Partial', 'DTensorSpec', 'TensorMeta']
