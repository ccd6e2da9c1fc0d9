"""The MPI backend: ember.distributed's collectives on NumPy arrays, through mpi4py's buffer methods.

Arrays in, requests out: every operation is started with MPI's non-blocking calls (``Iallreduce``,
``Ibcast``, ``Isend``, ...) on the arrays' own memory (a contiguous copy for a strided array, written back
when the operation completes) and returns a ``Work`` that completes it. This module never sees a Tensor;
``_c10d_ops.py`` hands it the arrays of the tensors (ARCHITECTURE rule 2, as a backend kernel).

NOTE [collective fingerprints]
MPI matches collectives by the order in which the ranks call them and trusts that the ranks agree on the
counts: two ranks reducing different numbers of elements overrun a buffer or hang. So each collective first
exchanges a small fingerprint (operation, dtype, element count where it must agree, root, shape for the
message, a sequence number) with a non-blocking ``Iallgather`` on a duplicate communicator kept for ember's
own traffic, and starts the data transfer only once every rank's fingerprint matches: a mismatch raises the
same ``DistBackendError`` on every rank, naming what each rank called (torch's ``TORCH_DISTRIBUTED_DEBUG=
DETAIL`` check, always on here). Data transfers start in the order the collectives were called on every
rank (``Backend._pump``), as MPI requires, even when a later one's fingerprint arrives first; the costs are
one small message per collective and the start of the transfer at the next poll rather than at the call.

NOTE [failures and timeouts]
A rank waiting in MPI for a rank that died waits forever, so ember never blocks inside MPI: ``Work.wait``
polls its requests (``Testall``), spinning briefly and then sleeping a little longer each time, and between
polls checks the group's timeout and the rendezvous monitor (NOTE [rendezvous] in ``_rendezvous.py``).
Either raises ``DistBackendError`` naming the failed rank or the timeout; the process group is then broken:
later calls raise at once, and at exit MPI is not finalized (``MPI_Finalize`` would wait for the dead rank).
"""
import atexit
import collections
import os
import sys
import time

import numpy as np

from .constants import default_pg_timeout
from .errors import DistBackendError

# ReduceOp codes (torch's RedOpType values)
SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = range(9)
_OP_NAMES = ['SUM', 'AVG', 'PRODUCT', 'MIN', 'MAX', 'BAND', 'BOR', 'BXOR', 'PREMUL_SUM']
DTYPES = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64',
          'complex64', 'complex128']
_SCALAR = {'bool': 'Bool', 'uint8': 'Byte', 'int8': 'Char', 'int16': 'Short', 'int32': 'Int', 'int64': 'Long',
           'float16': 'Half', 'bfloat16': 'BFloat16', 'float32': 'Float', 'float64': 'Double',
           'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble'}
# operations whose tensors must have the same number of elements on every rank (the rest send -1)
_OPS = ['ALLREDUCE', 'BROADCAST', 'REDUCE', 'ALLGATHER', '_ALLGATHER_BASE', 'REDUCE_SCATTER',
        '_REDUCE_SCATTER_BASE', 'GATHER', 'SCATTER', 'ALLTOALL', 'ALLTOALL_BASE', 'BARRIER']
_FP = 10     # fingerprint length: op, dtype, numel, root, ndim, 4 sizes, sequence number


# --- the process's MPI ------------------------------------------------------------------------------------

class _World:
    """This process's MPI state: mpi4py's module once started, the rendezvous monitor, and whether a failure
    broke the world (then every later call raises and MPI is not finalized at exit)."""

    def __init__(self):
        self.MPI = None
        self.monitor = None
        self.broken = None
        self.finalize = False       # ember started MPI, so ember finalizes it at exit
        self.segments = set()       # the shared-memory files MPICH made for this job
        self.timeout = default_pg_timeout.total_seconds()      # the default group's, for the barrier at exit

    def check(self, what):
        if self.broken is not None:
            raise DistBackendError(f"{what}: the process group is no longer usable: {self.broken}")
        if self.monitor is not None:
            failed = self.monitor.poll()
            if failed is not None:
                rank, msg = failed
                who = f'rank {rank}' if rank >= 0 else 'the rendezvous'
                self.broken = f"{who} failed: {msg}"
                raise DistBackendError(f"{what}: {self.broken}")

    def break_(self, why):
        if self.broken is None:
            self.broken = why


