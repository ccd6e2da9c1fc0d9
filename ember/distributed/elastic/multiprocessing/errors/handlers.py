"""torch.distributed.elastic.multiprocessing.errors.handlers: the error handler ``@record`` uses."""
from .error_handler import ErrorHandler

__all__ = ['get_error_handler']


def get_error_handler():
    return ErrorHandler()
