"""The collectives as operators of the ``c10d`` namespace (``ember.ops.c10d.allreduce_``), as torch's c10d ops.

Each collective of ``ember.distributed`` is one call of one of these operators, so it passes through the
dispatcher like any other: Python dispatch modes (tracing, profiling, logging) see ``c10d.allreduce_`` with
its tensors and process group. They are declared with ``ember.library`` as a user would declare an
operator, with one kernel each at ``CompositeExplicitAutograd``: the kernel takes the tensors, hands their
arrays to the process group's MPI backend (``_mpi_backend.py``) and returns torch's results, the tensors
written in place and a ``Work``. On the Meta device (shapes only) a collective does nothing and returns
a completed Work, as fake tensors need.

Schemas follow torch's (``torch.ops.c10d.allreduce_.default._schema``) with ember's names for the classes:
``ProcessGroup``, ``ReduceOp``, ``Work``.

>>> import ember
>>> ember.ops.c10d.allreduce_.default
<OpOverload c10d::allreduce_>
"""
from ..library import Library
from . import _mpi_backend

_LIB = Library('c10d', 'DEF')

SCHEMAS = [
    'allreduce_(Tensor[] tensors, ProcessGroup process_group, ReduceOp reduce_op, Tensor? sparse_indices, '
    'bool async_op=True, int timeout=-1) -> (Tensor[], Work)',
    'broadcast_(Tensor[] tensors, ProcessGroup process_group, int root_rank, int root_tensor, '
    'bool async_op=True, int timeout=-1) -> (Tensor[], Work)',
    'reduce_(Tensor[] tensors, ProcessGroup process_group, ReduceOp reduce_op, int root_rank, '
    'int root_tensor, bool async_op=True, int timeout=-1) -> Work',
    'allgather_(Tensor[][] output_tensors, Tensor[] input_tensors, ProcessGroup process_group, '
    'bool async_op=True, int timeout=-1) -> (Tensor[][], Work)',
    '_allgather_base_(Tensor output_tensor, Tensor input_tensor, ProcessGroup process_group, '
    'bool async_op=True, int timeout=-1) -> (Tensor, Work)',
    'reduce_scatter_(Tensor[] output_tensors, Tensor[][] input_tensors, ProcessGroup process_group, '
    'ReduceOp reduce_op, bool async_op=True, int timeout=-1) -> (Tensor[], Work)',
    '_reduce_scatter_base_(Tensor output_tensor, Tensor input_tensor, ProcessGroup process_group, '
    'ReduceOp reduce_op, bool async_op=True, int timeout=-1) -> (Tensor, Work)',
    'gather_(Tensor[][] output_tensors, Tensor[] input_tensors, ProcessGroup process_group, int root_rank, '
    'bool async_op=True, int timeout=-1) -> Work',
    'scatter_(Tensor[] output_tensors, Tensor[][] input_tensors, ProcessGroup process_group, int root_rank, '
    'bool async_op=True, int timeout=-1) -> (Tensor[], Work)',
    'alltoall_(Tensor[] output_tensors, Tensor[] input_tensors, ProcessGroup process_group, '
    'bool async_op=True, int timeout=-1) -> (Tensor[], Work)',
    'alltoall_base_(Tensor output, Tensor input, ProcessGroup process_group, int[] output_split_sizes, '
    'int[] input_split_sizes, bool async_op=True, int timeout=-1) -> Work',
    'barrier(Tensor tensor, ProcessGroup process_group, int[] device_ids, bool async_op=True, int timeout=-1) '
    '-> Work',
    'monitored_barrier_(Tensor tensor, ProcessGroup process_group, int[] device_ids, int timeout, '
    'bool wait_all_ranks) -> ()',
    'send(Tensor[] tensors, ProcessGroup process_group, int dst, int tag) -> Work',
    'recv_(Tensor[] tensors, ProcessGroup process_group, int src, int tag) -> Work',
    'recv_any_source_(Tensor[] tensors, ProcessGroup process_group, int tag) -> Work',
]


def _array(t):
    """The memory of CPU tensor ``t`` as a NumPy array (shared, never a copy)."""
    if t.is_sparse:
        raise RuntimeError(f"ember.distributed: sparse tensors are not supported by the MPI backend (got "
                           f"{t.layout}); send the indices and values as dense tensors")
    if t.device.type != 'cpu':
        raise RuntimeError(f"ember.distributed's MPI backend takes CPU tensors, got a tensor on {t.device} "
                           f"(move it with .cpu() first)")
    return t.detach().numpy(force=True)


def _dtype(t):
    return t.dtype.name


def _on_meta(*tensors):
    return any(t.device.type == 'meta' for t in tensors)


def _backend(pg):
    return pg._backend


def _result(work, tensors):
    """What ``work.result()`` and the work's future give: the output tensors, as torch's."""
    work._result = list(tensors)
    return work


def _all(works):
    """One Work for several (torch's ops take lists; ember's Python API passes one tensor)."""
    if len(works) == 1:
        return works[0]
    w = _mpi_backend.Work(None, 'collective', 0.0, finish=lambda: [x.wait() for x in works] and None)
    w._reqs = []
    return w


def allreduce_(tensors, process_group, reduce_op, sparse_indices=None, async_op=True, timeout=-1):
    if _on_meta(*tensors):
        return tensors, _mpi_backend.completed_work(tensors)
    b = _backend(process_group)
    return tensors, _result(_all([b.allreduce(_array(t), _dtype(t), int(reduce_op)) for t in tensors]), tensors)


