"""``ember.futures``: torch.futures, a value that will be ready later.

A ``Future`` is completed with ``set_result`` (or ``set_exception``); ``wait()`` blocks until then and
returns the value, ``then(fn)`` chains a future of ``fn(self)``. The futures of ``ember.distributed``'s
asynchronous work are driven by that work: waiting on one waits on the MPI requests behind it, so a program
that waits on a future needs no other thread to complete it (DDP's communication hooks return these).

>>> fut = Future()
>>> doubled = fut.then(lambda f: f.value() * 2)
>>> fut.set_result(21)
>>> doubled.wait()
42
"""
import threading
from typing import Generic, TypeVar

__all__ = ['Future', 'collect_all', 'wait_all']

T = TypeVar('T')


class Future(Generic[T]):
    """A result that is set once, by ``set_result``/``set_exception`` or by the work that drives it.

    Generic in its value's type, as torch's (``Future[Tensor]`` in annotations); ``ember.Future`` is this class.
    """

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done, self._value, self._exc = False, None, None
        self._callbacks = []
        self._drive = None          # blocks until the work behind this future completes (it then sets us)
        self._poll = None           # advances that work without blocking

    def done(self):
        """Whether the value (or an exception) is set."""
        if not self._done and self._poll is not None:
            self._poll()
        return self._done

    def wait(self):
        """Block until the value is set; return it (or raise the exception it was set with)."""
        if not self._done and self._drive is not None:
            self._drive()
        with self._cond:
            while not self._done:
                self._cond.wait()
        return self.value()

    def value(self):
        """The value of a completed future (raises its exception)."""
        if self._exc is not None:
            raise self._exc
        return self._value

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._finish(None, result)

    def _finish(self, value, exc):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exc, self._done = value, exc, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback):
        """Run ``callback(self)`` when complete (now, if already complete)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A future of ``callback(self)``, run once this one completes."""
        nxt = Future()
        nxt._drive, nxt._poll = self.wait, self.done

        def run(fut):
            try:
                r = callback(fut)
            except Exception as e:    # noqa: BLE001  handed to whoever waits on the chained future
                nxt.set_exception(e)
                return
            nxt.set_result(r)
        self.add_done_callback(run)
        return nxt


def collect_all(futures):
    """A future of the list of ``futures``, complete when all of them are."""
    out = Future()
    out._drive = lambda: [f.wait() for f in futures]
    out._poll = lambda: all(f.done() for f in futures) and None
    remaining = [len(futures)]
    lock = threading.Lock()

    def one(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(list(futures))
    if not futures:
        out.set_result([])
    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures):
    """Wait for every future; their values in order."""
    return [f.wait() for f in futures]
