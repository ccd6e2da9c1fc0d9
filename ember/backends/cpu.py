"""torch.backends.cpu: which SIMD level the CPU kernels use; NumPy picks its own at run time."""


def get_cpu_capability():
    return 'DEFAULT'


def set_process_tuning(enabled, *, now=False):
    """ember's two process-wide CPU settings (the BLAS on one thread under ember's own thread pool, glibc
    malloc keeping freed memory; NOTE [process settings]): ``False`` undoes them now and keeps them off (ember's
    pool then stays at one thread); ``True`` lets the next parallel kernel apply them again, or, with
    ``now=True``, applies them at once (a process that keeps ember on one thread, as a distributed rank does,
    never runs a parallel kernel). ember-only."""
    from .._backends.cpu import _process
    if enabled:
        _process.enable()
        if now:
            _process.apply()
    else:
        _process.restore()


def process_tuning():
    """The state of those settings: enabled, applied, the BLAS thread count, whether malloc is tuned."""
    from .._backends.cpu import _process
    return _process.status()
