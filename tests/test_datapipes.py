"""torch.utils.data.datapipes, graph/graph_settings, the DataLoader with DataPipes, and cpp_extension: each
pipeline is built under torch and under ember in the same process and must give the same items, errors, warnings."""
import pickle
import random
import warnings

import pytest
import torch
import torch.utils.cpp_extension as tcpp
import torch.utils.data.graph_settings as tgs
from torch.utils.data import graph as tgraph
from torch.utils.data.datapipes import iter as titer, map as tmap

import ember
import ember.utils.cpp_extension as ecpp
import ember.utils.data.graph_settings as egs
from ember.utils.data import graph as egraph
from ember.utils.data.datapipes import iter as eiter, map as emap

LIBS = [(torch, titer, tmap, tgs), (ember, eiter, emap, egs)]


def both(build):
    """``build(lib, iter, map, graph_settings)`` under torch and ember; both results."""
    return [build(*lib) for lib in LIBS]


def plain(x):
    if isinstance(x, (list, tuple)):
        return type(x)(plain(v) for v in x) if not type(x).__name__ == 'DataChunk' else [plain(v) for v in x]
    return x.tolist() if hasattr(x, 'tolist') else x


def same(build):
    t, e = both(lambda *lib: plain(list(build(*lib))))
    assert t == e and len(t) > 0
    return t


_TOP_LEVEL_LAMBDA = lambda x: x   # noqa: E731


def add_one(x):
    return x + 1


def is_even(x):
    return x % 2 == 0


def test_chains_by_functional_name():
    same(lambda L, I, M, G: I.IterableWrapper(range(20)).map(add_one).filter(is_even).batch(3))
    same(lambda L, I, M, G: I.IterableWrapper(range(7)).batch(3, drop_last=True))
    same(lambda L, I, M, G: I.IterableWrapper([[[0, 1], [2]], [[3]]]).unbatch(unbatch_level=2))
    same(lambda L, I, M, G: I.IterableWrapper([(1, 2), (3, 4)]).map(add_one, input_col=0, output_col=-1))
    same(lambda L, I, M, G: I.IterableWrapper([[1, 2, 3]]).map(lambda a, b: a * b, input_col=[0, 2]))
    same(lambda L, I, M, G: I.IterableWrapper([{'a': 1}, {'a': 2}]).filter(is_even, input_col='a'))
    same(lambda L, I, M, G: I.IterableWrapper(range(6)).batch(2).collate())
    same(lambda L, I, M, G: M.SequenceWrapper(range(5)).map(add_one).batch(2))


def test_lengths_and_batch_types():
    t, e = both(lambda L, I, M, G: I.IterableWrapper(range(10)).map(add_one).batch(3))
    assert len(t) == len(e) == 4
    assert type(next(iter(e))).__name__ == type(next(iter(t))).__name__ == 'DataChunk'
    t, e = both(lambda L, I, M, G: I.IterableWrapper(iter(range(3))))
    for dp in (t, e):
        with pytest.raises(TypeError, match="IterableWrapperIterDataPipe instance doesn't have valid length"):
            len(dp)
    t, e = both(lambda L, I, M, G: M.SequenceWrapper({'a': 100}).map(add_one))
    assert t['a'] == e['a'] == 101 and len(t) == len(e) == 1


@pytest.mark.parametrize('seed, buffer_size, n', [(0, 10000, 20), (7, 3, 25), (123, 1, 5), (2 ** 40 + 3, 8, 50)])
def test_shuffle_with_seed_is_torchs_order(seed, buffer_size, n):
    order = same(lambda L, I, M, G: I.IterableWrapper(range(n)).shuffle(buffer_size=buffer_size).set_seed(seed))
    assert sorted(order) == list(range(n))


def test_shuffle_seed_from_default_generator_and_disabled():
    def build(L, I, M, G):
        L.manual_seed(5)
        dp = I.IterableWrapper(range(30)).shuffle()
        return list(dp) + list(dp)          # each iterator draws a fresh seed from the default generator
    t, e = both(build)
    assert t == e and t[:30] != list(range(30))
    same(lambda L, I, M, G: I.IterableWrapper(range(9)).shuffle().set_shuffle(False))


def test_shuffle_unbatch_level_and_pickle():
    same(lambda L, I, M, G: I.IterableWrapper([[1, 2], [3, 4]]).shuffle(unbatch_level=1).set_seed(3))
    dp = eiter.IterableWrapper(range(10)).shuffle().set_seed(4)
    assert list(pickle.loads(pickle.dumps(dp))) == list(titer.IterableWrapper(range(10)).shuffle().set_seed(4))


