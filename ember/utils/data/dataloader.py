"""DataLoader: batches from a dataset, in the main process or in worker processes.

The loader turns sampler output into batches with a fetcher (_utils/fetch.py)
and a collate function. With ``num_workers > 0`` an iterator owns a pool of
worker processes: each has an index queue (tasks in) and a pipe of its own
(batches out), so the main process can wait on every pipe and every worker's
process sentinel at once and notices a dead worker as soon as it dies. Batches
arrive as shared-memory references (NOTE [DataLoader shared memory] in
_utils/shm.py). Shutdown (end of epoch, ``del``, garbage collection of an
abandoned iterator, interpreter exit) is one function, ``_WorkerPool.shutdown``,
registered with ``weakref.finalize`` so that it runs exactly once.
"""
import functools
import itertools
import math
import multiprocessing as mp
import multiprocessing.connection
import os
import secrets
import signal
from ember._warn import warnings
import warnings as _std_warnings
import weakref
from typing import Any, Callable, Generic, TypeVar

import ember
from . import _utils
from ._utils import shm
from ._utils.collate import default_collate, default_convert
from ._utils.worker import (ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration, _worker_loop,
                            get_worker_info, register_process_reducer)
from .dataset import IterableDataset
from . import graph_settings
from .datapipes.datapipe import (IterDataPipe, MapDataPipe, _IterDataPipeSerializationWrapper,
                                 _MapDataPipeSerializationWrapper)
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _seed_from

__all__ = ['DataLoader', 'get_worker_info', 'default_collate', 'default_convert']

_SHUTDOWN_JOIN_TIMEOUT = 5.0


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: ``None`` forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


T_co = TypeVar('T_co', covariant=True)
_T = TypeVar('_T')
_worker_init_fn_t = Callable[[int], None]       # the type aliases torch's module defines (opacus imports them)
_collate_fn_t = Callable[[list[_T]], Any]


class _DatasetKind:
    """torch's names for the two kinds of dataset a loader reads (``loader._dataset_kind``)."""
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        return _utils.fetch.create_fetcher(kind == _DatasetKind.Iterable, dataset, auto_collation, collate_fn,
                                           drop_last)


def _get_distributed_settings():
    dist = ember.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def _sharding_worker_init_fn(worker_init_fn, world_size, rank_id, worker_id):
    """A DataPipe's worker: shard over all workers of all ranks (rank-major), then run the user's init fn."""
    info = get_worker_info()
    if not isinstance(info.dataset, (IterDataPipe, MapDataPipe)):
        raise AssertionError("datapipe must be an instance of IterDataPipe or MapDataPipe")
    graph_settings.apply_sharding(info.dataset, info.num_workers * world_size, worker_id * world_size + rank_id)
    if worker_init_fn is not None:
        worker_init_fn(worker_id)


def _shared_seed(generator):
    """The seed a DataPipe's random pipes get per epoch (torch broadcasts it over a gloo group when
    distributed; ember draws it on each rank: seed the loader's generator alike on every rank)."""
    return _seed_from(generator)


def _seeded_datapipe(dataset, seed):
    return graph_settings.apply_random_seed(dataset, ember.Generator().manual_seed(seed))


