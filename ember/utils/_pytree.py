"""torch.utils._pytree: flatten nested Python containers into a list of leaves and a spec, and back.

A container type is a pytree *node* when it is in ``SUPPORTED_NODES``: tuple, list, dict, namedtuples (all of them,
under the one key ``namedtuple``), OrderedDict, defaultdict and deque here; fx's immutable collections, ``Size``
and ``ember.return_types`` register themselves where they are defined, and users add theirs with
``register_pytree_node``. Everything else is a leaf: None, tensors, and subclasses of dict or list that nobody
registered (the registry is looked up by exact type). ``TreeSpec`` records a node's type, its context (dict keys,
the namedtuple class, ...) and its children's specs; a leaf's spec is ``LeafSpec`` (``*``).

>>> leaves, spec = tree_flatten((1, {'a': [2, 3]}, None))
>>> leaves
[1, 2, 3, None]
>>> tree_unflatten([4, 5, 6, 7], spec)
(4, {'a': [5, 6]}, 7)
"""
import dataclasses
import functools
import importlib
import json
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from enum import Enum
from typing import Any, Callable, Iterable, NamedTuple, Optional, Protocol

__all__ = [
    'PyTree', 'Context', 'FlattenFn', 'UnflattenFn', 'DumpableContext', 'ToDumpableContextFn',
    'FromDumpableContextFn', 'PyTreeSpec', 'TreeSpec', 'LeafSpec', 'keystr', 'key_get', 'register_pytree_node',
    'tree_is_leaf', 'tree_flatten', 'tree_flatten_with_path', 'tree_unflatten', 'tree_iter', 'tree_leaves',
    'tree_leaves_with_path', 'tree_structure', 'tree_map', 'tree_map_with_path', 'tree_map_', 'tree_map_only',
    'tree_map_only_', 'tree_all', 'tree_any', 'tree_all_only', 'tree_any_only', 'treespec_dumps', 'treespec_loads',
    'treespec_pprint', 'is_namedtuple', 'is_namedtuple_class', 'is_namedtuple_instance', 'is_structseq',
    'is_structseq_class', 'is_structseq_instance',
]

Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any                                   # anything json.dumps accepts
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenFunc, UnflattenFunc = FlattenFn, UnflattenFn    # the older names
DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = 'NO_SERIALIZED_TYPE_NAME_FOUND'


class KeyEntry(Protocol):
    """One step of a key path: ``str`` prints it as Python would index, ``get`` takes it from the parent."""

    def __hash__(self) -> int: ...

    def __eq__(self, other: object) -> bool: ...

    def __str__(self) -> str: ...

    def get(self, parent: Any) -> Any: ...


KeyPath = tuple[KeyEntry, ...]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[KeyEntry, Any]], Any]]
FlattenWithKeysFunc = FlattenWithKeysFn


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f'[{self.idx!r}]'

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f'[{self.key!r}]'

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f'.{self.name}'

    def get(self, obj):
        return getattr(obj, self.name)


# --- the registry ---------------------------------------------------------------------------------------------

class NodeDef(NamedTuple):
    """How a node type flattens (to children and a context) and unflattens, and optionally flattens with keys."""
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Optional[FlattenWithKeysFn]


class _SerializeNodeDef(NamedTuple):
    """How a node type is named in ``treespec_dumps`` and how its context becomes JSON and back."""
    typ: type
    serialized_type_name: str
    to_dumpable_context: Optional[ToDumpableContextFn]
    from_dumpable_context: Optional[FromDumpableContextFn]


