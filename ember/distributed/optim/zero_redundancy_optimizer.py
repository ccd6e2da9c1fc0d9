"""``ZeroRedundancyOptimizer`` (torch.distributed.optim): ZeRO stage 1 over ``ember.distributed``'s collectives.

NOTE [ZeRO partition]: every rank holds all parameters, and each parameter is owned by one rank, which alone
keeps its optimizer state and updates it. The partition is torch's: per parameter group, the largest parameters
first, each to the rank whose shard has the fewest elements so far (ties: the lowest rank), the sizes counted
over all groups. ``step`` runs the wrapped optimizer on this rank's shard (after copying the hyperparameters of
``param_groups``, which a scheduler may have changed), then each rank broadcasts the parameters it owns, so all
ranks leave ``step`` with the same parameters. ``consolidate_state_dict(to)`` gathers the shards' states, and
``state_dict()`` on that rank is the state of one optimizer over all parameters (indices in ``param_groups``
order), as torch's; ``load_state_dict`` of such a state gives each rank the states of the parameters it owns.

>>> import ember.distributed as dist
>>> dist.is_initialized()
False
"""
import ember
import ember.distributed as dist
from ember.optim.optimizer import Optimizer, _cast_state

__all__ = ['ZeroRedundancyOptimizer']


class ZeroRedundancyOptimizer(Optimizer):
    """Wrap ``optimizer_class`` so that each rank of ``process_group`` keeps the state of its share of the
    parameters (NOTE [ZeRO partition]); ``defaults`` are the wrapped optimizer's arguments (``lr=...``)."""

    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if isinstance(params, ember.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + type(params).__name__)
        params = list(params)
        if not params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self.global_rank = dist.get_global_rank(self.process_group, self.rank) \
            if self.process_group is not dist.group.WORLD else self.rank
        self.parameters_as_bucket_view, self._overlap_with_ddp = parameters_as_bucket_view, overlap_with_ddp
        self._optim_defaults, self.optim_constructor = defaults, optimizer_class
        super().__init__(params, defaults)
        self._partition = self._partition_parameters()
        self.optim = optimizer_class(self._partition[self.rank], **defaults)
        for group, mine in zip(self.param_groups, self.optim.param_groups):     # the wrapped class's defaults
            group.update((k, v) for k, v in mine.items() if k != 'params')
        self._all_state_dicts = []

    def _partition_parameters(self):
        """Per rank, its param groups (copies of ``param_groups`` holding only its parameters)."""
        sizes = [0] * self.world_size
        out = [[] for _ in range(self.world_size)]
        for group in self.param_groups:
            per_rank = [[] for _ in range(self.world_size)]
            for p in sorted(group['params'], key=lambda t: t.numel(), reverse=True):
                r = sizes.index(min(sizes))
                per_rank[r].append(p)
                sizes[r] += p.numel()
            for r, ps in enumerate(per_rank):
                out[r].append(dict(group, params=ps))
        return out

    def step(self, closure=None, **kwargs):
        """The wrapped optimizer's step on this rank's shard, then every parameter from the rank that owns it."""
        for mine, group in zip(self.optim.param_groups, self.param_groups):
            mine.update((k, v) for k, v in group.items() if k != 'params')
        loss = self.optim.step(**kwargs) if closure is None else self.optim.step(closure=closure, **kwargs)
        if self.world_size > 1:
            with ember.no_grad():
                for r, groups in enumerate(self._partition):
                    src = dist.get_global_rank(self.process_group, r) \
                        if self.process_group is not dist.group.WORLD else r
                    for g in groups:
                        for p in g['params']:
                            dist.broadcast(p.detach(), src=src, group=self.process_group)
        return loss

    def consolidate_state_dict(self, to=0):
        """Gather every shard's optimizer state on rank ``to`` (a collective: call it on every rank)."""
        states = [None] * self.world_size
        dist.all_gather_object(states, self.optim.state_dict(), group=self.process_group)
        self._all_state_dicts = states if self.rank == to else []

    def state_dict(self):
        """The state of one optimizer over all parameters; ``consolidate_state_dict`` must have run first."""
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               "`consolidate_state_dict(to=0)` on all ranks beforehand if you meant to save the "
                               "global state.")
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g['params'])}
        state = {}
        for groups, local in zip(self._partition, self._all_state_dicts):
            order = [p for g in groups for p in g['params']]
            for i, s in local['state'].items():
                state[index[id(order[i])]] = s
        param_groups = [dict(g, params=[index[id(p)] for p in g['params']]) for g in self.param_groups]
        return {'state': dict(sorted(state.items())), 'param_groups': param_groups}

    def load_state_dict(self, state_dict):
        """Load the state of one optimizer over all parameters (what ``state_dict()`` returns, on any rank): the
        hyperparameters of every group, and the states of the parameters this rank owns."""
        groups = state_dict['param_groups']
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, groups):
            if len(group['params']) != len(saved['params']):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            group.update((k, v) for k, v in saved.items() if k != 'params')
        params = [p for g in self.param_groups for p in g['params']]
        mine = {id(p) for g in self._partition[self.rank] for p in g['params']}
        for i, st in state_dict['state'].items():
            p = params[int(i)]
            if id(p) in mine:
                self.optim.state[p] = _cast_state(p, None, st)
        for mine_group, group in zip(self.optim.param_groups, self.param_groups):
            mine_group.update((k, v) for k, v in group.items() if k != 'params')
