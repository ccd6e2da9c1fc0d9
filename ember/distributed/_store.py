"""torch.distributed's key-value stores: ``Store`` and ``HashStore``, ``FileStore``, ``TCPStore``, ``PrefixStore``.

A store maps string keys to byte values and is how the processes of a job meet: ``set``/``get`` (``get`` waits
until the key exists, up to the store's timeout, then raises ``DistStoreError``), ``add`` (an integer counter
kept as its decimal text, as torch's), ``compare_set``, ``wait``, ``check``, ``delete_key``, ``num_keys``,
``append``, ``multi_get``/``multi_set``. The values are bytes the store never interprets beyond ``add``:
nothing in a store is unpickled.

- ``HashStore``: one process (its threads), a dictionary under a condition variable (``_Table``).
- ``FileStore``: processes sharing a file system; the file is an append-only log of ``set``/``delete`` records
  under ``fcntl.flock``, which every operation replays from where it last read (as torch's FileStore).
- ``TCPStore``: the master runs a small server in a daemon thread of its own process (one thread per client,
  each the ``_Table`` of the server); every instance, the master's included, is a client over one socket. The
  wire format is binary and length-prefixed (``_send``/``_recv``): a request is one opcode byte and a list of
  byte strings, an answer a status byte and a list of byte strings; a blocking ``get``/``wait`` waits in the
  server on the condition variable, never by polling. The server lives as long as the master's TCPStore
  object (or, with ``multi_tenant=True``, the last one on that port).
- ``PrefixStore``: ``prefix/key`` in another store.

``init_process_group(store=...)`` uses a store to exchange the address of the MPI rendezvous (NOTE [rendezvous]
in ``_rendezvous.py``).

>>> import ember.distributed as dist
>>> s = dist.HashStore()
>>> s.set('epoch', '3'); s.add('epoch', 2)
5
>>> s.get('epoch')
b'5'
"""
import datetime
import fcntl
import os
import socket
import struct
import threading
import time
import weakref

from .errors import DistNetworkError, DistStoreError

__all__ = ['Store', 'HashStore', 'FileStore', 'TCPStore', 'PrefixStore']

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


def _bytes(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"a store value must be str or bytes, not {type(value).__name__}")


def _seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


def _int_value(key, old):
    try:
        return int(old)
    except ValueError:
        raise ValueError(f"store.add({key!r}): the value {old[:40]!r} is not an integer") from None


def _timeout_error(seconds, keys):
    return DistStoreError(f"wait timeout after {round(seconds * 1000)}ms, keys: {', '.join(keys)}")


