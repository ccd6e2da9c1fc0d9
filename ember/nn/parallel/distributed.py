"""``DistributedDataParallel``: data-parallel training, one model replica per rank, gradients averaged by buckets.

NOTE [DDP reducer]
At construction the replicas are made equal (rank 0's parameters and buffers are broadcast) and the
parameters are laid out in buckets: in reverse order of registration, since backward produces the
gradients of the last layers first, grouped by dtype, the first bucket closed at 1 MiB so that
communication starts early and the others at ``bucket_cap_mb`` (25 MB), as torch's. Each bucket is one
flat tensor; each parameter's gradient has a view of it.

During backward a post-accumulate-grad hook on every parameter copies the new gradient into its view (or
finds it already there: ``gradient_as_bucket_view`` makes ``param.grad`` the view itself) and counts the
bucket down; a bucket whose last gradient arrived is divided by the world size and all-reduced with
``async_op=True`` (or handed to the communication hook), in bucket order on every rank, while backward goes
on with the earlier layers. Every hook also polls the reductions in flight, which is when MPI moves them
on. When the last bucket has been launched, all gradients of this backward exist: the reducer waits for the
reductions and writes the averages into ``param.grad``. (torch waits in a callback at the end of the
backward pass; ember's engine has no such callback, and after the last bucket no parameter gradient is
left to come.)

``no_sync()`` turns the hooks off, so gradients accumulate locally; the first backward after it reduces
the accumulated sums. ``find_unused_parameters`` walks the autograd graph from the forward's outputs and
marks the parameters it does not reach as ready at once (zeros in their bucket); a parameter unused on every
rank keeps its ``.grad`` (a flag per parameter is all-reduced with the last bucket), one unused on some
ranks gets the average. Without it, a parameter that gets no gradient leaves its bucket incomplete and the
next forward raises torch's error saying to pass ``find_unused_parameters=True``.

Not done as torch: buckets are not rebuilt in the order gradients arrived after the first iteration;
``static_graph`` is accepted and walks the graph as ``find_unused_parameters`` does; no ``join()``, no
``device_ids`` (there are no accelerators), no mixed-precision option.

Example (2 ranks, ``emberrun --nproc_per_node=2``)::

    dist.init_process_group('gloo')
    model = DistributedDataParallel(nn.Linear(10, 1))
    model(x).sum().backward()        # param.grad: the average of both ranks' gradients
"""
import contextlib
import os
from ember._warn import warnings
import weakref

import ember
import ember.distributed as dist
from ember.distributed.utils import _broadcast_coalesced
from ..modules.module import Module

__all__ = ['DistributedDataParallel']

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
_BROADCAST_BUCKET_BYTES = 250 * 1024 * 1024      # torch's broadcast_bucket_size for parameters and buffers
# dtype names as torch's C++ logger writes them (``_get_ddp_logging_data()['dtypes']``)
_CPP_DTYPE = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16',
              'int64': 'long int', 'int32': 'int'}


class _Bucket:
    def __init__(self, index, params, dtype):
        self.index, self.params = index, params
        n = sum(p.numel() for p in params)
        self.buffer = ember.zeros(n, dtype=dtype)
        self.views, off = [], 0
        for p in params:
            self.views.append(self.buffer[off:off + p.numel()].view(p.shape))
            off += p.numel()
        self.pending = len(params)
        self.future = None


def _bucket_assignment(params, caps):
    """Parameters (already in reverse order) into buckets per dtype; the i-th bucket of a dtype closes once it
    holds ``caps[min(i, len(caps) - 1)]`` bytes."""
    open_, done = {}, []
    for p in params:
        key = p.dtype
        b = open_.setdefault(key, {'params': [], 'bytes': 0, 'count': 0})
        b['params'].append(p)
        b['bytes'] += p.numel() * p.element_size()
        if b['bytes'] >= caps[min(b['count'], len(caps) - 1)]:
            done.append((b['params'], key))
            open_[key] = {'params': [], 'bytes': 0, 'count': b['count'] + 1}
    done += [(b['params'], k) for k, b in open_.items() if b['params']]
    return done