def broadcast_(tensors, process_group, root_rank, root_tensor=0, async_op=True, timeout=-1):
    if _on_meta(*tensors):
        return tensors, _mpi_backend.completed_work(tensors)
    b = _backend(process_group)
    return tensors, _result(_all([b.broadcast(_array(t), _dtype(t), root_rank) for t in tensors]), tensors)


def reduce_(tensors, process_group, reduce_op, root_rank, root_tensor=0, async_op=True, timeout=-1):
    if _on_meta(*tensors):
        return _mpi_backend.completed_work(tensors)
    b = _backend(process_group)
    return _result(_all([b.reduce(_array(t), _dtype(t), int(reduce_op), root_rank) for t in tensors]), tensors)


def allgather_(output_tensors, input_tensors, process_group, async_op=True, timeout=-1):
    if _on_meta(*input_tensors):
        return output_tensors, _mpi_backend.completed_work(output_tensors)
    b = _backend(process_group)
    w = _all([b.allgather([_array(o) for o in outs], _array(t), _dtype(t))
              for outs, t in zip(output_tensors, input_tensors)])
    return output_tensors, _result(w, output_tensors[0] if len(output_tensors) == 1 else output_tensors)


def _allgather_base_(output_tensor, input_tensor, process_group, async_op=True, timeout=-1):
    if _on_meta(input_tensor, output_tensor):
        return output_tensor, _mpi_backend.completed_work([output_tensor])
    _same_dtype('all_gather_into_tensor', output_tensor, input_tensor)
    w = _backend(process_group).allgather_base(_array(output_tensor), _array(input_tensor), _dtype(input_tensor))
    return output_tensor, _result(w, [output_tensor])


def reduce_scatter_(output_tensors, input_tensors, process_group, reduce_op, async_op=True, timeout=-1):
    if _on_meta(*output_tensors):
        return output_tensors, _mpi_backend.completed_work(output_tensors)
    b = _backend(process_group)
    w = _all([b.reduce_scatter(_array(o), [_array(t) for t in ins], _dtype(o), int(reduce_op))
              for o, ins in zip(output_tensors, input_tensors)])
    return output_tensors, _result(w, output_tensors)


def _reduce_scatter_base_(output_tensor, input_tensor, process_group, reduce_op, async_op=True, timeout=-1):
    if _on_meta(input_tensor, output_tensor):
        return output_tensor, _mpi_backend.completed_work([output_tensor])
    _same_dtype('reduce_scatter_tensor', output_tensor, input_tensor)
    w = _backend(process_group).reduce_scatter_base(_array(output_tensor), _array(input_tensor),
                                                    _dtype(input_tensor), int(reduce_op))
    return output_tensor, _result(w, [output_tensor])


def gather_(output_tensors, input_tensors, process_group, root_rank, async_op=True, timeout=-1):
    if _on_meta(*input_tensors):
        return _mpi_backend.completed_work()
    b = _backend(process_group)
    outs = output_tensors[0] if output_tensors else []
    w = b.gather([_array(o) for o in outs], _array(input_tensors[0]), _dtype(input_tensors[0]), root_rank)
    return _result(w, outs)


def scatter_(output_tensors, input_tensors, process_group, root_rank, async_op=True, timeout=-1):
    if _on_meta(*output_tensors):
        return output_tensors, _mpi_backend.completed_work(output_tensors)
    b = _backend(process_group)
    ins = input_tensors[0] if input_tensors else []
    w = b.scatter(_array(output_tensors[0]), [_array(t) for t in ins], _dtype(output_tensors[0]), root_rank)
    return output_tensors, _result(w, output_tensors)


def alltoall_(output_tensors, input_tensors, process_group, async_op=True, timeout=-1):
    if _on_meta(*input_tensors):
        return output_tensors, _mpi_backend.completed_work(output_tensors)
    dt = _dtype(input_tensors[0]) if input_tensors else 'float32'
    w = _backend(process_group).alltoall([_array(o) for o in output_tensors], [_array(t) for t in input_tensors], dt)
    return output_tensors, _result(w, output_tensors)


def alltoall_base_(output, input, process_group, output_split_sizes, input_split_sizes, async_op=True,
                   timeout=-1):
    if _on_meta(output, input):
        return _mpi_backend.completed_work([output])
    _same_dtype('all_to_all_single', output, input)
    w = _backend(process_group).alltoall_base(_array(output), _array(input), _dtype(input),
                                              list(output_split_sizes), list(input_split_sizes))
    return _result(w, [output])


def barrier(tensor, process_group, device_ids=(), async_op=True, timeout=-1):
    return _backend(process_group).barrier()


def monitored_barrier_(tensor, process_group, device_ids, timeout, wait_all_ranks):
    _backend(process_group).monitored_barrier(timeout / 1000.0, wait_all_ranks)


def send(tensors, process_group, dst, tag):
    return _result(_backend(process_group).send(_array(tensors[0]), dst, tag), tensors)


def recv_(tensors, process_group, src, tag):
    return _result(_backend(process_group).recv(_array(tensors[0]), src, tag), tensors)


def recv_any_source_(tensors, process_group, tag):
    return _result(_backend(process_group).recv(_array(tensors[0]), None, tag), tensors)


def _same_dtype(what, a, b):
    if a.dtype != b.dtype:
        raise TypeError(f"{what}: input and output tensors must have the same dtype, got {b.dtype} and {a.dtype}")


for _schema in SCHEMAS:
    _name = _schema.partition('(')[0]
    _LIB.define(_schema)
    _LIB.impl(_name, globals()[_name], 'CompositeExplicitAutograd')
