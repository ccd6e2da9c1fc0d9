"""Distributed speed, ember on MPI beside torch on gloo, two ranks on this machine.

1. all_reduce of 10 MiB float32 across 2 ranks: median ms per call (ember ``dist.all_reduce``; torch gloo; and
   mpi4py's own blocking ``Allreduce`` on the same NumPy array, the floor under ember's layers).
2. DDP training of the 784-512-512-10 MLP, batch 64 per rank, SGD: samples/s of 2 ranks with one thread each
   against one process (one thread, and the default threads), and the overlap check: a synced backward (with
   the bucket all-reduces) against a local backward (``no_sync``) plus all-reducing every gradient on its own.

    python bench/bench_distributed.py            # the whole table (about a minute)
    python bench/bench_distributed.py --quick    # fewer steps

The driver starts each measurement in fresh processes (``emberrun`` / ``torchrun`` with ``--standalone``) and
prints one line per measurement; the workers are this file with ``--worker``.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.abspath(__file__)
MIB10 = 10 * 1024 * 1024 // 4


def _report(d):
    if int(os.environ.get('RANK', os.environ.get('PMI_RANK', 0))) == 0:
        print('RESULT ' + json.dumps(d), flush=True)


# --- workers -----------------------------------------------------------------------------------------------

def worker_allreduce(lib, iters):
    if lib == 'torch':
        import torch as L
        import torch.distributed as dist
    else:
        import ember as L
        import ember.distributed as dist
    L.set_num_threads(1)
    dist.init_process_group('gloo')
    t = L.ones(MIB10)
    raw = None
    if lib == 'mpi4py':
        from ember.distributed._mpi_backend import WORLD
        comm, arr = WORLD.MPI.COMM_WORLD, t.numpy()
        raw = lambda: comm.Allreduce(WORLD.MPI.IN_PLACE, arr)   # noqa: E731
    times = []
    for i in range(iters + 5):
        dist.barrier()
        s = time.perf_counter()
        raw() if raw else dist.all_reduce(t)
        times.append(time.perf_counter() - s)
    times = times[5:]
    _report({'what': f'all_reduce 10 MiB float32, {lib}', 'median_ms': 1e3 * statistics.median(times),
             'min_ms': 1e3 * min(times)})
    dist.destroy_process_group()


def _mlp(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(784, 512), L.nn.ReLU(), L.nn.Linear(512, 512), L.nn.ReLU(),
                           L.nn.Linear(512, 10))


def worker_train(lib, mode, steps, threads):
    """mode: 'single' (one process) or 'ddp' (under the launcher)."""
    if lib == 'torch':
        import torch as L
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
    else:
        import ember as L
        import ember.distributed as dist
        from ember.nn.parallel import DistributedDataParallel as DDP
    L.set_num_threads(threads)
    model = _mlp(L)
    world = 1
    if mode == 'ddp':
        dist.init_process_group('gloo')
        world = dist.get_world_size()
        model = DDP(model)
    opt = L.optim.SGD(model.parameters(), lr=0.01)
    x, y = L.randn(64, 784), L.randint(0, 10, (64,))
    fwd, bwd, whole = [], [], []

    def step():
        s = time.perf_counter()
        opt.zero_grad()
        loss = L.nn.functional.cross_entropy(model(x), y)
        m = time.perf_counter()
        loss.backward()
        e = time.perf_counter()
        opt.step()
        fwd.append(m - s)
        bwd.append(e - m)
        whole.append(time.perf_counter() - s)
    for _ in range(10):
        step()
    if mode == 'ddp':
        dist.barrier()
    fwd.clear(), bwd.clear(), whole.clear()
    for _ in range(steps):
        step()
    total = statistics.median(whole) * steps       # medians: the machine is shared
    out = {'what': f'MLP 784-512-512-10 b64, {lib}, {"2 ranks DDP" if mode == "ddp" else "1 process"}, '
                   f'{threads} thread(s)/rank', 'samples_per_s': world * 64 * steps / total,
           'step_ms': 1e3 * total / steps, 'fwd_ms': 1e3 * statistics.median(fwd),
           'bwd_ms': 1e3 * statistics.median(bwd)}
    if mode == 'ddp':                       # overlap: a local backward, and the gradients' all-reduce alone
        local = []
        for _ in range(steps):
            opt.zero_grad()
            with model.no_sync():         # as torch: the forward inside too, or the backward still reduces
                loss = L.nn.functional.cross_entropy(model(x), y)
                s = time.perf_counter()
                loss.backward()
                local.append(time.perf_counter() - s)
        flat = L.zeros(sum(p.numel() for p in model.parameters()))
        comm = []
        for _ in range(steps):
            dist.barrier()
            s = time.perf_counter()
            dist.all_reduce(flat)
            comm.append(time.perf_counter() - s)
        out.update(local_bwd_ms=1e3 * statistics.median(local), allreduce_all_grads_ms=1e3 * statistics.median(comm))
        dist.destroy_process_group()
    _report(out)


# --- driver ------------------------------------------------------------------------------------------------

def _run(cmd, env=None):
    e = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=600, cwd=ROOT)
    lines = [ln for ln in (p.stdout + p.stderr).splitlines() if 'RESULT ' in ln]
    if p.returncode != 0 or not lines:
        raise SystemExit(f'{cmd} failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}')
    return json.loads(lines[0].split('RESULT ', 1)[1])


def _launcher(lib):
    mod = 'torch.distributed.run' if lib == 'torch' else 'ember.distributed.run'
    return [sys.executable, '-m', mod, '--standalone', '--nproc_per_node=2']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--worker', nargs='+')
    ap.add_argument('--only', choices=['allreduce', 'ddp'])
    a = ap.parse_args()
    if a.worker:
        kind, *rest = a.worker
        if kind == 'allreduce':
            worker_allreduce(rest[0], int(rest[1]))
        else:
            worker_train(rest[0], rest[1], int(rest[2]), int(rest[3]))
        return
    iters, steps = (10, 20) if a.quick else (30, 60)
    one = {'OMP_NUM_THREADS': '1'}
    results = []
    for lib in ('ember', 'mpi4py', 'torch') if a.only != 'ddp' else ():
        results.append(_run(_launcher('torch' if lib == 'torch' else 'ember') +
                            [HERE, '--worker', 'allreduce', lib, str(iters)], one))
        print(json.dumps(results[-1]), flush=True)
    if a.only != 'ddp':
        results.append(_run(['mpiexec', '-n', '2', sys.executable, HERE, '--worker', 'allreduce', 'ember', str(iters)],
                            one))    # the same through MPICH's own launcher (Hydra) instead of ember's rendezvous
        results[-1]['what'] += ' (under mpiexec)'
        print(json.dumps(results[-1]), flush=True)
    cores = len(os.sched_getaffinity(0))
    for lib in ('ember', 'torch') if a.only != 'allreduce' else ():
        for threads in sorted({1, cores}):
            results.append(_run([sys.executable, HERE, '--worker', 'train', lib, 'single', str(steps), str(threads)],
                                one if threads == 1 else None))
            print(json.dumps(results[-1]), flush=True)
        results.append(_run(_launcher(lib) + [HERE, '--worker', 'train', lib, 'ddp', str(steps), '1'], one))
        print(json.dumps(results[-1]), flush=True)
    print()
    for r in results:
        if 'median_ms' in r:
            print(f"{r['what']:55s} {r['median_ms']:8.2f} ms (min {r['min_ms']:.2f})")
    cores = len(os.sched_getaffinity(0))
    for lib in ('ember', 'torch') if a.only != 'allreduce' else ():
        rows = [r for r in results if 'samples_per_s' in r and f', {lib},' in r['what']]
        base = next(r for r in rows if f'1 process, {cores} thread' in r['what'])['samples_per_s']
        for r in rows:
            extra = ''
            if 'local_bwd_ms' in r:
                extra = (f"  | synced bwd {r['bwd_ms']:.2f} ms vs local bwd {r['local_bwd_ms']:.2f} + all-reduce "
                         f"{r['allreduce_all_grads_ms']:.2f} = {r['local_bwd_ms'] + r['allreduce_all_grads_ms']:.2f} ms")
            print(f"{r['what']:55s} {r['samples_per_s']:8.0f} samples/s  x{r['samples_per_s'] / base:.2f} of one "
                  f"process  (step {r['step_ms']:.2f} ms, fwd {r['fwd_ms']:.2f}, bwd {r['bwd_ms']:.2f}){extra}")


if __name__ == '__main__':
    main()
