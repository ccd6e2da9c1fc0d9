"""torch.distributed's process groups and collectives, with MPI (mpi4py on MPICH) moving the data.

``init_process_group`` makes the default group; the collectives (``all_reduce``, ``broadcast``, ...) take
tensors and change them in place, as torch's, by calling one ``c10d`` operator each through the dispatcher
(``_c10d_ops.py``), whose kernel hands the tensors' arrays to the MPI backend (``_mpi_backend.py``).
``async_op=True`` returns the ``Work`` instead of waiting for it. Ranks come from ``mpiexec`` or from
torch's environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``: ``ember.distributed.run``,
``mp.spawn``, ranks started by hand), NOTE [rendezvous] in ``_rendezvous.py``.

Differences from torch's gloo backend: ``backend='gloo'`` (and None) run on MPI, with a one-line note;
collectives check that the ranks agree (NOTE [collective fingerprints] in ``_mpi_backend.py``) and fail
with an error naming a dead rank or the timeout (NOTE [failures and timeouts]); ``ReduceOp.AVG`` works on
floating-point tensors (gloo has no AVG). A ``store`` given to ``init_process_group`` carries the address of
MPI's rendezvous (NOTE [rendezvous]); the collectives never go through it.

Run ``emberrun --nproc_per_node=2 train.py`` (or ``mpiexec -n 2 python train.py``)::

    import ember, ember.distributed as dist
    dist.init_process_group('gloo')
    t = ember.ones(3) * (dist.get_rank() + 1)
    dist.all_reduce(t)          # tensor([3., 3., 3.]) on both ranks
"""
import enum
import os
import pickle
import sys
from ember._warn import warnings
from urllib.parse import urlparse, parse_qs

import numpy as np

import ember
from . import _c10d_ops  # noqa: F401  declares the c10d operators
from . import _mpi_backend
from .constants import default_pg_timeout
from .errors import DistError, DistBackendError, DistNetworkError, DistStoreError  # noqa: F401

__all__ = ['init_process_group', 'destroy_process_group', 'is_initialized', 'is_available', 'is_mpi_available',
           'is_gloo_available', 'is_nccl_available', 'is_ucc_available', 'is_xccl_available',
           'is_backend_available', 'is_torchelastic_launched', 'get_rank', 'get_world_size', 'get_backend',
           'get_global_rank', 'get_group_rank', 'get_process_group_ranks', 'get_node_local_rank',
           'get_default_backend_for_device', 'new_group', 'new_subgroups', 'new_subgroups_by_enumeration',
           'barrier', 'monitored_barrier', 'all_reduce', 'broadcast', 'reduce', 'all_gather',
           'all_gather_into_tensor', 'reduce_scatter', 'reduce_scatter_tensor', 'gather', 'scatter', 'all_to_all',
           'all_to_all_single', 'send', 'recv', 'isend', 'irecv', 'batch_isend_irecv', 'P2POp',
           'broadcast_object_list', 'all_gather_object', 'gather_object', 'scatter_object_list',
           'send_object_list', 'recv_object_list', 'ReduceOp', 'reduce_op', 'Backend', 'ProcessGroup', 'Work',
           'GradBucket', 'GroupMember', 'group', 'default_pg_timeout', 'DistError', 'DistBackendError', 'DistNetworkError',
           'DistStoreError']

class ReduceOp:
    """How a reduction combines the ranks' values: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX`` (and
    ``BAND``, ``BOR``, ``BXOR`` for integer and bool tensors)."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM, AVG, PRODUCT, MIN, MAX = RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT, RedOpType.MIN, RedOpType.MAX
    BAND, BOR, BXOR, PREMUL_SUM = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, RedOpType.PREMUL_SUM

    def __init__(self, op=RedOpType.SUM):
        self.op = ReduceOp.RedOpType(int(op))

    def __int__(self):
        return int(self.op)

    def __eq__(self, other):
        return int(self) == int(other)

    def __hash__(self):
        return hash(int(self))

    def __repr__(self):
        return f'ReduceOp({self.op.name})'


class reduce_op:
    """Deprecated alias of ReduceOp's members (torch.distributed.reduce_op)."""
    SUM, PRODUCT, MIN, MAX = ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX


class Backend(str):
    """A backend name; ``Backend('GLOO') == 'gloo'``. ember runs every CPU backend name on MPI."""
    UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL = 'undefined', 'gloo', 'nccl', 'ucc', 'mpi', 'xccl'
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]
    default_device_backend_map = {'cpu': GLOO, 'cuda': NCCL, 'xpu': XCCL, 'mps': GLOO}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


Work = _mpi_backend.Work     # what async_op=True returns: wait(), is_completed(), get_future()


class ProcessGroup:
    """A group of ranks that run collectives together (the default group, or one made by ``new_group``)."""

    def __init__(self, backend, ranks, name, timeout, backend_name='mpi', store=None):
        self._backend, self._ranks, self._name = backend, list(ranks), name
        self._timeout, self._backend_name = timeout, backend_name     # the name asked for: get_backend() says it
        self._store = store         # kept while the group lives, as torch's: a FileStore's file stays until then

    def rank(self):
        return self._backend.rank

    def size(self):
        return self._backend.size

    def name(self):
        return self._backend_name

    @property
    def group_name(self):
        return self._name

    @property
    def bound_device_id(self):
        return None

    def _get_backend_name(self):
        return self._backend_name

    def __repr__(self):
        return f'<ember.distributed.ProcessGroup {self._name!r} ranks={self._ranks} backend=mpi>'


class GradBucket:
    """What a DDP communication hook gets: one bucket's flat gradient tensor and its parameters."""

    def __init__(self, index, buffer, params, views, is_last):
        self._index, self._buffer, self._params, self._views, self._last = index, buffer, params, views, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer.copy_(buffer)

    def gradients(self):
        return list(self._views)

    def parameters(self):
        return list(self._params)

    def is_last(self):
        return self._last


class GroupMember:
    """``GroupMember.WORLD``: the default group (None before init); ``NON_GROUP_MEMBER``: what ``new_group``
    returns on a rank outside the group."""
    NON_GROUP_MEMBER = -100

    class _World:
        def __get__(self, obj, cls):
            return _STATE.default

    WORLD = _World()


class group:
    """``dist.group.WORLD``, as torch."""
    WORLD = GroupMember._World()


class _State:
    """The process's groups: only this module changes them."""

    def __init__(self):
        self.default = None
        self.groups = {}        # ProcessGroup -> global ranks
        self.count = 0


_STATE = _State()


# --- availability -------------------------------------------------------------------------------------------

def is_available():
    """True when mpi4py (MPI) is installed: ``pip install 'ember[distributed]'``."""
    return _mpi_backend.is_available()


is_mpi_available = is_available


def is_gloo_available():
    """ember runs ``backend='gloo'`` on MPI, so gloo is available when MPI is."""
    return _mpi_backend.is_available()


def is_nccl_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    return Backend(backend) in (Backend.GLOO, Backend.MPI) and is_available()


def is_torchelastic_launched():
    """Started by a torchrun-compatible launcher (``ember.distributed.run``)?"""
    return os.environ.get('TORCHELASTIC_RUN_ID') is not None


def is_initialized():
    return _STATE.default is not None


def get_default_backend_for_device(device):
    dev = getattr(device, 'type', None) or str(device).split(':')[0]
    if dev not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {device}")
    return Backend.default_device_backend_map[dev]


def get_node_local_rank(fallback_rank=None):
    if 'LOCAL_RANK' in os.environ:
        return int(os.environ['LOCAL_RANK'])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


# --- the default group ---------------------------------------------------------------------------------------

def _env_int(name):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment variable "
                         f"{name} expected, but not set")
    return int(v)


def _env_str(name):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment variable "
                         f"{name} expected, but not set")
    return v


def _rendezvous_params(init_method, rank, world_size, timeout):
    """(rank, world_size, host, port) from the init method, the arguments and the environment, as torch's
    ``env://``, ``tcp://`` and ``file://`` rendezvous read them."""
    url = urlparse(init_method or 'env://')
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    rank = int(query.get('rank', rank))
    world_size = int(query.get('world_size', world_size))
    if _mpi_backend.launched_by_process_manager():
        return rank, world_size, None, None             # mpiexec knows the ranks
    if url.scheme == 'env':
        rank = rank if rank >= 0 else _env_int('RANK')
        world_size = world_size if world_size >= 0 else _env_int('WORLD_SIZE')
        if world_size == 1:
            return rank, world_size, None, None
        return rank, world_size, _env_str('MASTER_ADDR'), _env_int('MASTER_PORT')
    if rank < 0 or world_size < 0:
        raise ValueError(f"Error initializing torch.distributed using {url.scheme}:// rendezvous: rank and "
                         f"world_size must be given (as arguments or in the URL)")
    if url.scheme == 'tcp':
        return rank, world_size, url.hostname, url.port
    if url.scheme == 'file':
        return (rank, world_size) + _file_rendezvous(url.path, rank, world_size, timeout)
    raise ValueError(f"No rendezvous handler for {url.scheme}://")