class Reducer:
    """``ddp.reducer``: torch's C++ Reducer, of which libraries call ``prepare_for_backward(outputs)`` to have the
    next backward reduce (accelerate's ``trigger_sync_in_backward``, after a forward under ``no_sync``)."""

    def __init__(self, ddp):
        self._ddp = weakref.ref(ddp)

    def prepare_for_backward(self, outputs):
        ddp = self._ddp()
        ddp._active = True
        ddp._prepare_for_backward(outputs)


class DistributedDataParallel(Module):
    """Replicate ``module`` on every rank of ``process_group`` and average its gradients during backward.

    Each rank runs the forward on its own part of the batch; after ``loss.backward()`` every replica's
    ``param.grad`` holds the average over the ranks, so identical optimizer steps keep the replicas equal.
    See NOTE [DDP reducer] for how (buckets, overlap with backward) and what differs from torch.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        if ember.cuda._as_cpu():       # NOTE [cuda as cpu]: GPU indices name the CPU in this run
            device_ids = [d for d in device_ids or () if ember.device(d).type != 'cpu'] or None
            output_device = None if output_device is None or ember.device(output_device).type == 'cpu' \
                else output_device
        if device_ids or output_device is not None:
            devices = sorted({str(p.device) for p in module.parameters()})
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments only work with "
                             f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters "
                             f"{{{', '.join(devices)}}}. (ember has no GPUs: leave device_ids out)")
        self.module = module
        self.process_group = process_group
        self.dim, self.broadcast_buffers = dim, broadcast_buffers
        self.find_unused_parameters = find_unused_parameters or static_graph
        self._find_unused_arg = find_unused_parameters      # what the logging data reports
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.world_size = dist.get_world_size(process_group)
        self._params = []
        seen = set()
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                self._params.append((name, p))
        if not self._params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._verify_same_model()
        if init_sync:
            self._sync_from_rank0(p for _, p in module.named_parameters())
            self._sync_from_rank0(module.buffers())
        cap = self._bucket_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        reverse = [p for _, p in reversed(self._params)]
        self._buckets = [_Bucket(i, ps, dt) for i, (ps, dt) in
                         enumerate(_bucket_assignment(reverse, [min(_DEFAULT_FIRST_BUCKET_BYTES, cap), cap]))]
        self._where = {id(p): (b, j) for b in self._buckets for j, p in enumerate(b.params)}
        self._names = {id(p): n for n, p in self._params}
        self._comm_hook = None
        self._active = False          # a backward with reduction is expected (set by forward)
        self._launched = 0
        self._ready = set()
        self._used = None             # find_unused_parameters: ids of parameters this rank used
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for _, p in self._params]
        self.reducer = Reducer(self)
        self._iterations = self._logged_iteration = 0     # backward passes; the last one torch's logger samples

    # --- construction -----------------------------------------------------------------------------------
    def _verify_same_model(self):
        mine = [(tuple(p.shape), str(p.dtype)) for _, p in self._params]
        everyone = [None] * self.world_size
        dist.all_gather_object(everyone, mine, group=self.process_group)
        for r, theirs in enumerate(everyone):
            if len(theirs) != len(mine):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {dist.get_rank()} has "
                                   f"{len(mine)} params, while rank {r} has inconsistent {len(theirs)} params.")
            for i, (a, b) in enumerate(zip(mine, theirs)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but parameter {i} "
                                       f"({self._params[i][0]}) has shape {list(a[0])} and dtype {a[1]} on rank "
                                       f"{dist.get_rank()} and shape {list(b[0])} and dtype {b[1]} on rank {r}.")

    def _sync_from_rank0(self, tensors):
        """Group rank 0's values into ``tensors``: one broadcast per 250 MB of them (torch's
        ``_broadcast_coalesced`` bucket), not one per tensor."""
        _broadcast_coalesced(self.process_group, [t.detach() for t in tensors], _BROADCAST_BUCKET_BYTES, src=0)

    def _group(self):
        return self.process_group if self.process_group is not None else dist.group.WORLD

    # --- forward --------------------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._launched or (self._active and self._ready):
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                "participate in calculating loss. Parameters that did not receive a gradient on this rank: "
                + ', '.join(self._names[id(p)] for b in self._buckets for p in b.params
                            if id(p) not in self._ready))
        if self.broadcast_buffers and self.world_size > 1 and self.require_forward_param_sync:
            self._sync_from_rank0(list(self.module.buffers()))
        out = self.module(*inputs, **kwargs)
        self._active = ember.is_grad_enabled() and self.require_backward_grad_sync
        if self._active:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out):
        self._ready, self._launched = set(), 0
        for b in self._buckets:
            b.pending, b.future = len(b.params), None
        if not self.find_unused_parameters:
            self._used = None
            return
        self._used = _reachable_leaves(out)
        for _, p in self._params:
            if id(p) not in self._used:
                b, j = self._where[id(p)]
                b.views[j].zero_()
                self._mark_ready(p)

    # --- backward: the hooks ---------------------------------------------------------------------------------
    def _grad_ready(self, p):
        if not self._active:
            return
        if id(p) in self._ready:
            raise RuntimeError(f"Expected to mark a variable ready only once. Parameter {self._names[id(p)]} got a "
                               f"gradient twice in one backward pass (a second backward through the same graph, or "
                               f"reentrant checkpointing): use no_sync() for the extra passes")
        b, j = self._where[id(p)]
        view, g = b.views[j], p.grad
        if g is not view:
            with ember.no_grad():
                view.copy_(g)
            if self.gradient_as_bucket_view:
                p.grad = view
        self._mark_ready(p)
        for bb in self._buckets[:self._launched]:     # MPI moves reductions on only while asked
            if bb.future is not None:
                bb.future.done()

    def _mark_ready(self, p):
        self._ready.add(id(p))
        b, _ = self._where[id(p)]
        b.pending -= 1
        while self._launched < len(self._buckets) and self._buckets[self._launched].pending == 0:
            self._launch(self._buckets[self._launched])
            self._launched += 1
        if self._launched == len(self._buckets):
            self._finish()

    def _launch(self, b):
        last = b.index == len(self._buckets) - 1
        if self._comm_hook is not None:
            state, hook = self._comm_hook
            b.future = hook(state, dist.GradBucket(b.index, b.buffer, b.params, b.views, last))
        else:
            b.buffer.div_(self.world_size)
            b.future = dist.all_reduce(b.buffer, group=self.process_group, async_op=True).get_future()
        if last and self._used is not None:       # which parameters some rank used
            self._used_flags = ember.tensor([1 if id(p) in self._used else 0 for _, p in self._params],
                                            dtype=ember.int32)
            self._used_work = dist.all_reduce(self._used_flags, op=dist.ReduceOp.MAX, group=self.process_group,
                                              async_op=True)

    def _finish(self):
        """Every bucket is launched: wait for them and put the averages into ``param.grad``."""
        self._active = False
        k = self._iterations        # torch's logger samples iterations 0-10, then every 100th
        self._logged_iteration = k if k <= 10 or k % 100 == 0 else self._logged_iteration
        self._iterations += 1
        used_anywhere = None
        if self._used is not None:
            self._used_work.wait()
            used_anywhere = {id(p) for (_, p), f in zip(self._params, self._used_flags.tolist()) if f}
        with ember.no_grad():
            for b in self._buckets:
                result = b.future.wait()
                result = result[0] if isinstance(result, (list, tuple)) else result
                if result is not b.buffer:
                    b.buffer.copy_(result)
                for p, view in zip(b.params, b.views):
                    if used_anywhere is not None and id(p) not in used_anywhere:
                        continue            # unused on every rank: .grad stays as it was
                    if self.gradient_as_bucket_view:
                        p.grad = view
                    elif p.grad is None:
                        p.grad = view.clone()
                    elif p.grad is not view:
                        p.grad.copy_(view)
                b.future = None
        self._launched, self._ready = 0, set()

    # --- public API -----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward accumulates gradients locally; the first backward after it averages the sums.

        Example::

            with ddp.no_sync():
                ddp(x1).sum().backward()     # local
            ddp(x2).sum().backward()         # averaged: the sum of both passes' gradients
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """Reduce buckets with ``hook(state, bucket) -> Future`` of the reduced flat tensor instead of the
        default average (``ember.distributed.algorithms.ddp_comm_hooks.default_hooks``: ``allreduce_hook``,
        ``fp16_compress_hook``, ``bf16_compress_hook``). Call it once, before the first backward."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._comm_hook = (state, hook)

    def _bucket_layout(self):
        """The buckets as ``[(index, dtype, numel, [parameter names])]``, in reduction order."""
        return [(b.index, b.buffer.dtype, b.buffer.numel(), [self._names[id(p)] for p in b.params])
                for b in self._buckets]

    def _set_static_graph(self):
        """Declare the graph static after construction (torch's private API; ``static_graph=True`` calls it)."""
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.", stacklevel=2)
            return
        if self._iterations or self._active:
            raise RuntimeError("set_static_graph() should be called before training loop starts and after "
                               "DistributedDataParallel is constructed.")
        if self.find_unused_parameters:
            warnings.warn("You passed find_unused_parameters=true to DistributedDataParallel, `_set_static_graph` "
                          "will detect unused parameters automatically, so you do not need to set "
                          "find_unused_parameters=true, just be sure these unused parameters will not change during "
                          "training loop while calling `_set_static_graph`.", stacklevel=2)
        self.static_graph = self.find_unused_parameters = True

    def _get_ddp_logging_data(self):
        """torch's debugging dict of the construction arguments and the reducer's state (what torch's C++ logger
        gives on CPU that ember knows; no timings). Like torch without a debug level, it has no
        ``can_set_static_graph`` key."""
        params = [p for _, p in self._params]
        env = os.environ
        data = {
            'module_name': type(self.module).__name__, 'backend_name': dist.get_backend(self.process_group),
            'world_size': self.world_size, 'rank': dist.get_rank(self.process_group),
            'device_ids': '', 'output_device': -1, 'is_multi_device_module': 0,
            'broadcast_buffers': int(self.broadcast_buffers), 'bucket_cap_bytes': self._bucket_cap,
            'find_unused_parameters': int(self._find_unused_arg),
            'gradient_as_bucket_view': int(self.gradient_as_bucket_view),
            'has_sync_bn': int(any(type(m).__name__ == 'SyncBatchNorm' for m in self.module.modules())),
            'num_parameter_tensors': len(params),
            'total_parameter_size_bytes': sum(p.numel() * p.element_size() for p in params),
            'dtypes': ', '.join(sorted({_CPP_DTYPE.get(str(p.dtype).split('.')[-1], str(p.dtype)) for p in params})),
            'bucket_sizes': ', '.join(str(b.buffer.numel() * b.buffer.element_size()) for b in self._buckets),
            'master_addr': env.get('MASTER_ADDR', 'N/A'), 'master_port': env.get('MASTER_PORT', 'N/A'),
            'cuda_visible_devices': env.get('CUDA_VISIBLE_DEVICES', 'N/A'),
            'torch_distributed_debug': env.get('TORCH_DISTRIBUTED_DEBUG', 'N/A'),
            'iteration': self._logged_iteration,
        }
        if self.static_graph:
            data['static_graph'] = 1
        if self._iterations:
            data['num_buckets_reduced'] = len(self._buckets)
        return data


def _reachable_leaves(out):
    """The ids of the tensors whose AccumulateGrad is reachable from the autograd graph of ``out``."""
    stack, seen, leaves = [], set(), set()

    def add(x):
        if isinstance(x, ember.Tensor):
            if x.grad_fn is not None:
                stack.append(x.grad_fn)
            elif x.requires_grad:
                leaves.add(id(x))
        elif isinstance(x, (list, tuple)):
            for y in x:
                add(y)
        elif isinstance(x, dict):
            for y in x.values():
                add(y)
    add(out)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, 'variable', None)
        if var is not None:
            leaves.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves
