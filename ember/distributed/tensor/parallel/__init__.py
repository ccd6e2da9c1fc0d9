"""torch.distributed.tensor.parallel: tensor parallelism, a plan of ParallelStyles applied to submodules.

``parallelize_module(module, mesh, plan)`` walks ``plan`` (a style, or a dict from submodule paths, with
``fnmatch`` wildcards, to styles) as torch does and applies each style; applying one needs DTensor, which ember
has not, so it raises (``style.py``). An empty plan returns the module unchanged.
"""
import contextlib
import fnmatch
import warnings

from .style import (ParallelStyle, ColwiseParallel, RowwiseParallel, SequenceParallel,  # noqa: F401
                    PrepareModuleInput, PrepareModuleOutput, PrepareModuleInputOutput)
from .. import _WHY

__all__ = ['ColwiseParallel', 'ParallelStyle', 'PrepareModuleInput', 'PrepareModuleInputOutput',
           'PrepareModuleOutput', 'RowwiseParallel', 'SequenceParallel', 'parallelize_module', 'loss_parallel']


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """Apply ``parallelize_plan`` to ``module`` (module docstring); returns ``module``."""
    if parallelize_plan is None:
        warnings.warn("No parallelize_plan is provided and auto-parallel is not supported at the moment, so this "
                      "parallelize_module call will do nothing.", stacklevel=2)
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan.src_data_rank = src_data_rank
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(f"Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for parallelize_plan, "
                        f"{type(parallelize_plan)} found!")
    for path, style in parallelize_plan.items():
        if path == '':
            parallelize_module(module, device_mesh, style)
            continue
        token, _, rest = path.partition('.')
        matched = [m for name, m in module.named_children() if fnmatch.fnmatch(name, token)]
        if not matched:
            warnings.warn(f"Parallelize plan key '{path}' could not be resolved: no submodule matching token "
                          f"'{token}' in module {module}, skipping this plan entry.", stacklevel=2)
        for sub in matched:
            parallelize_module(sub, device_mesh, {rest: style} if rest else style, src_data_rank=src_data_rank)
    return module


@contextlib.contextmanager
def loss_parallel():
    """torch computes cross-entropy on logits sharded over the class dimension inside this context; such
    logits are DTensors, which ember has not."""
    raise NotImplementedError(f"loss_parallel: {_WHY}")
    yield  # pragma: no cover
