"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in ``nprocs`` processes and propagate failures as torch does.

A child that raises sends its formatted traceback to the parent through a queue
and exits with code 1; the parent's ``join`` then terminates the other children
and raises ``ProcessRaisedException`` carrying that traceback. A child that dies
without raising (a signal, ``os._exit``) gives ``ProcessExitedException``.
"""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback


class ProcessException(Exception):
    __slots__ = ['error_index', 'error_pid']

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child process exited with a non-zero code or was killed by a signal."""

    __slots__ = ['exit_code']

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:   # noqa: BLE001  every error goes to the parent, which raises it
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for the children; True when all are done, False on timeout; raise when one failed."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for s in ready:
            i = self.sentinels.pop(s)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        for p in self.processes:            # one failed: stop the others, as torch does
            if p.is_alive():
                p.terminate()
            p.join()
        p = self.processes[failed]
        if self.error_queues[failed].empty():
            code = p.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {failed} terminated with signal {name}", failed, p.pid,
                                             code, name)
            raise ProcessExitedException(f"process {failed} terminated with exit code {code}", failed, p.pid, code)
        trace = self.error_queues[failed].get()
        raise ProcessRaisedException(f"\n\n-- Process {failed} terminated with the following error:\n{trace}",
                                     failed, p.pid)


SpawnContext = ProcessContext


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; join them unless ``join=False``."""
    ctx = multiprocessing.get_context(start_method)
    procs, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        procs.append(p)
        queues.append(q)
    context = ProcessContext(procs, queues)
    context._args = args    # shared tensors in args must outlive the children's start (NOTE [shared tensors])
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'):
    """``fn(i, *args)`` in ``nprocs`` spawned processes; a child's exception is raised here.

    >>> import ember.multiprocessing as mp
    >>> mp.spawn(print, args=('hello',), nprocs=1)   # doctest: +SKIP
    """
    return start_processes(fn, args, nprocs, join, daemon, start_method)
