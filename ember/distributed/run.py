"""``emberrun`` / ``python -m ember.distributed.run``: torchrun's launcher for ember.

``emberrun --nproc_per_node=2 train.py --epochs 3`` starts two Python processes running ``train.py`` with
torchrun's environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``,
``GROUP_WORLD_SIZE``, ``ROLE_RANK``, ``ROLE_WORLD_SIZE``, ``ROLE_NAME``, ``MASTER_ADDR``, ``MASTER_PORT``,
``TORCHELASTIC_RUN_ID``, ``TORCHELASTIC_RESTART_COUNT``, ``TORCHELASTIC_MAX_RESTARTS``, ``OMP_NUM_THREADS``);
``init_process_group`` in each then meets the others at ``MASTER_ADDR:MASTER_PORT`` (NOTE [rendezvous]).
Several machines: run it on each with ``--nnodes=N --node_rank=i --master_addr=<node 0> --master_port=P``.

What it does beyond starting processes:
- every line a rank prints goes to the launcher's stdout/stderr prefixed ``[rank<R>]:`` (torchrun prefixes
  only with ``--tee``, as ``[<role><local rank>]:``); ``--local-ranks-filter=0`` shows some ranks only;
  ``--log-dir`` with ``-r``/``-t`` also writes each rank's streams to files;
- when a rank exits with an error, the others are stopped: they learn of it from the rendezvous and raise
  within milliseconds; any still running 2 s later get SIGTERM (to each rank's process group), and SIGKILL
  after ``--shutdown-timeout`` more seconds. A summary names the failed rank (the first one to record an
  error, from ``TORCHELASTIC_ERROR_FILE`` as torchrun's), its exit code, pid and exception, and the launcher
  exits with 1; each rank runs in a session of its own, so its own children (DataLoader workers,
  rank 0's rendezvous server) go with it and nothing is left behind;
- SIGINT/SIGTERM/SIGHUP/SIGQUIT to the launcher are passed to the ranks;
- NOTE [threads per rank]: unless ``OMP_NUM_THREADS`` is set, each rank gets ``cores // nproc_per_node``
  intra-op threads (``distributed_c10d._set_threads_per_rank``).

Rendezvous of the launchers: ``static`` (torchrun's default: ``--nnodes=N --node_rank=i``, node 0 at
``--master_addr:--master_port``), or ``c10d`` (``--rdzv-backend=c10d --rdzv-endpoint=HOST:PORT``, and whenever
``--nnodes=MIN:MAX`` has MIN < MAX): the launchers meet in a TCPStore, the node ranks are their join order, and
the group starts with MAX nodes, or with at least MIN once ``last_call_timeout`` has passed (NOTE [elastic
rendezvous] in ``_elastic.py``). ``--max-restarts=N`` restarts the ranks after a failure, at most N times: on
one node, and with the c10d rendezvous on every node (each restart is a new rendezvous round; the ranks see
``TORCHELASTIC_RESTART_COUNT``). Not implemented: taking in a node that arrives after its round has closed.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

__all__ = ['main', 'run', 'get_args_parser', 'parse_args']


def get_args_parser():
    p = argparse.ArgumentParser(prog='emberrun', description="ember's torchrun: start the ranks of a distributed "
                                                             "program on this node")

    def arg(*names, **kw):       # torchrun spells every flag with dashes and with underscores
        extra = ['--' + n[2:].replace('-', '_') for n in names if n.startswith('--') and '-' in n[2:]]
        p.add_argument(*names, *[e for e in extra if e not in names], **kw)
    arg('--nnodes', default='1:1', help='number of nodes, or MIN:MAX (elastic: start with the nodes that join)')
    arg('--nproc-per-node', default='1', help="ranks on this node: an int, or 'auto'/'cpu' (one per core)")
    arg('--rdzv-backend', default='static', help="static (node ranks given) or c10d (the launchers meet in a "
                                                 "TCPStore at --rdzv-endpoint); etcd is not offered")
    arg('--rdzv-endpoint', default='', help='HOST:PORT of the rendezvous (instead of --master-addr/--master-port)')
    arg('--rdzv-id', default='none', help='job id (TORCHELASTIC_RUN_ID)')
    arg('--rdzv-conf', default='', help='KEY=VALUE,...: join_timeout, last_call_timeout, close_timeout, '
                                       'read_timeout (seconds; c10d rendezvous)')
    arg('--standalone', action='store_true', help='one node: rendezvous on a free local port')
    arg('--max-restarts', type=int, default=0, help='restart the ranks this many times after a failure')
    arg('--monitor-interval', type=float, default=0.1, help='seconds between checks of the ranks')
    arg('--start-method', default='spawn', choices=['spawn', 'fork', 'forkserver'],
        help='accepted; ranks are always fresh interpreters')
    arg('--event-log-handler', default='null', help='accepted, ignored')
    arg('--role', default='default', help='ROLE_NAME of the ranks')
    arg('-m', '--module', action='store_true', help='run the script as a module (python -m)')
    arg('--no-python', action='store_true', help="run the script as a program, without 'python'")
    arg('--run-path', action='store_true', help='accepted; the script is run with python')
    arg('--log-dir', default=None, help='folder for the ranks\' log files (with -r/-t)')
    arg('-r', '--redirects', default='0', help='send streams to log files only: 1 stdout, 2 stderr, 3 both, or '
                                              'per local rank 0:1,1:2')
    arg('-t', '--tee', default='0', help='copy streams to log files too (same format as -r)')
    arg('--local-ranks-filter', default='', help='show only these local ranks\' output, e.g. 0 or 0,1')
    arg('--duplicate-stdout-filters', default='', help='accepted, ignored')
    arg('--duplicate-stderr-filters', default='', help='accepted, ignored')
    arg('--node-rank', type=int, default=0, help='this node\'s rank (0 hosts rank 0 and the rendezvous)')
    arg('--master-addr', default='127.0.0.1', help='address of node 0')
    arg('--master-port', type=int, default=29500, help='rendezvous port on node 0')
    arg('--local-addr', default=None, help='accepted, ignored')
    arg('--logs-specs', default=None, help='accepted, ignored')
    arg('--numa-binding', default=None, help='accepted, ignored')
    arg('--signals-to-handle', default='SIGTERM,SIGINT,SIGHUP,SIGQUIT', help='signals passed on to the ranks')
    arg('--shutdown-timeout', type=float, default=None,
        help='seconds between SIGTERM and SIGKILL when stopping ranks (default 5)')
    arg('--virtual-local-rank', action='store_true', help='accepted, ignored')
    p.add_argument('training_script', help='the program each rank runs')
    p.add_argument('training_script_args', nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _nproc(value):
    if value in ('auto', 'cpu'):
        return os.cpu_count() or 1
    if value in ('gpu', 'xpu'):
        raise SystemExit(f"emberrun: --nproc-per-node={value}: ember runs on CPUs; give a number of ranks")
    return int(value)


def _nnodes(value):
    """(MIN, MAX) of ``--nnodes=N`` or ``--nnodes=MIN:MAX``."""
    parts = str(value).split(':')
    try:
        lo, hi = (int(parts[0]), int(parts[-1])) if len(parts) <= 2 else (None, None)
    except ValueError:
        lo = hi = None
    if lo is None:
        raise SystemExit(f'emberrun: --nnodes={value} is not in "MIN:MAX" format')
    if not 1 <= lo <= hi:
        raise SystemExit(f"emberrun: --nnodes={value}: need 1 <= MIN <= MAX")
    return lo, hi


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _streams(spec, nproc):
    """torchrun's -r/-t format: '3' for every rank, or 'local_rank:n,...'; 1 stdout, 2 stderr, 3 both."""
    out = {}
    if ':' not in spec:
        return {i: int(spec or 0) for i in range(nproc)}
    for part in spec.split(','):
        k, _, v = part.partition(':')
        out[int(k)] = int(v)
    return out


