"""torch.distributed.elastic.multiprocessing.errors: how a worker's failure reaches the launcher.

``@record`` on a worker's entry point writes an uncaught exception (message and traceback) to the JSON file the
launcher names in ``TORCHELASTIC_ERROR_FILE``; without that variable it only enables the fault handler and
re-raises. ``ProcessFailure`` reads such a file back; ``ChildFailedError`` reports failed workers, root cause
first, in torch's layout.

>>> @record
... def main():
...     return 3
>>> main()
3
"""
import dataclasses
import datetime
import functools
import json
import logging
import os
import signal
import socket
import string
import time

from .error_handler import ErrorHandler  # noqa: F401
from .handlers import get_error_handler

__all__ = ['ProcessFailure', 'ChildFailedError', 'record', 'ErrorHandler', 'get_error_handler']

logger = logging.getLogger(__name__)
_EMPTY_ERROR_DATA = {'message': '<NONE>'}
_NOT_AVAILABLE = '<N/A>'


@dataclasses.dataclass
class ProcessFailure:
    """A failed worker: its local rank, pid, exit code and error file (read, when it exists, for the message and
    time; otherwise the message comes from the exit code and the time is now)."""
    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    error_file_data: object = dataclasses.field(init=False)
    message: str = dataclasses.field(init=False)
    timestamp: int = dataclasses.field(init=False)

    def __post_init__(self):
        self.error_file_data = _EMPTY_ERROR_DATA
        if os.path.isfile(self.error_file):
            with open(self.error_file) as fp:
                self.error_file_data = json.load(fp)
            self.message, self.timestamp = self._get_error_data(self.error_file_data)
        else:
            self.error_file, self.error_file_data = _NOT_AVAILABLE, _EMPTY_ERROR_DATA
            self.message, self.timestamp = '', int(time.time())
        if not self.message:
            if self.exitcode < 0:
                self.message = f"Signal {-self.exitcode} ({self.signal_name()}) received by PID {self.pid}"
            else:
                self.error_file_data['errorTraits'] = {'category': 'system_terminated_error',
                                                       'retryability': 'False'}
                self.message = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"

    def _get_error_data(self, error_file_data):
        message = error_file_data['message']
        if isinstance(message, str):
            return message, int(error_file_data.get('timestamp', 0))
        return message, int(message['extraInfo']['timestamp'])

    def signal_name(self):
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except Exception:
                return _NOT_AVAILABLE
        return _NOT_AVAILABLE

    def timestamp_isoformat(self):
        """The failure time as YYYY-MM-DD_HH:MM:SS."""
        return datetime.datetime.fromtimestamp(self.timestamp).isoformat(sep='_')


_FAILURE_FORMAT_TEMPLATE = """[${idx}]:
  time      : ${time}
  host      : ${hostname}
  rank      : ${rank} (local_rank: ${local_rank})
  exitcode  : ${exitcode} (pid: ${pid}) ${signal_name}
  error_file: ${error_file}
  traceback : ${message}"""

_MSG_FORMAT_TEMPLATE = """
${boarder}
${title}
${section}
Failures:
${other_failures}
${section}
Root Cause (first observed failure):
${root_failure}
${boarder}"""


class ChildFailedError(Exception):
    """Raised (by a launcher, from ``@record``'s function) when worker processes failed: ``failures`` maps each
    failed global rank to its ProcessFailure; the message lists them, the earliest as the root cause, and
    ``@record`` copies the root cause's error file up."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        if not self.failures:
            raise AssertionError
        super().__init__(self.format_msg())

    def get_first_failure(self):
        rank = min(self.failures.keys(), key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim='=', section_delim='-'):
        title = f"{self.name} FAILED"
        root_rank, _ = self.get_first_failure()
        root, others, width = '', [], len(title)
        for idx, (rank, failure) in enumerate(self.failures.items()):
            fmt, w = self._format_failure(idx, rank, failure)
            width = max(width, w)
            if rank == root_rank:
                root = fmt
            else:
                others.append(fmt)
        width = min(width, 60)
        return string.Template(_MSG_FORMAT_TEMPLATE).substitute(
            boarder=boarder_delim * width, title=title, section=section_delim * width, root_failure=root,
            other_failures='\n'.join(others or ['  <NO_OTHER_FAILURES>']))

    def _format_failure(self, idx, rank, failure):
        msg = failure.message
        if isinstance(msg, dict):
            msg = msg.get('extraInfo', {}).get('py_callstack', msg.get('message', '<N/A>')).replace('\n', '\n  ')
        name = failure.signal_name()
        fmt = string.Template(_FAILURE_FORMAT_TEMPLATE).substitute(
            idx=idx, time=failure.timestamp_isoformat(), hostname=socket.getfqdn(), rank=rank,
            local_rank=failure.local_rank, exitcode=failure.exitcode, pid=failure.pid,
            signal_name=f" ({name})" if name != _NOT_AVAILABLE else '', error_file=failure.error_file, message=msg)
        return fmt, max(len(line) for line in fmt.split('\n'))


def record(fn, error_handler=None):
    """Decorator for a worker's entry point: an uncaught exception is written to the error file (module
    docstring) and re-raised; a ChildFailedError's root-cause file is copied up; ``SystemExit(0)`` returns
    None."""
    error_handler = error_handler or get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        error_handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as se:
            if se.code == 0:
                return None
            raise
        except ChildFailedError as e:
            rank, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE:
                error_handler.dump_error_file(failure.error_file, failure.exitcode)
            else:
                logger.info("local_rank %s FAILED with no error file. Decorate your entrypoint fn with @record for "
                            "traceback info. See: https://pytorch.org/docs/stable/elastic/errors.html", rank)
            raise
        except Exception as e:
            error_handler.record_exception(e)
            raise
    return wrapper
