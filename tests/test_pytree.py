"""ember.utils._pytree against torch.utils._pytree: the same trees (nested containers, namedtuples, OrderedDict,
defaultdict, deque, None, tensors, Size, return types, fx's immutable collections, a registered custom class, an
unregistered dict/list subclass) flattened by both, compared by leaves, spec repr and counts and unflatten round
trips; is_leaf; the map/all/any family; key paths; TreeSpec's methods; the registry; serialization; and the errors
and deprecation warnings, message for message."""
import copy
import dataclasses
import pickle
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
import torch
import torch.fx.immutable_collections as tic
import torch.utils._pytree as tp

import ember
import ember.fx.immutable_collections as eic
import ember.utils._pytree as ep

P = namedtuple('P', 'x y')


class D(dict):
    pass


class L(list):
    pass


class Box:
    """A custom node: two children, a label as context."""

    def __init__(self, a, b, label='box'):
        self.a, self.b, self.label = a, b, label


def _box_flatten(b):
    return [b.a, b.b], b.label


def _box_unflatten(values, label):
    return Box(*values, label)


def _box_flatten_with_keys(b):
    return [(ep.GetAttrKey('a'), b.a), (ep.GetAttrKey('b'), b.b)], b.label


def _box_flatten_with_keys_torch(b):
    return [(tp.GetAttrKey('a'), b.a), (tp.GetAttrKey('b'), b.b)], b.label


@pytest.fixture(scope='module', autouse=True)
def box_registered():
    """Box is a node in both registries while this module runs."""
    tp.register_pytree_node(Box, _box_flatten, _box_unflatten, serialized_type_name='test_pytree.Box',
                            flatten_with_keys_fn=_box_flatten_with_keys_torch)
    ep.register_pytree_node(Box, _box_flatten, _box_unflatten, serialized_type_name='test_pytree.Box',
                            flatten_with_keys_fn=_box_flatten_with_keys)
    yield
    tp._deregister_pytree_node(Box)
    ep._deregister_pytree_node(Box)


def _trees(lib, ic):
    """The same trees built with torch (``lib=torch``) or ember; tensors are the only difference."""
    t = lib.arange(3.)
    return [
        1, None, t, (), [], {}, 'str',
        (1, [2, 3], {'b': 4, 'a': (5, None)}),
        {'z': 1, 'a': 2, 3: [t, t]},                     # insertion order, mixed keys
        P(1, [2, P(t, None)]),
        OrderedDict(b=1, a=[2, (3,)]),
        defaultdict(list, {'k': [1, 2], 'j': 3}),
        deque([1, (2, 3)], maxlen=5),
        deque([t]),
        D(a=1, b=[2]),
        L([1, [2]]),
        [D(a=1), L([2]), (3,)],
        Box(t, [1, (2, None)]),
        {'box': Box(1, Box(2, 3, 'inner'))},
        [t, (t, {'w': t, 'v': None})],
        lib.Size([2, 3]),
        (lib.Size([]), lib.Size([4])),
        lib.max(lib.ones(2, 3), 1),
        [lib.sort(lib.tensor([3., 1., 2.]))],
        ic.immutable_list([1, ic.immutable_dict(a=2)]),
    ]


N_TREES = len(_trees(ember, eic))


def _norm(x):
    """A value both libraries' results can be compared by: tensors as lists, containers by type name."""
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        return ('tensor', x.tolist())
    if isinstance(x, Box):
        return ('Box', x.label, _norm(x.a), _norm(x.b))
    if isinstance(x, dict):
        extra = (x.default_factory,) if isinstance(x, defaultdict) else ()
        return (type(x).__name__, *extra, [(k, _norm(v)) for k, v in x.items()])
    if isinstance(x, deque):
        return ('deque', x.maxlen, [_norm(v) for v in x])
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, [_norm(v) for v in x])
    return x


def _pair(i):
    return _trees(torch, tic)[i], _trees(ember, eic)[i]


def _same_spec(ts, es):
    assert repr(es) == repr(ts)
    assert (es.num_leaves, es.num_nodes, es.num_children, es.is_leaf()) == \
        (ts.num_leaves, ts.num_nodes, ts.num_children, ts.is_leaf())


def _raises_like(tfn, efn, exc=Exception):
    """Both calls raise the same exception type with the same message."""
    with pytest.raises(exc) as t_err:
        tfn()
    with pytest.raises(exc) as e_err:
        efn()
    assert type(e_err.value) is type(t_err.value)
    assert str(e_err.value) == str(t_err.value)


