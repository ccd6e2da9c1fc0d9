"""torch.distributed.tensor._dtensor_spec: the layout record of a distributed tensor, its mesh, one placement per
mesh dimension and the global tensor's shape, strides and dtype (``TensorMeta``), and what follows from them
(``dim_map``, ``num_shards``, ``sums``). Plain values: ember makes no DTensors (``ember.distributed.tensor``), and
the record serves code that computes layouts.

>>> from ember.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
>>> from ember.distributed.tensor.placement_types import Shard, Replicate
>>> class Mesh:                          # any object with ndim and size(dim), a DeviceMesh's shape
...     ndim = 2
...     def size(self, dim): return (2, 4)[dim]
>>> spec = DTensorSpec(Mesh(), (Replicate(), Shard(1)), TensorMeta((8, 12), (12, 1), None))
>>> spec.dim_map, spec.num_shards, spec.num_shards_map, spec.is_sharded()
([-1, 1], 4, [1, 4], True)
"""
import dataclasses
from typing import NamedTuple

__all__ = ['TensorMeta', 'DTensorSpec']


class TensorMeta(NamedTuple):
    """The global tensor's shape, strides and dtype."""
    shape: tuple
    stride: tuple
    dtype: object


@dataclasses.dataclass
class DTensorSpec:
    mesh: object
    placements: tuple
    tensor_meta: TensorMeta = None

    def __post_init__(self):
        self.placements = tuple(self.placements)

    def __hash__(self):
        meta = None if self.tensor_meta is None else (tuple(self.tensor_meta.shape), tuple(self.tensor_meta.stride),
                                                      self.tensor_meta.dtype)
        return hash((id(self.mesh), self.placements, meta))

    def _meta(self):
        if self.tensor_meta is None:
            raise ValueError("tensor_meta is not set")
        return self.tensor_meta

    shape = property(lambda self: self._meta().shape)
    stride = property(lambda self: self._meta().stride)
    ndim = property(lambda self: len(self._meta().shape))
    device_mesh = property(lambda self: self.mesh)

    @property
    def num_shards(self):
        """How many pieces the tensor is cut into (the product of the sharded mesh dimensions' sizes)."""
        n = 1
        for i, p in enumerate(self.placements):
            if p.is_shard():
                n *= self.mesh.size(i)
        return n

    @property
    def dim_map(self):
        """Per tensor dimension, the mesh dimension it is sharded over, or -1 (replicated)."""
        r = [-1] * self.ndim
        for i, p in enumerate(self.placements):
            if p.is_shard():
                if r[p.dim] > -1:
                    raise ValueError(f"Tensor dim {p.dim} is already sharded on mesh dim {r[p.dim]}, DTensor "
                                     f"operator implementation does not support things like hybrid sharding strategies yet (i.e. [Shard(0), Shard(0)])")
                r[p.dim] = i
        return r

    @property
    def num_shards_map(self):
        """Per tensor dimension, how many shards it is cut into."""
        r = [1] * self.ndim
        for i, p in enumerate(self.placements):
            if p.is_shard():
                r[p.dim] *= self.mesh.size(i)
        return r

    @property
    def sums(self):
        """The mesh dimensions holding a pending reduction (Partial)."""
        return [i for i, p in enumerate(self.placements) if p.is_partial()]

    def is_replicated(self):
        return all(p.is_replicate() for p in self.placements)

    def is_sharded(self):
        return any(p.is_shard() for p in self.placements)

    def shallow_copy_with_tensor_meta(self, tensor_meta):
        if tensor_meta is None:
            raise AssertionError("shallow copy with no tensor_meta!")
        return DTensorSpec(self.mesh, self.placements, tensor_meta=tensor_meta)

    @classmethod
    def from_dim_map(cls, mesh, dim_map, sums, tensor_meta=None):
        """The spec whose ``dim_map`` and ``sums`` are those given."""
        from .placement_types import Partial, Replicate, Shard
        placements = [Replicate() for _ in range(mesh.ndim)]
        for s in sums:
            placements[s] = Partial()
        for i, m in enumerate(dim_map):
            if m >= 0:
                if not placements[m].is_replicate() and not placements[m].is_partial():
                    raise RuntimeError(f"DeviceMesh dimension can't be mapped to two dimension of the same tensor: "
                                       f"{i} and {placements[m].dim}")
                placements[m] = Shard(i)
        return cls(mesh, tuple(placements), tensor_meta=tensor_meta)
