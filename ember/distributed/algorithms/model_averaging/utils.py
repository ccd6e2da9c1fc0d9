"""Average parameters across a process group: one flat all-reduce of every parameter (torch's
``model_averaging.utils``).

>>> # average_parameters(iter(model.parameters()), None)    # None: the default group
"""
import itertools

import ember
import ember.distributed as dist

__all__ = ['average_parameters', 'get_params_to_average', 'average_parameters_or_parameter_groups']


def average_parameters(params, process_group):
    """Set every parameter of ``params`` (an iterator) to its average over ``process_group`` (None: the world),
    flattened into one buffer for one all-reduce. torch rebinds ``p.data`` to a view of that buffer; ember
    copies the averages in place (same values; the parameters keep their own memory)."""
    group = process_group if process_group is not None else dist.group.WORLD
    if dist.distributed_c10d._rank_not_in_group(group):
        return
    first, second = itertools.tee(params)
    with ember.no_grad():
        flat = ember.cat([p.detach().reshape(-1) for p in first])
        flat /= dist.get_world_size(group)
        dist.all_reduce(flat, group=group)
        offset = 0
        for p in second:
            p.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()


def get_params_to_average(params):
    """The parameters of ``params`` (parameters, or an optimizer's parameter groups) that have a gradient."""
    out = []
    for param in params:
        if isinstance(param, ember.nn.Parameter):
            if param.grad is not None:
                out.append(param)
        elif isinstance(param, dict):
            out += [p for p in param['params'] if p.grad is not None]
        else:
            raise NotImplementedError(f"Parameter input of type {type(param)} is not supported")
    return out


def average_parameters_or_parameter_groups(params, process_group):
    """Average a model's parameters or an optimizer's parameter groups (those with a gradient)."""
    average_parameters(iter(get_params_to_average(params)), process_group)
