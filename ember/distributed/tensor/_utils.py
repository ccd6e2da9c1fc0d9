"""torch.distributed.tensor._utils: the layout arithmetic of sharded tensors."""
from .placement_types import Shard


def compute_local_shape_and_global_offset(global_shape, mesh, placements, skip_offset=False):
    """(the shape this rank holds, where it starts in the global tensor) for ``placements`` over ``mesh``: each
    Shard placement splits its dimension as torch.chunk does among the ranks of its mesh dimension, in mesh order.
    A rank outside the mesh holds nothing: ((0,), ()) as torch answers."""
    coord = mesh.get_coordinate()
    if coord is None:
        return (0,), ()
    shape, offset = list(global_shape), [0] * len(global_shape)
    for mesh_dim, p in enumerate(placements):
        if isinstance(p, Shard):
            d = p.dim
            size, off = p._local_size_and_offset(shape[d], mesh.size(mesh_dim), coord[mesh_dim])
            shape[d] = size
            offset[d] += off if size else 0
    return tuple(shape), () if skip_offset else tuple(offset)