def _file_rendezvous(path, rank, world_size, timeout):
    """``file://``: rank 0 writes the address of a free port into the file, the others read it."""
    import socket
    import time
    if world_size == 1:
        return None, None
    if rank == 0:
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        tmp = f'{path}.{os.getpid()}.tmp'
        with open(tmp, 'w') as f:
            f.write(f'127.0.0.1 {port} {os.getpid()}\n')
        os.replace(tmp, path)
        return '127.0.0.1', port
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            host, port, _ = open(path).read().split()
            return host, int(port)
        except (OSError, ValueError):
            time.sleep(0.05)
    raise DistStoreError(f"file:// rendezvous: {path} did not get rank 0's address within {timeout:g} s")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name='', pg_options=None, device_id=None):
    """Join the default process group: every rank calls it once before any collective.

    ``backend`` 'mpi', 'gloo' or None all run on MPI ('gloo' says so in one line on rank 0); 'nccl' needs
    GPUs. ``init_method`` is 'env://' (default: ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``),
    'tcp://host:port' or 'file:///path' with ``rank`` and ``world_size``; under ``mpiexec`` the ranks
    come from MPI. ``store`` (a ``TCPStore``, ``FileStore``, ... with ``rank`` and ``world_size``, instead of
    ``init_method``): rank 0 starts MPI's rendezvous on a free port and publishes its address in the store
    (NOTE [rendezvous]). ``timeout`` bounds every collective (default 30 minutes).
    """
    if _STATE.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None and not world_size > 0:
        raise AssertionError("world_size must be positive if using store")
    if store is not None and not rank >= 0:
        raise AssertionError("rank must be non-negative if using store")
    name = _backend_name(backend)
    seconds = _mpi_backend._seconds(timeout if timeout is not None else default_pg_timeout)
    if store is not None:
        host = port = None          # rank 0 publishes the rendezvous address in the store (NOTE [rendezvous])
    else:
        rank, world_size, host, port = _rendezvous_params(init_method, rank, world_size, seconds)
    comm = _mpi_backend.start(rank, world_size, host, port, seconds, store)
    if (rank >= 0 and comm.Get_rank() != rank) or (world_size >= 0 and comm.Get_size() != world_size):
        why = ''
        if comm.Get_size() == 1 and not _mpi_backend.launched_by_process_manager():
            # MPI can be started once per process, and MPICH cannot join processes that each started it alone
            why = (" (MPI was already started in this process as a world of one, before init_process_group: "
                   "`from mpi4py import MPI` starts it, as pytorch-lightning's MPIEnvironment.detect() does; "
                   "start the ranks with mpiexec, or keep mpi4py from being imported first: with lightning, "
                   "Trainer(plugins=[LightningEnvironment()]) or strategy='ddp_spawn')")
        raise ValueError(f"init_process_group: this process is rank {comm.Get_rank()} of {comm.Get_size()} in "
                         f"MPI, but rank={rank}, world_size={world_size} were asked for{why}")
    backend_obj = _mpi_backend.Backend(comm.Dup(), seconds)
    _STATE.default = ProcessGroup(backend_obj, range(comm.Get_size()), group_name or '0', seconds, name, store)
    _STATE.groups = {_STATE.default: list(range(comm.Get_size()))}
    _set_threads_per_rank(comm)
    if name != 'mpi' and backend_obj.rank == 0:
        print(f"ember.distributed: backend '{name}' runs on MPI ({_mpi_library()}); see README 'Distributed "
              f"training' for what differs", file=sys.stderr, flush=True)


def _backend_name(backend):
    name = str(backend or 'gloo').lower()
    if ':' in name:                       # 'cpu:gloo,cuda:nccl': the CPU part
        parts = dict(p.split(':') for p in name.split(','))
        name = parts.get('cpu', 'gloo')
    if name == 'nccl' and ember.cuda._as_cpu():       # NOTE [cuda as cpu]
        return name
    if name == 'nccl':
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found! (ember runs collectives "
                           "on MPI: use backend='gloo' or 'mpi' on CPU)")
    if name not in ('gloo', 'mpi'):
        raise ValueError(f"Invalid backend: '{backend}' (ember.distributed offers 'mpi', and 'gloo' runs on MPI)")
    return name


