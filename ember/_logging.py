"""ember._logging: what ember.compile prints, chosen by ``EMBER_LOGS`` (or torch's ``TORCH_LOGS``) or
``set_logs`` (torch._logging.set_logs).

Artifacts, torch's names: ``graph_code`` (the captured aten graph's code), ``output_code`` (the code the
backend generated), ``guards`` (what a compiled version checks before it runs), ``recompiles`` (why a
function compiled again), ``graph_breaks`` (where and why capture stopped), ``aot_graphs`` (the forward and
backward graphs after partitioning). ``EMBER_LOGS="+dynamo"``-style levels are not modelled; a name list
such as ``EMBER_LOGS=graph_code,recompiles`` is.
"""
import logging
import os
import sys

__all__ = ['set_logs', 'enabled', 'log']

ARTIFACTS = ('graph_code', 'output_code', 'guards', 'recompiles', 'graph_breaks', 'aot_graphs')
_on = set()
_logger = logging.getLogger('ember._dynamo')


def _from_env():
    spec = os.environ.get('EMBER_LOGS') or os.environ.get('TORCH_LOGS') or ''
    for name in spec.replace(' ', '').split(','):
        name = name.lstrip('+')
        if name in ARTIFACTS:
            _on.add(name)


def set_logs(**kwargs):
    """``set_logs(graph_code=True, recompiles=True)``; an unknown name raises ValueError, as torch's."""
    for k, v in kwargs.items():
        if k not in ARTIFACTS:
            raise ValueError(f"Unrecognized log or artifact name passed to set_logs: {k}; valid ones are "
                             f"{', '.join(ARTIFACTS)}")
        (_on.add if v else _on.discard)(k)


def enabled(name):
    return name in _on


def log(name, text):
    if name in _on:
        if not _logger.handlers:
            h = logging.StreamHandler(sys.stderr)
            h.setFormatter(logging.Formatter('[%(name)s] %(message)s'))
            _logger.addHandler(h)
            _logger.setLevel(logging.INFO)
            _logger.propagate = False
        _logger.info('%s:\n%s', name, text)


_from_env()