SUPPORTED_NODES: dict = {}
SUPPORTED_SERIALIZED_TYPES: dict = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make ``cls`` a pytree node: ``flatten_fn(x) -> (children, context)``, ``unflatten_fn(children, context)``.

    ``serialized_type_name`` and the two ``*_dumpable_context`` functions are for ``treespec_dumps``;
    ``flatten_with_keys_fn`` (like ``flatten_fn`` with ``(key, child)`` pairs) for the ``*_with_path`` functions.
    A type may be registered once.
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f'{cls} is already registered as pytree node.')
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """The older ``register_pytree_node`` (deprecated): registering a type again replaces it, with a warning."""
    warnings.warn('`torch.utils._pytree._register_pytree_node` is deprecated. '
                  'Please use `torch.utils._pytree.register_pytree_node` instead.', FutureWarning, stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn('`to_str_fn` and `maybe_from_str_fn` is deprecated. '
                      'Please use `to_dumpable_context` and `from_dumpable_context` instead.', FutureWarning,
                      stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register (or re-register, with a warning) ``cls``; what the public functions and ember's own types use."""
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(f'Both to_dumpable_context and from_dumpable_context for {cls} must be None or '
                         'registered.')
    if cls in SUPPORTED_NODES:
        warnings.warn(f'{cls} is already registered as pytree node. Overwriting the previous registration.',
                      stacklevel=2)
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else serialized_type_name
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context, from_dumpable_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def _deregister_pytree_node(cls):
    """Undo a registration (ember's and torch's tests use it to clean up)."""
    del SUPPORTED_NODES[cls]
    node_def = SUPPORTED_SERIALIZED_TYPES.pop(cls)
    SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(node_def.serialized_type_name, None)


@dataclasses.dataclass(frozen=True)
class ConstantNode:
    """The context of a constant's (``register_constant``) node: the value itself."""
    value: Any


CONSTANT_NODES = set()


def register_constant(cls):
    """Register ``cls`` as a node with no leaves: an instance flattens to ``[]`` and unflattens to itself, so it
    travels inside a tree's structure (and is compared by its ``__eq__``, which must be its own, as its hash).

    >>> import dataclasses
    >>> @dataclasses.dataclass(frozen=True)
    ... class Config:
    ...     norm: str
    >>> register_constant(Config)
    >>> leaves, spec = tree_flatten({'c': Config('l2'), 'x': 1})
    >>> leaves, tree_unflatten(leaves, spec)['c']
    ([1], Config(norm='l2'))
    """
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` implementation.")
    _private_register_pytree_node(cls, lambda x: ([], ConstantNode(x)), lambda _, context: context.value,
                                  flatten_with_keys_fn=lambda x: ([], ConstantNode(x)))
    CONSTANT_NODES.add(cls)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Register a class built from keyword fields (a dataclass, or any class given ``field_names``): its
    children are the fields that are not None; the names of those and of the None ones are the context."""
    drop = set(drop_field_names or [])
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError('field_names must be specified with a list of all fields used to initialize '
                             f'{cls}, as it is not a dataclass.')
    else:
        init_fields = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in drop]
        if field_names is None:
            field_names = init_fields
        elif set(field_names) != set(init_fields):
            raise ValueError(f'field_names does not include all dataclass fields.\nMissing fields in '
                             f'`field_names`: {set(init_fields) - set(field_names)}; unexpected: '
                             f'{set(field_names) - set(init_fields)}.\n')

    def flatten(obj):
        values = [(n, getattr(obj, n)) for n in field_names]
        return [v for _, v in values if v is not None], [[n for n, v in values if v is not None],
                                                         [n for n, v in values if v is None]]

    def unflatten(children, context):
        names, none_names = context
        return cls(**dict(zip(names, children, strict=True)), **dict.fromkeys(none_names))

    def flatten_with_keys(obj):
        children, (names, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(names, children)], names
    _private_register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


# --- namedtuples and structseqs -----------------------------------------------------------------------------------

def is_structseq_class(cls):
    """Whether ``cls`` is a struct sequence: a tuple type with ``n_fields``/``n_sequence_fields``/
    ``n_unnamed_fields`` (CPython's ``os.stat_result``, ``time.struct_time``; ember.return_types has them too, as
    torch.return_types are structseqs)."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and all(isinstance(getattr(cls, a, None), int) for a in ('n_fields', 'n_sequence_fields',
                                                                     'n_unnamed_fields')))


def is_structseq(obj):
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    return is_structseq_class(type(obj))


def is_namedtuple_class(cls):
    """Whether ``cls`` is a namedtuple class (or a subclass of one); struct sequences are not."""
    return (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, '_fields', None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, '_make', None)) and callable(getattr(cls, '_asdict', None))
            and not is_structseq_class(cls))


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def _is_namedtuple_instance(tree):
    warnings.warn('torch.utils._pytree._is_namedtuple_instance is private and will be removed in a future release. '
                  'Please use torch.utils._pytree.is_namedtuple_instance instead.', FutureWarning, stacklevel=2)
    return is_namedtuple_instance(tree)


# --- the built-in nodes ---------------------------------------------------------------------------------------------

def _seq_keys(flatten):
    """A flatten_with_keys_fn indexing the children of ``flatten`` by position."""
    def with_keys(d):
        values, context = flatten(d)
        return [(SequenceKey(i), v) for i, v in enumerate(values)], context
    return with_keys


def _map_keys(flatten, keys=lambda context: context):
    """A flatten_with_keys_fn naming the children of ``flatten`` by the dict keys in (part of) its context."""
    def with_keys(d):
        values, context = flatten(d)
        return [(MappingKey(k), v) for k, v in zip(keys(context), values, strict=True)], context
    return with_keys


def _tuple_flatten(d):
    return list(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    """Values and keys in insertion order (keys are not sorted)."""
    return list(d.values()), list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values, strict=True))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    values, cls = _namedtuple_flatten(d)
    return [(GetAttrKey(f), v) for f, v in zip(cls._fields, values, strict=True)], cls


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_serialize(context):
    """A namedtuple class serializes as the name it was registered under (``_register_namedtuple``)."""
    node_def = SUPPORTED_SERIALIZED_TYPES.get(context)
    if node_def is None:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we didn't "
                                  'register a serializated_type_name. Please register using `_register_namedtuple`.')
    if node_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we couldn't "
                                  'find a serializated_type_name. Please register using `_register_namedtuple`.')
    return node_def.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} because we "
                                  "couldn't find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _register_namedtuple(cls, *, serialized_type_name):
    """Give a namedtuple class a name, so that specs holding it can be serialized (it flattens as any namedtuple)."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values, strict=True))


_odict_flatten, _odict_unflatten = _ordereddict_flatten, _ordereddict_unflatten


def _defaultdict_flatten(d):
    """The context is ``[default_factory, keys]``."""
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_unflatten(values, context):
    default_factory, keys = context
    return defaultdict(default_factory, _dict_unflatten(values, keys))


def _defaultdict_serialize(context):
    default_factory, keys = context
    return {'default_factory_module': default_factory.__module__,
            'default_factory_name': default_factory.__qualname__, 'dict_context': keys}


def _defaultdict_deserialize(dumpable_context):
    if not isinstance(dumpable_context, dict) or set(dumpable_context) != {
            'default_factory_module', 'default_factory_name', 'dict_context'}:
        raise AssertionError(f'invalid defaultdict context {dumpable_context!r}')
    factory = getattr(importlib.import_module(dumpable_context['default_factory_module']),
                      dumpable_context['default_factory_name'])
    return [factory, dumpable_context['dict_context']]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


_tuple_flatten_with_keys = _seq_keys(_tuple_flatten)
_list_flatten_with_keys = _seq_keys(_list_flatten)
_deque_flatten_with_keys = _seq_keys(_deque_flatten)
_dict_flatten_with_keys = _map_keys(_dict_flatten)
_ordereddict_flatten_with_keys = _map_keys(_ordereddict_flatten)
_defaultdict_flatten_with_keys = _map_keys(_defaultdict_flatten, lambda context: context[1])

_private_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten, serialized_type_name='builtins.tuple',
                              flatten_with_keys_fn=_tuple_flatten_with_keys)
_private_register_pytree_node(list, _list_flatten, _list_unflatten, serialized_type_name='builtins.list',
                              flatten_with_keys_fn=_list_flatten_with_keys)
_private_register_pytree_node(dict, _dict_flatten, _dict_unflatten, serialized_type_name='builtins.dict',
                              flatten_with_keys_fn=_dict_flatten_with_keys)
# every namedtuple class flattens through this one entry, keyed by the namedtuple factory (see _get_node_type)
_private_register_pytree_node(namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
                              serialized_type_name='collections.namedtuple',
                              to_dumpable_context=_namedtuple_serialize, from_dumpable_context=_namedtuple_deserialize,
                              flatten_with_keys_fn=_namedtuple_flatten_with_keys)
_private_register_pytree_node(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
                              serialized_type_name='collections.OrderedDict',
                              flatten_with_keys_fn=_ordereddict_flatten_with_keys)
_private_register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                              serialized_type_name='collections.defaultdict',
                              to_dumpable_context=_defaultdict_serialize,
                              from_dumpable_context=_defaultdict_deserialize,
                              flatten_with_keys_fn=_defaultdict_flatten_with_keys)
_private_register_pytree_node(deque, _deque_flatten, _deque_unflatten, serialized_type_name='collections.deque',
                              flatten_with_keys_fn=_deque_flatten_with_keys)

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _get_node_type(tree):
    """The registry key for ``tree``: its exact type, or ``namedtuple`` for every namedtuple."""
    return namedtuple if is_namedtuple_class(type(tree)) else type(tree)


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: ``is_leaf(tree)`` says so, or its type is not a registered node."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree, is_leaf=None):
    warnings.warn('torch.utils._pytree._is_leaf is private and will be removed in a future release. '
                  'Please use torch.utils._pytree.tree_is_leaf instead.', FutureWarning, stacklevel=2)
    return tree_is_leaf(tree, is_leaf=is_leaf)


# --- TreeSpec -------------------------------------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: the root's ``type`` (None for a leaf), its ``context`` and its children's specs.

    ``num_nodes`` counts the nodes and leaves, ``num_leaves`` the leaves, ``num_children`` the root's children.
    Specs are immutable and hashable; two are equal when type, context and children are.
    """
    __slots__ = ('type', '_context', '_children', 'num_nodes', 'num_leaves', 'num_children')

    def __init__(self, type, context, children_specs):
        if type is None and (context is not None or children_specs):
            raise AssertionError('leaf node should not have a context or children')
        children = list(children_specs)
        sets = object.__setattr__
        sets(self, 'type', type)
        sets(self, '_context', context)
        sets(self, '_children', children)
        sets(self, 'num_nodes', 1 + sum(c.num_nodes for c in children))
        sets(self, 'num_leaves', 1 if type is None else sum(c.num_leaves for c in children))
        sets(self, 'num_children', len(children))

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field '{name}'")

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        """The children's specs (deprecated: ``children()`` and ``child(i)``)."""
        warnings.warn('`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a single '
                      'child, or `treespec.children()` to get all children.', FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        # types compare by name, so that a spec equals one rebuilt from a reloaded module
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        context = self._context
        if self.type is defaultdict:
            context = (context[0], tuple(context[1]))
        elif self.type in (dict, OrderedDict):
            context = tuple(context)
        elif self.type is not None and self.type not in BUILTIN_TYPES:
            context = None           # a custom node's context need not be hashable
        return hash((self.type, context, tuple(self._children)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return '*'
        indent += 2
        children = (',\n' + ' ' * indent).join(c.__repr__(indent) for c in self._children)
        return f'TreeSpec({self.type.__name__}, {self._context}, [{children}])'

    def __reduce__(self):
        return (TreeSpec, (self.type, self._context, self._children))

    def unflatten(self, leaves):
        """The pytree of this structure holding ``leaves``."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f'treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers '
                             f'to a pytree that holds {self.num_leaves} items ({self}).')
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for spec in self._children:
            children.append(spec.unflatten(leaves[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves; ``tree`` must have this structure down to them.

        Custom nodes must match type and context exactly; dict, OrderedDict and defaultdict match each other by
        their key sets (the children come in this spec's key order), and a deque's maxlen is not compared.
        """
        subtrees = []

        def go(spec, node):
            if spec.is_leaf():
                subtrees.append(node)
                return
            node_type = _get_node_type(node)
            if spec.type not in BUILTIN_TYPES:
                if node_type != spec.type:
                    raise ValueError(f'Type mismatch; expected {spec.type!r}, but got {node_type!r}.')
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if len(children) != spec.num_children:
                    raise ValueError(f'Node arity mismatch; expected {spec.num_children}, but got {len(children)}.')
                if context != spec._context:
                    raise ValueError(f'Node context mismatch for custom node type {spec.type!r}.')
            else:
                both_dicts = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
                if not both_dicts and node_type != spec.type:
                    raise ValueError(f'Node type mismatch; expected {spec.type!r}, but got {node_type!r}.')
                if len(node) != spec.num_children:
                    raise ValueError(f'Node arity mismatch; expected {spec.num_children}, but got {len(node)}.')
                if both_dicts:
                    keys = spec._context[1] if spec.type is defaultdict else spec._context
                    if set(node) != set(keys):
                        missing, extra = set(keys) - set(node), set(node) - set(keys)
                        raise ValueError('Node keys mismatch' + (f'; missing key(s): {missing}' if missing else '')
                                         + (f'; extra key(s): {extra}' if extra else '') + '.')
                    children = [node[k] for k in keys]
                else:
                    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                    if node_type is not deque and context != spec._context:
                        raise ValueError(f'Node context mismatch for node type {spec.type!r}; expected '
                                         f'{spec._context!r}, but got {context!r}.')
            for child, child_spec in zip(children, spec._children, strict=True):
                go(child_spec, child)
        go(self, tree)
        return subtrees


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf, ``*`` (deprecated: ``treespec_leaf()``; test ``spec.is_leaf()``)."""
    __slots__ = ()

    def __init__(self):
        warnings.warn('`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) and '
                      'treespec.is_leaf()` instead.', FutureWarning, stacklevel=2)
        TreeSpec.__init__(self, None, None, [])

    def __reduce__(self):
        return (treespec_leaf, ())


_LEAF_SPEC = object.__new__(LeafSpec)      # the one leaf spec flattening hands out
TreeSpec.__init__(_LEAF_SPEC, None, None, [])


def treespec_leaf():
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    """The spec of a tuple whose children have the given specs."""
    children = list(iterable)
    if not all(isinstance(c, TreeSpec) for c in children):
        raise ValueError(f'Expected a tuple of TreeSpec values, got: {children!r}.')
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    """The spec of a dict whose values have the given specs."""
    d = dict(mapping, **kwargs)
    if not all(isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f'Expected a dictionary of TreeSpec values, got: {d!r}.')
    return TreeSpec(dict, list(d), list(d.values()))


# --- flattening and mapping -----------------------------------------------------------------------------------------

def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)``: the leaves depth-first, left to right, and the structure around them."""
    leaves = []

    def go(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [go(c) for c in children])
    spec = go(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The pytree ``treespec`` describes, holding ``leaves`` (the arguments may come in either order)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f'Expected `treespec` to be an instance of PyTreeSpec but got item of type '
                            f'{type(treespec)}.')
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves of ``tree``, one by one."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def arg_tree_leaves(*args, **kwargs):
    """``tree_leaves((args, kwargs))``, without building the tuple."""
    return [x for a in (*args, *kwargs.values()) for x in tree_iter(a)]


def tree_map(func, tree, *rests, is_leaf=None):
    """``tree`` with each leaf ``x`` replaced by ``func(x, *xs)``; ``xs`` are the subtrees of ``rests`` (trees
    with ``tree``'s structure at least down to its leaves) at the same place."""
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec.unflatten(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on the leaves as ``tree_map`` does, for its effect; return ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    deque(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator: the function applies to values of the given type(s), or passing the predicate; others pass
    through unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError('Argument must be a type, a tuple of types, or a callable.')

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """``tree_map`` applying ``func`` only to the leaves of the given type(s) (or passing the predicate)."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """One value per leaf of ``treespec``: each leaf of ``tree`` (a prefix of that structure) repeated over the
    leaves below it; None when ``tree`` is not a prefix."""
    full = treespec.unflatten([0] * treespec.num_leaves)
    out = []
    try:
        tree_map_(lambda x, sub: out.extend([x] * tree_structure(sub, is_leaf).num_leaves), tree, full,
                  is_leaf=is_leaf)
    except ValueError:
        return None
    return out


# --- key paths ------------------------------------------------------------------------------------------------------

def _generate_key_paths(key_path, tree, is_leaf=None):
    if is_leaf and is_leaf(tree):
        yield key_path, tree
        return
    node_type = _get_node_type(tree)
    handler = SUPPORTED_NODES.get(node_type)
    if not handler:
        yield key_path, tree
        return
    if handler.flatten_with_keys_fn is None:
        raise ValueError(f'Did not find a flatten_with_keys_fn for type: {node_type}. Please pass a '
                         'flatten_with_keys_fn argument to register_pytree_node.')
    for k, c in handler.flatten_with_keys_fn(tree)[0]:
        yield from _generate_key_paths((*key_path, k), c, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], spec)``; a key path is a tuple of KeyEntry (``keystr`` prints it)."""
    _, spec = tree_flatten(tree, is_leaf)
    return list(_generate_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    return list(_generate_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """``tree_map`` where ``func`` is also given each leaf's key path first: ``func(path, x, *xs)``."""
    path_leaves, spec = tree_flatten_with_path(tree, is_leaf)
    columns = list(zip(*path_leaves, strict=True)) + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns, strict=True))


def keystr(kp):
    """A key path as Python source would index it: ``[0]['a'].x``."""
    return ''.join(str(k) for k in kp)


def key_get(obj, kp):
    """The value at key path ``kp`` in ``obj``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# --- serialization --------------------------------------------------------------------------------------------------
# A spec serializes as JSON ``[protocol, {"type": name, "context": json, "children_spec": [...]}]``, a leaf with
# ``type`` and ``context`` null; the context of a node without its own serializer is JSON text (Enums as objects).

class EnumEncoder(json.JSONEncoder):
    """JSON for contexts holding Enum members: ``{"__enum__": true, "fqn": "module:Class", "name": ...}``."""

    def default(self, obj):
        if isinstance(obj, Enum):
            return {'__enum__': True, 'fqn': f'{obj.__class__.__module__}:{obj.__class__.__qualname__}',
                    'name': obj.name}
        return super().default(obj)


def enum_object_hook(obj):
    if '__enum__' not in obj:
        return obj
    module, _, qualname = obj['fqn'].partition(':')
    cls = importlib.import_module(module)
    for attr in qualname.split('.'):
        cls = getattr(cls, attr)
    return cls[obj['name']]


def _treespec_to_json(spec):
    if spec.is_leaf():
        return {'type': None, 'context': None, 'children_spec': []}
    node_def = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
    if node_def is None:
        raise NotImplementedError(f'Serializing {spec.type} in pytree is not registered.')
    if node_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f'No registered serialization name for {spec.type} found. Please update your '
                                  '_register_pytree_node call with a `serialized_type_name` kwarg.')
    if node_def.to_dumpable_context is None:
        try:
            context = json.dumps(spec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError('Unable to serialize context. Please make the context json dump-able, or register a '
                            'custom serializer using _register_pytree_node.') from e
    else:
        context = node_def.to_dumpable_context(spec._context)
    return {'type': node_def.serialized_type_name, 'context': context,
            'children_spec': [_treespec_to_json(c) for c in spec._children]}


def _json_to_treespec(schema):
    if schema['type'] is None and schema['context'] is None and not schema['children_spec']:
        return _LEAF_SPEC
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(schema['type'])
    if typ is None:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    node_def = SUPPORTED_SERIALIZED_TYPES[typ]
    if node_def.from_dumpable_context is None:
        try:
            context = json.loads(schema['context'], object_hook=enum_object_hook)
        except TypeError as e:
            raise TypeError('Unable to deserialize context. Please make the context json load-able, or register '
                            'a custom serializer using _register_pytree_node.') from e
    else:
        context = node_def.from_dumpable_context(schema['context'])
    return TreeSpec(typ, context, [_json_to_treespec(c) for c in schema['children_spec']])


def treespec_dumps(treespec, protocol=None):
    """``treespec`` as a JSON string (node types by their ``serialized_type_name``)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f'Expected `treespec` to be an instance of PyTreeSpec but got item of type '
                        f'{type(treespec)}.')
    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    if protocol != 1:
        raise ValueError(f'Unknown protocol {protocol}. Available protocols: [1]')
    return json.dumps((protocol, _treespec_to_json(treespec)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized):
    """The spec ``treespec_dumps`` wrote."""
    protocol, schema = json.loads(serialized)
    if protocol != 1:
        raise ValueError(f'Unknown protocol {protocol}. Available protocols: [1]')
    return _json_to_treespec(schema)


class _Asterisk(str):
    """``*`` that prints without quotes, for treespec_pprint."""
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, '*')

    def __repr__(self):
        return '*'


def treespec_pprint(treespec):
    """The tree with ``*`` at each leaf, as its repr: ``(*, {'a': *})``."""
    return repr(treespec.unflatten([_Asterisk()] * treespec.num_leaves))
