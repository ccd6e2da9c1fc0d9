"""``saved_tensors_hooks(pack, unpack)``: transform tensors as they are saved for backward."""
import threading

_tls = threading.local()


def current():
    stack = getattr(_tls, 'stack', None)
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Every tensor saved for backward inside this context goes through ``pack``; backward calls ``unpack``."""

    def __init__(self, pack_hook, unpack_hook):
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self):
        disabled = getattr(_tls, 'disabled', None)
        if disabled is not None:        # inside disable_saved_tensors_hooks: its message, as torch raises it
            raise RuntimeError(disabled)
        if not hasattr(_tls, 'stack'):
            _tls.stack = []
        _tls.stack.append(self.hooks)
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU and move them back to their device for backward."""

    def __init__(self, pin_memory=False, device_type='cuda'):
        super().__init__(lambda t: (t.device, t.cpu()), lambda p: p[1].to(p[0]))


class disable_saved_tensors_hooks:
    def __init__(self, error_message):
        self.msg = error_message

    def __enter__(self):
        self.prev = getattr(_tls, 'stack', [])
        self.prev_disabled = getattr(_tls, 'disabled', None)
        _tls.stack = []
        _tls.disabled = self.msg

    def __exit__(self, *exc):
        _tls.stack = self.prev
        _tls.disabled = self.prev_disabled