@pytest.mark.parametrize('n, k', [(10, 3), (7, 7), (5, 2)])
def test_sharding_filter(n, k):
    for i in range(k):
        t, e = both(lambda L, I, M, G: G.apply_sharding(I.IterableWrapper(range(n)).sharding_filter(), k, i))
        assert list(t) == list(e) and len(t) == len(e)


def test_sharding_groups_and_errors():
    def build(L, I, M, G):
        S = I.ShardingFilter.__init__.__globals__['SHARDING_PRIORITIES']
        dp = I.IterableWrapper(range(24)).sharding_filter()
        dp.apply_sharding(2, 1, S.DISTRIBUTED)
        dp.apply_sharding(3, 2, S.MULTIPROCESSING)
        return list(dp)
    t, e = both(build)
    assert t == e
    for L, I, M, G in LIBS:
        dp = I.IterableWrapper(range(4)).sharding_filter()
        with pytest.raises(ValueError, match=r"instance_id\(2\) should be smaller than num_of_instances\(2\)"):
            dp.apply_sharding(2, 2)
        twice = I.IterableWrapper(range(4)).sharding_filter().map(add_one).sharding_filter()
        with pytest.raises(RuntimeError, match="Sharding twice on a single pipeline"):
            G.apply_sharding(twice, 2, 0)


def _graph_names(graph):
    return [(type(dp).__name__, _graph_names(sub)) for dp, sub in graph.values()]


def test_traverse_dps_and_graph_pipes():
    def build(L, I, M, G):
        a = I.IterableWrapper(range(4))
        dp = a.map(add_one).shuffle().batch(2)
        return dp
    t, e = both(build)
    tg, eg = tgraph.traverse_dps(t), egraph.traverse_dps(e)
    assert _graph_names(tg) == _graph_names(eg) and len(_graph_names(eg)) == 1
    assert [type(p).__name__ for p in tgs.get_all_graph_pipes(tg)] == \
        [type(p).__name__ for p in egs.get_all_graph_pipes(eg)]
    for gr in (tgraph, egraph):
        with pytest.raises(RuntimeError, match="Expected `IterDataPipe` or `MapDataPipe`, but <class 'list'> is found"):
            gr.traverse_dps([1])


def test_apply_shuffle_settings():
    # no Shuffler in the graph: torch's warning, and a Shuffler added at the end
    for L, I, M, G in LIBS:
        with pytest.warns(UserWarning, match="`shuffle=True` was set, but the datapipe does not contain a `Shuffler`"):
            out = G.apply_shuffle_settings(I.IterableWrapper(range(5)), shuffle=True)
        assert type(out).__name__ == 'ShufflerIterDataPipe'
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            src = I.IterableWrapper(range(5))
            assert G.apply_shuffle_settings(src, shuffle=False) is src
            assert G.apply_shuffle_settings(src, shuffle=None) is src
    same(lambda L, I, M, G: G.apply_shuffle_settings(I.IterableWrapper(range(8)).shuffle().map(add_one), shuffle=False))


def test_apply_random_seed_gives_torchs_order():
    def build(L, I, M, G):
        dp = I.IterableWrapper(range(12)).shuffle().map(add_one).shuffle(buffer_size=4)
        return G.apply_random_seed(dp, L.Generator().manual_seed(11))
    same(build)


def test_single_iterator_rule():
    for L, I, M, G in LIBS:
        dp = I.IterableWrapper(range(3)).map(add_one)
        it1 = iter(dp)
        next(it1)
        it2 = iter(dp)
        assert next(it2) == 1
        with pytest.raises(RuntimeError, match="This iterator has been invalidated because another iterator has been "
                                               r"created from the same IterDataPipe: MapperIterDataPipe\("):
            next(it1)


def test_errors_inside_iter_name_the_datapipe():
    def bad(x):
        raise KeyError('boom')
    msgs = []
    for L, I, M, G in LIBS:
        with pytest.raises(KeyError) as info:
            list(I.IterableWrapper([1]).map(bad))
        msgs.append(info.value.args[0])
    assert msgs[0].split('fn=')[0] == msgs[1].split('fn=')[0]
    assert 'This exception is thrown by __iter__ of MapperIterDataPipe(' in msgs[1]


