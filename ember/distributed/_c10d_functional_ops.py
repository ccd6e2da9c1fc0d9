"""The operators behind the functional collectives, as torch registers them: ``_c10d_functional::<name>`` (a group
named by ``group_name``) and the older ``c10d_functional::<name>`` (a group given by ``tag``, ``ranks`` and
``group_size``). Tensor subclasses (torchao's, DTensor's) intercept these in ``__torch_dispatch__``, and traced
graphs call them. Each is the collective of ``_functional_collectives`` on the group, finished on return, so
``wait_tensor`` hands its argument back.

Run ``emberrun --nproc_per_node=2 script.py``::

    y = ember.ops._c10d_functional.all_gather_into_tensor(x, 2, dist.group.WORLD.group_name)
    y = ember.ops._c10d_functional.wait_tensor(y)       # the ranks' x stacked along dim 0
"""
from ..library import Library
from . import _functional_collectives as funcol
from . import distributed_c10d as c10d

_LIB = Library('_c10d_functional', 'DEF')
_LEGACY = Library('c10d_functional', 'DEF')


def _pg(group_name, group_size=None):
    pg = funcol._group(group_name)
    if group_size is not None and pg.size() != group_size:
        raise RuntimeError(f"group_size {group_size} does not match the size of group {group_name} ({pg.size()})")
    return pg


def all_gather_into_tensor(input, group_size, group_name):
    return funcol._all_gather(input, 0, _pg(group_name, group_size))


def all_reduce(input, reduce_op, group_name):
    return all_reduce_(input.clone(memory_format=None).contiguous(), reduce_op, group_name)


def all_reduce_(input, reduce_op, group_name):
    c10d.all_reduce(input, op=funcol._op(reduce_op), group=_pg(group_name))
    return input


def reduce_scatter_tensor(input, reduce_op, group_size, group_name):
    return funcol._reduce_scatter(input, funcol._op(reduce_op), 0, _pg(group_name, group_size))


def all_to_all_single(input, output_split_sizes, input_split_sizes, group_name):
    return funcol._all_to_all(input, list(output_split_sizes) or None, list(input_split_sizes) or None,
                              _pg(group_name))


def broadcast(input, src, group_name):
    return broadcast_(input.clone().contiguous(), src, group_name)


def broadcast_(input, src, group_name):
    c10d.broadcast(input, group=_pg(group_name), group_src=src)
    return input


def wait_tensor(tensor):
    return tensor           # ember's collectives have finished when they return


_SCHEMAS = {
    'all_gather_into_tensor': 'all_gather_into_tensor(Tensor input, int group_size, Any group_name) -> Tensor',
    'all_reduce': 'all_reduce(Tensor input, str reduce_op, Any group_name) -> Tensor',
    'all_reduce_': 'all_reduce_(Tensor(a!) input, str reduce_op, Any group_name) -> Tensor(a!)',
    'reduce_scatter_tensor': 'reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, Any group_name) '
                             '-> Tensor',
    'all_to_all_single': 'all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes, '
                         'Any group_name) -> Tensor',
    'broadcast': 'broadcast(Tensor input, int src, Any group_name) -> Tensor',
    'broadcast_': 'broadcast_(Tensor(a!) input, int src, Any group_name) -> Tensor(a!)',
    'wait_tensor': 'wait_tensor(Tensor tensor) -> Tensor',
}
for _name, _schema in _SCHEMAS.items():
    _LIB.define(_schema)
    _LIB.impl(_name, globals()[_name], 'CompositeExplicitAutograd')


# the older namespace: the group is the one of ``ranks`` (made on first use; ``funcol._group``)
def _legacy_group(tag, ranks, group_size):
    pg = funcol._group(list(ranks), tag)
    if pg.size() != group_size:
        raise RuntimeError(f"group_size {group_size} does not match the number of ranks {list(ranks)}")
    return pg


_LEGACY_IMPLS = {
    'all_gather_into_tensor': ('all_gather_into_tensor(Tensor shard, str tag, int[] ranks, int group_size) -> Tensor',
                               lambda shard, tag, ranks, group_size:
                               funcol._all_gather(shard, 0, _legacy_group(tag, ranks, group_size))),
    'wait_tensor': ('wait_tensor(Tensor self) -> Tensor', wait_tensor),
    'all_reduce': ('all_reduce(Tensor self, str reduceOp, str tag, int[] ranks, int group_size) -> Tensor',
                   lambda self, reduceOp, tag, ranks, group_size:
                   funcol.all_reduce(self, reduceOp, _legacy_group(tag, ranks, group_size)).wait()),
    'reduce_scatter_tensor': ('reduce_scatter_tensor(Tensor input, str reduceOp, str tag, int[] ranks, '
                              'int group_size) -> Tensor',
                              lambda input, reduceOp, tag, ranks, group_size: funcol._reduce_scatter(
                                  input, funcol._op(reduceOp), 0, _legacy_group(tag, ranks, group_size))),
    'broadcast': ('broadcast(Tensor self, int src, str tag, int[] ranks, int group_size) -> Tensor',
                  lambda self, src, tag, ranks, group_size:
                  funcol.broadcast(self, src, _legacy_group(tag, ranks, group_size)).wait()),
}
for _name, (_schema, _fn) in _LEGACY_IMPLS.items():
    _LEGACY.define(_schema)
    _LEGACY.impl(_name, _fn, 'CompositeExplicitAutograd')


# torch's Python-defined custom operator beside them: a tensor entering a functional collective's graph as an
# AsyncCollectiveTensor, with an identity gradient
from ..library import custom_op as _custom_op  # noqa: E402


@_custom_op('_c10d_functional::_wrap_tensor_autograd', mutates_args=(), schema='(Tensor input) -> Tensor')
def _wrap_tensor_autograd(input):
    """``input`` as an AsyncCollectiveTensor. torch's wrapper subclass holds the input itself; ember's
    AsyncCollectiveTensor shares its tensor's memory, and a custom operator may not return an alias of an input,
    so it wraps a copy."""
    return funcol.AsyncCollectiveTensor(input.clone())


@_wrap_tensor_autograd.register_fake
def _(input):
    import ember
    return ember.empty_like(input)


_wrap_tensor_autograd.register_autograd(lambda ctx, grad_output: grad_output, setup_context=lambda ctx, inputs, output: None)