class _Table:
    """Keys and values under one condition variable: a HashStore, and the state of a TCPStore's server."""

    def __init__(self):
        self.data, self.cond = {}, threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def wait(self, keys, seconds):
        """True when every key exists; False after ``seconds``."""
        deadline = time.monotonic() + seconds
        with self.cond:
            while not all(k in self.data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def wait_count(self, key, n, seconds):
        """True once the counter ``key`` (of ``add``) reaches ``n``; False after ``seconds``."""
        deadline = time.monotonic() + seconds
        with self.cond:
            while int(self.data.get(key, b'0')) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def get(self, key):
        with self.cond:
            return self.data.get(key)

    def add(self, key, amount):
        with self.cond:
            value = _int_value(key, self.data.get(key, b'0')) + amount
            self.data[key] = str(value).encode()
            self.cond.notify_all()
            return value

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b'') + value
            self.cond.notify_all()

    def compare_set(self, key, expected, desired):
        with self.cond:
            if key not in self.data:
                if expected:
                    return expected          # torch's answer when the key is missing and something was expected
                self.data[key] = desired
            elif self.data[key] == expected:
                self.data[key] = desired
            self.cond.notify_all()
            return self.data[key]

    def delete(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        with self.cond:
            return len(self.data)

    def keys(self):
        with self.cond:
            return list(self.data)


class Store:
    """The key-value store interface: a subclass gives ``_set``, ``_get`` (None when missing), ``_add``,
    ``_append``, ``_compare_set``, ``_delete``, ``_num_keys``, ``_keys`` and ``_wait(keys, seconds) -> bool``."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = timeout if isinstance(timeout, datetime.timedelta) else datetime.timedelta(seconds=timeout)

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        """The default timeout of ``get`` and ``wait`` from now on."""
        self._timeout = timeout if isinstance(timeout, datetime.timedelta) else datetime.timedelta(seconds=timeout)

    def set(self, key, value):
        """Store ``value`` (str or bytes) under ``key``, replacing what was there."""
        self._set(str(key), _bytes(value))

    def get(self, key):
        """The value of ``key`` as bytes; waits for the key up to the timeout, then raises ``DistStoreError``."""
        key = str(key)
        self.wait([key])
        value = self._get(key)
        if value is None:                       # deleted between the wait and the read
            raise DistStoreError(f"key {key!r} was deleted while get() read it")
        return value

    def add(self, key, amount):
        """Add ``amount`` to the integer under ``key`` (0 when missing) and return the new value."""
        return self._add(str(key), int(amount))

    def append(self, key, value):
        """Append ``value`` to the bytes under ``key`` (created when missing)."""
        self._append(str(key), _bytes(value))

    def compare_set(self, key, expected_value, desired_value):
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is missing and ``expected_value``
        is empty); returns the value the key holds afterwards."""
        return self._compare_set(str(key), _bytes(expected_value), _bytes(desired_value))

    def wait(self, keys, timeout=None):
        """Wait until every key in ``keys`` exists; ``DistStoreError`` after ``timeout`` (default: the store's)."""
        keys = [str(k) for k in keys]
        seconds = _seconds(self.timeout if timeout is None else timeout)
        if not self._wait(keys, seconds):
            raise _timeout_error(seconds, keys)

    def check(self, keys):
        """True when every key in ``keys`` exists now (never waits)."""
        return all(self._get(str(k)) is not None for k in keys)

    def delete_key(self, key):
        """Remove ``key``; True when it existed."""
        return self._delete(str(key))

    def num_keys(self):
        return self._num_keys()

    def list_keys(self):
        return self._keys()

    def multi_get(self, keys):
        """The values of ``keys`` (each waited for, as ``get``)."""
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError(f"multi_set: {len(keys)} keys but {len(values)} values")
        for k, v in zip(keys, values):
            self.set(k, v)

    def has_extended_api(self):
        return True


class HashStore(Store):
    """A store in this process's memory, shared by its threads.

    >>> s = HashStore()
    >>> s.compare_set('k', '', 'first')
    b'first'
    """

    def __init__(self):
        super().__init__()
        self._t = _Table()

    def _set(self, key, value):
        self._t.set(key, value)

    def _get(self, key):
        return self._t.get(key)

    def _add(self, key, amount):
        return self._t.add(key, amount)

    def _append(self, key, value):
        self._t.append(key, value)

    def _compare_set(self, key, expected, desired):
        return self._t.compare_set(key, expected, desired)

    def _delete(self, key):
        return self._t.delete(key)

    def _num_keys(self):
        return self._t.num_keys()

    def _keys(self):
        return self._t.keys()

    def _wait(self, keys, seconds):
        return self._t.wait(keys, seconds)


class PrefixStore(Store):
    """Keys ``prefix/key`` in ``store``: several users of one store without clashes.

    >>> base = HashStore()
    >>> PrefixStore('job1', base).set('k', 'v'); base.get('job1/k')
    b'v'
    """

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self._prefix, self._store = str(prefix), store

    @property
    def underlying_store(self):
        return self._store

    @property
    def timeout(self):
        return self._store.timeout

    def set_timeout(self, timeout):
        self._store.set_timeout(timeout)

    def _k(self, key):
        return f'{self._prefix}/{key}'

    def _set(self, key, value):
        self._store._set(self._k(key), value)

    def _get(self, key):
        return self._store._get(self._k(key))

    def _add(self, key, amount):
        return self._store._add(self._k(key), amount)

    def _append(self, key, value):
        self._store._append(self._k(key), value)

    def _compare_set(self, key, expected, desired):
        return self._store._compare_set(self._k(key), expected, desired)

    def _delete(self, key):
        return self._store._delete(self._k(key))

    def _num_keys(self):
        return self._store._num_keys()          # as torch: the underlying store's count

    def _keys(self):
        n = len(self._prefix) + 1
        return [k[n:] for k in self._store._keys() if k.startswith(self._prefix + '/')]

    def _wait(self, keys, seconds):
        return self._store._wait([self._k(k) for k in keys], seconds)


# --- FileStore --------------------------------------------------------------------------------------------

_SET, _DEL = b'S', b'D'
_REFS, _CLEANUP = '\x00ember/refs', '\x00ember/cleanup'      # internal keys (torch's FileStore has them too)


def _record(op, key, value=b''):
    k = key.encode()
    return op + struct.pack('<I', len(k)) + k + struct.pack('<I', len(value)) + value


class FileStore(Store):
    """A store in a file that several processes (on one machine, or on a shared file system) open by name.

    Every operation locks the file (``fcntl.flock``), reads the records appended since this object last
    read, and appends its own; ``get`` and ``wait`` re-read every 10 ms until the keys appear. With
    ``world_size`` > 0 the file is removed when that many users have closed the store (garbage-collected,
    or at exit), as torch's.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'store')
    >>> a, b = FileStore(path, 2), FileStore(path, 2)
    >>> a.set('x', 'hello'); b.get('x')
    b'hello'
    """

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path, self._world = str(file_name), int(world_size)
        self._data, self._offset, self._lock = {}, 0, threading.Lock()
        self._locked(lambda: self._apply_add(_REFS, 1))
        self._finalizer = weakref.finalize(self, FileStore._cleanup, self.path, self._world)

    @staticmethod
    def _cleanup(path, world):
        try:
            tmp = FileStore.__new__(FileStore)
            tmp.path, tmp._data, tmp._offset, tmp._lock = path, {}, 0, threading.Lock()
            done = tmp._locked(lambda: tmp._apply_add(_CLEANUP, 1))
            if world > 0 and done >= world:
                os.unlink(path)
        except OSError:
            pass

    def _locked(self, fn):
        with self._lock, open(self.path, 'a+b') as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                self._file = f
                self._read(f)
                return fn()
            finally:
                self._file = None
                fcntl.flock(f, fcntl.LOCK_UN)

    def _read(self, f):
        f.seek(self._offset)
        data = f.read()
        i = 0
        while i + 9 <= len(data):
            op = data[i:i + 1]
            (kl,) = struct.unpack_from('<I', data, i + 1)
            key = data[i + 5:i + 5 + kl].decode()
            (vl,) = struct.unpack_from('<I', data, i + 5 + kl)
            value = data[i + 9 + kl:i + 9 + kl + vl]
            i += 9 + kl + vl
            if op == _SET:
                self._data[key] = value
            else:
                self._data.pop(key, None)
        self._offset += i

    def _write(self, op, key, value=b''):
        rec = _record(op, key, value)
        self._file.seek(0, os.SEEK_END)
        self._file.write(rec)
        self._file.flush()
        self._offset += len(rec)
        if op == _SET:
            self._data[key] = value
        else:
            self._data.pop(key, None)

    def _apply_add(self, key, amount):
        value = _int_value(key, self._data.get(key, b'0')) + amount
        self._write(_SET, key, str(value).encode())
        return value

    def _set(self, key, value):
        self._locked(lambda: self._write(_SET, key, value))

    def _get(self, key):
        return self._locked(lambda: self._data.get(key))

    def _add(self, key, amount):
        return self._locked(lambda: self._apply_add(key, amount))

    def _append(self, key, value):
        self._locked(lambda: self._write(_SET, key, self._data.get(key, b'') + value))

    def _compare_set(self, key, expected, desired):
        def cas():
            if key not in self._data:
                if expected:
                    return expected
                self._write(_SET, key, desired)
            elif self._data[key] == expected:
                self._write(_SET, key, desired)
            return self._data[key]
        return self._locked(cas)

    def _delete(self, key):
        def delete():
            if key not in self._data:
                return False
            self._write(_DEL, key)
            return True
        return self._locked(delete)

    def _num_keys(self):
        return self._locked(lambda: len(self._data))

    def _keys(self):
        return self._locked(lambda: [k for k in self._data if not k.startswith('\x00ember/')])

    def _wait(self, keys, seconds):
        deadline = time.monotonic() + seconds
        while not self._locked(lambda: all(k in self._data for k in keys)):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)          # another process writes the file: nothing to wait on but the file
        return True


