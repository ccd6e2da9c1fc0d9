"""torch.distributed.elastic.multiprocessing.errors.error_handler: a worker's exception, written as JSON to the
file named by ``TORCHELASTIC_ERROR_FILE`` (when the launcher sets it), for the launcher to report."""
import faulthandler
import json
import logging
import os
import time
import traceback
import warnings

__all__ = ['ErrorHandler']

logger = logging.getLogger(__name__)


class ErrorHandler:
    """Writes an exception and its metadata to ``TORCHELASTIC_ERROR_FILE`` in JSON (nothing when unset).
    Subclasses override ``initialize()`` and ``record_exception()``."""

    def _get_error_file_path(self):
        return os.environ.get('TORCHELASTIC_ERROR_FILE', None)

    def initialize(self):
        """Call before the code whose errors are recorded: enables the fault handler (tracebacks on crashes)."""
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}", stacklevel=2)

    def _write_error_file(self, file_path, error_msg):
        try:
            with open(file_path, 'w') as fp:
                fp.write(error_msg)
        except Exception as e:
            warnings.warn(f"Unable to write error to file. {type(e).__name__}: {e}", stacklevel=2)

    def record_exception(self, e):
        """Write ``e`` (its message, the traceback being handled, the time) to the error file."""
        file = self._get_error_file_path()
        if file:
            data = {'message': {'message': f"{type(e).__name__}: {e}",
                                'extraInfo': {'py_callstack': traceback.format_exc(),
                                              'timestamp': str(int(time.time()))}}}
            with open(file, 'w') as fp:
                json.dump(data, fp)

    def override_error_code_in_rootcause_data(self, rootcause_error_file, rootcause_error, error_code=0):
        """Set the exit code in an error file's data (the structured format only)."""
        if 'message' not in rootcause_error:
            logger.warning("child error file (%s) does not have field `message`. \ncannot override error code: %s",
                           rootcause_error_file, error_code)
        elif isinstance(rootcause_error['message'], str):
            logger.warning("child error file (%s) has a new message format. \nskipping error code override",
                           rootcause_error_file)
        else:
            rootcause_error['message']['errorCode'] = error_code

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copy a child's error file (with ``error_code``) to this process's error file."""
        with open(rootcause_error_file) as fp:
            rootcause_error = json.load(fp)
        if error_code:
            self.override_error_code_in_rootcause_data(rootcause_error_file, rootcause_error, error_code)
        my_error_file = self._get_error_file_path()
        if my_error_file:
            if os.path.isfile(my_error_file):
                logger.warning("%s already exists and will be overwritten.", my_error_file)
                os.remove(my_error_file)
            self._write_error_file(my_error_file, json.dumps(rootcause_error))
            logger.info("dumped error file to parent's %s", my_error_file)
        else:
            logger.error("no error file defined for parent, to copy child error file (%s)", rootcause_error_file)
