"""Settings applied over a whole DataPipe graph (torch.utils.data.graph_settings): shuffling on or off, sharding
across instances, and random seeds. Each walks ``graph.traverse_dps`` and calls the methods the DataPipes offer
(``set_shuffle``/``set_seed``, ``apply_sharding``)."""
import inspect
from ember._warn import warnings

import ember
from .datapipes.iter.sharding import SHARDING_PRIORITIES, _ShardingIterDataPipe
from .graph import traverse_dps

__all__ = ['apply_random_seed', 'apply_sharding', 'apply_shuffle_seed', 'apply_shuffle_settings',
           'get_all_graph_pipes']


def get_all_graph_pipes(graph):
    """Every DataPipe of a graph from ``traverse_dps``, each once, in depth-first order."""
    return _all_pipes(graph, set())


def _all_pipes(graph, seen):
    out = []
    for dp_id, (datapipe, sub_graph) in graph.items():
        if dp_id not in seen:
            seen.add(dp_id)
            out.append(datapipe)
            out.extend(_all_pipes(sub_graph, seen))
    return out


def _has_methods(datapipe, *names):
    return all(inspect.ismethod(getattr(datapipe, n, None)) for n in names)


def _is_sharding_datapipe(datapipe):
    return isinstance(datapipe, _ShardingIterDataPipe) or _has_methods(datapipe, 'apply_sharding')


def apply_sharding(datapipe, num_of_instances, instance_id, sharding_group=SHARDING_PRIORITIES.DEFAULT):
    """Call ``apply_sharding`` on the graph's sharding DataPipes; two on one path raise RuntimeError.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> list(apply_sharding(IterableWrapper(range(6)).sharding_filter(), 2, 1))
    [1, 3, 5]
    """
    def walk(graph, prev_applied=None):
        for dp, sub_graph in graph.values():
            applied = prev_applied
            if _is_sharding_datapipe(dp):
                if prev_applied is not None:
                    raise RuntimeError("Sharding twice on a single pipeline is likely unintended and will cause data "
                                       f"loss. Sharding already applied to {prev_applied} while trying to apply to {dp}")
                if len(inspect.signature(dp.apply_sharding).parameters) < 3:   # older two-argument form
                    dp.apply_sharding(num_of_instances, instance_id)
                else:
                    dp.apply_sharding(num_of_instances, instance_id, sharding_group=sharding_group)
                applied = dp
            walk(sub_graph, applied)

    walk(traverse_dps(datapipe))
    return datapipe


def _is_shuffle_datapipe(datapipe):
    return _has_methods(datapipe, 'set_shuffle', 'set_seed')


def apply_shuffle_settings(datapipe, shuffle=None):
    """Turn shuffling of every shuffling DataPipe on or off (``None``: leave them). With ``shuffle=True`` and
    none in the graph, warn and add a Shuffler at the end (returned).

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> list(apply_shuffle_settings(IterableWrapper(range(4)).shuffle(), shuffle=False))
    [0, 1, 2, 3]
    """
    if shuffle is None:
        return datapipe
    shufflers = [p for p in get_all_graph_pipes(traverse_dps(datapipe)) if _is_shuffle_datapipe(p)]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. Adding one at the end. "
                      "Be aware that the default buffer size might not be sufficient for your task.")
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_shuffle_seed(datapipe, rng):
    """Deprecated name of ``apply_random_seed`` (FutureWarning)."""
    warnings.warn("`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the future releases. "
                  "Please use `apply_random_seed` instead.", FutureWarning)
    return apply_random_seed(datapipe, rng)


def _is_random_datapipe(datapipe):
    return _has_methods(datapipe, 'set_seed')


def apply_random_seed(datapipe, rng):
    """Give each random DataPipe of the graph (one with ``set_seed``) a seed drawn from the generator ``rng``.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> dp = IterableWrapper(range(5)).shuffle()
    >>> a = list(apply_random_seed(dp, ember.Generator().manual_seed(1)))
    >>> a == list(apply_random_seed(dp, ember.Generator().manual_seed(1)))
    True
    """
    pipes, seen = [], set()
    for pipe in get_all_graph_pipes(traverse_dps(datapipe)):
        if id(pipe) not in seen and _is_random_datapipe(pipe):
            pipes.append(pipe)
            seen.add(id(pipe))
    for pipe in pipes:
        pipe.set_seed(int(ember.empty((), dtype=ember.int64).random_(generator=rng).item()))
    return datapipe
