"""The rendezvous server at ``MASTER_ADDR:MASTER_PORT``: a PMI-1 process manager for MPICH, and the ranks' monitor.

Standard library only, and run as a script by path (``python _pmi_server.py ...``) in a process of its own that
rank 0 starts (NOTE [rendezvous] in ``_rendezvous.py``): it never imports ember or MPI.

One listening socket serves two kinds of client, told apart by their first line:

- ember's own join (``cmd=ember_join rank=R size=N node=K``), sent by every rank before MPI starts. The
  answer comes once all N ranks have joined (or says why the join failed: another world size, a rank taken
  twice, the rendezvous timeout). The connection stays open as the rank's monitor: when it closes without
  ``cmd=ember_bye`` (the process died) or the rank reports ``cmd=ember_failed``, every other rank is sent
  ``cmd=ember_failed rank=R msg=...`` so that a collective waiting for the dead rank fails at once rather
  than at its timeout.
- MPICH's PMI-1 client (``PMI_PORT``/``PMI_ID`` in its environment): ``initack``, ``init``, ``get_maxes``,
  ``get_appnum``, ``get_my_kvsname``, ``put``/``get`` on one key-value space, ``barrier_in``, ``finalize``
  (the simple wire protocol of MPICH's ``simple_pmi``, also described by Flux RFC 13). The
  ``PMI_process_mapping`` value, which tells MPICH which ranks share a node (and so shared memory), is built
  from the ``node`` keys the ranks joined with.

The server exits when every rank has left, when the rendezvous times out, or when its standard input closes
(rank 0, which started it, is gone).
"""
import argparse
import os
import socket
import sys
import threading
import time
from urllib.parse import quote


def _fields(line):
    out = {}
    for part in line.split():
        k, sep, v = part.partition('=')
        if sep:
            out[k] = v
    return out


def process_mapping(nodes):
    """MPICH's ``(vector,(node,count,ppn),...)`` for the node index of each rank: one block per run of ranks
    on one node. ``process_mapping([0, 0, 1, 1])`` is ``'(vector,(0,1,2),(1,1,2))'``."""
    blocks, i = [], 0
    while i < len(nodes):
        j = i
        while j < len(nodes) and nodes[j] == nodes[i]:
            j += 1
        blocks.append(f'({nodes[i]},1,{j - i})')
        i = j
    return '(vector,' + ','.join(blocks) + ')'


class _Client:
    """One connection. Its own thread reads its lines; any thread may send it a line (whole, under a lock):
    a notice to a rank never waits for that rank's reader, which a shared read-write file object would."""

    def __init__(self, conn):
        self.conn, self.lock = conn, threading.Lock()
        self.rfile = conn.makefile('r', encoding='ascii', newline='\n')

    def readline(self):
        return self.rfile.readline()

    def __iter__(self):
        return iter(self.rfile)

    def send(self, text):
        with self.lock:
            try:
                self.conn.sendall((text + '\n').encode('ascii', 'replace'))
            except OSError:
                pass

    def close(self):
        try:
            self.rfile.close()
            self.conn.close()
        except OSError:
            pass


