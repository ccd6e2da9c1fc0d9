"""The launcher's elastic rendezvous (torchrun's ``c10d`` rendezvous backend): nodes meet in a TCPStore.

NOTE [elastic rendezvous]
``emberrun --nnodes=MIN:MAX --rdzv-backend=c10d --rdzv-endpoint=HOST:PORT`` on each node (or ``--standalone``,
or any ``MIN < MAX``): the launchers meet in a ``TCPStore`` at the endpoint, hosted by the first launcher on
the endpoint's machine that can listen there (the others, and every launcher elsewhere, connect to it), as
torch's ``_create_tcp_store``. Each worker-group start is one *round* (its number is the restart count):

1. a launcher joins the round by ``add('round<r>/joined', 1)``; its join order is its node rank
   (``GROUP_RANK``), and it publishes its number of ranks (``--nproc-per-node``) under its node rank;
2. the round closes as soon as MAX launchers have joined, or ``last_call_timeout`` seconds (``--rdzv-conf
   last_call_timeout=S``, torch's default 30) after this launcher first saw MIN of them; whoever closes it
   writes the number of nodes with ``compare_set``, so every launcher reads the same one. No round closed
   within ``join_timeout`` (default 600 s) is an error;
3. node 0 picks ``MASTER_ADDR`` (the address through which it reaches the store) and a free
   ``MASTER_PORT``, where its rank 0 will start MPI's rendezvous (NOTE [rendezvous]); every node reads them
   and the node sizes, and so its ranks' ``RANK`` and the ``WORLD_SIZE``.

A worker failure on any node makes every node's ranks fail (ember's rendezvous monitor tells them), so every
launcher with restarts left starts the next round, and the group forms again from the nodes that join it.
What torch does and ember does not: a node arriving after its round closed does not make the running nodes
restart to take it in (it stops with an error naming the round); nodes are not dropped for missing
heartbeats (a dead node's ranks make the others fail instead).
"""
import socket
import sys
import time

from ._store import PrefixStore, TCPStore
from .errors import DistNetworkError, DistStoreError

_DEFAULTS = {'join_timeout': 600.0, 'last_call_timeout': 30.0, 'close_timeout': 30.0, 'read_timeout': 60.0}


def parse_conf(text):
    """``--rdzv-conf 'join_timeout=60,last_call_timeout=1'`` as a dict of floats over torch's defaults."""
    conf = dict(_DEFAULTS)
    for part in filter(None, (p.strip() for p in text.split(','))):
        key, sep, value = part.partition('=')
        if not sep:
            raise SystemExit(f"emberrun: --rdzv-conf: {part!r} is not KEY=VALUE")
        try:
            conf[key.strip()] = float(value)
        except ValueError:
            conf[key.strip()] = value.strip()
    return conf


def _is_this_machine(host):
    try:
        addr = socket.gethostbyname(host)
    except OSError:
        return False
    if addr.startswith('127.') or host in (socket.gethostname(), socket.getfqdn()):
        return True
    try:
        return addr in socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        return False


class Layout:
    """Where this node's ranks sit in the world of one round."""

    def __init__(self, node_rank, nnodes, offset, world, master_addr, master_port):
        self.node_rank, self.nnodes, self.offset, self.world = node_rank, nnodes, offset, world
        self.master_addr, self.master_port = master_addr, master_port


class ElasticRendezvous:
    def __init__(self, host, port, run_id, min_nodes, max_nodes, conf):
        self.min, self.max, self.conf, self.run_id = min_nodes, max_nodes, conf, run_id
        self.hosting, store = False, None
        import datetime
        timeout = datetime.timedelta(seconds=float(conf['read_timeout']))
        if _is_this_machine(host):
            try:
                store = TCPStore(host, port, is_master=True, wait_for_workers=False, timeout=timeout)
                self.hosting = True
            except DistNetworkError:        # another launcher on this machine hosts it
                store = None
        if store is None:
            try:
                store = TCPStore(host, port, timeout=datetime.timedelta(seconds=float(conf['join_timeout'])))
            except DistNetworkError as e:
                raise SystemExit(f"emberrun: cannot reach the rendezvous at {host}:{port}: {e}") from None
            store.set_timeout(timeout)
        self.tcp = store
        self.port = store.port
        self.store = PrefixStore(f'emberrun/{run_id}', store)
        self.rounds = []

    def next_round(self, r, nproc):
        """Join round ``r`` and wait for it to close: this node's ``Layout``."""
        s, key = self.store, f'round{r}/'
        node = s.add(key + 'joined', 1) - 1
        s.set(f'{key}nproc{node}', str(nproc))
        nnodes = self._wait_closed(key)
        if node >= nnodes:
            raise SystemExit(f"emberrun: rendezvous round {r} closed with {nnodes} node(s) before this node joined "
                             f"(as number {node + 1}); ember does not restart running nodes to take in a late one")
        sizes = [int(v) for v in s.multi_get([f'{key}nproc{i}' for i in range(nnodes)])]
        if node == 0:
            addr = self.tcp._sock.getsockname()[0]
            with socket.socket() as probe:
                probe.bind((addr, 0))
                port = probe.getsockname()[1]
            s.set(key + 'master', f'{addr} {port}')
        addr, port = s.get(key + 'master').decode().split()
        self.rounds.append((key, node, nnodes))
        return Layout(node, nnodes, sum(sizes[:node]), sum(sizes), addr, int(port))

    def _wait_closed(self, key):
        s, conf = self.store, self.conf
        start, min_seen = time.monotonic(), None
        while True:
            if s.check([key + 'closed']):
                return int(s.get(key + 'closed'))
            joined = s.add(key + 'joined', 0)
            now = time.monotonic()
            if joined >= self.min and min_seen is None:
                min_seen = now
            if joined >= self.max or (min_seen is not None and now - min_seen >= conf['last_call_timeout']):
                return int(s.compare_set(key + 'closed', '', str(min(joined, self.max))))
            if now - start > conf['join_timeout']:
                raise SystemExit(f"emberrun: the rendezvous timed out after {conf['join_timeout']:g} s with "
                                 f"{joined} of at least {self.min} node(s)")
            try:                # woken by the server as soon as another launcher closes the round
                s.wait([key + 'closed'], 0.1)
            except DistStoreError:
                pass

    def finish(self):
        """Leave: the host keeps the store up until the other nodes of its last round have left too (at most
        ``close_timeout``), so that none of them loses it while it still reads it."""
        if not self.rounds:
            return
        key, node, nnodes = self.rounds[-1]
        try:
            self.store.set(f'{key}left{node}', '')
            if self.hosting:
                self.store.wait([f'{key}left{i}' for i in range(nnodes)], float(self.conf['close_timeout']))
        except DistNetworkError:
            if self.hosting:
                raise
            # the host may end as soon as this node's key is set, before it answers: nothing is lost
        except DistStoreError as e:
            print(f"emberrun: not every node left the rendezvous within close_timeout: {e}", file=sys.stderr)
