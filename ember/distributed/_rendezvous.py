"""How ranks that were not started by ``mpiexec`` find each other and become one MPI world.

NOTE [rendezvous]
MPICH builds ``MPI_COMM_WORLD`` from what a process manager tells each process at ``MPI_Init``: its rank,
the world size, which ranks share a node, and a key-value space through which the ranks exchange their
network addresses (PMI, the process-management interface). ``mpiexec`` (MPICH's Hydra) is one such
manager. torch's programs are started differently: by ``torchrun``, by ``mp.spawn``, or by hand on each
machine, and they meet at ``MASTER_ADDR:MASTER_PORT`` where rank 0 serves a key-value store. ember does the
same with MPI: rank 0 starts a small PMI-1 server there (``_pmi_server.py``, standard library only, in a
process of its own), every rank joins it, and then each process starts MPI with ``PMI_PORT``/``PMI_ID`` in
its environment, MPICH's documented way to reach a process manager over TCP. All data still moves through
MPICH (shared memory between ranks on one node, its network module between nodes); the server only hands
out the start-up information and then watches the ranks.

What was tried and why this one:
- MPICH singletons (each process calls ``MPI_Init`` alone) joined with ``MPI_Comm_connect``/``accept``:
  MPICH refuses to connect two singletons ("Local and remote groups in MPI_Intercomm_create must not
  overlap": both are rank 0 of a world with the same id), and even where it works, ranks joined that way
  talk over the network module rather than shared memory.
- The launcher running ``mpiexec`` for its ranks: works on one machine, but torch's model of one launcher
  per node (``--nnodes``, ``--node_rank``), ``mp.spawn`` and hand-started ranks have no single ``mpiexec``;
  and Hydra kills the whole job when a rank exits without ``MPI_Finalize``, which ember must control.
- The server as a thread of rank 0: ``MPI_Init`` holds the GIL while it waits for the server's answers,
  so the thread could never answer. Hence a process of its own.

The server also keeps one connection per rank open as a monitor: a rank that dies (or raises) is reported
to the others, whose waiting collective then fails at once with an error naming it, instead of at its
timeout (``distributed_c10d`` NOTE [failures and timeouts]).

With ``init_process_group(store=...)`` (torch's way to rendezvous through a ``TCPStore``/``FileStore`` the
program made) the store replaces ``MASTER_ADDR:MASTER_PORT``: rank 0 starts the server on a free port and
publishes ``host port`` under ``ember/mpi_rendezvous`` in the store, the other ranks read it there, and the
rest is as above; MPI's world is still formed by the PMI server (MPICH cannot take its start-up information
from a store), and no collective goes through the store. The host published is the address rank 0 uses to
reach a TCPStore's server, else its host name's.

Under ``mpiexec`` (``PMI_RANK``/``PMI_FD`` in the environment) none of this runs: Hydra is the process
manager, and it stops the job when a rank fails.
"""
import os
import select
import socket
import subprocess
import sys
import time
from urllib.parse import quote, unquote

from .errors import DistNetworkError, DistStoreError

_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '_pmi_server.py')


def _fields(line):
    return dict(p.partition('=')[::2] for p in line.split() if '=' in p)


def _is_loopback(host):
    try:
        return socket.gethostbyname(host).startswith('127.')
    except OSError:
        return False


def start_server(host, port, world_size, timeout):
    """Rank 0: start the rendezvous server on ``port`` and wait until it listens."""
    bind = '127.0.0.1' if _is_loopback(host) else ''    # as torch's store: every interface unless loopback
    proc = subprocess.Popen([sys.executable, '-I', '-S', _SERVER, '--host', bind, '--port', str(port),
                             '--world-size', str(world_size), '--timeout', str(timeout)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    ready, _, _ = select.select([proc.stdout], [], [], min(timeout, 60.0))
    line = proc.stdout.readline().strip() if ready else ''
    if not line.startswith('ready'):
        proc.kill()
        proc.wait()
        code = 'EADDRINUSE' if 'in use' in line else 'unknown'
        raise DistNetworkError(f"The server socket has failed to listen on any local network address. port: "
                               f"{port}, useIpv6: 0, code: {code}, message: {line[6:] or 'no answer'} (ember's "
                               f"rendezvous server for MASTER_PORT={port})")
    proc.port = int(line.split()[1])        # the one it chose when asked for port 0
    return proc


class Monitor:
    """A rank's open connection to the rendezvous server: failures of other ranks arrive here."""

    def __init__(self, sock, server=None):
        self.sock, self.server, self._buf = sock, server, b''
        self.sock.setblocking(False)

    def poll(self):
        """``(rank, message)`` when another rank has failed, else None; never blocks."""
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            data = None
        except OSError:
            return (-1, 'lost the connection to the rendezvous server at MASTER_ADDR:MASTER_PORT (rank 0 '
                        'is gone)')
        if data == b'':
            return (-1, 'lost the connection to the rendezvous server at MASTER_ADDR:MASTER_PORT (rank 0 '
                        'is gone)')
        if data:
            self._buf += data
        while b'\n' in self._buf:
            line, self._buf = self._buf.split(b'\n', 1)
            d = _fields(line.decode('ascii', 'replace'))
            if d.get('cmd') == 'ember_failed':
                return int(d.get('rank', -1)), unquote(d.get('msg', ''))
        return None

    def _say(self, text):
        try:
            self.sock.setblocking(True)
            self.sock.sendall(text.encode('ascii', 'replace') + b'\n')
        except OSError:
            pass

    def bye(self):
        self._say('cmd=ember_bye')
        self.close()

    def failed(self, message):
        self._say('cmd=ember_failed msg=' + quote(message[:800]))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
        if self.server is not None:      # its standard input closes: it ends once the other ranks have left
            try:
                self.server.stdin.close()
            except OSError:
                pass


def _connect(host, port, deadline):
    last = None
    while True:
        try:
            return socket.create_connection((host, port), timeout=max(0.1, min(5.0, deadline - time.monotonic())))
        except OSError as e:
            last = e
        if time.monotonic() >= deadline:
            raise DistNetworkError(f"The client socket has timed out while trying to connect to ({host}, {port}): "
                                   f"{last}. Is rank 0 running and MASTER_ADDR/MASTER_PORT the same on every rank?")
        time.sleep(0.05)


def node_key():
    """Ranks with the same key share a node (and shared memory). A launcher's node groups count as separate
    nodes even on one machine (``GROUP_RANK``), so the multi-node path can be run on one machine."""
    return f"{socket.gethostname()}/{os.environ.get('GROUP_RANK', '0')}"


def join(rank, world_size, host, port, timeout, server=None):
    """Join the rendezvous at ``host:port`` as ``rank`` (rank 0 starts its server unless given the one it
    started); returns this rank's Monitor once all have joined."""
    deadline = time.monotonic() + timeout
    if server is None and rank == 0:
        server = start_server(host, port, world_size, timeout)
    try:
        sock = _connect(host, port, deadline)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(f'cmd=ember_join rank={rank} size={world_size} node={node_key()}\n'.encode())
        f = sock.makefile('rb')
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            reply = f.readline().decode()
        except socket.timeout:
            reply = ''
        f.close()
    except BaseException:
        if server is not None:
            server.kill()
        raise
    d = _fields(reply)
    if d.get('rc') != '0':
        why = unquote(d.get('msg', 'timed out')) if reply else f'no answer within {timeout:.0f} s'
        raise DistStoreError(f"rendezvous at {host}:{port} failed for rank {rank} of {world_size}: {why}")
    return Monitor(sock, server)


def pmi_environment(rank, host, port):
    """What MPICH reads at MPI_Init to reach the server (removed again once MPI is up)."""
    return {'PMI_PORT': f'{host}:{port}', 'PMI_ID': str(rank)}


_STORE_KEY = 'ember/mpi_rendezvous'


def _advertised_address(store):
    """The address of this machine that the other ranks can reach: for a TCPStore, the one this process uses
    to talk to the store's server (so the route the others use to reach the store's network); otherwise the
    host name's address."""
    while hasattr(store, 'underlying_store'):
        store = store.underlying_store
    sock = getattr(store, '_sock', None)
    if sock is not None:
        try:
            return sock.getsockname()[0]
        except OSError:
            pass
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return '127.0.0.1'


def exchange_through_store(store, rank, world_size, timeout):
    """``init_process_group(store=...)``: rank 0 starts the rendezvous server on a free port and publishes
    ``host:port`` in the store; the other ranks read it (waiting up to ``timeout``). Returns
    ``(host, port, server)``, server being rank 0's process (None elsewhere), for ``join``."""
    if rank == 0:
        host = _advertised_address(store)
        server = start_server(host, 0, world_size, timeout)
        store.set(_STORE_KEY, f'{host} {server.port}')
        return host, server.port, server
    store.wait([_STORE_KEY], timeout)
    host, port = store.get(_STORE_KEY).decode().split()
    return host, int(port), None