WORLD = _World()


def launched_by_process_manager():
    """Started by ``mpiexec``/``srun`` (a PMI server already speaks to this process)?"""
    return any(k in os.environ for k in ('PMI_RANK', 'PMI_FD', 'PMIX_RANK', 'OMPI_COMM_WORLD_RANK'))


def is_available():
    import importlib.util
    try:
        return importlib.util.find_spec('mpi4py') is not None
    except (ImportError, ValueError):       # blocked or half-imported
        return False


def _import_mpi():
    try:
        import mpi4py
    except ImportError:
        raise RuntimeError("ember.distributed needs MPI: pip install 'ember[distributed]' (mpi4py and mpich)") \
            from None
    if 'mpi4py.MPI' not in sys.modules:
        mpi4py.rc.initialize = True
        mpi4py.rc.finalize = False          # ember finalizes, and only when no rank failed (_shutdown)
        mpi4py.rc.thread_level = 'multiple'
        WORLD.finalize = True
    from mpi4py import MPI
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
        WORLD.finalize = True
    return MPI


def start(rank, world_size, host, port, timeout, store=None):
    """Start MPI in this process (once) and return ``MPI.COMM_WORLD``: under a process manager as it is,
    alone for a world of one, else through the rendezvous at ``host:port``, or at the address rank 0
    publishes in ``store`` (NOTE [rendezvous])."""
    if WORLD.MPI is not None:
        return WORLD.MPI.COMM_WORLD
    from . import _rendezvous
    before = _shm_segments()
    if launched_by_process_manager() or world_size == 1 or 'mpi4py.MPI' in sys.modules:
        MPI = _import_mpi()
    else:
        server = None
        if store is not None:
            host, port, server = _rendezvous.exchange_through_store(store, rank, world_size, timeout)
        WORLD.monitor = _rendezvous.join(rank, world_size, host, port, timeout, server)
        env = _rendezvous.pmi_environment(rank, host, port)
        os.environ.update(env)
        try:
            MPI = _import_mpi()
        finally:
            for k in env:               # children of this rank (DataLoader workers) must not find them
                os.environ.pop(k, None)
    WORLD.MPI, WORLD.timeout = MPI, timeout
    WORLD.segments = _shm_segments() - before
    atexit.register(_shutdown)
    _hook_uncaught_exceptions()
    return MPI.COMM_WORLD


def _hook_uncaught_exceptions():
    """A rank that dies of an exception tells the others at once, with the exception's last line."""
    previous = sys.excepthook

    def hook(tp, value, tb):
        WORLD.break_(f'{tp.__name__}: {value}')
        if WORLD.monitor is not None:
            WORLD.monitor.failed(f'raised {tp.__name__}: {value}')
        record_error(tp, value, tb)
        previous(tp, value, tb)
    sys.excepthook = hook


def record_error(tp, value, tb):
    """Write the exception to ``TORCHELASTIC_ERROR_FILE`` (set by the launcher) in torch elastic's format, with
    the time it happened, so that the launcher can tell the first failure from the ones it caused."""
    path = os.environ.get('TORCHELASTIC_ERROR_FILE')
    if not path or os.path.exists(path):
        return
    import json
    import traceback
    info = {'message': {'message': f'{tp.__name__}: {value}',
                        'extraInfo': {'py_callstack': ''.join(traceback.format_exception(tp, value, tb)),
                                      'timestamp': repr(time.time())}}}
    try:
        with open(path, 'w') as f:
            json.dump(info, f)
    except OSError:
        pass