def _mpi_library():
    MPI = _mpi_backend.WORLD.MPI
    return MPI.Get_library_version().splitlines()[0].strip() if MPI is not None else 'MPI'


def _set_threads_per_rank(comm):
    """NOTE [threads per rank]: N ranks on a machine with C cores each default to C // N intra-op threads, so
    that they do not oversubscribe it (torchrun sets OMP_NUM_THREADS=1 for the same reason). An
    ``OMP_NUM_THREADS`` in the environment (the launcher sets it when the user has not) wins. ember's CPU
    process settings (NOTE [process settings]: the BLAS on one thread, malloc keeping freed memory), which a
    multi-threaded ember applies at its first parallel kernel, are applied now: a rank on one thread never runs
    one, and without them its steps were 1.5x slower (BENCHMARKS.md, distributed). Both changes are made here,
    once, when the process joins the group; ``ember.set_num_threads`` and
    ``ember.backends.cpu.set_process_tuning(False)`` undo them."""
    n = os.environ.get('OMP_NUM_THREADS')
    if n is not None and n.isdigit() and int(n) > 0:
        threads = int(n)
    else:
        MPI = _mpi_backend.WORLD.MPI
        local = comm.Split_type(MPI.COMM_TYPE_SHARED)
        ranks_here = local.Get_size()
        local.Free()
        if ranks_here <= 1:
            return
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
        threads = max(1, cores // ranks_here)
    ember.set_num_threads(threads)
    ember.backends.cpu.set_process_tuning(True, now=True)


def destroy_process_group(group=None):
    """Leave ``group`` (default: every group). MPI itself stays up until the process exits, so a later
    ``init_process_group`` with the same ranks works."""
    if group is None or group is _STATE.default:
        _STATE.default = None
        _STATE.groups = {}
    else:
        _STATE.groups.pop(group, None)


def _default():
    if _STATE.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _STATE.default


def _get_default_group():
    """The default ProcessGroup (``init_process_group``'s), torch's ``distributed_c10d._get_default_group``."""
    return _default()


def _rank_not_in_group(group):
    """True when ``group`` is what ``new_group`` returned on a rank outside it (None: the world, never)."""
    return group is not None and group == GroupMember.NON_GROUP_MEMBER


def _group(group):
    """The ProcessGroup to run on, or None when this rank is not in it (torch warns and does nothing)."""
    pg = _default()
    if group is None or group is GroupMember.WORLD:
        return pg
    if group is GroupMember.NON_GROUP_MEMBER or (isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER):
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    if group not in _STATE.groups:
        raise ValueError("The given group does not exist (was it destroyed?)")
    return group


def _not_in_group(op):
    warnings.warn(f"Running {op} on global rank {get_rank()} which does not belong to the given group.")


def get_rank(group=None):
    """This process's rank in ``group`` (default: the world); -1 when it is not a member."""
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend_name)


def get_process_group_ranks(group):
    pg = _group(group)
    return list(_STATE.groups[pg]) if pg is not None else []


