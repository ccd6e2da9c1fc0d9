"""Node arguments are immutable: a list or dict inside ``node.args`` must be replaced through the Node
(``node.args = ...``, ``update_arg``) so that the use lists stay right (torch.fx.immutable_collections)."""

from ..utils import _pytree

__all__ = ['immutable_list', 'immutable_dict']


def _no_mutation(self, *args, **kwargs):
    raise NotImplementedError(f"'{type(self).__name__}' object does not support mutation. If you are "
                              f"attempting to modify the kwargs or args of a torch.fx.Node object,\ninstead "
                              f"create a new copy of it and assign the copy to the node:\n    new_args = ... "
                              f"# copy and mutate args\n    node.args = new_args\n")


class immutable_list(list):
    """A list that refuses in-place changes; hashable, so it may be a dict key as a tuple may."""
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _no_mutation
    append = extend = insert = pop = remove = clear = sort = reverse = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):
    """A dict that refuses in-place changes."""
    __setitem__ = __delitem__ = __ior__ = _no_mutation
    update = setdefault = pop = popitem = clear = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (list(self.items()),))


# both are pytree nodes that unflatten to their own type, so that a tree_map over node.args keeps them immutable;
# they serialize under torch's names
_pytree.register_pytree_node(immutable_list, _pytree._list_flatten, lambda values, context: immutable_list(values),
                             serialized_type_name='torch.fx.immutable_collections.immutable_list',
                             flatten_with_keys_fn=_pytree._list_flatten_with_keys)
_pytree.register_pytree_node(immutable_dict, _pytree._dict_flatten,
                             lambda values, context: immutable_dict(zip(context, values, strict=True)),
                             serialized_type_name='torch.fx.immutable_collections.immutable_dict',
                             flatten_with_keys_fn=_pytree._dict_flatten_with_keys)
