"""DataLoader with worker processes: same data as num_workers=0, sharding, seeding, failures, clean shutdown.

Datasets are small and module-level (picklable for 'spawn'); every wait has a timeout so a bug fails
instead of hanging. Children are found by scanning /proc; shared memory by listing /dev/shm.
"""
import gc
import os
import random
import signal
import time

import numpy as np
import pytest
import torch.utils.data as tud

import ember
import ember.utils.data as eud
from ember.utils.data._utils import worker as eworker

pytestmark = pytest.mark.timeout(60)


def children():
    """PIDs of this process's live (non-zombie) children, from /proc."""
    me, out = os.getpid(), []
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open(f'/proc/{d}/stat') as f:
                    fields = f.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != 'Z':
                out.append(int(d))
    from multiprocessing import forkserver, resource_tracker
    # Python's own helper processes (spawn/forkserver start them, once per process), not workers
    helpers = {resource_tracker._resource_tracker._pid, forkserver._forkserver._forkserver_pid}
    return [p for p in out if p not in helpers]


def our_segments():
    return [n for n in os.listdir('/dev/shm') if n.startswith(f'emb{os.getpid()}')]


def wait_until(cond, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


@pytest.fixture(autouse=True)
def no_leaks():
    before = set(children())
    yield
    if set(children()) - before or our_segments():
        gc.collect()   # an iterator caught in a reference cycle (a traceback) ends when collected; slow in a big heap
    assert wait_until(lambda: not (set(children()) - before)), "worker processes left behind"
    assert our_segments() == [], "shared-memory segments left in /dev/shm"


class Images:
    def __init__(self, n=40, shape=(8, 8)):
        self.x = np.arange(n * int(np.prod(shape)), dtype=np.float32).reshape((n,) + shape)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {'img': self.x[i], 'label': i, 'name': f'n{i}'}


class Failing(Images):
    def __getitem__(self, i):
        if i == 13:
            raise ValueError("sample 13 is corrupt")
        if i == 27:
            raise KeyError('missing')
        return self.x[i]


class Slow(Images):
    def __getitem__(self, i):
        time.sleep(0.05)
        return self.x[i]


class WhoAmI(Images):
    def __getitem__(self, i):
        info = eud.get_worker_info()
        return (info.id, info.num_workers, info.seed, os.getpid(), random.random(), float(np.random.rand()),
                float(ember.rand(1).item()), len(info.dataset), tuple(_INIT_CALLS))


class Shards(eud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = eud.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def flat(batches, key='label'):
    return [int(v) for b in batches for v in b[key].tolist()]


def test_two_workers_give_the_same_batches_as_none():
    ds = Images()
    ref = list(eud.DataLoader(ds, batch_size=6))
    got = list(eud.DataLoader(ds, batch_size=6, num_workers=2))
    assert len(got) == len(ref) == 7
    for a, b in zip(got, ref):
        assert a['name'] == b['name'] and a['label'].tolist() == b['label'].tolist()
        np.testing.assert_array_equal(a['img'].numpy(), b['img'].numpy())
        assert a['img'].dtype == ember.float32 and a['label'].dtype == ember.int64
    torch_ref = list(tud.DataLoader(ds, batch_size=6))
    assert flat(got) == flat(torch_ref)


def test_shuffle_in_order_false_and_prefetch_same_multiset():
    ds = Images(60)
    for kw in (dict(shuffle=True, generator=ember.Generator().manual_seed(0)), dict(in_order=False),
               dict(prefetch_factor=1, drop_last=True)):
        got = flat(eud.DataLoader(ds, batch_size=7, num_workers=2, **kw))
        ref = flat(tud.DataLoader(ds, batch_size=7, **{k: v for k, v in kw.items() if k == 'drop_last'}))
        assert sorted(got) == sorted(ref)


def test_seeded_shuffle_reproducible_with_workers():
    runs = [flat(eud.DataLoader(Images(30), batch_size=4, shuffle=True, num_workers=2,
                                generator=ember.Generator().manual_seed(9))) for _ in range(2)]
    assert runs[0] == runs[1] and runs[0] != list(range(30))


def test_batches_arrive_zero_copy_through_reused_shared_memory():
    ds = Images(80, (32, 32))
    it = iter(eud.DataLoader(ds, batch_size=2, num_workers=1))
    held = next(it)
    base = held['img'].numpy()
    while isinstance(base.base, np.ndarray):
        base = base.base
    owner = base.base.obj if isinstance(base.base, memoryview) else base.base
    assert type(owner).__name__ == 'mmap'   # a view of the shared segment, not an unpickled copy
    view = held['img'].select(0, 1)   # an ember view op: shares the segment
    del held
    names = set()
    for i, batch in enumerate(it):   # later batches reuse freed segments, never the one `view` still uses
        np.testing.assert_array_equal(batch['img'].numpy(), ds.x[2 * i + 2:2 * i + 4])
        names |= set(our_segments())
    np.testing.assert_array_equal(view.numpy(), ds.x[1])
    assert 1 < len(names) <= 6, names   # a small pool, not one segment per batch
    del it, batch
    np.testing.assert_array_equal(view.numpy(), ds.x[1])   # still valid after the iterator shut down


def _custom_collate(samples):
    return {'stack': ember.tensor(np.stack([s['img'] for s in samples])), 'names': [s['name'] for s in samples],
            'grad': ember.ones(3, requires_grad=True), 'raw': np.array([s['label'] for s in samples])}


def test_custom_collate_results_travel_intact():
    out = list(eud.DataLoader(Images(10, (32, 32)), batch_size=5, num_workers=2, collate_fn=_custom_collate))
    np.testing.assert_array_equal(out[1]['stack'].numpy(), Images(10, (32, 32)).x[5:])
    assert out[0]['names'] == ['n0', 'n1', 'n2', 'n3', 'n4'] and out[1]['raw'].tolist() == [5, 6, 7, 8, 9]
    assert out[0]['grad'].requires_grad and out[0]['grad'].tolist() == [1., 1., 1.]


def test_iterable_dataset_sharding_gives_each_sample_once():
    for kw in (dict(batch_size=3), dict(batch_size=None), dict(batch_size=4, drop_last=True)):
        got = list(eud.DataLoader(Shards(21), num_workers=2, **kw))
        values = [int(v) for b in got for v in (b.tolist() if isinstance(b, ember.Tensor) else [b])]
        if kw.get('drop_last'):
            assert all(len(b) == 4 for b in got) and len(set(values)) == len(values)
        else:
            assert sorted(values) == list(range(21))


def test_worker_info_seeding_and_init_fn():
    loader = eud.DataLoader(WhoAmI(4), batch_size=None, num_workers=2,
                            worker_init_fn=_record_init, generator=ember.Generator().manual_seed(5))
    rows = list(loader)
    ids = sorted({r[0] for r in rows})
    assert ids == [0, 1] and all(r[1] == 2 and r[7] == 4 for r in rows)
    base = rows[0][2] - rows[0][0]
    assert all(r[2] == base + r[0] for r in rows)   # torch's scheme: seed = base_seed + worker_id
    first = {r[0]: r for r in rows[:2]}
    for wid, r in first.items():
        random.seed(base + wid)
        assert r[4] == random.random()
        np.random.seed(eworker._generate_state(base, wid))
        assert r[5] == float(np.random.rand())
        with ember.random.fork_rng():
            ember.manual_seed(base + wid)
            assert r[6] == float(ember.rand(1).item())
        assert list(r[8]) == [wid]   # worker_init_fn ran once, in this worker
    assert first[0][4] != first[1][4] and first[0][6] != first[1][6]
    again = list(eud.DataLoader(WhoAmI(4), batch_size=None, num_workers=2, worker_init_fn=_record_init,
                                generator=ember.Generator().manual_seed(5)))
    assert [r[4:7] for r in again] == [r[4:7] for r in rows]


_INIT_CALLS = []


def _record_init(worker_id):
    assert eud.get_worker_info().id == worker_id
    _INIT_CALLS.append(worker_id)


def test_numpy_seed_state_matches_torch():
    from torch.utils.data._utils.worker import _generate_state
    rng = random.Random(0)
    for _ in range(50):
        base, wid = rng.getrandbits(63), rng.randrange(16)
        assert eworker._generate_state(base, wid) == _generate_state(base, wid)


def test_worker_exception_is_reraised_with_traceback():
    it = iter(eud.DataLoader(Failing(), batch_size=None, num_workers=2))
    with pytest.raises(ValueError) as e:
        for _ in it:
            pass
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call "
                          "last):")
    assert "sample 13 is corrupt" in msg and "in __getitem__" in msg
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        for _ in it:
            pass
    del it


def test_killed_worker_is_detected():
    it = iter(eud.DataLoader(Slow(200), batch_size=2, num_workers=2))
    next(it)
    pid = it._pool.workers[0].pid
    os.kill(pid, signal.SIGKILL)
    t = time.time()
    with pytest.raises(RuntimeError, match=rf"DataLoader worker \(pid\(s\) {pid}\) exited unexpectedly"):
        for _ in it:
            pass
    assert time.time() - t < 5
    del it


def test_timeout_raises():
    it = iter(eud.DataLoader(Slow(4), batch_size=4, num_workers=1, timeout=0.01))
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.01 seconds"):
        next(it)
    del it


def test_break_and_del_end_workers_and_free_shared_memory():
    before = set(children())
    loader = eud.DataLoader(Images(64, (32, 32)), batch_size=2, num_workers=2)
    for i, _ in enumerate(loader):
        if i == 1:
            assert len(set(children()) - before) == 2
            break
    assert wait_until(lambda: not (set(children()) - before))
    it = iter(loader)
    next(it)
    pids = [p.pid for p in it._pool.workers]
    del it
    assert wait_until(lambda: not (set(children()) & set(pids)))
    assert our_segments() == []


def test_persistent_workers_reused_across_epochs():
    loader = eud.DataLoader(WhoAmI(6), batch_size=None, num_workers=2, persistent_workers=True)
    e1, e2 = list(loader), list(loader)
    assert len(e1) == len(e2) == 6
    assert {r[3] for r in e1} == {r[3] for r in e2} and len({r[3] for r in e1}) == 2
    it = iter(loader)
    next(it)
    e3 = list(iter(loader))   # a new epoch after an abandoned one
    assert len(e3) == 6
    loader._iterator._shutdown_workers()


@pytest.mark.parametrize('context', ['spawn', 'forkserver'])
def test_spawn_context_with_tensors_in_dataset(context):
    # only ember classes in the dataset: a spawned worker then imports ember, not this module (and torch)
    rows = ember.arange(24.).reshape(12, 2)
    ds = eud.StackDataset(list(range(12)), eud.Subset(list(range(100, 112)), list(range(12))))
    ds.tensor = rows   # a tensor reaches spawned workers inside the dataset
    got = list(eud.DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context=context))
    assert [b[0].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert got[2][1].tolist() == [108, 109, 110, 111]


def test_interpreter_exit_ends_workers_and_unlinks_segments():
    import subprocess
    import sys
    script = (
        "import numpy as np, ember, ember.utils.data as d\n"
        "x = np.zeros((64, 32, 32), np.float32)\n"
        "it = iter(d.DataLoader(x, batch_size=2, num_workers=2))\n"
        "next(it)\n"
        "print(' '.join(str(p.pid) for p in it._pool.workers), it._pool.prefix, flush=True)\n"
    )   # exits with the iterator alive and batches in flight
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=60,
                         cwd=root, env={**os.environ, 'PYTHONPATH': root})
    assert out.returncode == 0, out.stderr
    *pids, prefix = out.stdout.split()

    def gone(pid):
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        return False
    assert wait_until(lambda: all(gone(p) for p in pids)), "orphaned worker processes"
    assert not [n for n in os.listdir('/dev/shm') if n.startswith(prefix)]
    assert 'Traceback' not in out.stderr