def test_constructor_errors_and_warnings():
    for L, I, M, G in LIBS:
        with pytest.raises(AssertionError, match="buffer_size should be larger than 0"):
            I.IterableWrapper([1]).shuffle(buffer_size=0)
        with pytest.raises(AssertionError, match="Batch size is required to be larger than 0!"):
            I.IterableWrapper([1]).batch(0)
        with pytest.raises(TypeError, match="A callable function is expected"):
            I.IterableWrapper([1]).map(3)
        with pytest.raises(ValueError, match="The function add_one takes 1 parameters, but 2 are required."):
            I.IterableWrapper([1]).map(add_one, input_col=[0, 1])
        with pytest.raises(ValueError, match="`output_col` must be None when `input_col` is None."):
            I.IterableWrapper([1]).map(add_one, output_col=1)
        with pytest.raises(ValueError, match="Boolean output is required"):
            list(I.IterableWrapper([1]).filter(add_one))
        with pytest.warns(UserWarning, match="Local function is not supported by pickle"):   # a nested lambda
            I.IterableWrapper([1]).map(lambda x: x)
        with pytest.warns(UserWarning, match="Lambda function is not supported by pickle"):
            I.IterableWrapper([1]).map(_TOP_LEVEL_LAMBDA)
        with pytest.raises(AttributeError, match="'IterableWrapperIterDataPipe' object has no attribute 'nope"):
            I.IterableWrapper([1]).nope


def test_functional_datapipe_registration():
    for L, I, M, G in LIBS:
        D = L.utils.data
        with pytest.raises(Exception, match="Unable to add DataPipe function name map as it is already taken"):
            D.functional_datapipe('map')(type('Again', (D.IterDataPipe,), {'__iter__': lambda self: iter([])}))
        assert isinstance(I.IterableWrapper([1]), D.IterableDataset)
        assert isinstance(M.SequenceWrapper([1]), D.Dataset)
        assert repr(I.IterableWrapper([1]).map(add_one)) == 'MapperIterDataPipe'


def test_dataloader_with_datapipes():
    def build(L, I, M, G):
        L.manual_seed(3)
        dp = I.IterableWrapper(range(10)).shuffle().sharding_filter().map(add_one)
        loader = L.utils.data.DataLoader(dp, batch_size=3, shuffle=True)
        return [b.tolist() for b in loader] + [b.tolist() for b in loader] + [[L.rand(()).item()]]
    t, e = both(build)
    assert t[:-1] == e[:-1] and abs(t[-1][0] - e[-1][0]) < 1e-6
    def unshuffled(L, I, M, G):
        return [b.tolist() for b in L.utils.data.DataLoader(I.IterableWrapper(range(10)).shuffle(), batch_size=4,
                                                            shuffle=False)]
    t, e = both(unshuffled)
    assert t == e == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    for L, I, M, G in LIBS:   # no Shuffler: the warning; the loader still reads the pipe it was given
        with pytest.warns(UserWarning, match="does not contain a `Shuffler`"):
            loader = L.utils.data.DataLoader(I.IterableWrapper(range(4)), shuffle=True)
        assert [b.tolist() for b in loader] == [[0], [1], [2], [3]]


def test_dataloader_workers_shard_datapipe():
    dp = eiter.IterableWrapper(range(8)).sharding_filter()
    loader = ember.utils.data.DataLoader(dp, batch_size=None, num_workers=2)
    t = torch.utils.data.DataLoader(titer.IterableWrapper(range(8)).sharding_filter(), batch_size=None, num_workers=2)
    assert sorted(int(x) for x in loader) == list(range(8))
    assert [int(x) for x in loader] == [int(x) for x in t]


def test_cpp_extension():
    for mod in (tcpp, ecpp):
        assert callable(mod.load) and callable(mod.load_inline)
    assert ecpp.CUDA_HOME is None and ecpp.ROCM_HOME is None
    assert ecpp.include_paths() == []
    assert ecpp.is_ninja_available() == tcpp.is_ninja_available()
    for call in (lambda: ecpp.load(name='x', sources=['/nonexistent/x.cpp'], verbose=False),
                 lambda: ecpp.load_inline(name='x', cpp_sources='int f();'),
                 lambda: ecpp.CppExtension('x', ['x.cpp']), lambda: ecpp.CUDAExtension('x', ['x.cu']),
                 lambda: ecpp.BuildExtension.with_options(use_ninja=False)()):
        with pytest.raises(RuntimeError, match="cannot build or load C\\+\\+/CUDA extensions"):
            call()


def test_persistent_workers_reseed_each_epoch_as_torch():
    def build(L, I, M, G):
        L.manual_seed(1)
        dp = I.IterableWrapper(range(12)).shuffle().sharding_filter().map(add_one)
        dl = L.utils.data.DataLoader(dp, batch_size=None, num_workers=2, persistent_workers=True)
        return [int(x) for x in dl] + [int(x) for x in dl]
    t, e = both(build)
    assert t == e and t[:12] != t[12:]