def _shutdown():
    """At exit: finalize MPI when it is safe (every rank got here: a barrier that honours the monitor and the
    timeout), else leave it (a rank failed: finalizing would wait for it forever). A world formed by ember's
    rendezvous is not finalized at all: ``MPI_Finalize`` waits for every rank, while torch's ranks leave one by
    one (lightning's rank 0 waits for the rank it started to exit before exiting itself); the rank says goodbye
    to the rendezvous server, which is the process manager MPICH would otherwise tell, and removes its shared
    memory names (the mappings of ranks still running stay valid)."""
    MPI = WORLD.MPI
    if MPI is None or MPI.Is_finalized():
        return
    if WORLD.monitor is not None and WORLD.broken is None:
        WORLD.monitor.bye()
        _unlink_segments()
        return
    if WORLD.broken is None and WORLD.finalize:
        try:
            work = Work(None, 'barrier at exit', WORLD.timeout)
            work._reqs = [MPI.COMM_WORLD.Ibarrier()]
            work.wait()
        except DistBackendError as e:
            WORLD.break_(str(e))
    if WORLD.broken is None:
        if WORLD.finalize:
            MPI.Finalize()
        if WORLD.monitor is not None:
            WORLD.monitor.bye()
    else:
        if WORLD.monitor is not None:
            WORLD.monitor.failed(WORLD.broken)
            WORLD.monitor.close()
        _unlink_segments()


def _unlink_segments():
    for path in WORLD.segments:     # MPICH removes its shared memory in MPI_Finalize, which does not run here
        try:
            os.unlink(path)
        except OSError:
            pass


def _shm_segments():
    """MPICH's shared-memory files: those that appear while MPI starts are this job's (unlinking a file that
    processes have mapped leaves their mappings intact)."""
    try:
        return {os.path.join('/dev/shm', f) for f in os.listdir('/dev/shm') if f.startswith('mpich_shm_')}
    except OSError:
        return set()


# --- Work ---------------------------------------------------------------------------------------------------

# NOTE [failures and timeouts]: a waiting rank polls without pause for _YIELD_AFTER seconds (MPI moves a
# transfer on only while it is polled, on both sides), then yields its core between polls until _SPIN (a rank
# that shares the core and is behind gets it), then sleeps between polls, up to _MAX_PAUSE; every _CHECK
# seconds it looks at the monitor and the deadline. Measured in BENCHMARKS.md (distributed): yielding from the
# first poll made DDP's bucket reductions take milliseconds on a loaded machine.
_YIELD_AFTER, _SPIN, _MAX_PAUSE, _CHECK = 0.002, 0.02, 0.001, 0.01
_yield = getattr(os, 'sched_yield', lambda: None)