# --- TCPStore ---------------------------------------------------------------------------------------------

# opcodes of a request; the answer's status byte is one of _OK, _TIMEOUT, _VALUE_ERROR
(_OP_SET, _OP_GET, _OP_ADD, _OP_APPEND, _OP_CAS, _OP_DELETE, _OP_NUM_KEYS, _OP_KEYS, _OP_WAIT,
 _OP_WAIT_COUNT) = range(10)
_OK, _TIMEOUT, _VALUE_ERROR = 0, 1, 2
_INIT_KEY = 'init/'          # every client adds 1 here when it connects (torch's TCPStore counts the same key)
_MAX_FIELD = 1 << 30


def _send(sock, code, fields):
    parts = [struct.pack('<BI', code, len(fields))]
    for f in fields:
        parts += [struct.pack('<I', len(f)), f]
    sock.sendall(b''.join(parts))


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError('connection closed')
        buf += chunk
    return bytes(buf)


def _recv(sock):
    code, n = struct.unpack('<BI', _recv_exact(sock, 5))
    fields = []
    for _ in range(n):
        (size,) = struct.unpack('<I', _recv_exact(sock, 4))
        if size > _MAX_FIELD:
            raise ConnectionError(f'a field of {size} bytes is larger than the store accepts')
        fields.append(_recv_exact(sock, size))
    return code, fields