def _warns_like(tfn, efn):
    """The warnings each call gives, as (category, message)."""
    got = []
    for fn in (tfn, efn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            fn()
        got.append([(x.category, str(x.message)) for x in w])
    assert got[1] == got[0] and got[0]


# --- flattening -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('i', range(N_TREES))
def test_flatten_unflatten_match_torch(i):
    tt, et = _pair(i)
    tl, ts = tp.tree_flatten(tt)
    el, es = ep.tree_flatten(et)
    assert [_norm(x) for x in el] == [_norm(x) for x in tl]
    _same_spec(ts, es)
    assert ep.tree_leaves(et) == el and list(ep.tree_iter(et)) == el
    assert ep.tree_structure(et) == es
    back = ep.tree_unflatten(el, es)
    assert _norm(back) == _norm(tp.tree_unflatten(tl, ts))
    assert type(back).__name__ == type(tp.tree_unflatten(tl, ts)).__name__
    assert _norm(es.unflatten(iter(el))) == _norm(back)
    assert _norm(ep.tree_unflatten(es, el)) == _norm(back)          # the arguments in either order
    assert ep.tree_is_leaf(et) == tp.tree_is_leaf(tt)


def test_none_and_unregistered_subclasses_are_leaves():
    assert ep.tree_flatten(None) == ([None], ep.treespec_leaf())
    for x in (D(a=1), L([1, 2]), type('T', (tuple,), {})((1, 2))):
        leaves, spec = ep.tree_flatten(x)
        assert leaves == [x] and leaves[0] is x and spec.is_leaf()
        assert repr(spec) == repr(tp.tree_structure(x)) == '*'


def test_dict_keys_keep_insertion_order():
    d = {'b': 1, 'a': 2, 'c': 3}
    assert ep.tree_leaves(d) == tp.tree_leaves(d) == [1, 2, 3]
    assert ep.tree_structure(d).context == tp.tree_structure(d).context == ['b', 'a', 'c']
    assert ep.tree_structure(d) != ep.tree_structure({'a': 2, 'b': 1, 'c': 3})
    assert tp.tree_structure(d) != tp.tree_structure({'a': 2, 'b': 1, 'c': 3})


def test_is_leaf_predicate():
    for i in range(N_TREES):
        tt, et = _pair(i)
        for pred in (lambda x: isinstance(x, tuple), lambda x: isinstance(x, (list, dict)) and len(x) < 2,
                     lambda x: True):
            tl, ts = tp.tree_flatten(tt, is_leaf=pred)
            el, es = ep.tree_flatten(et, is_leaf=pred)
            assert [_norm(x) for x in el] == [_norm(x) for x in tl]
            _same_spec(ts, es)
            assert ep.tree_leaves(et, pred) == el
            assert ep.tree_is_leaf(et, pred) == tp.tree_is_leaf(tt, pred)


# --- mapping and predicates -----------------------------------------------------------------------------------------

def _inc(x):
    return x + 1 if isinstance(x, (int, float, torch.Tensor, ember.Tensor)) and not isinstance(x, bool) else x


@pytest.mark.parametrize('i', range(N_TREES))
def test_tree_map_family(i):
    tt, et = _pair(i)
    assert _norm(ep.tree_map(_inc, et)) == _norm(tp.tree_map(_inc, tt))
    assert _norm(ep.tree_map_only(int, lambda x: -x, et)) == _norm(tp.tree_map_only(int, lambda x: -x, tt))
    assert _norm(ep.tree_map_only((ember.Tensor, int), _inc, et)) == \
        _norm(tp.tree_map_only((torch.Tensor, int), _inc, tt))
    assert _norm(ep.tree_map_only(lambda x: x is None, lambda x: 0, et)) == \
        _norm(tp.tree_map_only(lambda x: x is None, lambda x: 0, tt))
    seen_t, seen_e = [], []
    assert tp.tree_map_(lambda x: seen_t.append(_norm(x)), tt) is tt
    assert ep.tree_map_(lambda x: seen_e.append(_norm(x)), et) is et
    assert seen_e == seen_t
    seen_t, seen_e = [], []
    tp.tree_map_only_(int, seen_t.append, tt)
    ep.tree_map_only_(int, seen_e.append, et)
    assert seen_e == seen_t
    for pred in (lambda x: x is not None, lambda x: isinstance(x, int)):
        assert ep.tree_all(pred, et) == tp.tree_all(pred, tt)
        assert ep.tree_any(pred, et) == tp.tree_any(pred, tt)
    assert ep.tree_all_only(int, lambda x: x > 1, et) == tp.tree_all_only(int, lambda x: x > 1, tt)
    assert ep.tree_any_only(int, lambda x: x > 2, et) == tp.tree_any_only(int, lambda x: x > 2, tt)
    assert ep.tree_any_only((ember.Tensor,), lambda x: True, et) == \
        tp.tree_any_only((torch.Tensor,), lambda x: True, tt)


def test_tree_map_with_rests_and_prefixes():
    tree, rest = [5, {'a': 6}], [[7, 9], OrderedDict(a=(1, 2))]
    fn = lambda x, y: (x, y)  # noqa: E731
    assert ep.tree_map(fn, tree, rest) == tp.tree_map(fn, tree, rest)
    assert ep.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    # dict/OrderedDict/defaultdict match by keys, in the first tree's order
    d, o = {'b': 1, 'a': 2}, OrderedDict(a=20, b=10)
    assert ep.tree_map(lambda x, y: x + y, d, o) == tp.tree_map(lambda x, y: x + y, d, o) == {'b': 11, 'a': 22}
    assert ep.tree_structure(d).flatten_up_to(o) == tp.tree_structure(d).flatten_up_to(o) == [10, 20]
    bad = [([1, 2], [1]), ({'a': 1}, {'b': 1}), ({'a': 1}, {'a': 1, 'b': 2}),
           (P(1, 2), (1, 2)), (Box(1, 2), Box(1, 2, 'other')), (Box(1, 2), (1, 2)), ((1, 2), P(1, 2)),
           (deque([1], maxlen=2), deque([1, 2]))]
    for a, b in bad:
        _raises_like(lambda: tp.tree_map(fn, a, b), lambda: ep.tree_map(fn, a, b), ValueError)
    assert ep.tree_map(fn, deque([1], maxlen=2), deque([3])) == tp.tree_map(fn, deque([1], maxlen=2), deque([3]))


def test_map_only_rejects_non_types():
    _raises_like(lambda: tp.map_only(3), lambda: ep.map_only(3), TypeError)


def test_broadcast_to_and_flatten():
    spec_t, spec_e = tp.tree_structure([1, (2, 3), {'a': 4}]), ep.tree_structure([1, (2, 3), {'a': 4}])
    for prefix in (0, [0, 1, 2], [0, (1, 2), {'a': 3}], [0, 1], [0, [1], 2], {'a': 1}):
        assert ep._broadcast_to_and_flatten(prefix, spec_e) == tp._broadcast_to_and_flatten(prefix, spec_t)


# --- key paths ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('i', range(N_TREES))
def test_key_paths(i):
    tt, et = _pair(i)
    tkl, ts = tp.tree_flatten_with_path(tt)
    ekl, es = ep.tree_flatten_with_path(et)
    _same_spec(ts, es)
    assert [repr(k) for k, _ in ekl] == [repr(k) for k, _ in tkl]
    assert [ep.keystr(k) for k, _ in ekl] == [tp.keystr(k) for k, _ in tkl]
    assert [_norm(v) for _, v in ekl] == [_norm(v) for _, v in tkl]
    assert ep.tree_leaves_with_path(et) == ekl
    for k, v in ekl:
        assert ep.key_get(et, k) is v
    path_str = lambda k, x: ep.keystr(k)  # noqa: E731
    assert _norm(ep.tree_map_with_path(path_str, et)) == \
        _norm(tp.tree_map_with_path(lambda k, x: tp.keystr(k), tt))


def test_key_entries():
    for name in ('SequenceKey', 'MappingKey', 'GetAttrKey'):
        e, t = getattr(ep, name), getattr(tp, name)
        assert [f.name for f in dataclasses.fields(e)] == [f.name for f in dataclasses.fields(t)]
    assert str(ep.SequenceKey(2)) == '[2]' and str(ep.MappingKey('a')) == "['a']" and str(ep.GetAttrKey('x')) == '.x'
    assert ep.MappingKey('a') == ep.MappingKey('a') and hash(ep.SequenceKey(1)) == hash(ep.SequenceKey(1))
    assert ep.tree_map_with_path(lambda k, x, y: (ep.keystr(k), x, y), {'a': [1]}, {'a': [2]}) == \
        {'a': [("['a'][0]", 1, 2)]}


def test_key_paths_need_flatten_with_keys():
    class NoKeys:
        def __init__(self, v):
            self.v = v
    for mod in (tp, ep):
        mod.register_pytree_node(NoKeys, lambda n: ([n.v], None), lambda v, c: NoKeys(*v))
    try:
        assert ep.tree_leaves(NoKeys(3)) == [3]
        _raises_like(lambda: tp.tree_flatten_with_path([NoKeys(1)]), lambda: ep.tree_flatten_with_path([NoKeys(1)]),
                     ValueError)
    finally:
        tp._deregister_pytree_node(NoKeys)
        ep._deregister_pytree_node(NoKeys)


# --- TreeSpec -------------------------------------------------------------------------------------------------------

def test_treespec_api():
    tree = (1, {'a': [2, 3], 'b': P(4, 5)})
    s = ep.tree_structure(tree)
    assert s.type is tuple and s.context is None and s.num_children == 2
    assert s.children() == [s.child(0), s.child(1)] and s.child(0).is_leaf()
    assert s.child(1).type is dict and s.child(1).context == ['a', 'b']
    assert s.child(1).child(1).type is namedtuple and s.child(1).child(1).context is P
    assert s.children() is not s.children()                  # a copy
    assert s == ep.tree_structure((9, {'a': [8, 7], 'b': P(6, 5)})) and hash(s) == hash(ep.tree_structure(tree))
    assert s != ep.tree_structure((1, {'a': [2, 3], 'b': (4, 5)}))
    assert len({s, ep.tree_structure(tree), ep.tree_structure([1])}) == 2
    assert ep.TreeSpec(tuple, None, [ep.treespec_leaf(), ep.treespec_leaf()]) == ep.tree_structure((1, 2))
    assert ep.treespec_tuple([ep.treespec_leaf()] * 2) == ep.tree_structure((1, 2))
    assert ep.treespec_dict(a=ep.treespec_leaf(), b=ep.tree_structure([1])) == ep.tree_structure({'a': 1, 'b': [2]})
    assert ep.treespec_pprint(s) == tp.treespec_pprint(tp.tree_structure(tree)) == \
        "(*, {'a': [*, *], 'b': P(x=*, y=*)})"
    assert copy.deepcopy(s) == s and pickle.loads(pickle.dumps(s)) == s
    assert copy.deepcopy(ep.treespec_leaf()) is ep.treespec_leaf()
    assert ep.PyTreeSpec is ep.TreeSpec
    with pytest.raises(AttributeError):
        s.type = list
    for bad in ((1,), [1, 2, 3]):
        _raises_like(lambda: tp.treespec_tuple(bad), lambda: ep.treespec_tuple(bad), ValueError)


def test_treespec_leaf_and_deprecations():
    ts, es = tp.tree_structure((1, [2])), ep.tree_structure((1, [2]))
    _warns_like(lambda: ts.children_specs, lambda: es.children_specs)
    with pytest.warns(FutureWarning):
        assert es.children_specs == es.children()
    _warns_like(tp.LeafSpec, ep.LeafSpec)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        leaf = ep.LeafSpec()
    assert leaf == ep.treespec_leaf() and repr(leaf) == '*' and isinstance(leaf, ep.TreeSpec)
    assert (leaf.type, leaf.context, leaf.children(), leaf.num_leaves, leaf.num_nodes) == (None, None, [], 1, 1)
    _warns_like(lambda: tp._is_leaf(1), lambda: ep._is_leaf(1))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        assert ep._is_leaf((1,), is_leaf=lambda x: True) and not ep._is_leaf((1,)) and ep._is_leaf(None)


def test_unflatten_and_flatten_up_to_errors():
    for tree, n in (((1, [2, 3]), 2), ({'a': 1}, 0), ([], 1), (5, 2)):
        ts, es = tp.tree_structure(tree), ep.tree_structure(tree)
        _raises_like(lambda: ts.unflatten(range(n)), lambda: es.unflatten(range(n)), ValueError)
        _raises_like(lambda: tp.tree_unflatten(list(range(n)), ts), lambda: ep.tree_unflatten(list(range(n)), es),
                     ValueError)
    _raises_like(lambda: tp.tree_unflatten([1], 'spec'), lambda: ep.tree_unflatten([1], 'spec'), TypeError)
    s = ep.tree_structure([1, {'a': 2}, Box(3, 4)])
    assert s.flatten_up_to([[9], {'a': (8,)}, Box(7, 6)]) == [[9], (8,), 7, 6]


# --- the registry ---------------------------------------------------------------------------------------------------

def test_registry_surface():
    for cls in (tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque, eic.immutable_list,
                eic.immutable_dict, ember.Size, Box):
        node = ep.SUPPORTED_NODES[cls]
        assert isinstance(node, ep.NodeDef) and node.type is cls
        assert node._fields == tp.NodeDef._fields
    assert ep.SUPPORTED_NODES[type(ember.max(ember.ones(2, 2), 1))].type.__name__ == 'max'
    assert ep._get_node_type(P(1, 2)) is namedtuple and tp._get_node_type(P(1, 2)) is namedtuple
    assert ep._get_node_type(D()) is D and ep._get_node_type(ember.Size([1])) is ember.Size
    r = ember.sort(ember.ones(2))
    assert ep._get_node_type(r) is type(r)
    assert ep.is_structseq(r) and not ep.is_namedtuple(r)
    assert ep.is_namedtuple(P) and ep.is_namedtuple_instance(P(1, 2)) and not ep.is_namedtuple((1, 2))
    for name in ('PyTree', 'Context', 'FlattenFunc', 'UnflattenFunc', 'FlattenFn', 'UnflattenFn', 'KeyPath',
                 'DumpableContext', 'ToDumpableContextFn', 'FromDumpableContextFn', 'KeyEntry'):
        assert hasattr(ep, name)
    assert set(tp.__all__) <= set(dir(ep)) and set(ep.__all__) == set(tp.__all__)


def test_builtin_flatten_helpers():
    d = {'b': 1, 'a': 2}
    cases = [('_dict_flatten', '_dict_unflatten', d), ('_list_flatten', '_list_unflatten', [1, 2]),
             ('_tuple_flatten', '_tuple_unflatten', (1, 2)),
             ('_ordereddict_flatten', '_ordereddict_unflatten', OrderedDict(d)),
             ('_odict_flatten', '_odict_unflatten', OrderedDict(d)),
             ('_defaultdict_flatten', '_defaultdict_unflatten', defaultdict(int, d)),
             ('_deque_flatten', '_deque_unflatten', deque([1, 2], maxlen=4)),
             ('_namedtuple_flatten', '_namedtuple_unflatten', P(1, 2))]
    for fl, unfl, x in cases:
        values, context = getattr(ep, fl)(x)
        assert (list(values), context) == (list(getattr(tp, fl)(x)[0]), getattr(tp, fl)(x)[1])
        back = getattr(ep, unfl)(values, context)
        assert back == x and type(back) is type(x)
        wk = fl + '_with_keys'
        if hasattr(tp, wk):
            assert repr(getattr(ep, wk)(x)) == repr(getattr(tp, wk)(x))


def test_register_pytree_node_and_older_name():
    class MyDict(dict):
        pass

    def flat(d):
        return list(d.values()), list(d)

    def unflat(values, keys):
        return MyDict(zip(keys, values))
    try:
        for mod in (tp, ep):
            assert mod.tree_leaves(MyDict(a=1)) == [MyDict(a=1)]
        _warns_like(lambda: tp._register_pytree_node(MyDict, flat, unflat),
                    lambda: ep._register_pytree_node(MyDict, flat, unflat))
        leaves, spec = ep.tree_flatten([MyDict(a=1, b=[2])])
        assert leaves == [1, 2] and repr(spec) == repr(tp.tree_structure([MyDict(a=1, b=[2])]))
        back = ep.tree_unflatten([3, 4], spec)
        assert back == [{'a': 3, 'b': [4]}] and type(back[0]) is MyDict
        # registering again: the older name replaces it with a warning, register_pytree_node refuses
        _warns_like(lambda: tp._register_pytree_node(MyDict, flat, unflat),
                    lambda: ep._register_pytree_node(MyDict, flat, unflat))
        _raises_like(lambda: tp.register_pytree_node(MyDict, flat, unflat),
                     lambda: ep.register_pytree_node(MyDict, flat, unflat), ValueError)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            ep._register_pytree_node(MyDict, flat, unflat, lambda *a: '', None)
        assert sum(issubclass(x.category, FutureWarning) for x in w) == 2
    finally:
        tp._deregister_pytree_node(MyDict)
        ep._deregister_pytree_node(MyDict)
    assert ep.tree_leaves(MyDict(a=1)) == [MyDict(a=1)]

    class Half:
        pass
    _raises_like(lambda: tp.register_pytree_node(Half, flat, unflat, to_dumpable_context=str),
                 lambda: ep.register_pytree_node(Half, flat, unflat, to_dumpable_context=str), ValueError)
    tp.SUPPORTED_NODES.pop(Half, None)          # torch registers the node before it checks
    assert Half not in ep.SUPPORTED_NODES


def test_register_dataclass():
    @dataclasses.dataclass
    class Point:
        x: object
        y: object = None

    for mod in (tp, ep):
        mod.register_dataclass(Point)
    try:
        tl, ts = tp.tree_flatten([Point(1, 2), Point(3)])
        el, es = ep.tree_flatten([Point(1, 2), Point(3)])
        assert el == tl == [1, 2, 3]
        assert es.child(1).context == ts.child(1).context == [['x'], ['y']]
        assert ep.tree_unflatten([4, 5, 6], es) == [Point(4, 5), Point(6)]
        assert [ep.keystr(k) for k, _ in ep.tree_leaves_with_path(Point(1, 2))] == ['.x', '.y']
    finally:
        tp._deregister_pytree_node(Point)
        ep._deregister_pytree_node(Point)


# --- serialization --------------------------------------------------------------------------------------------------

def test_treespec_dumps_loads_match_torch():
    trees = [(1, [2, 3], {'b': 4, 'a': (5, None)}), OrderedDict(b=1, a=[2]), defaultdict(list, {'k': [1, 2]}),
             deque([1, 2], maxlen=3), {1: 2, 'x': 3}, Box(1, [2]), 7,
             [tic.immutable_list([1]), tic.immutable_dict(a=1)]]
    etrees = trees[:-1] + [[eic.immutable_list([1]), eic.immutable_dict(a=1)]]
    for tt, et in zip(trees, etrees):
        ts, es = tp.tree_structure(tt), ep.tree_structure(et)
        text = ep.treespec_dumps(es)
        assert text == tp.treespec_dumps(ts)
        assert ep.treespec_loads(text) == es and repr(ep.treespec_loads(tp.treespec_dumps(ts))) == repr(ts)
    _raises_like(lambda: tp.treespec_dumps(tp.tree_structure(P(1, 2))),
                 lambda: ep.treespec_dumps(ep.tree_structure(P(1, 2))), NotImplementedError)
    assert ep.treespec_dumps(ep.tree_structure(ember.Size([1]))) == tp.treespec_dumps(tp.tree_structure(
        torch.Size([1])))
    for mod, lib in ((tp, torch), (ep, ember)):        # return types have no serialized name
        with pytest.raises(NotImplementedError, match='No registered serialization name for'):
            mod.treespec_dumps(mod.tree_structure(lib.max(lib.ones(2, 2), 1)))
    _raises_like(lambda: tp.treespec_dumps(tp.tree_structure(Box(1, 2, object))),
                 lambda: ep.treespec_dumps(ep.tree_structure(Box(1, 2, object))), TypeError)
    _raises_like(lambda: tp.treespec_dumps(tp.tree_structure(1), protocol=7),
                 lambda: ep.treespec_dumps(ep.tree_structure(1), protocol=7), ValueError)
    _raises_like(lambda: tp.treespec_loads('[1, {"type": "no.such", "context": null, "children_spec": [1]}]'),
                 lambda: ep.treespec_loads('[1, {"type": "no.such", "context": null, "children_spec": [1]}]'),
                 NotImplementedError)


def test_register_namedtuple_for_serialization():
    Q = namedtuple('Q', 'a b')
    for mod in (tp, ep):
        mod._register_namedtuple(Q, serialized_type_name='test_pytree.Q')
    try:
        ts, es = tp.tree_structure(Q(1, [2])), ep.tree_structure(Q(1, [2]))
        assert ep._get_node_type(Q(1, 2)) is namedtuple and es.type is namedtuple
        assert ep.treespec_dumps(es) == tp.treespec_dumps(ts)
        assert ep.treespec_loads(ep.treespec_dumps(es)) == es
    finally:
        tp._deregister_pytree_node(Q)
        ep._deregister_pytree_node(Q)


def test_user_types_in_ember_modules():
    """fx's immutable collections unflatten to themselves, Size to a tuple, return types to themselves."""
    s = ep.tree_structure(eic.immutable_list([1, eic.immutable_dict(a=2)]))
    back = ep.tree_unflatten([3, 4], s)
    assert type(back) is eic.immutable_list and type(back[1]) is eic.immutable_dict and back == [3, {'a': 4}]
    assert ep.tree_map(lambda x: x * 2, ember.Size([2, 3])) == (4, 6)
    r = ep.tree_map(lambda x: x, ember.max(ember.tensor([[1., 3.]]), 1))
    assert type(r).__name__ == 'max' and r.indices.tolist() == [1]