def get_global_rank(group, group_rank):
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None, sort_ranks=True):
    """A group of ``ranks`` (global ranks; default all). Its members get a ProcessGroup, other ranks
    ``GroupMember.NON_GROUP_MEMBER``. Only the members communicate (MPI_Comm_create_group), so it works with
    and without ``use_local_synchronization``."""
    pg = _default()
    world = list(range(pg.size()))
    ranks = world if ranks is None else (sorted(ranks) if sort_ranks else list(ranks))
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < len(world) for r in ranks):
        raise ValueError(f"new_group: ranks {ranks} must be distinct ranks of the world of {len(world)}")
    _STATE.count += 1
    me = pg.rank()
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    base = pg._backend.comm
    mgroup = base.Get_group().Incl(ranks)
    comm = base.Create_group(mgroup, tag=_STATE.count % 32000)
    mgroup.Free()
    seconds = _mpi_backend._seconds(timeout) if timeout is not None else pg._timeout
    new = ProcessGroup(_mpi_backend.Backend(comm, seconds), ranks, group_desc or str(_STATE.count), seconds,
                       _backend_name(backend) if backend is not None else pg._backend_name)
    _STATE.groups[new] = ranks
    return new


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Split the world into consecutive groups of ``group_size`` ranks: ``(my group, all groups)``."""
    world = get_world_size()
    if group_size is None:      # torch: one group per machine's GPUs; without GPUs the size must be given
        if not ember.cuda.is_available():
            raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using a "
                             "backend that does not depend on CUDA,please pass in 'group_size' correctly.")
        group_size = ember.cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if world % group_size != 0:
        raise ValueError(f"The world size ({world}) must be divisible by 'group_size={group_size}'")
    lists = [list(range(s, s + group_size)) for s in range(0, world, group_size)]
    return new_subgroups_by_enumeration(lists, timeout=timeout)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """One group per list of ranks: ``(my group, all groups)``; a rank in no list gets None."""
    seen = [r for ranks in ranks_per_subgroup_list for r in ranks]
    if len(seen) != len(set(seen)):
        raise ValueError("Rank appears in more than one subgroup")
    me, cur, groups = get_rank(), None, []
    for ranks in ranks_per_subgroup_list:
        g = new_group(ranks, timeout=timeout)
        groups.append(g)
        if me in ranks:
            cur = g
    return cur, groups


# --- collectives ---------------------------------------------------------------------------------------------

def _check_tensor(t, name):
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor but got "
                        f"{type(t)} instead.")


def _check_tensor_list(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, ember.Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor] but "
                        f"got {type(ts)} instead.")


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _peer(pg, rank, group_rank, what):
    """The group rank of a peer given as a global rank (``src``/``dst``) or a group rank (``group_src``)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"{what}: pass either a global rank or a group rank, not both")
        return group_rank
    if rank is None:
        rank = 0
    return get_group_rank(pg, rank) if pg is not _STATE.default else rank