class _Server:
    """The master's server: a listening socket, an accept thread and one thread per client, all daemons."""

    def __init__(self, host, port):
        bind = '127.0.0.1' if _loopback(host) else ''     # as torch: every interface unless asked for loopback
        try:
            self.sock = socket.create_server((bind, port), backlog=128)
        except OSError as e:
            code = 'EADDRINUSE' if e.errno == 98 else (e.strerror or str(e))
            raise DistNetworkError(f"The server socket has failed to listen on any local network address. port: "
                                   f"{port}, useIpv6: false, code: -{e.errno}, name: {code}, message: "
                                   f"{e.strerror}") from None
        self.port = self.sock.getsockname()[1]
        self.table, self.clients, self.closed, self.users = _Table(), set(), False, 0
        threading.Thread(target=self._accept, daemon=True, name=f'TCPStore:{self.port}').start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.clients.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            while True:
                code, fields = _recv(conn)
                try:
                    status, out = _OK, self._do(code, fields)
                except ValueError as e:
                    status, out = _VALUE_ERROR, [str(e).encode()]
                if out is None:
                    status, out = _TIMEOUT, []
                _send(conn, status, out)
        except (OSError, ConnectionError, struct.error, UnicodeDecodeError):
            pass
        finally:
            self.clients.discard(conn)
            conn.close()

    def _do(self, code, f):
        t = self.table
        if code == _OP_SET:
            t.set(f[0].decode(), f[1])
            return []
        if code == _OP_GET:
            v = t.get(f[0].decode())
            return [] if v is None else [v]
        if code == _OP_ADD:
            return [str(t.add(f[0].decode(), int(f[1]))).encode()]
        if code == _OP_APPEND:
            t.append(f[0].decode(), f[1])
            return []
        if code == _OP_CAS:
            return [t.compare_set(f[0].decode(), f[1], f[2])]
        if code == _OP_DELETE:
            return [b'1' if t.delete(f[0].decode()) else b'0']
        if code == _OP_NUM_KEYS:
            return [str(t.num_keys()).encode()]
        if code == _OP_KEYS:
            return [k.encode() for k in t.keys()]
        if code == _OP_WAIT:           # fields: timeout in ms, then the keys
            return [] if t.wait([k.decode() for k in f[1:]], int(f[0]) / 1000) else None
        if code == _OP_WAIT_COUNT:     # fields: timeout in ms, a counter's key, the count to wait for
            return [] if t.wait_count(f[1].decode(), int(f[2]), int(f[0]) / 1000) else None
        raise ValueError(f'unknown store request {code}')

    def close(self):
        if self.closed:
            return
        self.closed = True
        for s in [self.sock, *list(self.clients)]:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


_TENANTS = {}                 # port -> _Server shared by multi_tenant masters of this process
_TENANTS_LOCK = threading.Lock()


def _loopback(host):
    try:
        return socket.gethostbyname(host).startswith('127.')
    except OSError:
        return False


def _release(server, port):
    with _TENANTS_LOCK:
        server.users -= 1
        if server.users > 0:
            return
        if _TENANTS.get(port) is server:
            del _TENANTS[port]
    server.close()


