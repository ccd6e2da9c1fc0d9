"""Anomaly mode: record where each node was created, and check backward outputs for NaN.

>>> import ember, warnings
>>> x = ember.tensor([0.], requires_grad=True)
>>> with warnings.catch_warnings(record=True), ember.autograd.detect_anomaly():
...     y = x.sqrt()          # d sqrt(x)/dx at 0 is inf; times 0 gives nan
...     try:
...         y.backward(ember.zeros(1))
...     except RuntimeError as e:
...         print(e)
Function 'SqrtBackward0' returned nan values in its 0th output.
"""
import traceback

__all__ = ['detect_anomaly', 'set_detect_anomaly']     # torch.autograd.anomaly_mode's public names

_enabled = False
_check_nan = True


def enabled():
    return _enabled


def record(node):
    node._anomaly_trace = ''.join(traceback.format_stack()[:-3])


def checked_apply(node, grads):
    try:
        outs = node.apply(grads)
    except Exception as e:
        _report(node)
        raise
    if _check_nan:
        for i, g in enumerate(outs):
            if g is not None and g.dtype.category >= 2 and _has_nan(g):
                _report(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return outs


def _has_nan(g):
    import numpy as np
    a = g._a
    return not isinstance(a, np.ndarray) and hasattr(g, '_host') and bool(np.isnan(g._host()).any()) or \
        isinstance(a, np.ndarray) and bool(np.isnan(a).any())


def _report(node):
    from ember._warn import warnings
    trace = node._anomaly_trace or '(no forward traceback: the node was created outside anomaly mode)\n'
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}",
                  UserWarning, stacklevel=3)


class detect_anomaly:
    """Context manager: forward records tracebacks, backward checks for NaN and names the failing node."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        global _enabled, _check_nan
        from ember._warn import warnings
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = True, self.check_nan

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self.prev


class set_detect_anomaly(detect_anomaly):
    def __init__(self, mode, check_nan=True):
        global _enabled, _check_nan
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = bool(mode), check_nan
        self.check_nan = check_nan

    def __enter__(self):
        pass


def is_anomaly_enabled():
    return _enabled