class DataLoader(Generic[T_co]):
    """Iterates over batches of ``dataset``; torch.utils.data.DataLoader's arguments and behaviour.

    >>> import ember
    >>> from ember.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(ember.arange(10.), ember.arange(10))
    >>> [y.tolist() for x, y in DataLoader(ds, batch_size=4)]
    [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterDataPipe):   # as torch: the loader holds a wrapper that pickles with dill too
            self.dataset = _IterDataPipeSerializationWrapper(dataset)
        elif isinstance(dataset, MapDataPipe):
            self.dataset = _MapDataPipeSerializationWrapper(dataset)

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if isinstance(dataset, IterDataPipe):
                if shuffle is not None:   # (a Shuffler this adds is not the wrapped pipe: torch's behaviour too)
                    dataset = graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
            elif shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(ctx, str):
                methods = mp.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={ctx!r}")
                ctx = mp.get_context(ctx)
            elif not isinstance(ctx, mp.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={ctx}")
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ('batch_size', 'batch_sampler', 'sampler', 'drop_last', 'dataset',
                                           'persistent_workers'):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if self.num_workers == 0:
            return
        try:
            max_workers = len(os.sched_getaffinity(0))
        except AttributeError:
            max_workers = os.cpu_count()
        if max_workers is not None and self.num_workers > max_workers:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested "
                          f"max number of worker in current system is {max_workers}, which is smaller than what "
                          f"this DataLoader is going to create. Please be aware that excessive worker creation might "
                          f"get DataLoader running slow or even freeze, lower the worker number to avoid potential "
                          f"slowness/freeze if necessary.", UserWarning, stacklevel=2)


_NO_PIN = "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be used."


from ._utils.pin_memory import pin_memory as _pin  # noqa: E402  (torch's module for it)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._shared_seed = None
        if isinstance(self._dataset, IterDataPipe):
            self._shared_seed = _shared_seed(loader.generator)
            self._dataset = _seeded_datapipe(self._dataset, self._shared_seed)
        self._iterable = loader._dataset_kind == _DatasetKind.Iterable     # torch's protocol: fastai drives these
        #                                                                    iterators with a loader of its own
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._pin = loader.pin_memory and ember.cuda.is_available()
        if loader.pin_memory and not self._pin:     # at this line, as torch's: shown once, not once per user line
            _std_warnings.warn(_NO_PIN)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _seed_from(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if isinstance(self._dataset, IterDataPipe):
            self._shared_seed = _shared_seed(loader.generator)
            self._dataset = _seeded_datapipe(self._dataset, self._shared_seed)

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called} "
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg)
        return _pin(data) if self._pin else data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            graph_settings.apply_sharding(self._dataset, *_get_distributed_settings())
        self._fetcher = _utils.fetch.create_fetcher(self._iterable, self._dataset, self._auto_collation,
                                                    self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()   # may raise StopIteration
        return self._fetcher.fetch(index)   # may raise StopIteration (iterable dataset exhausted)


class _WorkerPool:
    """The worker processes of one iterator and everything to tear down with them (see ``shutdown``)."""

    def __init__(self, loader, base_seed, iterable, auto_collation, collate_fn, drop_last, dataset, shared_seed):
        ctx = loader.multiprocessing_context or mp.get_context()
        if ctx.get_start_method() != 'fork':
            register_process_reducer()   # tensors inside the dataset must reach a spawned worker
        self.prefix = f'emb{os.getpid()}{secrets.token_hex(3)}_'
        self.done_event = ctx.Event()
        self.index_queues, self.conns, self.workers = [], [], []
        self.closed = False
        self.owner_pid = os.getpid()
        self.receiver = shm.Receiver()
        try:
            for wid in range(loader.num_workers):
                q = ctx.Queue()
                q.cancel_join_thread()   # never block interpreter exit on tasks a dead worker will not read
                r, w = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_worker_loop, daemon=True,
                                args=(iterable, dataset, q, w, self.done_event, auto_collation, collate_fn,
                                      drop_last, base_seed, _worker_init_fn(loader, dataset), wid,
                                      loader.num_workers, self.prefix, shared_seed))
                p.start()
                w.close()   # only the worker writes: its death then reads as EOF here
                self.index_queues.append(q)
                self.conns.append(r)
                self.workers.append(p)
        except BaseException:
            self.shutdown()
            raise

    def return_segments(self):
        """Tell the workers which of their shared-memory segments no batch uses any more."""
        for wid, name in self.receiver.take_freed():
            self.index_queues[wid].put(shm.FreeSegment(name))

    def shutdown(self):
        """Stop every worker (politely, then by force), close the channels, unlink leftover shared memory."""
        if self.closed or os.getpid() != self.owner_pid:
            return   # (a forked child may garbage-collect a copy of its parent's iterator: not its workers)
        self.closed = True
        try:
            self.done_event.set()
            for q in self.index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            for c in self.conns:
                c.close()   # a worker blocked writing a batch gets EPIPE and exits
            for p in self.workers:
                p.join(_SHUTDOWN_JOIN_TIMEOUT)
                if p.is_alive():
                    p.terminate()
                    p.join(1.0)
                if p.is_alive():
                    p.kill()
                    p.join()
            for q in self.index_queues:
                q.close()
            self.receiver.close()
        finally:
            shm.unlink_prefix(self.prefix)


def _worker_init_fn(loader, dataset):
    """The user's worker_init_fn; for a DataPipe, first shard it over the workers (torch's forward compatibility)."""
    if isinstance(dataset, (IterDataPipe, MapDataPipe)):
        return functools.partial(_sharding_worker_init_fn, loader.worker_init_fn, *_get_distributed_settings())
    return loader.worker_init_fn


def _describe_exit(p):
    code = p.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f'signal {-code}'
        return f"worker {p._ember_worker_id} was killed by signal {name}"
    return f"worker {p._ember_worker_id} exited with code {code}"


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._pool = _WorkerPool(loader, self._base_seed, self._iterable, self._auto_collation, self._collate_fn,
                                 self._drop_last, self._dataset, self._shared_seed)
        for wid, p in enumerate(self._pool.workers):
            p._ember_worker_id = wid
        self._finalizer = weakref.finalize(self, self._pool.shutdown)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}   # task index -> (worker id,) while pending, (worker id, data) once arrived early
        self._tasks_outstanding = 0
        self._worker_tasks = [0] * self._num_workers
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:   # persistent workers: restart their fetchers, and drop last epoch's leftovers
            for q in self._pool.index_queues:
                q.put(_ResumeIteration(self._shared_seed))
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        assert self._tasks_outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        active = sum(self._workers_status)
        for _ in range(self._num_workers):   # the next active worker (with capacity, when out of order)
            wid = next(self._worker_queue_idx_cycle)
            if self._workers_status[wid] and (self._in_order or self._worker_tasks[wid] < max_tasks // active):
                break
        else:
            return
        self._pool.index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._worker_tasks[wid] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """The next message from any worker: ``(task index, data)``; raises if a worker died or on timeout."""
        pool = self._pool
        timeout = self._timeout if self._timeout > 0 else None
        conns = [c for c, ok in zip(pool.conns, self._workers_status) if ok or self._persistent_workers]
        watched = conns + [p.sentinel for c, p in zip(pool.conns, pool.workers) if c in conns]
        if not conns:
            raise RuntimeError("DataLoader has no active worker left to wait for")
        while True:
            ready = mp.connection.wait(watched, timeout)
            if not ready:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            for c in ready:
                if isinstance(c, mp.connection.Connection):
                    try:
                        return pool.receiver.loads(c.recv_bytes())
                    except EOFError:
                        pass
            # a pipe closed or a process ended: let the ending worker be reaped (its sentinel can fire before
            # its exit code is known), then report it
            for c, p in zip(pool.conns, pool.workers):
                if c in ready or p.sentinel in ready:
                    p.join(1.0)
            self._raise_dead_workers()

    def _raise_dead_workers(self):
        dead = [p for p in self._pool.workers if p.exitcode is not None or not p.is_alive()]
        dead = [p for p in dead if self._workers_status[p._ember_worker_id] or self._persistent_workers]
        if dead:
            pids = ', '.join(str(p.pid) for p in dead)
            why = '; '.join(_describe_exit(p) for p in dead)
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly ({why})")

    def _next_data(self):
        self._pool.return_segments()
        while True:
            while self._rcvd_idx < self._send_idx:   # skip tasks consumed out of order or of exhausted workers
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:   # it arrived earlier
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            if isinstance(idx, _ResumeIteration):
                continue
            if isinstance(data, _IterableDatasetStopIteration):
                self._retire_worker(data.worker_id)
                continue
            wid = self._task_info[idx][0]
            self._tasks_outstanding -= 1
            self._worker_tasks[wid] -= 1
            if idx == self._rcvd_idx or not self._in_order:
                del self._task_info[idx]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data)
            self._task_info[idx] += (data,)

    def _retire_worker(self, wid):
        """An iterable dataset's worker ran dry: drop its pending tasks and give their slots to the others."""
        self._workers_status[wid] = False
        if not self._persistent_workers:
            self._pool.index_queues[wid].put(None)
        abandoned = [i for i, info in self._task_info.items() if info == (wid,)]
        for i in abandoned:
            del self._task_info[i]
        self._tasks_outstanding -= len(abandoned)   # including the task that reported the end
        self._worker_tasks[wid] = 0
        for _ in range(len(abandoned)):
            self._try_put_index()

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        self._finalizer()   # runs _WorkerPool.shutdown once

    def __del__(self):
        finalizer = getattr(self, '_finalizer', None)
        if finalizer is not None:
            finalizer()