def test_tensor_dataset_with_workers_matches_no_workers():
    x = ember.from_numpy(np.arange(50 * 40, dtype=np.float32).reshape(50, 40))
    ds = eud.TensorDataset(x, ember.arange(50))
    ref = list(eud.DataLoader(ds, batch_size=8))
    got = list(eud.DataLoader(ds, batch_size=8, num_workers=2))
    assert len(got) == len(ref) == 7
    for (a, b), (c, d) in zip(got, ref):
        np.testing.assert_array_equal(a.numpy(), c.numpy())
        assert b.tolist() == d.tolist() and a.dtype == ember.float32 and b.dtype == ember.int64


class CachesInWorker(Images):
    """Keeps a collated batch inside the worker across batches (a cache): its memory must never be reused."""

    def __getitem__(self, i):
        if not hasattr(self, 'kept'):
            self.kept = eud.default_collate([self.x[0]] * 4)   # in shared memory, the size of a batch
        np.testing.assert_array_equal(self.kept.numpy()[3], self.x[0])
        return self.x[i]


class LocalError(Exception):
    pass


class RaisesUnpicklable(Images):
    def __getitem__(self, i):
        class Local(Exception):   # a class pickle cannot find by name
            pass
        raise Local(f"local failure at {i}")


def test_worker_side_arrays_are_never_overwritten_and_unpicklable_errors_reported():
    got = list(eud.DataLoader(CachesInWorker(40, (16, 16)), batch_size=4, num_workers=1))
    assert len(got) == 10
    with pytest.raises(RuntimeError, match=r"in DataLoader worker process 0(.|\n)*local failure at 0"):
        list(eud.DataLoader(RaisesUnpicklable(), batch_size=2, num_workers=1))


class Segfaults(Images):
    def __getitem__(self, i):
        if i == 3:
            import ctypes
            import faulthandler
            faulthandler.disable()   # (pytest's handler would print a dump)
            ctypes.string_at(0)      # a segmentation fault in the worker
        return self.x[i]


def test_crashed_worker_is_detected():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly \(worker 1 was "
                                           r"killed by signal SIGSEGV\)"):
        list(eud.DataLoader(Segfaults(8), batch_size=None, num_workers=2))