def _op(op):
    return int(op.op if isinstance(op, ReduceOp) else op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across the group, in place on every rank.

    Example (2 ranks)::

        >>> t = ember.tensor([1., 2.]) * (dist.get_rank() + 1)
        >>> dist.all_reduce(t)
        >>> t
        tensor([3., 6.])
    """
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('all_reduce')
    _, work = ember.ops.c10d.allreduce_.default([tensor], pg, _op(op), None, async_op, -1)
    return _finish(work, async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s tensor into ``tensor`` on every rank."""
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('broadcast')
    _, work = ember.ops.c10d.broadcast_.default([tensor], pg, _peer(pg, src, group_src, 'broadcast'), 0,
                                                async_op, -1)
    return _finish(work, async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` into rank ``dst``'s tensor (the others' are left as they were)."""
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('reduce')
    work = ember.ops.c10d.reduce_.default([tensor], pg, _op(op), _peer(pg, dst, group_dst, 'reduce'), 0,
                                          async_op, -1)
    return _finish(work, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` gets rank r's ``tensor`` on every rank."""
    _check_tensor_list(tensor_list, 'tensor_list')
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('all_gather')
    if any(t.dtype != tensor.dtype for t in tensor_list):
        raise ValueError("all_gather: tensor_list must have the input's dtype")
    _, work = ember.ops.c10d.allgather_.default([list(tensor_list)], [tensor], pg, async_op, -1)
    return _finish(work, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """The ranks' ``input_tensor`` one after another in ``output_tensor`` (world size times as large)."""
    _check_tensor(output_tensor, 'output_tensor')
    _check_tensor(input_tensor, 'input_tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('all_gather_into_tensor')
    _, work = ember.ops.c10d._allgather_base_.default(output_tensor, input_tensor, pg, async_op, -1)
    return _finish(work, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank r's ``output`` gets the reduction of every rank's ``input_list[r]``."""
    _check_tensor(output, 'output')
    _check_tensor_list(input_list, 'input_list')
    pg = _group(group)
    if pg is None:
        return _not_in_group('reduce_scatter')
    _, work = ember.ops.c10d.reduce_scatter_.default([output], [list(input_list)], pg, _op(op), async_op, -1)
    return _finish(work, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (world size times ``output``'s size) and give rank r the r-th chunk."""
    _check_tensor(output, 'output')
    _check_tensor(input, 'input')
    pg = _group(group)
    if pg is None:
        return _not_in_group('reduce_scatter_tensor')
    _, work = ember.ops.c10d._reduce_scatter_base_.default(output, input, pg, _op(op), async_op, -1)
    return _finish(work, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank ``dst``'s ``gather_list[r]`` gets rank r's ``tensor``."""
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('gather')
    root = _peer(pg, dst, group_dst, 'gather')
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, 'gather_list')
        outs = [list(gather_list)]
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        outs = []
    work = ember.ops.c10d.gather_.default(outs, [tensor], pg, root, async_op, -1)
    return _finish(work, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's ``tensor`` gets rank ``src``'s ``scatter_list[r]``."""
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('scatter')
    root = _peer(pg, src, group_src, 'scatter')
    if pg.rank() == root:
        if scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, 'scatter_list')
        ins = [list(scatter_list)]
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        ins = []
    _, work = ember.ops.c10d.scatter_.default([tensor], ins, pg, root, async_op, -1)
    return _finish(work, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r's ``output_tensor_list[s]`` gets rank s's ``input_tensor_list[r]``."""
    _check_tensor_list(output_tensor_list, 'output_tensor_list')
    _check_tensor_list(input_tensor_list, 'input_tensor_list')
    pg = _group(group)
    if pg is None:
        return _not_in_group('all_to_all')
    _, work = ember.ops.c10d.alltoall_.default(list(output_tensor_list), list(input_tensor_list), pg, async_op, -1)
    return _finish(work, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """``input`` split along dim 0 (``input_split_sizes``, default equal) goes piece r to rank r; ``output``
    receives the pieces from every rank in rank order."""
    _check_tensor(output, 'output')
    _check_tensor(input, 'input')
    pg = _group(group)
    if pg is None:
        return _not_in_group('all_to_all_single')
    work = ember.ops.c10d.alltoall_base_.default(output, input, pg, list(output_split_sizes or []),
                                                 list(input_split_sizes or []), async_op, -1)
    return _finish(work, async_op)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group gets here."""
    pg = _group(group)
    if pg is None:
        return _not_in_group('barrier')
    work = ember.ops.c10d.barrier.default(ember.empty(0), pg, list(device_ids or []), async_op, -1)
    if async_op:
        return work
    work.wait(timeout)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier in which rank 0 names the ranks that did not arrive within ``timeout`` (all of them with
    ``wait_all_ranks``): ``DistBackendError: Rank 1 failed to pass monitoredBarrier in 1000 ms``."""
    pg = _group(group)
    if pg is None:
        return _not_in_group('monitored_barrier')
    seconds = _mpi_backend._seconds(timeout) if timeout is not None else pg._timeout
    ember.ops.c10d.monitored_barrier_.default(ember.empty(0), pg, [], int(seconds * 1000), wait_all_ranks)


# --- point to point ------------------------------------------------------------------------------------------

def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` without waiting: a Work."""
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('isend')
    peer = _peer(pg, dst, group_dst, 'isend')
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")
    return ember.ops.c10d.send.default([tensor], pg, peer, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank when None) without waiting: a Work."""
    _check_tensor(tensor, 'tensor')
    pg = _group(group)
    if pg is None:
        return _not_in_group('irecv')
    if src is None and group_src is None:
        return ember.ops.c10d.recv_any_source_.default([tensor], pg, tag)
    return ember.ops.c10d.recv_.default([tensor], pg, _peer(pg, src, group_src, 'irecv'), tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it is sent."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from ``src`` (any rank when None); returns the sender's (global) rank."""
    pg = _group(group)
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    if src is not None:
        return src
    sender = group_src if group_src is not None else w.source_rank()
    return get_global_rank(pg, sender)


class P2POp:
    """One send or receive for ``batch_isend_irecv``: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, \
            group_peer


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of the list; their Works, in order."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


# --- Python objects (pickled, as torch: only unpickle data you trust) ----------------------------------------

def _to_tensor(obj):
    data = pickle.dumps(obj)
    return ember.from_numpy(np.frombuffer(data, np.uint8).copy()), len(data)


def _from_tensor(t, n):
    return pickle.loads(t[:n].numpy().tobytes())


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s items on every rank by rank ``src``'s (pickled, so only trusted data)."""
    pg = _group(group)
    if pg is None:
        return _not_in_group('broadcast_object_list')
    root = _peer(pg, src, group_src, 'broadcast_object_list')
    if pg.rank() == root:
        pieces = [_to_tensor(o) for o in object_list]
        sizes = ember.tensor([n for _, n in pieces], dtype=ember.int64)
    else:
        sizes = ember.zeros(len(object_list), dtype=ember.int64)
    broadcast(sizes, group=group, group_src=root)
    total = int(sizes.sum())
    if pg.rank() == root:
        data = ember.cat([t for t, _ in pieces]) if pieces else ember.zeros(0, dtype=ember.uint8)
    else:
        data = ember.zeros(total, dtype=ember.uint8)
    broadcast(data, group=group, group_src=root)
    if pg.rank() != root:
        off = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _from_tensor(data[off:off + n], n)
            off += n


def all_gather_object(object_list, obj, group=None):
    """``object_list[r]`` gets rank r's ``obj`` (pickled, so only trusted data)."""
    pg = _group(group)
    if pg is None:
        return _not_in_group('all_gather_object')
    t, n = _to_tensor(obj)
    sizes = [ember.zeros(1, dtype=ember.int64) for _ in range(pg.size())]
    all_gather(sizes, ember.tensor([n], dtype=ember.int64), group=group)
    counts = [int(s) for s in sizes]
    outs = [ember.zeros(c, dtype=ember.uint8) for c in counts]
    all_gather(outs, t, group=group)
    for i, (o, c) in enumerate(zip(outs, counts)):
        object_list[i] = _from_tensor(o, c)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank ``dst``'s ``object_gather_list[r]`` gets rank r's ``obj``."""
    pg = _group(group)
    if pg is None:
        return _not_in_group('gather_object')
    root = _peer(pg, dst, group_dst, 'gather_object')
    t, n = _to_tensor(obj)
    sizes = [ember.zeros(1, dtype=ember.int64) for _ in range(pg.size())]
    all_gather(sizes, ember.tensor([n], dtype=ember.int64), group=group)
    width = max(int(s) for s in sizes)
    padded = ember.cat([t, ember.zeros(width - n, dtype=ember.uint8)])
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
        outs = [ember.zeros(width, dtype=ember.uint8) for _ in range(pg.size())]
        gather(padded, outs, group=group, group_dst=root)
        for i, (o, s) in enumerate(zip(outs, sizes)):
            object_gather_list[i] = _from_tensor(o, int(s))
    else:
        gather(padded, None, group=group, group_dst=root)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """``scatter_object_output_list[0]`` on rank r gets rank ``src``'s ``scatter_object_input_list[r]``."""
    pg = _group(group)
    if pg is None:
        return _not_in_group('scatter_object_list')
    root = _peer(pg, src, group_src, 'scatter_object_list')
    if pg.rank() == root:
        pieces = [_to_tensor(o) for o in scatter_object_input_list]
        width = ember.tensor([max(n for _, n in pieces)], dtype=ember.int64)
    else:
        width = ember.zeros(1, dtype=ember.int64)
    broadcast(width, group=group, group_src=root)
    w = int(width)
    size = ember.zeros(1, dtype=ember.int64)
    out = ember.zeros(w, dtype=ember.uint8)
    if pg.rank() == root:
        scatter(size, [ember.tensor([n], dtype=ember.int64) for _, n in pieces], group=group, group_src=root)
        scatter(out, [ember.cat([t, ember.zeros(w - n, dtype=ember.uint8)]) for t, n in pieces], group=group,
                group_src=root)
    else:
        scatter(size, None, group=group, group_src=root)
        scatter(out, None, group=group, group_src=root)
    scatter_object_output_list[0] = _from_tensor(out, int(size))


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None, use_batch=False):
    """Send ``object_list``'s items to rank ``dst`` (which calls ``recv_object_list``)."""
    pieces = [_to_tensor(o) for o in object_list]
    send(ember.tensor([n for _, n in pieces], dtype=ember.int64), dst, group, group_dst=group_dst)
    send(ember.cat([t for t, _ in pieces]) if pieces else ember.zeros(0, dtype=ember.uint8), dst, group,
         group_dst=group_dst)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None, use_batch=False):
    """Receive ``send_object_list``'s items into ``object_list``; returns the sender's rank."""
    sizes = ember.zeros(len(object_list), dtype=ember.int64)
    sender = recv(sizes, src, group, group_src=group_src)
    data = ember.zeros(int(sizes.sum()), dtype=ember.uint8)
    recv(data, sender, group)
    off = 0
    for i, n in enumerate(sizes.tolist()):
        object_list[i] = _from_tensor(data[off:off + n], n)
        off += n
    return sender
