"""torch.distributed.device_mesh: ``DeviceMesh``, an n-dimensional arrangement of the ranks, with one process
group along each of its dimensions.

A 2x2 mesh of ranks ``[[0, 1], [2, 3]]`` with ``mesh_dim_names=('dp', 'tp')`` gives rank 1 the group [1, 3]
along 'dp' (its column) and [0, 1] along 'tp' (its row). The groups are ember's ``new_group``s: building a
mesh is collective, every rank of the world builds every mesh in the same order and, inside it, every group
of every dimension in the same order (MPI makes a communicator only when all of its members ask for it
together). As in torch, a group numbers its ranks in increasing global rank order whatever their order in
the mesh (so ``get_local_rank`` can differ from ``get_coordinate`` on a mesh such as ``[1, 0]``), and a
dimension that spans the whole world uses the default group. ``mesh['tp']`` is the 1-D mesh along 'tp'
through this rank; it reuses the groups of the mesh it was cut from.

Run ``emberrun --nproc_per_node=2 script.py``::

    from ember.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh('cpu', (2, 1), mesh_dim_names=('dp', 'tp'))
    mesh.get_coordinate()           # (rank, 0)
    mesh['dp'].get_group()          # the ProcessGroup of ranks [0, 1]
"""
import numpy as np

import ember
from . import distributed_c10d as c10d

__all__ = ['init_device_mesh', 'DeviceMesh']


def _check_names(names, ndim, what):
    if names is None:
        return None
    names = tuple(names)
    if len(names) != ndim:
        raise RuntimeError(f"{what} and mesh_dim_names should have same length! Found len(mesh_dim_names): "
                           f"{len(names)} and len({what}):{ndim}.")
    if len(set(names)) != len(names):
        raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names "
                           f"{names}")
    return names