class TCPStore(Store):
    """A store served over TCP by the process that creates it with ``is_master=True``; the others connect.

    ``port=0`` on the master picks a free port (``store.port``). With ``world_size`` and ``wait_for_workers``,
    the master's constructor waits until that many instances (its own included) have connected, and raises
    ``DistStoreError`` after ``timeout``. A client that cannot connect within ``timeout`` raises
    ``DistNetworkError``. ``use_libuv`` and ``master_listen_fd`` are accepted for torch's sake.

    >>> import datetime
    >>> master = TCPStore('127.0.0.1', 0, world_size=2, is_master=True, wait_for_workers=False)
    >>> worker = TCPStore('127.0.0.1', master.port, world_size=2, timeout=datetime.timedelta(seconds=10))
    >>> worker.set('rank1', 'ready'); master.get('rank1')
    b'ready'
    """

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=_DEFAULT_TIMEOUT,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        self.host, self.world_size, self.libuvBackend = host_name, world_size, bool(use_libuv)
        self._server, self._sock, self._lock = None, None, threading.Lock()
        if is_master:
            self._server = self._start_server(host_name, int(port), multi_tenant)
            port = self._server.port
            weakref.finalize(self, _release, self._server, port)
        self.port = int(port)
        self._sock = self._connect()
        weakref.finalize(self, self._sock.close)
        self._call(_OP_ADD, _INIT_KEY, b'1')
        if is_master and wait_for_workers and world_size:
            self._wait_for_workers(int(world_size))

    @staticmethod
    def _start_server(host, port, multi_tenant):
        with _TENANTS_LOCK:
            if multi_tenant and port in _TENANTS:
                server = _TENANTS[port]
            else:
                server = _Server(host, port)
                if multi_tenant:
                    _TENANTS[server.port] = server
            server.users += 1
            return server

    def _connect(self):
        seconds = _seconds(self._timeout)
        deadline, delay = time.monotonic() + seconds, 0.01
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=max(0.1, min(5.0, seconds)))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
                return sock
            except OSError:
                pass
            if time.monotonic() >= deadline:
                raise DistNetworkError(f"The client socket has timed out after {round(seconds * 1000)}ms while "
                                       f"trying to connect to ({self.host}, {self.port}).")
            time.sleep(delay)         # the master may not listen yet: retry, backing off, until the timeout
            delay = min(delay * 2, 0.5)

    def _wait_for_workers(self, n):
        seconds = _seconds(self._timeout)
        if self._call(_OP_WAIT_COUNT, str(round(seconds * 1000)), _INIT_KEY, str(n)) is None:
            joined = int(self._call(_OP_ADD, _INIT_KEY, b'0')[0])
            raise DistStoreError(f"Timed out after {seconds:g} seconds waiting for clients. {joined}/{n} "
                                 f"clients joined.")

    def _call(self, code, *fields):
        data = [f.encode() if isinstance(f, str) else f for f in fields]
        with self._lock:
            try:
                _send(self._sock, code, data)
                status, out = _recv(self._sock)
            except (OSError, ConnectionError, struct.error) as e:
                raise DistNetworkError(f"Failed to recv, got 0 bytes. Connection was likely closed. Did the remote "
                                       f"server shutdown or crash? (TCPStore at {self.host}:{self.port}: {e})") \
                    from None
        if status == _VALUE_ERROR:
            raise ValueError(out[0].decode())
        if status == _TIMEOUT:
            return None
        return out

    def _set(self, key, value):
        self._call(_OP_SET, key, value)

    def _get(self, key):
        out = self._call(_OP_GET, key)
        return out[0] if out else None

    def _add(self, key, amount):
        return int(self._call(_OP_ADD, key, str(amount))[0])

    def _append(self, key, value):
        self._call(_OP_APPEND, key, value)

    def _compare_set(self, key, expected, desired):
        return self._call(_OP_CAS, key, expected, desired)[0]

    def _delete(self, key):
        return self._call(_OP_DELETE, key)[0] == b'1'

    def _num_keys(self):
        return int(self._call(_OP_NUM_KEYS)[0])

    def _keys(self):
        return [k.decode() for k in self._call(_OP_KEYS)]

    def _wait(self, keys, seconds):
        return self._call(_OP_WAIT, str(round(seconds * 1000)), *keys) is not None

    def clone(self):
        """Another connection to the same server (for another thread)."""
        return TCPStore(self.host, self.port, self.world_size, False, self._timeout, False)
