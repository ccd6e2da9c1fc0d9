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


# the other names torch's set_logs takes: its log aliases (a logging level each) and artifacts (on/off); accepted,
# as torch does, but ember's compiler has no such events to print (no bytecode, inductor kernels or cudagraphs)
TORCH_LOGS = ('all', 'dynamo', 'aot', 'autograd', 'dynamic', 'inductor', 'distributed', 'c10d', 'ddp', 'fsdp',
              'dtensor', 'onnx', 'export')
TORCH_ARTIFACTS = frozenset({
    'bytecode', 'aot_joint_graph', 'ddp_graphs', 'graph', 'graph_code_verbose', 'side_effects', 'graph_sizes',
    'recompiles_verbose', 'trace_source', 'trace_call', 'trace_bytecode', 'kernel_code', 'schedule', 'perf_hints',
    'pre_grad_graphs', 'post_grad_graphs', 'ir_pre_fusion', 'ir_post_fusion', 'onnx_diagnostics', 'fusion',
    'overlap', 'cudagraphs', 'sym_node', 'compiled_autograd', 'compiled_autograd_verbose', 'cudagraph_static_inputs',
    'benchmarking', 'autotuning', 'incremental', 'graph_region_expansion', 'inductor_metrics', 'hierarchical_compile',
    'compute_dependencies', 'caching'})
_LEVELS = (50, 40, 30, 20, 10, 0)


def set_logs(*, modules=None, **kwargs):
    """``set_logs(graph_code=True, recompiles=True)``: these on, every other off (each call starts afresh, as
    torch's: ``set_logs()`` turns all off). torch's other names are taken (a log alias with a logging level);
    an unknown keyword raises TypeError, as torch's signature does."""
    for k, v in kwargs.items():
        if k in TORCH_LOGS:
            if v is not None and (type(v) is not int or v not in _LEVELS):
                raise ValueError(f"Unrecognized log level for log {k}: {v}, valid level values are: "
                                 f"{','.join(map(str, _LEVELS))}")
        elif k not in ARTIFACTS and k not in TORCH_ARTIFACTS:
            raise TypeError(f"set_logs() got an unexpected keyword argument '{k}'")
    del modules         # torch's per-module levels for Python loggers: ember's compiler logs through its artifacts
    _on.clear()
    _on.update(k for k, v in kwargs.items() if v and k in ARTIFACTS)


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
