"""ember.distributed with two ranks: collectives against NumPy, DDP against one process, the launcher's failures.

Each launch of two ranks costs a few seconds (two interpreters importing ember on two cores), so the checks are
grouped: one launch runs every collective check (tests/_dist_worker.py) and writes each rank's results, and the
parametrized tests below read them. mpi4py and mpich are in the test extra: without them these tests fail.
"""
import json
import os
import subprocess
import sys
import time

import pytest

import _dist_worker as worker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, 'tests', '_dist_worker.py')
TIMEOUT = 120


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=ROOT, **extra)
    for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT', 'PMI_RANK', 'PMI_FD', 'PMI_PORT',
              'OMP_NUM_THREADS', 'TORCHELASTIC_RUN_ID'):
        env.pop(k, None)
    return env


def _launch(suite, outdir, *flags):
    cmd = [sys.executable, '-m', 'ember.distributed.run', '--standalone', '--nproc_per_node=2', *flags, WORKER,
           suite, str(outdir)]
    return subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)


def _results(outdir, suite):
    out = []
    for r in (0, 1):
        with open(os.path.join(outdir, f'{suite}.rank{r}.json')) as f:
            out.append(json.load(f))
    return out


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_mpi_is_installed():
    import mpi4py  # noqa: F401  the test extra has it: a missing MPI is a failure, not a skip
    import ember.distributed as dist
    assert dist.is_available() and dist.is_mpi_available() and dist.is_gloo_available()
    assert not dist.is_nccl_available()


@pytest.fixture(scope='module')
def collectives(tmp_path_factory):
    out = tmp_path_factory.mktemp('collectives')
    p = _launch('collectives', out)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return _results(out, 'collectives')


@pytest.mark.parametrize('check', worker.collective_checks())
def test_collective(collectives, check):
    for rank, results in enumerate(collectives):
        assert results.get(check) == 'ok', f'rank {rank}:\n{results.get(check)}'


def test_every_collective_was_checked(collectives):
    assert len(worker.collective_checks()) == len(worker.COLLECTIVES) * 6 + len(worker.OTHER) > 100
    assert all(set(r) == set(worker.collective_checks()) for r in collectives)


@pytest.fixture(scope='module')
def ddp(tmp_path_factory):
    out = tmp_path_factory.mktemp('ddp')
    p = _launch('ddp', out)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return _results(out, 'ddp')


@pytest.mark.parametrize('check', worker.DDP_CHECKS)
def test_ddp(ddp, check):
    for rank, results in enumerate(ddp):
        assert results.get(check) == 'ok', f'rank {rank}:\n{results.get(check)}'


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f'/proc/{pid}/stat') as f:        # a zombie is not a live process
        return f.read().split(')')[-1].split()[0] != 'Z'


def _leftovers(marker):
    """Processes still running whose command line contains ``marker`` (our output folder)."""
    found = []
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                with open(f'/proc/{pid}/cmdline', 'rb') as f:
                    if marker.encode() in f.read() and _alive(int(pid)):
                        found.append(int(pid))
            except OSError:
                pass
    return found


def test_a_failing_rank_stops_the_launch_naming_it_and_leaves_no_process(tmp_path):
    start = time.monotonic()
    p = _launch('fail', tmp_path)
    took = time.monotonic() - start
    assert p.returncode == 1, p.stderr[-3000:]
    summary = p.stderr[p.stderr.index('FAILED'):]
    root = summary.split('Root Cause (first observed failure):')[1].split('Also failed')[0]
    assert 'rank      : 1 (local_rank: 1)' in root and 'rank 1 fails on purpose' in root, summary
    assert '[rank1]:ValueError: rank 1 fails on purpose at step 3' in p.stderr
    # rank 0 was in an all_reduce: it learnt of rank 1's failure and raised, long before its 200 steps
    assert '[rank0]:' in p.stderr and 'rank 1 failed' in p.stderr
    assert took < 60
    pids = [int(open(tmp_path / f'pid{r}').read()) for r in (0, 1)]
    assert not [pid for pid in pids if _alive(pid)] and not _leftovers(str(tmp_path))