class _Rank:
    """One rank's process and its output pumps."""

    def __init__(self, rank, local_rank, cmd, env, show, files, lock, exited):
        self.rank, self.local_rank, self.lock = rank, local_rank, lock
        self.error_file = env['TORCHELASTIC_ERROR_FILE']
        self.exit_time = None
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)

        def wait():
            self.proc.wait()
            self.exit_time = time.time()
            exited.set()
        threading.Thread(target=wait, daemon=True).start()
        prefix = f'[rank{rank}]:'.encode()
        self.pumps = [threading.Thread(target=self._pump, args=(stream, dest, prefix, show, f), daemon=True)
                      for stream, dest, f in ((self.proc.stdout, sys.stdout, files[0]),
                                              (self.proc.stderr, sys.stderr, files[1]))]
        for t in self.pumps:
            t.start()

    def _pump(self, stream, dest, prefix, show, logfile):
        out = getattr(dest, 'buffer', None)
        for line in iter(stream.readline, b''):
            if logfile is not None:
                logfile.write(line)
                logfile.flush()
            if show:
                with self.lock:
                    if out is not None:
                        out.write(prefix + line if line.endswith(b'\n') else prefix + line + b'\n')
                        dest.flush()
                    else:
                        dest.write((prefix + line).decode(errors='replace').rstrip('\n') + '\n')
        stream.close()

    def signal_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def group_alive(self):
        try:
            os.killpg(self.proc.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def join_output(self, timeout):
        for t in self.pumps:
            t.join(timeout)

    def error(self):
        """(time, message) of the exception the rank recorded in its error file (see ``errors.record_error``),
        else (exit time, None)."""
        try:
            with open(self.error_file) as f:
                d = json.load(f)['message']
            return float(d['extraInfo']['timestamp']), d['message']
        except (OSError, ValueError, KeyError):
            return (self.exit_time or time.time()), None


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f'signal {-code}'


def _report(script, failed, stopped, node_rank):
    """torchrun's failure summary: the root cause is the failed rank whose error (or exit) came first. A rank
    whose error only reports another failed rank's failure (ember's collectives raise ``rank K failed`` on every
    other rank) is a consequence, listed after the ranks that failed on their own, whatever the order in which
    their error files were written."""
    ranks = {r.rank for r in failed}

    def consequence(r):
        message = r.error()[1] or ''
        return any(f'rank {k} failed' in message for k in ranks if k != r.rank)
    failed = sorted(failed, key=lambda r: (consequence(r), r.error()[0]))
    lines = ['=' * 60, f'{script} FAILED', '-' * 60]
    for i, r in enumerate(failed):
        code = r.proc.returncode
        when, message = r.error()
        lines += ['Root Cause (first observed failure):' if i == 0 else 'Also failed:',
                  f'  time      : {time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(when))}',
                  f'  host      : {socket.gethostname()} (node_rank {node_rank})',
                  f'  rank      : {r.rank} (local_rank: {r.local_rank})',
                  f'  exitcode  : {code if code >= 0 else f"{code} ({_signal_name(code)})"} (pid: {r.proc.pid})',
                  f'  error     : {message or "(none recorded: see the output of the rank above)"}']
    if stopped:
        lines.append('Stopped by emberrun: ' + ', '.join(
            f'rank {r.rank} (pid {r.proc.pid}, exitcode {r.proc.returncode})' for r in stopped))
    lines.append('=' * 60)
    print('\n'.join(lines), file=sys.stderr, flush=True)


def _command(a):
    if a.no_python:
        return [a.training_script, *a.training_script_args]
    if a.module:
        return [sys.executable, '-u', '-m', a.training_script, *a.training_script_args]
    return [sys.executable, '-u', a.training_script, *a.training_script_args]


def _environment(a, nproc, lay, local_rank, restart, run_id, threads, errdir):
    rank = lay.offset + local_rank
    env = dict(os.environ)
    env.update(RANK=str(rank), WORLD_SIZE=str(lay.world), LOCAL_RANK=str(local_rank),
               LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(lay.node_rank), GROUP_WORLD_SIZE=str(lay.nnodes),
               ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(lay.world), ROLE_NAME=a.role,
               MASTER_ADDR=lay.master_addr, MASTER_PORT=str(lay.master_port), TORCHELASTIC_RUN_ID=run_id,
               TORCHELASTIC_RESTART_COUNT=str(restart), TORCHELASTIC_MAX_RESTARTS=str(a.max_restarts),
               TORCHELASTIC_USE_AGENT_STORE='False', TORCH_NCCL_ASYNC_ERROR_HANDLING='1',
               TORCHELASTIC_ERROR_FILE=os.path.join(errdir, f'error_{restart}_{local_rank}.json'))
    if threads is not None:
        env['OMP_NUM_THREADS'] = str(threads)
    return env


def _threads(nproc):
    """NOTE [threads per rank]: the cores of this machine shared among its ranks, unless the user chose."""
    if 'OMP_NUM_THREADS' in os.environ:
        return None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    n = max(1, cores // nproc)
    if nproc > 1:
        print(f"emberrun: OMP_NUM_THREADS={n} for each of {nproc} ranks ({cores} cores); set OMP_NUM_THREADS to "
              f"choose", file=sys.stderr, flush=True)
    return n


_GRACE = 2.0     # seconds the other ranks get to end on their own after a failure, before SIGTERM


def _run_once(a, nproc, lay, restart, run_id, threads, stop, errdir):
    """Start the ranks, wait until all succeed or one fails (then stop the others); (failed, stopped)."""
    lock, exited = threading.Lock(), threading.Event()
    stop['exited'] = exited
    show = {int(x) for x in a.local_ranks_filter.split(',') if x.strip()} or set(range(nproc))
    redirects, tees = _streams(a.redirects, nproc), _streams(a.tee, nproc)
    ranks, logs = [], []
    for lr in range(nproc):
        files = [None, None]
        if a.log_dir:
            for i, bit in ((0, 1), (1, 2)):
                if (redirects.get(lr, 0) | tees.get(lr, 0)) & bit:
                    d = os.path.join(a.log_dir, run_id, f'attempt_{restart}', str(lr))
                    os.makedirs(d, exist_ok=True)
                    files[i] = open(os.path.join(d, 'stdout.log' if i == 0 else 'stderr.log'), 'wb')
                    logs.append(files[i])
        visible = lr in show and not (redirects.get(lr, 0) and a.log_dir)
        env = _environment(a, nproc, lay, lr, restart, run_id, threads, errdir)
        ranks.append(_Rank(lay.offset + lr, lr, _command(a), env, visible, files, lock, exited))
    while True:
        exited.clear()
        done = [r for r in ranks if r.exit_time is not None]
        if stop.get('signal') or any(r.proc.returncode != 0 for r in done) or len(done) == len(ranks):
            break
        exited.wait(a.monitor_interval if a.monitor_interval > 0 else None)
    if not stop.get('signal'):      # a rank failed: the others hear of it (NOTE [rendezvous]) and end themselves
        deadline = time.monotonic() + _GRACE
        while time.monotonic() < deadline and any(r.exit_time is None for r in ranks):
            exited.clear()
            exited.wait(0.05)
    stopped = [r for r in ranks if r.exit_time is None]
    if stopped:
        _stop(stopped, stop.get('signal') or signal.SIGTERM, a.shutdown_timeout)
    failed = [r for r in ranks if r.proc.returncode != 0 and (r not in stopped or r.error()[1] is not None)]
    _reap(ranks)
    for r in ranks:
        r.proc.wait()
        r.join_output(5.0)
    for f in logs:
        f.close()
    return failed, stopped


def _reap(ranks, grace=10.0):
    """What the ranks left in their sessions: rank 0's rendezvous server ends by itself once every rank (on
    every node) has left MPI, which may be after rank 0 itself; DataLoader workers end with their rank. Give
    them ``grace`` seconds, then SIGTERM and SIGKILL: nothing outlives the launcher."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(r.group_alive() for r in ranks):
        time.sleep(0.05)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not any(r.group_alive() for r in ranks):
            return
        for r in ranks:
            r.signal_group(sig)
        time.sleep(0.5)


def _stop(ranks, sig, timeout):
    for r in ranks:
        r.signal_group(sig)
    deadline = time.monotonic() + (5.0 if timeout is None else timeout)
    while time.monotonic() < deadline and any(r.proc.poll() is None for r in ranks):
        time.sleep(0.05)
    for r in ranks:
        if r.proc.poll() is None:
            r.signal_group(signal.SIGKILL)
            r.proc.wait()


def _rendezvous(a, min_nodes, max_nodes, run_id):
    """The c10d rendezvous (NOTE [elastic rendezvous]) when asked for or when the node count is elastic;
    None for the static one."""
    elastic = min_nodes < max_nodes or a.rdzv_backend == 'c10d'
    if a.rdzv_backend not in ('static', 'c10d'):
        raise SystemExit(f"emberrun: --rdzv-backend={a.rdzv_backend}: ember offers 'static' and 'c10d'")
    if not elastic:
        return None
    from ._elastic import ElasticRendezvous, parse_conf
    if a.standalone:
        host, port = 'localhost', 0          # as torchrun's --standalone: a store on a free local port
    elif a.rdzv_endpoint:
        host, _, port = a.rdzv_endpoint.rpartition(':')
        host, port = (host or a.rdzv_endpoint), int(port or 29400)
    else:
        host, port = a.master_addr, a.master_port
    return ElasticRendezvous(host, port, run_id, min_nodes, max_nodes, parse_conf(a.rdzv_conf))


def _static_layout(a, nproc, nnodes):
    from ._elastic import Layout
    if not 0 <= a.node_rank < nnodes:
        raise SystemExit(f"emberrun: --node-rank={a.node_rank} must be in [0, {nnodes - 1}]")
    return Layout(a.node_rank, nnodes, a.node_rank * nproc, nproc * nnodes, a.master_addr, a.master_port)


def run(a):
    """Start the ranks of parsed arguments ``a``; returns the exit code (0, or 1 when a rank failed)."""
    nproc, (min_nodes, max_nodes) = _nproc(a.nproc_per_node), _nnodes(a.nnodes)
    # the launchers of one job meet under its run id: torchrun's default 'none' is a shared name for them; a
    # static or standalone job has no one to meet and gets a fresh one
    rdzv = _rendezvous(a, min_nodes, max_nodes, a.rdzv_id if not a.standalone else str(uuid.uuid4()))
    run_id = rdzv.run_id if rdzv is not None else (a.rdzv_id if a.rdzv_id != 'none' else str(uuid.uuid4()))
    if rdzv is None:
        if a.standalone:
            if max_nodes != 1:
                raise SystemExit("emberrun: --standalone is for one node (--nnodes=1)")
            a.master_addr, a.master_port = 'localhost', _free_port()     # as torchrun's --standalone
        elif a.rdzv_endpoint:
            host, _, port = a.rdzv_endpoint.rpartition(':')
            a.master_addr, a.master_port = (host or a.rdzv_endpoint), int(port or 29400)
        if a.max_restarts and max_nodes > 1:
            raise SystemExit("emberrun: --max-restarts with the static rendezvous works on one node only: use "
                             "--rdzv-backend=c10d to restart every node's ranks together")
        layout = _static_layout(a, nproc, max_nodes)
    try:
        return _run_rounds(a, nproc, rdzv, layout if rdzv is None else None, run_id)
    finally:
        if rdzv is not None:
            rdzv.finish()


def _run_rounds(a, nproc, rdzv, layout, run_id):
    threads = _threads(nproc)
    stop = {}
    handled = [getattr(signal, s.strip()) for s in a.signals_to_handle.split(',') if hasattr(signal, s.strip())]
    previous = {}

    def on_signal(sig, frame):
        stop['signal'] = sig
        if 'exited' in stop:
            stop['exited'].set()
    for s in handled:
        previous[s] = signal.signal(s, on_signal)
    try:
        for restart in range(a.max_restarts + 1):
            lay = layout if rdzv is None else rdzv.next_round(restart, nproc)
            with tempfile.TemporaryDirectory(prefix='emberrun-') as errdir:
                failed, stopped = _run_once(a, nproc, lay, restart, run_id, threads, stop, errdir)
                if stop.get('signal'):
                    print(f"emberrun: got {signal.Signals(stop['signal']).name}; stopped the ranks",
                          file=sys.stderr)
                    return 128 + stop['signal']
                if not failed:
                    return 0
                _report(a.training_script, failed, stopped, lay.node_rank)
            if restart < a.max_restarts:
                print(f"emberrun: restarting the ranks ({restart + 1} of {a.max_restarts})", file=sys.stderr)
        return 1
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def main(args=None):
    """``emberrun [torchrun flags] script.py [script args]``."""
    a = parse_args(sys.argv[1:] if args is None else args)
    return run(a)


if __name__ == '__main__':
    sys.exit(main())