class Server:
    def __init__(self, world_size, timeout):
        self.n, self.deadline = world_size, time.monotonic() + timeout
        # one name per job: MPICH names its shared-memory segment after it, so two jobs (or a job and the
        # segment a killed one left in /dev/shm) must never share it
        self.kvsname = f'ember_{os.getpid()}_{os.urandom(6).hex()}'
        self.lock = threading.Condition()
        self.joined = {}          # rank -> (socket file, node key)
        self.error = None         # why the rendezvous failed
        self.mapping = None
        self.kvs = {}
        self.barrier_count, self.barrier_gen = 0, 0
        self.left = set()         # ranks whose monitor connection has closed
        self.failed = None        # (rank, message) of the first failure
        self.pmi_open = 0

    # --- ember's join and monitor ------------------------------------------------------------
    def join(self, f, d):
        rank, size, node = int(d.get('rank', -1)), int(d.get('size', -1)), d.get('node', '')
        with self.lock:
            if size != self.n:
                return f.send('cmd=ember_joined rc=-1 msg=' + quote(
                    f'rank {rank} asked for world_size {size}, but rank 0 started a world of {self.n}')), None
            if not 0 <= rank < self.n or rank in self.joined:
                return f.send('cmd=ember_joined rc=-1 msg=' + quote(
                    f'rank {rank} is out of range or already joined (world_size {self.n})')), None
            self.joined[rank] = (f, node)
            if len(self.joined) == self.n:
                keys = {}
                for r in range(self.n):
                    keys.setdefault(self.joined[r][1], len(keys))
                self.mapping = process_mapping([keys[self.joined[r][1]] for r in range(self.n)])
                self.lock.notify_all()
            while self.mapping is None and self.error is None:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    missing = sorted(set(range(self.n)) - set(self.joined))
                    self.error = quote(f'timed out waiting for ranks {missing} to join')
                    self.lock.notify_all()
                    break
                self.lock.wait(min(left, 1.0))
            if self.error is not None:
                f.send(f'cmd=ember_joined rc=-1 msg={self.error}')
                return None
        f.send('cmd=ember_joined rc=0')
        return rank

    def monitor(self, f, rank):
        """Read the rank's monitor connection until it closes; tell the others if it did not say goodbye."""
        why = None
        try:
            for line in f:
                d = _fields(line)
                if d.get('cmd') == 'ember_bye':
                    why = 'bye'
                elif d.get('cmd') == 'ember_failed':
                    why = d.get('msg', 'failed')
                    self._fail(rank, why)
        except OSError:         # reset by a killed rank (a notice it never read): it is gone all the same
            pass
        with self.lock:
            self.left.add(rank)
            self.lock.notify_all()
        if why is None:
            self._fail(rank, quote('exited without leaving the process group (killed, crashed or os._exit)'))

    def _fail(self, rank, msg):
        with self.lock:
            if self.failed is None:
                self.failed = (rank, msg)
            targets = [(r, f) for r, (f, _) in self.joined.items() if r != rank and r not in self.left]
            self.barrier_gen += 1          # a PMI barrier waiting for the dead rank would never end
            self.lock.notify_all()
        for _, f in targets:
            f.send(f'cmd=ember_failed rank={rank} msg={msg}')

    # --- MPICH's PMI-1 client -----------------------------------------------------------------
    def pmi(self, f, first):
        with self.lock:
            self.pmi_open += 1
        line = first
        try:
            while line:
                reply = self.pmi_command(_fields(line))
                if reply is not None:
                    f.send(reply)
                if line.startswith('cmd=finalize'):
                    break
                line = f.readline()
        finally:
            with self.lock:
                self.pmi_open -= 1
                self.lock.notify_all()

    def pmi_command(self, d):
        cmd = d.get('cmd')
        if cmd == 'initack':
            return f'cmd=initack rc=0\ncmd=set size={self.n}\ncmd=set rank={d.get("pmiid", 0)}\ncmd=set debug=0'
        if cmd == 'init':
            return 'cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0'
        if cmd == 'get_maxes':
            return 'cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024'
        if cmd == 'get_appnum':
            return 'cmd=appnum rc=0 appnum=0'
        if cmd == 'get_my_kvsname':
            return f'cmd=my_kvsname rc=0 kvsname={self.kvsname}'
        if cmd == 'get_universe_size':
            return f'cmd=universe_size rc=0 size={self.n}'
        if cmd == 'put':
            with self.lock:
                self.kvs[d.get('key')] = d.get('value', '')
            return 'cmd=put_result rc=0'
        if cmd == 'get':
            key = d.get('key')
            with self.lock:
                v = self.mapping if key == 'PMI_process_mapping' else self.kvs.get(key)
            return f'cmd=get_result rc=0 value={v}' if v is not None else 'cmd=get_result rc=-1 msg=key_not_found'
        if cmd == 'barrier_in':
            with self.lock:
                gen = self.barrier_gen
                self.barrier_count += 1
                if self.barrier_count == self.n:
                    self.barrier_count = 0
                    self.barrier_gen += 1
                    self.lock.notify_all()
                while self.barrier_gen == gen:
                    self.lock.wait()
                ok = self.failed is None
            return 'cmd=barrier_out rc=0' if ok else 'cmd=barrier_out rc=-1 msg=a_rank_failed'
        if cmd == 'finalize':
            return 'cmd=finalize_ack rc=0'
        if cmd == 'abort':          # the rank exits next: its monitor connection tells the others
            return None
        return f'cmd={cmd}_result rc=-1 msg=unsupported_by_ember_rendezvous'

    # --- plumbing -----------------------------------------------------------------------------
    def serve_client(self, conn):
        f = _Client(conn)
        try:
            first = f.readline()
            if first.startswith('cmd=ember_join'):
                rank = self.join(f, _fields(first))
                if rank is not None:
                    self.monitor(f, rank)
            elif first.startswith('cmd='):
                self.pmi(f, first)
        except (OSError, ValueError):
            pass
        finally:
            f.close()

    def done(self):
        with self.lock:
            if self.error is not None:
                return True
            return len(self.left) == self.n and self.pmi_open == 0


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--host', default='')
    ap.add_argument('--port', type=int, required=True)
    ap.add_argument('--world-size', type=int, required=True)
    ap.add_argument('--timeout', type=float, default=1800.0)
    a = ap.parse_args(argv)
    try:
        lsock = socket.create_server((a.host, a.port), reuse_port=False, backlog=max(16, a.world_size))
    except OSError as e:
        print(f'error {e}', flush=True)
        return 1
    server = Server(a.world_size, a.timeout)
    print(f'ready {lsock.getsockname()[1]}', flush=True)

    def parent_watch():        # stdin closes when rank 0 is gone
        sys.stdin.read()
        end = time.monotonic() + 2.0
        with server.lock:       # a rank 0 that left cleanly said goodbye just before: give it time to be read
            while 0 in server.joined and 0 not in server.left and time.monotonic() < end:
                server.lock.wait(0.1)
        if 0 in server.joined and 0 not in server.left:
            server._fail(0, quote('rank 0 exited'))
        end = time.monotonic() + 10.0       # ranks on other nodes leave MPI just after rank 0 (MPI_Finalize
        while not server.done() and time.monotonic() < end:     # waits for all): their PMI finalize, or notices
            time.sleep(0.05)
        os._exit(0)
    threading.Thread(target=parent_watch, daemon=True).start()

    def accept_loop():
        while True:
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=server.serve_client, args=(conn,), daemon=True).start()
    threading.Thread(target=accept_loop, daemon=True).start()
    while not server.done():
        with server.lock:
            server.lock.wait(1.0)
    time.sleep(0.2)
    return 0


if __name__ == '__main__':
    sys.exit(main())