class DeviceMesh:
    """The ranks of ``mesh`` (a tensor or nested list of global ranks) as an n-d mesh of ``device_type``
    devices. Creating one initialises the default process group if needed (from torchrun's environment) and
    creates the process groups of every dimension (collective: every rank must create the same meshes)."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _parent=None):
        if isinstance(mesh, ember.Tensor):
            mesh = mesh.detach().cpu().numpy()
        ranks = np.array(mesh, dtype=np.int64)
        self.device_type = device_type
        self.mesh_dim_names = _check_names(mesh_dim_names, ranks.ndim, 'mesh')
        self._ranks = ranks
        if _parent is not None:                  # a sub-mesh: its parent's groups and strides
            self._groups, self._strides = _parent
        else:
            if not c10d.is_initialized():
                c10d.init_process_group()
            world = c10d.get_world_size()
            if ranks.size > world:
                raise RuntimeError(f"Mesh should not be bigger than default world size {world}, but found "
                                   f"{ranks.size} ranks!")
            if len(np.unique(ranks)) != ranks.size or ranks.min() < 0 or ranks.max() >= world:
                raise RuntimeError(f"DeviceMesh: the mesh must hold distinct ranks of the world of {world}, "
                                   f"got {ranks.tolist()}")
            self._groups = [self._make_group(d, world) for d in range(ranks.ndim)]
            self._strides = tuple(int(np.prod(ranks.shape[d + 1:])) for d in range(ranks.ndim))
        where = np.argwhere(ranks == c10d.get_rank())
        self._coordinate = tuple(int(i) for i in where[0]) if len(where) else None

    def _make_group(self, dim, world):
        """This rank's group along ``dim``, creating the groups of every line of the mesh along it in order."""
        lines = np.moveaxis(self._ranks, dim, -1).reshape(-1, self._ranks.shape[dim]).tolist()
        if len(lines) == 1 and sorted(lines[0]) == list(range(world)):
            return c10d.GroupMember.WORLD
        me, mine = c10d.get_rank(), c10d.GroupMember.NON_GROUP_MEMBER
        for line in lines:
            g = c10d.new_group(line)
            if me in line:
                mine = g
        return mine

    @property
    def mesh(self):
        """The global ranks, an int32 tensor of the mesh's shape."""
        return ember.from_numpy(self._ranks.astype(np.int32))

    @property
    def ndim(self):
        return self._ranks.ndim

    @property
    def shape(self):
        return tuple(self._ranks.shape)

    def size(self, mesh_dim=None):
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        return self._ranks.size if mesh_dim is None else self.shape[mesh_dim]

    def get_rank(self):
        """This process's global rank."""
        return c10d.get_rank()

    def get_coordinate(self):
        """This rank's index in the mesh (a tuple), or None when it is not part of it."""
        return self._coordinate

    def _dim(self, mesh_dim, what):
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                                   *what)
            return 0
        if isinstance(mesh_dim, str):
            if mesh_dim not in (self.mesh_dim_names or ()):
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return mesh_dim

    def get_group(self, mesh_dim=None):
        """The ProcessGroup along ``mesh_dim`` (an index or a name; optional on a 1-D mesh)."""
        return self._groups[self._dim(mesh_dim, ("If you want to get the list of all the ProcessGroups in the "
                                                 "DeviceMesh,please use `get_all_groups()` instead.",))]

    def get_all_groups(self):
        """The ProcessGroups of every dimension, in order."""
        return list(self._groups)

    def get_local_rank(self, mesh_dim=None):
        """This rank's rank in the group along ``mesh_dim``."""
        group = self._groups[self._dim(mesh_dim, ())]
        if self._coordinate is None:
            raise RuntimeError(f"Rank {self.get_rank()} is not part of the mesh {self._ranks.tolist()}")
        return c10d.get_rank(group)

    def __getitem__(self, mesh_dim_names):
        """The sub-mesh along the named dimensions (in the order given) that passes through this rank."""
        if self.mesh_dim_names is None:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if any(n not in self.mesh_dim_names for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                           f"{list(self.mesh_dim_names)}.")
        if len(set(names)) != len(names):
            raise RuntimeError(f"Slicing overlapping dim_names {names} is not allowed.")
        if names == self.mesh_dim_names:
            return self
        if self._coordinate is None:
            raise RuntimeError(f"Rank {self.get_rank()} is not part of the mesh {self._ranks.tolist()}")
        dims = [self.mesh_dim_names.index(n) for n in names]
        index = tuple(slice(None) if d in dims else c for d, c in enumerate(self._coordinate))
        kept = [d for d in range(self.ndim) if d in dims]             # the axes left after indexing, in order
        ranks = np.transpose(self._ranks[index], [kept.index(d) for d in dims])
        return DeviceMesh(self.device_type, ranks, mesh_dim_names=names,
                          _parent=([self._groups[d] for d in dims], tuple(self._strides[d] for d in dims)))

    def __repr__(self):
        sizes = self.shape if self.mesh_dim_names is None else \
            '(' + ', '.join(f'{n}={s}' for n, s in zip(self.mesh_dim_names, self.shape)) + ')'
        strides = tuple(() if s == 1 else st for s, st in zip(self.shape, self._strides))
        return f"DeviceMesh({sizes}, '{self.device_type}', stride={strides})"

    def __eq__(self, other):
        if not isinstance(other, DeviceMesh):
            return False
        return (self.device_type == other.device_type and self.mesh_dim_names == other.mesh_dim_names
                and np.array_equal(self._ranks, other._ranks))

    def __hash__(self):
        return hash((self.device_type, self.shape, tuple(self._ranks.flat), self.mesh_dim_names))


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None):
    """A DeviceMesh of ranks ``0 .. prod(mesh_shape) - 1`` laid out row-major in ``mesh_shape``: the last
    dimension holds consecutive ranks (on one machine, the fastest links). Collective, as ``DeviceMesh``."""
    mesh_shape = tuple(mesh_shape)
    names = _check_names(mesh_dim_names, len(mesh_shape), 'mesh_shape')
    if ':' in device_type:
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. If you maintained a "
                           f"'torch.device' object, it's recommended to pass in 'device.type'.")
    ranks = np.arange(int(np.prod(mesh_shape)), dtype=np.int64).reshape(mesh_shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=names)