class Work:
    """An operation in flight: ``wait()`` completes it, ``is_completed()`` checks without blocking.

    Its MPI requests are started by the backend (after the fingerprint check of a collective, NOTE
    [collective fingerprints]); ``finish`` runs once they complete (copies back, casts, averages) and
    returns the result list.
    """

    def __init__(self, backend, what, timeout, start=None, finish=None, result=()):
        self._backend, self._what, self._timeout = backend, what, timeout
        self._start, self._finish, self._result = start, finish, list(result)
        self._reqs = None            # the data requests, once started
        self._fp = None              # (my fingerprint, everyone's, request) of a collective
        self._done, self._exc = False, None
        self._futures = []
        self._status = None

    def _advance(self):
        """Move the operation on without blocking; True once complete (raises its error)."""
        if self._done:
            if self._exc is not None:
                raise self._exc
            return True
        try:
            if self._reqs is None:
                self._backend._pump()
                if self._reqs is None:
                    return False
            if self._status is not None:
                if not self._reqs[0].Test(self._status):
                    return False
            elif self._reqs and not WORLD.MPI.Request.Testall(self._reqs):
                return False
            if self._finish is not None:
                r = self._finish()
                if r is not None:
                    self._result = list(r)
        except Exception as e:
            self._fail(e)
            raise
        self._done = True
        for f in self._futures:
            f.set_result(self._result)
        return True

    def _fail(self, e):
        self._done, self._exc = True, e
        for f in self._futures:
            if not f._done:
                f.set_exception(e)

    def is_completed(self):
        """Whether the operation has completed (it is moved on, never waited for)."""
        try:
            return self._advance()
        except Exception:       # noqa: BLE001  the error is raised by wait(), as torch's Work does
            return True

    def is_success(self):
        return self.is_completed() and self._exc is None

    def exception(self):
        return self._exc

    def wait(self, timeout=None):
        """Block until the operation completes; raise ``DistBackendError`` on a failed rank or a timeout."""
        limit = self._timeout if timeout is None else _seconds(timeout)
        start = time.monotonic()
        deadline, spin_until, check_at = start + limit, start + _SPIN, start + _CHECK
        yield_after = start + _YIELD_AFTER
        pause = 0.0
        while not self._advance():
            now = time.monotonic()
            if now < spin_until and now < check_at:     # the other ranks are usually microseconds away
                if now > yield_after:       # but a rank behind may need this core (more ranks than cores)
                    _yield()
                continue
            try:
                if now >= check_at:
                    check_at = now + _CHECK
                    WORLD.check(self._what)
                    if now > deadline:
                        WORLD.break_(f"{self._what} timed out after {limit:g} s")
                        raise DistBackendError(f"{self._what}: timed out after {limit:g} s waiting for the other "
                                               f"ranks (a rank is hung, dead, or calling other collectives); "
                                               f"the process group is no longer usable")
            except DistBackendError as e:
                self._fail(e)
                raise
            if now >= spin_until:       # a long wait: give the core away, a little longer each time
                pause = min(_MAX_PAUSE, pause + 0.00005)
                time.sleep(pause)
        return True

    def result(self):
        self.wait()
        return self._result

    def source_rank(self):
        """The sender of a completed ``recv`` from any source (its rank in the group)."""
        self.wait()
        return self._status.Get_source() if self._status is not None else -1

    def synchronize(self):
        self.wait()

    def get_future(self):
        """A ``ember.futures.Future`` of ``result()``, completed by this work."""
        from ..futures import Future
        f = Future()
        f._drive, f._poll = self.wait, self.is_completed
        if self._done:
            f.set_exception(self._exc) if self._exc is not None else f.set_result(self._result)
        else:
            self._futures.append(f)
        return f


def completed_work(result=()):
    w = Work(None, 'completed', 0.0, result=result)
    w._done = True
    return w


def _seconds(t):
    return t.total_seconds() if hasattr(t, 'total_seconds') else float(t)


# --- arrays as MPI buffers -----------------------------------------------------------------------------------

class _Buf:
    """A flat, contiguous view of an array (or a copy of a strided one, written back by ``done``)."""

    def __init__(self, a, write=True):
        self.a = a
        self.copy = not a.flags.c_contiguous
        self.flat = (np.ascontiguousarray(a) if self.copy else a).reshape(-1)
        self.write = write

    @property
    def bytes(self):
        return self.flat.view(np.uint8)

    def done(self):
        if self.copy and self.write:
            self.a[...] = self.flat.reshape(self.a.shape)


def _flat_bytes(arrays):
    """One contiguous byte buffer holding ``arrays`` one after another, and their byte counts."""
    counts = [a.nbytes for a in arrays]
    buf = np.empty(sum(counts), np.uint8)
    return buf, counts


def _displs(counts):
    return [int(x) for x in np.concatenate([[0], np.cumsum(counts)[:-1]])] if counts else []


def _scatter_bytes(buf, arrays):
    """Copy consecutive pieces of a byte buffer into ``arrays`` (any strides, any dtype)."""
    off = 0
    for a in arrays:
        n = a.nbytes
        a[...] = buf[off:off + n].view(a.dtype).reshape(a.shape)
        off += n


def _reduction(MPI, dtype, op, what):
    """(MPI op, compute dtype or None, post-scale) for a reduction of ``dtype`` arrays with ReduceOp ``op``."""
    if op == PREMUL_SUM:
        raise ValueError(f"{what}: ReduceOp.PREMUL_SUM is only available with NCCL (torch too)")
    if dtype.startswith('complex') and op not in (SUM, AVG):
        raise ValueError(f"{what} does not support {_OP_NAMES[op]} on complex tensors")
    floating = dtype.startswith(('float', 'bfloat', 'complex'))
    if op in (BAND, BOR, BXOR) and floating:
        raise ValueError(f"{what}: ReduceOp.{_OP_NAMES[op]} needs an integer or bool tensor, got {dtype}")
    if op == AVG and not floating:
        raise ValueError(f"{what}: ReduceOp.AVG needs a floating-point or complex tensor, got {dtype} "
                         f"(average in floating point, or SUM and divide)")
    if dtype == 'bool':        # torch's bool reductions: SUM and MAX are OR, PRODUCT and MIN are AND
        mop = {SUM: MPI.MAX, MAX: MPI.MAX, PRODUCT: MPI.MIN, MIN: MPI.MIN, BAND: MPI.BAND, BOR: MPI.BOR,
               BXOR: MPI.BXOR}[op]
        return mop, np.uint8, False
    mop = {SUM: MPI.SUM, AVG: MPI.SUM, PRODUCT: MPI.PROD, MIN: MPI.MIN, MAX: MPI.MAX, BAND: MPI.BAND,
           BOR: MPI.BOR, BXOR: MPI.BXOR}[op]
    # MPI has no bfloat16, and MPICH reduces float16 only with SUM: both reduce in float32 and round once
    compute = np.float32 if dtype in ('float16', 'bfloat16') else None
    return mop, compute, op == AVG


class _Reduced:
    """What MPI reduces for the flat array ``flat``: the array itself, a uint8 view of a bool array, or a
    float32 copy of a float16/bfloat16 one; ``store`` averages and writes the copy back."""

    def __init__(self, flat, compute, average, size):
        self.flat, self.average, self.size = flat, average, size
        self.copy = compute is not None and compute is not np.uint8
        self.buf = flat if compute is None else flat.view(np.uint8) if compute is np.uint8 else flat.astype(compute)

    def store(self):
        if self.average:
            self.buf /= self.size
        if self.copy:
            self.flat[...] = self.buf


# --- the backend ---------------------------------------------------------------------------------------------

class Backend:
    """One process group's communicators: ``comm`` for the data, ``ctl`` for ember's own messages."""

    def __init__(self, comm, timeout):
        self.MPI = WORLD.MPI
        self.comm = comm
        self.ctl = comm.Dup()
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.timeout = timeout
        self._seq = 0
        self._queue = collections.deque()      # collectives whose data transfer has not started, in call order

    # the fingerprint check and the in-order start (NOTE [collective fingerprints])
    def _collective(self, op, dtype, numel, root, shape, start, finish=None, result=()):
        what = op.lower().lstrip('_')
        WORLD.check(what)
        self._seq += 1
        shape = list(shape)[:4]
        fp = np.array([_OPS.index(op), DTYPES.index(dtype) if dtype else -1, numel, root, len(shape)]
                      + shape + [-1] * (4 - len(shape)) + [self._seq], np.int64)
        everyone = np.empty((self.size, _FP), np.int64)
        w = Work(self, what, self.timeout, start, finish, result)
        w._fp = (fp, everyone, self.ctl.Iallgather(fp, everyone))
        self._queue.append(w)
        return w

    def _pump(self):
        while self._queue:
            w = self._queue[0]
            fp, everyone, req = w._fp
            if not req.Test():
                return
            self._queue.popleft()
            bad = [r for r in range(self.size) if not np.array_equal(everyone[r, :4], everyone[0, :4])]
            if bad:
                WORLD.break_('ranks called different collectives')
                err = DistBackendError(_mismatch(everyone, self.rank, bad[0]))
                for q in [w, *self._queue]:
                    q._fail(err)
                self._queue.clear()
                raise err
            w._reqs = w._start() or []

    def _p2p(self, what, reqs, finish=None, result=()):
        WORLD.check(what)
        w = Work(self, what, self.timeout, None, finish, result)
        w._reqs = reqs
        return w

    # --- collectives ---------------------------------------------------------------------------------------
    def allreduce(self, a, dtype, op):
        mop, compute, average = _reduction(self.MPI, dtype, op, 'all_reduce')
        b = _Buf(a)
        r = _Reduced(b.flat, compute, average, self.size)

        def finish():
            r.store()
            b.done()
        return self._collective('ALLREDUCE', dtype, b.flat.size, -1, a.shape,
                                lambda: [self.comm.Iallreduce(self.MPI.IN_PLACE, r.buf, op=mop)], finish)

    def broadcast(self, a, dtype, root):
        b = _Buf(a, write=self.rank != root)
        return self._collective('BROADCAST', dtype, b.flat.size, root, a.shape,
                                lambda: [self.comm.Ibcast(b.bytes, root=root)], b.done)

    def reduce(self, a, dtype, op, root):
        mop, compute, average = _reduction(self.MPI, dtype, op, 'reduce')
        b = _Buf(a, write=self.rank == root)
        r = _Reduced(b.flat, compute, average, self.size)

        def start():
            if self.rank == root:
                return [self.comm.Ireduce(self.MPI.IN_PLACE, r.buf, op=mop, root=root)]
            return [self.comm.Ireduce(r.buf, None, op=mop, root=root)]

        def finish():
            if self.rank == root:
                r.store()
                b.done()
        return self._collective('REDUCE', dtype, b.flat.size, root, a.shape, start, finish)

    def allgather(self, outs, a, dtype):
        """``outs[r]`` gets rank r's ``a`` (sizes may differ by rank: each rank knows them from ``outs``)."""
        if len(outs) != self.size:
            raise ValueError(f"all_gather: tensor_list has {len(outs)} tensors, expected the group size {self.size}")
        b = _Buf(a, write=False)
        recv, counts = _flat_bytes(outs)
        uniform = len(set(counts)) == 1
        if counts[self.rank] != a.nbytes:
            raise ValueError(f"all_gather: output tensor {self.rank} has {outs[self.rank].size} elements, the "
                             f"input has {a.size}")
        return self._collective(
            'ALLGATHER', dtype, a.size if uniform else -1, -1, a.shape,
            lambda: [self.comm.Iallgatherv(b.bytes, [recv, (counts, _displs(counts)), self.MPI.BYTE])],
            lambda: _scatter_bytes(recv, outs))

    def allgather_base(self, out, a, dtype):
        if out.size != a.size * self.size:
            raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to world_size times "
                             f"input tensor size ({out.size} != {self.size} * {a.size})")
        bi, bo = _Buf(a, write=False), _Buf(out)
        return self._collective('_ALLGATHER_BASE', dtype, a.size, -1, a.shape,
                                lambda: [self.comm.Iallgather(bi.bytes, bo.bytes)], bo.done)

    def reduce_scatter(self, out, ins, dtype, op):
        if len(ins) != self.size:
            raise ValueError(f"reduce_scatter: input_list has {len(ins)} tensors, expected the group size "
                             f"{self.size}")
        mop, compute, average = _reduction(self.MPI, dtype, op, 'reduce_scatter')
        counts = [x.size for x in ins]
        if counts[self.rank] != out.size:
            raise ValueError(f"reduce_scatter: output has {out.size} elements, input {self.rank} has "
                             f"{counts[self.rank]}")
        bo = _Buf(out)
        r = _Reduced(bo.flat, compute, average, self.size)
        send = np.concatenate([x.reshape(-1) for x in ins])
        send = _Reduced(send, compute, False, self.size).buf

        def finish():
            r.store()
            bo.done()
        uniform = len(set(counts)) == 1
        return self._collective('REDUCE_SCATTER', dtype, out.size if uniform else -1, -1, out.shape,
                                lambda: [self.comm.Ireduce_scatter(send, r.buf, counts, op=mop)], finish)

    def reduce_scatter_base(self, out, a, dtype, op):
        if a.size != out.size * self.size:
            raise ValueError(f"reduce_scatter_tensor: input tensor must be the same size as output size times "
                             f"world size ({a.size} != {out.size} * {self.size})")
        mop, compute, average = _reduction(self.MPI, dtype, op, 'reduce_scatter_tensor')
        bi, bo = _Buf(a, write=False), _Buf(out)
        r = _Reduced(bo.flat, compute, average, self.size)
        send = _Reduced(bi.flat, compute, False, self.size).buf

        def finish():
            r.store()
            bo.done()
        return self._collective('_REDUCE_SCATTER_BASE', dtype, a.size, -1, a.shape,
                                lambda: [self.comm.Ireduce_scatter_block(send, r.buf, op=mop)], finish)

    def gather(self, outs, a, dtype, root):
        b = _Buf(a, write=False)
        if self.rank == root:
            if len(outs) != self.size:
                raise ValueError(f"gather: gather_list has {len(outs)} tensors, expected the group size "
                                 f"{self.size}")
            if any(o.nbytes != a.nbytes for o in outs):
                raise ValueError("gather: every tensor of gather_list must have the input's size and dtype")
            recv = np.empty(a.nbytes * self.size, np.uint8)
            return self._collective('GATHER', dtype, a.size, root, a.shape,
                                    lambda: [self.comm.Igather(b.bytes, recv, root=root)],
                                    lambda: _scatter_bytes(recv, outs))
        return self._collective('GATHER', dtype, a.size, root, a.shape,
                                lambda: [self.comm.Igather(b.bytes, None, root=root)])

    def scatter(self, out, ins, dtype, root):
        bo = _Buf(out)
        if self.rank == root:
            if len(ins) != self.size:
                raise ValueError(f"scatter: scatter_list has {len(ins)} tensors, expected the group size "
                                 f"{self.size}")
            if any(x.nbytes != out.nbytes for x in ins):
                raise ValueError("scatter: every tensor of scatter_list must have the output's size and dtype")
            send = np.concatenate([np.ascontiguousarray(x).reshape(-1).view(np.uint8) for x in ins])
            start = lambda: [self.comm.Iscatter(send, bo.bytes, root=root)]
        else:
            start = lambda: [self.comm.Iscatter(None, bo.bytes, root=root)]
        return self._collective('SCATTER', dtype, out.size, root, out.shape, start, bo.done)

    def alltoall(self, outs, ins, dtype):
        if len(outs) != self.size or len(ins) != self.size:
            raise ValueError(f"all_to_all: both tensor lists need the group size {self.size} of tensors "
                             f"(got {len(outs)} and {len(ins)})")
        send = np.concatenate([np.ascontiguousarray(x).reshape(-1).view(np.uint8) for x in ins])
        scounts = [x.nbytes for x in ins]
        recv, rcounts = _flat_bytes(outs)
        return self._collective(
            'ALLTOALL', dtype, -1, -1, (), lambda: [self.comm.Ialltoallv(
                [send, (scounts, _displs(scounts)), self.MPI.BYTE],
                [recv, (rcounts, _displs(rcounts)), self.MPI.BYTE])],
            lambda: _scatter_bytes(recv, outs))

    def alltoall_base(self, out, a, dtype, out_splits, in_splits):
        def counts(arr, splits, name):
            row = arr.nbytes // arr.shape[0] if arr.ndim and arr.shape[0] else arr.itemsize
            if not splits:
                if arr.ndim == 0 or arr.shape[0] % self.size:
                    raise ValueError(f"all_to_all_single: the {name} tensor's first dimension "
                                     f"({arr.shape[0] if arr.ndim else 0}) must divide by the group size "
                                     f"{self.size} when no split sizes are given")
                return [arr.nbytes // self.size] * self.size
            if len(splits) != self.size or sum(splits) != arr.shape[0]:
                raise ValueError(f"all_to_all_single: {name} split sizes {list(splits)} must have one entry per "
                                 f"rank ({self.size}) and add up to the first dimension ({arr.shape[0]})")
            return [s * row for s in splits]
        scounts, rcounts = counts(a, in_splits, 'input'), counts(out, out_splits, 'output')
        bi, bo = _Buf(a, write=False), _Buf(out)
        return self._collective(
            'ALLTOALL_BASE', dtype, -1, -1, a.shape, lambda: [self.comm.Ialltoallv(
                [bi.bytes, (scounts, _displs(scounts)), self.MPI.BYTE],
                [bo.bytes, (rcounts, _displs(rcounts)), self.MPI.BYTE])], bo.done)

    def barrier(self):
        return self._collective('BARRIER', None, -1, -1, (), lambda: [self.comm.Ibarrier()])

    # --- point to point ------------------------------------------------------------------------------------
    def send(self, a, dst, tag):
        b = _Buf(a, write=False)
        return self._p2p('send', [self.comm.Isend(b.bytes, dest=dst, tag=tag)])

    def recv(self, a, src, tag):
        b = _Buf(a)
        source = self.MPI.ANY_SOURCE if src is None or src < 0 else src
        w = self._p2p('recv', [self.comm.Irecv(b.bytes, source=source, tag=tag)], b.done)
        w._status = self.MPI.Status()
        return w

    def monitored_barrier(self, timeout, wait_all_ranks):
        """Every rank reports to rank 0, which names the ranks that did not arrive within ``timeout``."""
        tag = 7001
        WORLD.check('monitored_barrier')
        token = np.zeros(1, np.uint8)
        if self.rank != 0:
            self._p2p('monitored_barrier', [self.ctl.Isend(token, dest=0, tag=tag)]).wait(timeout)
            self._p2p('monitored_barrier', [self.ctl.Irecv(token, source=0, tag=tag + 1)]).wait(timeout)
            return
        bufs = {r: np.zeros(1, np.uint8) for r in range(1, self.size)}
        reqs = {r: self.ctl.Irecv(bufs[r], source=r, tag=tag) for r in bufs}
        deadline = time.monotonic() + timeout
        while reqs and time.monotonic() < deadline:
            for r in [r for r, q in reqs.items() if q.Test()]:
                del reqs[r]
            WORLD.check('monitored_barrier')
            time.sleep(0.0005)
        if reqs:
            missing = sorted(reqs)
            for q in reqs.values():
                q.Cancel()
            WORLD.break_('monitored_barrier timed out')
            if wait_all_ranks:
                raise DistBackendError(f"Ranks {', '.join(map(str, missing))} failed to pass monitoredBarrier in "
                                       f"{timeout * 1000:.0f} ms")
            raise DistBackendError(f"Rank {missing[0]} failed to pass monitoredBarrier in {timeout * 1000:.0f} ms")
        for r in range(1, self.size):
            self._p2p('monitored_barrier', [self.ctl.Isend(token, dest=r, tag=tag + 1)]).wait(timeout)

    def split(self, color, key):
        return self.comm.Split(color if color is not None else self.MPI.UNDEFINED, key)


def _mismatch(everyone, me, other):
    def show(row):
        op, dt, numel, root, ndim = (int(x) for x in row[:5])
        shape = [int(x) for x in row[5:5 + min(ndim, 4)]]
        dts = _SCALAR[DTYPES[dt]] if dt >= 0 else 'none'
        return (f"CollectiveFingerPrint(SequenceNumber={int(row[9])}, OpType={_OPS[op]}, TensorShape={shape}, "
                f"NumelIfChecked={numel}, Root={root}, TensorDtypes={dts})")
    first = 0 if other != 0 else 1
    return (f"Detected mismatch between collectives on ranks. Rank {first} is running collective: "
            f"{show(everyone[first])}, but Rank {other} is running collective: {show(everyone[other])}. "
            f"(seen on rank {me}; the process group is no longer usable)")
