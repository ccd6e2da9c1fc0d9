"""The errors and warnings of ember.compile (torch._dynamo.exc)."""

import enum

__all__ = ['TorchDynamoException', 'Unsupported', 'BackendCompilerFailed', 'RecompileLimitWarning', 'UserError',
           'UserErrorType']


class TorchDynamoException(RuntimeError):
    """The base of capture's errors (torch's name), for ``except`` clauses that catch any of them.

    >>> issubclass(Unsupported, TorchDynamoException)
    True
    """


class Unsupported(TorchDynamoException):
    """Capture could not continue (a graph break); raised when ``fullgraph=True`` asks for one graph."""


class BackendCompilerFailed(TorchDynamoException):
    """The backend raised while compiling a captured graph."""


class RecompileLimitWarning(UserWarning):
    """A function recompiled ``cache_size_limit`` times; it runs eagerly from now on."""


class UserErrorType(enum.Enum):
    DYNAMIC_CONTROL_FLOW = 1
    ANTI_PATTERN = 2
    STANDARD_LIBRARY = 3
    CONSTRAINT_VIOLATION = 4
    DYNAMIC_DIM = 5
    INVALID_INPUT = 6
    INVALID_OUTPUT = 7


class UserError(TorchDynamoException):
    """Code or arguments that capture cannot accept as given, with what to change (``ember.export``'s
    ``dynamic_shapes`` that the traced code contradicts: ``error_type`` CONSTRAINT_VIOLATION)."""

    def __init__(self, error_type, msg, case_name=None):
        super().__init__(msg)
        self.error_type, self.msg, self.message = error_type, msg, msg


class ForbiddenCall(AssertionError):
    """A call a compiled function may not make (``set_stance`` while ``ember.compile`` traces): not a graph break,
    an error for the caller, as torch's "Attempt to trace forbidden callable"."""
