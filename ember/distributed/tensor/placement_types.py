"""torch.distributed.tensor.placement_types: how a tensor is laid out over one dimension of a DeviceMesh.

``Shard(dim)`` splits the tensor along ``dim`` (torch.chunk's split: the first ranks get ceil(n / world) rows),
``Replicate()`` keeps a full copy on every rank, ``Partial(op)`` holds a pending reduction. These are values,
used by the layout arithmetic of ``_utils`` (shapes and offsets); ember has no DTensor operators (see
``ember.distributed.tensor``).
"""


class Placement:
    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


class Shard(Placement):
    __slots__ = ('dim',)

    def __init__(self, dim):
        object.__setattr__(self, 'dim', dim)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field '{name}'")

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def _local_size_and_offset(self, size, num_chunks, rank):
        """(this rank's size, its offset) along the sharded dimension: torch.chunk's split of ``size``."""
        full = -(-size // num_chunks) if num_chunks else 0
        offset = min(full * rank, size)
        return max(min(size, offset + full) - offset, 0), offset

    def __eq__(self, other):
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self):
        return hash((type(self), self.dim))

    def __repr__(self):
        return f'Shard(dim={self.dim})'

    def __str__(self):
        return f'S({self.dim})'


class _StridedShard(Shard):
    __slots__ = ('split_factor',)

    def __init__(self, dim, *, split_factor):
        super().__init__(dim)
        object.__setattr__(self, 'split_factor', split_factor)

    def __eq__(self, other):
        return type(other) is type(self) and (other.dim, other.split_factor) == (self.dim, self.split_factor)

    def __hash__(self):
        return hash((type(self), self.dim, self.split_factor))

    def __repr__(self):
        return f'_StridedShard(dim={self.dim}, sf={self.split_factor})'

    def __str__(self):
        return f'_S({self.dim}, {self.split_factor})'


class Replicate(Placement):
    def is_replicate(self):
        return True

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))

    def __repr__(self):
        return 'Replicate()'

    def __str__(self):
        return 'R'


class Partial(Placement):
    __slots__ = ('reduce_op',)

    def __init__(self, reduce_op='sum'):
        object.__setattr__(self, 'reduce_op', reduce_op)

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return type(other) is type(self) and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash((type(self), self.reduce_op))

    def __repr__(self):
        return f'Partial({self.reduce_op})'

    def __str__(self):
        return f'P({self.reduce_op})'