def test_a_killed_rank_makes_the_others_fail_fast(tmp_path):
    p = _launch('killed', tmp_path)
    assert p.returncode == 1
    assert 'exitcode  : -9 (SIGKILL)' in p.stderr, p.stderr[-3000:]
    with open(tmp_path / 'killed.rank0.json') as f:
        r0 = json.load(f)
    assert 'rank 1 failed' in r0['error'] and r0['seconds'] < 30, r0       # not the 60 s timeout
    assert not _leftovers(str(tmp_path))


def test_a_hung_rank_times_out(tmp_path):
    p = _launch('timeout', tmp_path)
    assert p.returncode == 1
    with open(tmp_path / 'timeout.rank0.json') as f:
        r0 = json.load(f)
    assert 'timed out after 2 s' in r0['error'] and 1.5 < r0['seconds'] < 20, r0
    assert 'rank      : 0 (local_rank: 0)' in p.stderr
    assert not _leftovers(str(tmp_path))


def _check_alternative(outdir, suite, threads):
    for rank, results in enumerate(_results(outdir, suite)):
        assert results.pop('threads') == threads
        assert all(v == 'ok' for v in results.values()), (rank, results)


def test_under_mpiexec(tmp_path):
    p = subprocess.run(['mpiexec', '-n', '2', sys.executable, WORKER, 'mpiexec', str(tmp_path)], env=_env(),
                       capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    _check_alternative(tmp_path, 'mpiexec', threads=max(1, len(os.sched_getaffinity(0)) // 2))


def test_ranks_started_by_mp_spawn_with_a_tcp_init_method(tmp_path):
    p = subprocess.run([sys.executable, WORKER, 'spawn', str(tmp_path), str(_free_port())], env=_env(),
                       capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    _check_alternative(tmp_path, 'spawn', threads=max(1, len(os.sched_getaffinity(0)) // 2))


def test_two_node_groups_on_this_machine(tmp_path):
    # --nnodes=2: each launcher starts its own rank and they meet at node 0's port, as on two machines; MPICH
    # is told they are on different nodes, so they talk through its network module instead of shared memory
    port = str(_free_port())
    cmds = [[sys.executable, '-m', 'ember.distributed.run', '--nnodes=2', f'--node_rank={i}', '--nproc_per_node=1',
             '--master_addr=127.0.0.1', f'--master_port={port}', WORKER, 'multinode', str(tmp_path)] for i in (0, 1)]
    procs = [subprocess.Popen(c, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
             for c in cmds]
    outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    _check_alternative(tmp_path, 'multinode', threads=len(os.sched_getaffinity(0)))


def test_launcher_sets_torchruns_environment(tmp_path):
    script = tmp_path / 'env.py'
    script.write_text('import os\nkeys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", '
                      '"GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_NAME", "MASTER_ADDR", "TORCHELASTIC_RESTART_COUNT", '
                      '"OMP_NUM_THREADS"]\nprint(" ".join(f"{k}={os.environ[k]}" for k in keys))\n')
    p = subprocess.run([sys.executable, '-m', 'ember.distributed.run', '--nproc-per-node', '2', '--master-port',
                        str(_free_port()), '--local-ranks-filter=1', str(script)], env=_env(), capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    threads = max(1, len(os.sched_getaffinity(0)) // 2)
    assert p.stdout == (f'[rank1]:RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 GROUP_WORLD_SIZE=1 '
                        f'ROLE_RANK=1 ROLE_NAME=default MASTER_ADDR=127.0.0.1 TORCHELASTIC_RESTART_COUNT=0 '
                        f'OMP_NUM_THREADS={threads}\n')


def test_torchrun_under_ember_run_is_the_launcher(tmp_path):
    script = tmp_path / 'prog.py'
    script.write_text('import torch, torch.distributed as dist\ndist.init_process_group("gloo")\n'
                      't = torch.ones(2) * (dist.get_rank() + 1)\ndist.all_reduce(t)\n'
                      'print(type(t).__mro__[1].__module__.split(".")[0], t.tolist())\n')
    for launcher in (['torchrun'], ['-m', 'torch.distributed.run']):
        p = subprocess.run([sys.executable, '-m', 'ember', 'run', *launcher, '--standalone', '--nproc_per_node=2',
                            str(script)], env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        assert sorted(p.stdout.splitlines()) == ['[rank0]:ember [3.0, 3.0]', '[rank1]:ember [3.0, 3.0]']


def test_c10d_operators_and_api_surface():
    import ember
    import ember.distributed as dist
    import torch.distributed as tdist
    for name in ('allreduce_', 'broadcast_', 'reduce_', 'allgather_', '_allgather_base_', 'reduce_scatter_',
                 '_reduce_scatter_base_', 'gather_', 'scatter_', 'alltoall_', 'alltoall_base_', 'barrier', 'send',
                 'recv_', 'recv_any_source_', 'monitored_barrier_'):
        ours = getattr(ember.ops.c10d, name).default.schema
        theirs = getattr(torch_ops_c10d(), name).default._schema
        assert [a.name for a in ours.arguments] == [a.name for a in theirs.arguments], name
    assert {k: int(v) for k, v in vars(dist.ReduceOp).items() if k.isupper()} == \
        {k: int(v) for k, v in vars(tdist.ReduceOp).items() if k.isupper()}
    assert dist.Backend('GLOO') == tdist.Backend('GLOO') == 'gloo'
    assert dist.default_pg_timeout == tdist.default_pg_timeout
    missing = [n for n in ('init_process_group', 'all_reduce', 'all_gather_into_tensor', 'reduce_scatter_tensor',
                           'all_to_all_single', 'batch_isend_irecv', 'P2POp', 'broadcast_object_list',
                           'all_gather_object', 'gather_object', 'scatter_object_list', 'new_subgroups',
                           'monitored_barrier', 'get_process_group_ranks', 'DistBackendError', 'GroupMember',
                           'GradBucket', 'Work', 'ProcessGroup') if not hasattr(dist, n) or not hasattr(tdist, n)]
    assert not missing
    with pytest.raises(ValueError, match='Default process group has not been initialized'):
        dist.all_reduce(ember.ones(1))
    with pytest.raises(RuntimeError, match='only supported with GPUs'):
        dist.init_process_group('nccl')


def torch_ops_c10d():
    import torch
    import torch.distributed  # noqa: F401  registers the c10d operators
    return torch.ops.c10d


_ELASTIC_WORKER = '''
import os, sys
import ember, ember.distributed as dist
keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK",
        "ROLE_WORLD_SIZE", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS"]
dist.init_process_group("gloo")
t = ember.ones(1) * (dist.get_rank() + 1)
dist.all_reduce(t)
if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0" and dist.get_rank() == int(sys.argv[1]):
    raise RuntimeError("fails on the first attempt")
print(" ".join(f"{k}={os.environ[k]}" for k in keys), f"sum={t.item():g}")
dist.destroy_process_group()
'''


def test_elastic_nnodes_restarts_a_failed_worker_group(tmp_path):
    # --nnodes=1:2 alone on this machine: after the last call the group starts with this node; rank 1 fails on
    # the first attempt, --max-restarts=1 starts a second rendezvous round, which succeeds
    script = tmp_path / 'elastic.py'
    script.write_text(_ELASTIC_WORKER)
    p = subprocess.run([sys.executable, '-m', 'ember.distributed.run', '--nnodes', '1:2', '--nproc-per-node', '2',
                        '--rdzv-backend', 'c10d', '--rdzv-endpoint', f'127.0.0.1:{_free_port()}',
                        '--rdzv-conf', 'last_call_timeout=0.5', '--max-restarts', '1', str(script), '1'],
                       env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert 'fails on the first attempt' in p.stderr and 'restarting the ranks (1 of 1)' in p.stderr
    assert not [line for line in p.stdout.splitlines() if line.startswith('[rank1]') and 'COUNT=0' in line]
    lines = sorted(line for line in p.stdout.splitlines() if 'RESTART_COUNT=1' in line)
    assert lines == [f'[rank{r}]:RANK={r} WORLD_SIZE=2 LOCAL_RANK={r} LOCAL_WORLD_SIZE=2 GROUP_RANK=0 '
                     f'GROUP_WORLD_SIZE=1 ROLE_RANK={r} ROLE_WORLD_SIZE=2 TORCHELASTIC_RESTART_COUNT=1 '
                     f'TORCHELASTIC_MAX_RESTARTS=1 sum=3' for r in (0, 1)], p.stdout


def test_elastic_nnodes_without_restarts_fails(tmp_path):
    script = tmp_path / 'elastic.py'
    script.write_text(_ELASTIC_WORKER)
    p = subprocess.run([sys.executable, '-m', 'ember.distributed.run', '--standalone', '--nnodes', '1:2',
                        '--nproc-per-node', '1', '--rdzv-conf', 'last_call_timeout=0.2', str(script), '0'],
                       env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 1 and 'fails on the first attempt' in p.stderr, p.stderr


def test_elastic_nnodes_two_launchers_meet(tmp_path):
    # two launchers with --nnodes=1:2 at one endpoint: the round closes when both have joined (MAX), their
    # node ranks are their join order and the two ranks form one world
    script = tmp_path / 'elastic.py'
    script.write_text(_ELASTIC_WORKER)
    endpoint = f'127.0.0.1:{_free_port()}'
    cmd = [sys.executable, '-m', 'ember.distributed.run', '--nnodes=1:2', '--nproc-per-node=1', '--rdzv-backend=c10d',
           f'--rdzv-endpoint={endpoint}', '--rdzv-conf=last_call_timeout=60', str(script), '-1']
    procs = [subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    lines = sorted(line.split(':', 1)[1] for out, _ in outs for line in out.splitlines() if 'RANK=' in line)
    assert lines == [f'RANK={r} WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 GROUP_RANK={r} GROUP_WORLD_SIZE=2 '
                     f'ROLE_RANK={r} ROLE_WORLD_SIZE=2 TORCHELASTIC_RESTART_COUNT=0 TORCHELASTIC_MAX_RESTARTS=0 '
                     f'sum=3' for r in (0, 1)], outs


@pytest.mark.parametrize('nnodes', ['2:1', '1:2:3', 'a:b', '0:2'])
def test_nnodes_syntax_errors(nnodes):
    from ember.distributed import run
    with pytest.raises(SystemExit, match='nnodes'):
        run.run(run.parse_args([f'--nnodes={nnodes}', 'x.py']))


def test_rank_zero_may_wait_for_the_rank_it_started(tmp_path):
    """lightning's strategy='ddp' launch: rank 0 starts rank 1 as a subprocess, both join with env://, and rank 0
    waits for rank 1 to exit before exiting itself. A rank of a rendezvous world leaves without MPI_Finalize
    (which would wait for rank 0), as torch's ranks leave one by one; no shared memory name is left behind."""
    script = tmp_path / 'launch.py'
    script.write_text(f'''
import os, subprocess, sys
import ember, ember.distributed as dist
if os.environ.get('RANK') is None:
    env = dict(os.environ, MASTER_ADDR='127.0.0.1', MASTER_PORT='{_free_port()}', WORLD_SIZE='2')
    child = subprocess.Popen([sys.executable] + sys.argv, env=dict(env, RANK='1', LOCAL_RANK='1'))
    os.environ.update(env, RANK='0', LOCAL_RANK='0')
else:
    child = None
dist.init_process_group('gloo')
t = ember.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
sys.stdout.write(f'rank {{dist.get_rank()}} {{t.item()}}\\n')    # one write: the two ranks share the pipe
sys.stdout.flush()
dist.destroy_process_group()
if child is not None:
    sys.exit(child.wait(timeout=60))
''')
    shm = lambda: {f for f in os.listdir('/dev/shm') if f.startswith('mpich_shm_')}
    before = shm()
    p = subprocess.run([sys.executable, str(script)], env=_env(), capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, p.stderr[-3000:]
    assert sorted(line for line in p.stdout.split('\n') if line) == ['rank 0 3.0', 'rank 1 3.0']
    assert shm() - before == set()
