"""The graph of a DataPipe pipeline (torch.utils.data.graph).

A DataPipe's inputs are the DataPipes reachable from its state: its attributes (or what
its ``__getstate__`` returns), looking inside lists, tuples, sets, dicts and other objects.
torch finds them by pickling the DataPipe with a hook that stops at each DataPipe met;
ember walks the same state directly, which needs no pickling (lambdas are fine) and gives
the same graph for acyclic pipelines. The DataLoader's serialization wrapper is seen
through to the DataPipe it wraps.
"""
from collections import deque
from collections.abc import Collection

import numpy as np

import ember
from ember._warn import warnings

from .datapipes.datapipe import IterDataPipe, MapDataPipe, _DataPipeSerializationWrapper, _DataPipeBase

__all__ = ['traverse', 'traverse_dps']

DataPipe = (IterDataPipe, MapDataPipe)
_CONTAINERS = (list, tuple, set, frozenset, deque)
_OPAQUE = (ember.Tensor, np.ndarray)   # data, never a DataPipe's input: not walked element by element


def _state(datapipe):
    if isinstance(datapipe, _DataPipeSerializationWrapper):
        return {'_datapipe': datapipe._datapipe}
    if type(datapipe).__getstate__ is _DataPipeBase.__getstate__:
        return datapipe.__dict__
    return datapipe.__getstate__()


def _keep_pipes_and_collections(state):
    """torch's ``only_datapipe`` filter: of the state, only DataPipes and collections are looked into."""
    wanted = lambda v: isinstance(v, (IterDataPipe, MapDataPipe, Collection))
    if isinstance(state, dict):
        return {k: v for k, v in state.items() if wanted(v)}
    if isinstance(state, (tuple, list)):
        return [v for v in state if wanted(v)]
    return state if wanted(state) else None


def _list_connected_datapipes(scan_obj, only_datapipe, cache):
    """The DataPipes ``scan_obj``'s state reaches without passing through another DataPipe, in order."""
    found, seen = [], set()

    def visit(obj):
        if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, int, float, bool, type)):
            return
        seen.add(id(obj))
        if isinstance(obj, DataPipe):
            if id(obj) not in cache and obj is not scan_obj:
                cache.add(id(obj))
                found.append(obj)
            return
        if isinstance(obj, dict):
            for k, v in obj.items():
                visit(k)
                visit(v)
        elif isinstance(obj, _CONTAINERS):
            for v in obj:
                visit(v)
        if not callable(obj) and not isinstance(obj, _OPAQUE) and isinstance(getattr(obj, '__dict__', None), dict):
            visit(obj.__dict__)

    state = _state(scan_obj)
    visit(_keep_pipes_and_collections(state) if only_datapipe else state)
    return found


def traverse_dps(datapipe):
    """The graph of the pipeline ending at ``datapipe``: ``{id(dp): (dp, {inputs' graphs})}``.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> src = IterableWrapper(range(3)); dp = src.map(abs)
    >>> g = traverse_dps(dp)
    >>> g[id(dp)][0] is dp, list(g[id(dp)][1]) == [id(src)]
    (True, True)
    """
    return _traverse_helper(datapipe, only_datapipe=True, cache=set())


def traverse(datapipe, only_datapipe=None):
    """Deprecated form of ``traverse_dps`` (FutureWarning, as torch); ``only_datapipe=False`` looks into
    every attribute, not only DataPipes and collections."""
    msg = "`traverse` function is deprecated and will be removed after 1.13. Please use `traverse_dps` instead."
    if not only_datapipe:
        msg += " And, the behavior will be changed to the equivalent of `only_datapipe=True`."
    warnings.warn(msg, FutureWarning)
    return _traverse_helper(datapipe, bool(only_datapipe), set())


def _traverse_helper(datapipe, only_datapipe, cache):
    if not isinstance(datapipe, DataPipe):
        raise RuntimeError(f"Expected `IterDataPipe` or `MapDataPipe`, but {type(datapipe)} is found")
    dp_id = id(datapipe)
    if dp_id in cache:
        return {}
    cache.add(dp_id)
    children = _list_connected_datapipes(datapipe, only_datapipe, cache.copy())
    graph = {dp_id: (datapipe, {})}
    for child in children:   # each path keeps its own cache: a DataPipe may appear on several paths
        graph[dp_id][1].update(_traverse_helper(child, only_datapipe, cache.copy()))
    return graph
