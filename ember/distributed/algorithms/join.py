"""torch.distributed.algorithms.join: training with uneven inputs across ranks.

``Joinable`` and ``JoinHook`` are the protocol (a hook's methods do nothing unless overridden, as torch's);
``Join``, the context manager that shadows the collectives of ranks that ran out of data, needs
DistributedDataParallel to take part in it, which ember's does not: entering it raises an error saying so.
"""


class JoinHook:
    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable:
    def join_hook(self, **kwargs):
        raise NotImplementedError

    @property
    def join_device(self):
        raise NotImplementedError

    @property
    def join_process_group(self):
        raise NotImplementedError


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        self._joinables, self._enable = joinables, enable

    def __enter__(self):
        if self._enable:
            raise NotImplementedError("Join: ember's DistributedDataParallel does not shadow collectives for ranks that "
                                      "ran out of data; give every rank the same number of batches "
                                      "(DistributedSampler(drop_last=True))")
        return self

    def __exit__(self, *exc):
        return False

    @staticmethod
    def notify_join_context(joinable):
        return None
