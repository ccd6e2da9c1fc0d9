"""torch's ``post_localSGD_hook``: post-local SGD (https://arxiv.org/abs/1808.07217). DDP averages gradients over
``process_group`` for the first ``start_localSGD_iter`` iterations, then only within ``subgroup`` (default: the
ranks of this machine, ``dist.new_subgroups()``), or not at all with ``post_local_gradient_allreduce=False``;
a model averager (``model_averaging.averagers.PeriodicModelAverager``) run after ``optimizer.step()`` then
keeps the replicas close.

>>> # state = PostLocalSGDState(process_group=None, subgroup=None, start_localSGD_iter=100)
>>> # ddp.register_comm_hook(state, post_localSGD_hook)
"""
import logging

import ember
import ember.distributed as dist
from . import default_hooks as default

logger = logging.getLogger(__name__)

__all__ = ['PostLocalSGDState', 'post_localSGD_hook']


class PostLocalSGDState:
    """The hook's state: the global group and the local ``subgroup``, the iteration local SGD starts at, and
    the count of iterations so far (one per backward, counted at its last bucket)."""

    __slots__ = ['process_group', 'subgroup', 'start_localSGD_iter', 'post_local_gradient_allreduce', 'iter']

    def __init__(self, process_group, subgroup, start_localSGD_iter, post_local_gradient_allreduce=True):
        logger.info("Local SGD will be started after %s iterations", start_localSGD_iter)
        self.process_group, self.subgroup = process_group, subgroup
        self.start_localSGD_iter = start_localSGD_iter
        self.post_local_gradient_allreduce = post_local_gradient_allreduce
        self.iter = 0

    def maybe_increase_iter(self, bucket):
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_localSGD_iter:
            logger.info("Start to apply local SGD after %s iterations.", self.iter)


def post_localSGD_hook(state, bucket):
    """Average the bucket globally before ``state.start_localSGD_iter``, within ``state.subgroup`` after it
    (unchanged when ``post_local_gradient_allreduce`` is False): a Future of the bucket's tensor."""
    global_group = state.process_group if state.process_group is not None else dist.group.WORLD
    input_tensor = bucket.buffer()
    if state.iter < state.start_localSGD_iter:
        state.maybe_increase_iter(bucket)
        return default._allreduce_fut(global_group, input_tensor)
    if not state.post_local_gradient_allreduce:
        fut = ember.futures.Future()
        fut.set_result(input_tensor)
        return fut
    if state.subgroup is None:
        state.subgroup, _ = dist.new_subgroups()
    return default._allreduce_fut(state.subgroup, input_tensor)
