"""The rank side of tests/test_distributed.py: ``python tests/_dist_worker.py SUITE OUTDIR`` under the launcher
(or mpiexec, or mp.spawn), writing ``OUTDIR/SUITE.rank<R>.json``: {check name: 'ok' or the failure}.

Every rank runs the same checks in the same order, so the collectives inside them match up; a check's
assertion failure is recorded, not raised, so the ranks stay in step. Inputs are a function of (rank, dtype,
shape), so each rank computes the NumPy reference of every collective from all ranks' inputs by itself.
"""
import json
import os
import sys
import time
import traceback

import numpy as np

DTYPES = ('float32', 'float64', 'int64')
SHAPES = ((5,), (2, 3, 4))
COLLECTIVES = ('all_reduce_sum', 'all_reduce_product', 'all_reduce_min', 'all_reduce_max', 'all_reduce_avg',
               'all_reduce_async', 'all_reduce_noncontiguous', 'broadcast', 'reduce', 'all_gather',
               'all_gather_into_tensor', 'reduce_scatter', 'reduce_scatter_tensor', 'gather', 'scatter',
               'all_to_all', 'all_to_all_single', 'send_recv', 'isend_irecv')
OTHER = ('all_to_all_single_uneven', 'all_gather_uneven', 'bool_float16_bfloat16_complex', 'objects', 'barriers',
         'new_group', 'dispatch_mode_sees_c10d_ops', 'ranks_and_sizes', 'differentiable_collectives',
         'mismatch_raises_on_every_rank')


def collective_checks():
    return [f'{c}[{d}-{"x".join(map(str, s))}]' for c in COLLECTIVES for d in DTYPES for s in SHAPES] + list(OTHER)


DDP_CHECKS = ('ddp_matches_single_process', 'ddp_gradient_as_bucket_view', 'ddp_fp16_compress_hook',
              'ddp_no_sync_accumulates', 'ddp_find_unused_parameters', 'ddp_unused_without_flag_raises',
              'ddp_buckets_reverse_order_small_first', 'ddp_state_dict_prefix', 'ddp_broadcasts_rank0_state',
              'distributed_sampler_from_the_process_group', 'zero_redundancy_optimizer_matches_single_process')


# --- helpers -----------------------------------------------------------------------------------------------

def value(rank, dtype, shape):
    """Rank ``rank``'s input: small positive numbers so that products stay exact."""
    n = int(np.prod(shape))
    return ((np.arange(n) % 3 + 1) * (rank + 1) + (np.arange(n) % 2)).astype(dtype).reshape(shape)


def tensor(a):
    import ember
    return ember.from_numpy(np.ascontiguousarray(a).copy())


def same(t, ref):
    got = t.numpy()
    assert got.dtype == np.asarray(ref).dtype, (got.dtype, np.asarray(ref).dtype)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=0)


# --- the collective checks --------------------------------------------------------------------------------------

def run_collective(name, dtype, shape, dist, ember):
    r, n = dist.get_rank(), dist.get_world_size()
    xs = [value(k, dtype, shape) for k in range(n)]
    x = tensor(xs[r])
    red = {'sum': np.sum, 'product': np.prod, 'min': np.min, 'max': np.max}
    if name.startswith('all_reduce_') and name[11:] in red:
        dist.all_reduce(x, op=getattr(dist.ReduceOp, name[11:].upper()))
        same(x, red[name[11:]](np.stack(xs), axis=0).astype(dtype))
    elif name == 'all_reduce_avg':
        if dtype == 'int64':
            try:
                dist.all_reduce(x, op=dist.ReduceOp.AVG)
            except ValueError as e:
                assert 'AVG' in str(e)
                return
            raise AssertionError('AVG on int64 did not raise')
        dist.all_reduce(x, op=dist.ReduceOp.AVG)
        same(x, (np.sum(np.stack(xs), axis=0) / n).astype(dtype))
    elif name == 'all_reduce_async':
        w = dist.all_reduce(x, async_op=True)
        assert isinstance(w, dist.Work)
        assert w.wait() is True and w.is_completed()
        same(x, np.sum(np.stack(xs), axis=0).astype(dtype))
        assert w.result()[0] is x and w.get_future().wait()[0] is x
    elif name == 'all_reduce_noncontiguous':
        big = tensor(np.zeros((2,) + shape, dtype))
        big[1].copy_(x)
        view = big.transpose(0, -1)[..., 1] if len(shape) > 1 else big[1, ::2]
        before = big.clone()
        dist.all_reduce(view)
        full = np.sum(np.stack(xs), axis=0).astype(dtype)
        same(view, np.moveaxis(full, -1, 0) if len(shape) > 1 else full[::2])     # view[i, j, k] = x[j, k, i]
        same(big[0], before[0].numpy())      # nothing outside the view was written
    elif name == 'broadcast':
        dist.broadcast(x, src=1)
        same(x, xs[1])
    elif name == 'reduce':
        dist.reduce(x, dst=1)
        same(x, np.sum(np.stack(xs), axis=0).astype(dtype) if r == 1 else xs[r])
    elif name == 'all_gather':
        outs = [tensor(np.zeros(shape, dtype)) for _ in range(n)]
        dist.all_gather(outs, x)
        for k in range(n):
            same(outs[k], xs[k])
    elif name == 'all_gather_into_tensor':
        out = tensor(np.zeros((n * shape[0],) + shape[1:], dtype))
        dist.all_gather_into_tensor(out, x)
        same(out, np.concatenate(xs))
    elif name == 'reduce_scatter':
        ins = [tensor(xs[r] + k) for k in range(n)]
        out = tensor(np.zeros(shape, dtype))
        dist.reduce_scatter(out, ins)
        same(out, np.sum(np.stack([xs[k] + r for k in range(n)]), axis=0).astype(dtype))
    elif name == 'reduce_scatter_tensor':
        full = np.concatenate([xs[r] + k for k in range(n)])
        out = tensor(np.zeros(shape, dtype))
        dist.reduce_scatter_tensor(out, tensor(full))
        same(out, np.sum(np.stack([xs[k] + r for k in range(n)]), axis=0).astype(dtype))
    elif name == 'gather':
        outs = [tensor(np.zeros(shape, dtype)) for _ in range(n)] if r == 0 else None
        dist.gather(x, outs, dst=0)
        if r == 0:
            for k in range(n):
                same(outs[k], xs[k])
    elif name == 'scatter':
        ins = [tensor(value(k + 5, dtype, shape)) for k in range(n)] if r == 1 else None
        dist.scatter(x, ins, src=1)
        same(x, value(r + 5, dtype, shape))
    elif name == 'all_to_all':
        ins = [tensor(xs[r] * 10 + k) for k in range(n)]
        outs = [tensor(np.zeros(shape, dtype)) for _ in range(n)]
        dist.all_to_all(outs, ins)
        for k in range(n):
            same(outs[k], (xs[k] * 10 + r).astype(dtype))
    elif name == 'all_to_all_single':
        full = np.concatenate([xs[r] * 10 + k for k in range(n)])
        out = tensor(np.zeros_like(full))
        dist.all_to_all_single(out, tensor(full))
        same(out, np.concatenate([(xs[k] * 10 + r).astype(dtype) for k in range(n)]))
    elif name == 'send_recv':
        if r == 0:
            dist.send(x, dst=1, tag=3)
        else:
            got = tensor(np.zeros(shape, dtype))
            assert dist.recv(got, src=0, tag=3) == 0
            same(got, xs[0])
            anyone = tensor(np.zeros(shape, dtype))
        if r == 0:
            dist.send(x * 2, dst=1)
        else:
            assert dist.recv(anyone) == 0           # from any source: the sender's rank
            same(anyone, (xs[0] * 2).astype(dtype))
    elif name == 'isend_irecv':
        got = tensor(np.zeros(shape, dtype))
        peer = 1 - r
        ops = [dist.P2POp(dist.isend, x, peer), dist.P2POp(dist.irecv, got, peer)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        same(got, xs[peer])
    else:
        raise AssertionError(f'unknown check {name}')


def run_other(name, dist, ember):
    r, n = dist.get_rank(), dist.get_world_size()
    if name == 'all_to_all_single_uneven':
        # rank 0 sends 1 row to rank 0 and 2 to rank 1; rank 1 sends 3 to rank 0 and 1 to rank 1
        send = [[1, 2], [3, 1]]
        rows = sum(send[r])
        x = tensor(np.arange(rows * 2, dtype=np.float32).reshape(rows, 2) + 100 * r)
        recv_sizes = [send[k][r] for k in range(n)]
        out = tensor(np.zeros((sum(recv_sizes), 2), np.float32))
        dist.all_to_all_single(out, x, recv_sizes, send[r])
        pieces = []
        for k in range(n):
            start = sum(send[k][:r])
            full = np.arange(sum(send[k]) * 2, dtype=np.float32).reshape(-1, 2) + 100 * k
            pieces.append(full[start:start + send[k][r]])
        same(out, np.concatenate(pieces))
    elif name == 'all_gather_uneven':
        x = tensor(np.full(r + 1, r, np.int64))
        outs = [tensor(np.zeros(k + 1, np.int64)) for k in range(n)]
        dist.all_gather(outs, x)
        for k in range(n):
            same(outs[k], np.full(k + 1, k, np.int64))
    elif name == 'bool_float16_bfloat16_complex':
        b = ember.tensor([True, r == 0, False])
        dist.all_reduce(b)                                  # SUM on bool is OR (torch's)
        assert b.tolist() == [True, True, False]
        b = ember.tensor([True, r == 0, False])
        dist.all_reduce(b, op=dist.ReduceOp.MIN)           # MIN is AND
        assert b.tolist() == [True, False, False]
        h = ember.tensor([0.5, 1.5], dtype=ember.float16) * (r + 1)
        dist.all_reduce(h, op=dist.ReduceOp.MAX)
        assert h.dtype == ember.float16 and h.tolist() == [1.0, 3.0]
        bf = ember.tensor([1.0, 2.0], dtype=ember.bfloat16) * (r + 1)
        dist.all_reduce(bf)
        assert bf.dtype == ember.bfloat16 and bf.float().tolist() == [3.0, 6.0]
        c = ember.tensor([1 + 2j, 3 - 1j], dtype=ember.complex64) * (r + 1)
        dist.all_reduce(c)
        assert c.tolist() == [3 + 6j, 9 - 3j]
        try:
            dist.all_reduce(c, op=dist.ReduceOp.MAX)
        except ValueError as e:
            assert 'complex' in str(e)
        else:
            raise AssertionError('MAX on complex did not raise')
        u = ember.tensor([1, 2, 3], dtype=ember.uint8) + r
        dist.broadcast(u, src=1)
        assert u.tolist() == [2, 3, 4]
    elif name == 'objects':
        got = [None] * n
        dist.all_gather_object(got, {'rank': r, 'pad': 'x' * (r * 50)})
        assert got == [{'rank': k, 'pad': 'x' * (k * 50)} for k in range(n)]
        objs = [1, 'two', {3: [4]}] if r == 1 else [None, None, None]
        dist.broadcast_object_list(objs, src=1)
        assert objs == [1, 'two', {3: [4]}]
        gathered = [None] * n if r == 0 else None
        dist.gather_object(('g', r), gathered, dst=0)
        if r == 0:
            assert gathered == [('g', k) for k in range(n)]
        out = [None]
        dist.scatter_object_list(out, [f'for {k}' for k in range(n)] if r == 0 else None, src=0)
        assert out == [f'for {r}']
        if r == 0:
            dist.send_object_list(['hello', 42], dst=1)
        else:
            box = [None, None]
            dist.recv_object_list(box, src=0)
            assert box == ['hello', 42]
    elif name == 'barriers':
        dist.barrier()
        w = dist.barrier(async_op=True)
        w.wait()
        dist.monitored_barrier(timeout=__import__('datetime').timedelta(seconds=30))
    elif name == 'new_group':
        g = dist.new_group([1])
        if r == 1:
            assert dist.get_rank(g) == 0 and dist.get_world_size(g) == 1
            t = ember.ones(2)
            dist.all_reduce(t, group=g)
            assert t.tolist() == [1.0, 1.0]
        else:
            assert g == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
        both = dist.new_group([1, 0])
        t = ember.tensor([float(r)])
        dist.broadcast(t, src=1, group=both)
        assert t.tolist() == [1.0] and dist.get_process_group_ranks(both) == [0, 1]
        cur, groups = dist.new_subgroups(group_size=1)
        assert len(groups) == 2 and dist.get_world_size(cur) == 1
        assert dist.get_process_group_ranks(cur) == [r]
    elif name == 'dispatch_mode_sees_c10d_ops':
        from ember.utils._python_dispatch import TorchDispatchMode

        class Log(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.seen = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.seen.append(str(func))
                return func(*args, **(kwargs or {}))
        t = ember.ones(3)
        with Log() as log:
            dist.all_reduce(t)
            dist.broadcast(t, src=0)
        assert 'c10d.allreduce_.default' in log.seen and 'c10d.broadcast_.default' in log.seen, log.seen
        assert t.tolist() == [float(n)] * 3
    elif name == 'ranks_and_sizes':
        assert dist.is_initialized() and dist.get_backend() == 'gloo'     # the name asked for (it runs on MPI)
        assert dist.get_world_size() == n == int(os.environ.get('WORLD_SIZE', n))
        if 'RANK' in os.environ:
            assert r == int(os.environ['RANK'])
    elif name == 'differentiable_collectives':       # NOTE [differentiable collectives]: values and gradients
        import ember.distributed.nn.functional as dnn
        x = ember.tensor([1.0, 2.0, 3.0]) * (r + 1)
        x.requires_grad_()
        ys = dnn.all_gather(x)                            # every rank weighs slice k by k + 1
        sum((k + 1) * y.sum() for k, y in enumerate(ys)).backward()
        assert [y.tolist() for y in ys] == [[1.0 * (k + 1), 2.0 * (k + 1), 3.0 * (k + 1)] for k in range(n)]
        assert x.grad.tolist() == [float(n * (r + 1))] * 3, x.grad.tolist()      # summed over the n ranks' losses
        x.grad = None
        y = dnn.all_reduce(x * 1)
        (y * y).sum().backward()                          # d/dx_r of sum_ranks sum(y^2) = n * 2y
        total = sum(k + 1 for k in range(n))
        assert x.grad.tolist() == [2.0 * n * total * v for v in (1.0, 2.0, 3.0)], x.grad.tolist()
        x.grad = None
        b = dnn.broadcast(x, src=0)                       # rank 0's values everywhere; rank 0 gets every gradient
        b.sum().backward()
        assert b.tolist() == [1.0, 2.0, 3.0] and x.grad.tolist() == ([float(n)] * 3 if r == 0 else [0.0] * 3)
        x.grad = None
        outs = dnn.all_to_all([ember.zeros(3) for _ in range(n)], [x * (j + 1) for j in range(n)])
        assert outs[0].tolist() == [float(r + 1), 2.0 * (r + 1), 3.0 * (r + 1)] or n == 1 or r != 0
        sum(o.sum() for o in outs).backward()             # x*(j+1) went to rank j, which sums it once
        assert x.grad.tolist() == [float(sum(j + 1 for j in range(n)))] * 3, x.grad.tolist()
    elif name == 'mismatch_raises_on_every_rank':      # last: it leaves the process group unusable
        try:
            dist.all_reduce(ember.ones(3 + r))
        except dist.DistBackendError as e:
            assert 'Detected mismatch between collectives' in str(e) and 'TensorShape=[3]' in str(e), str(e)
        else:
            raise AssertionError('no error')
        try:
            dist.all_reduce(ember.ones(3))
        except dist.DistBackendError as e:
            assert 'no longer usable' in str(e)
        else:
            raise AssertionError('a broken group accepted another collective')
    else:
        raise AssertionError(f'unknown check {name}')


def suite_collectives(dist, ember, names=None):
    results = {}
    for name in names or collective_checks():
        try:
            if '[' in name:
                c, rest = name.split('[')
                d, s = rest.rstrip(']').split('-')
                run_collective(c, d, tuple(int(x) for x in s.split('x')), dist, ember)
            else:
                run_other(name, dist, ember)
            results[name] = 'ok'
        except Exception:        # noqa: BLE001  recorded: the test that owns this check reports it
            results[name] = traceback.format_exc()
    return results


# --- DDP --------------------------------------------------------------------------------------------------------

def _mlp(ember, seed):
    ember.manual_seed(seed)
    return ember.nn.Sequential(ember.nn.Linear(6, 16), ember.nn.Tanh(), ember.nn.Linear(16, 16), ember.nn.Tanh(),
                               ember.nn.Linear(16, 3))


def _train_pair(dist, ember, steps=4, hook=None, as_view=False, zero=False):
    """DDP on each rank's slice vs one model on the whole batch: the largest parameter difference. ``zero``: Adam
    sharded by ZeroRedundancyOptimizer against Adam on the whole model."""
    from ember.nn.parallel import DistributedDataParallel as DDP
    r, n = dist.get_rank(), dist.get_world_size()
    model = _mlp(ember, seed=100 + r)            # replicas start different: DDP broadcasts rank 0's
    ddp = DDP(model, bucket_cap_mb=0.001, gradient_as_bucket_view=as_view)
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    ref = _mlp(ember, seed=100)
    if zero:
        from ember.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=ember.optim.Adam, lr=0.05)
        ropt = ember.optim.Adam(ref.parameters(), lr=0.05)
    else:
        opt = ember.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
        ropt = ember.optim.SGD(ref.parameters(), lr=0.2, momentum=0.9)
    g = ember.Generator().manual_seed(7)
    b = 4
    for _ in range(steps):
        X, Y = ember.randn(b * n, 6, generator=g), ember.randn(b * n, 3, generator=g)
        opt.zero_grad()
        ember.nn.functional.mse_loss(ddp(X[r * b:(r + 1) * b]), Y[r * b:(r + 1) * b]).backward()
        opt.step()
        ropt.zero_grad()
        ember.nn.functional.mse_loss(ref(X), Y).backward()
        ropt.step()
    if zero:
        return max(float((p - q).abs().max()) for p, q in zip(model.parameters(), ref.parameters())), (opt, ropt)
    return max(float((p - q).abs().max()) for p, q in zip(model.parameters(), ref.parameters())), ddp


def run_ddp(name, dist, ember):
    from ember.nn.parallel import DistributedDataParallel as DDP
    from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
    r, n = dist.get_rank(), dist.get_world_size()
    if name == 'ddp_matches_single_process':
        diff, _ = _train_pair(dist, ember)
        assert diff < 1e-5, diff
    elif name == 'zero_redundancy_optimizer_matches_single_process':
        diff, (opt, ropt) = _train_pair(dist, ember, zero=True)
        assert diff < 1e-5, diff
        mine = sum(len(g['params']) for g in opt.optim.param_groups)
        assert 0 < mine < 6 and len(opt.optim.state) == mine        # each rank keeps the state of its shard only
        opt.consolidate_state_dict(to=0)
        if r == 0:
            full, ref = opt.state_dict(), ropt.state_dict()
            assert sorted(full['state']) == sorted(ref['state']) == list(range(6))
            for i in range(6):
                d = float((full['state'][i]['exp_avg'] - ref['state'][i]['exp_avg']).abs().max())
                assert d < 1e-6, (i, d)
        sent = [opt.state_dict() if r == 0 else None]     # rank 0's whole state, loaded by every rank's new ZeRO
        dist.broadcast_object_list(sent, src=0)
        from ember.distributed.optim import ZeroRedundancyOptimizer
        again = ZeroRedundancyOptimizer([p for g in opt.param_groups for p in g['params']],
                                        optimizer_class=ember.optim.Adam, lr=0.5)
        again.load_state_dict(sent[0])
        assert len(again.optim.state) == mine and again.param_groups[0]['lr'] == 0.05
        for p, st in again.optim.state.items():
            assert float((st['exp_avg'] - opt.optim.state[p]['exp_avg']).abs().max()) == 0.0
    elif name == 'ddp_gradient_as_bucket_view':
        diff, ddp = _train_pair(dist, ember, as_view=True)
        assert diff < 1e-5, diff
        views = {id(v) for b in ddp._buckets for v in b.views}
        assert all(id(p.grad) in views for p in ddp.parameters())
    elif name == 'ddp_fp16_compress_hook':
        diff, _ = _train_pair(dist, ember, hook=default_hooks.fp16_compress_hook)
        assert 1e-7 < diff < 5e-3, diff          # float16's rounding, not more
        diff, _ = _train_pair(dist, ember, hook=default_hooks.allreduce_hook)
        assert diff < 1e-5, diff
    elif name == 'ddp_no_sync_accumulates':
        model = _mlp(ember, seed=3)
        ddp = DDP(model)
        xs = [ember.full((2, 6), float(r + k)) for k in range(2)]
        with ddp.no_sync():
            ddp(xs[0]).sum().backward()
        local = [p.grad.clone() for p in model.parameters()]
        # before the synced pass, the gradients are this rank's own: they differ between ranks
        everyone = [None] * n
        dist.all_gather_object(everyone, [g.tolist() for g in local])
        assert everyone[0] != everyone[1]
        ddp(xs[1]).sum().backward()
        ref = _mlp(ember, seed=3)
        for k in range(2):
            for rank in range(n):
                ref(ember.full((2, 6), float(rank + k))).sum().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy() / n, rtol=1e-5, atol=1e-6)
    elif name == 'ddp_find_unused_parameters':
        class Two(ember.nn.Module):
            def __init__(self):
                super().__init__()
                ember.manual_seed(5)
                self.a, self.b, self.never = ember.nn.Linear(4, 2), ember.nn.Linear(4, 2), ember.nn.Linear(4, 2)

            def forward(self, x, use_b):
                return self.a(x) + (self.b(x) if use_b else 0)
        model = Two()
        ddp = DDP(model, find_unused_parameters=True)
        x = ember.ones(3, 4)
        ddp(x, use_b=(r == 1)).sum().backward()       # b is used on rank 1 only; never on no rank
        assert model.never.weight.grad is None and model.never.bias.grad is None
        ref = Two()
        ref(x, use_b=False).sum().backward()
        ref(x, use_b=True).sum().backward()
        np.testing.assert_allclose(model.a.weight.grad.numpy(), ref.a.weight.grad.numpy() / n, rtol=1e-6)
        ref_b = Two()
        ref_b(x, use_b=True).sum().backward()
        np.testing.assert_allclose(model.b.weight.grad.numpy(), ref_b.b.weight.grad.numpy() / n, rtol=1e-6)
        ddp(x, use_b=True).sum().backward()           # and the next iteration works
    elif name == 'ddp_unused_without_flag_raises':
        class OnlyA(ember.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = ember.nn.Linear(3, 1), ember.nn.Linear(3, 1)

            def forward(self, x):
                return self.a(x)
        m = DDP(OnlyA())
        m(ember.ones(2, 3)).sum().backward()
        try:
            m(ember.ones(2, 3))
        except RuntimeError as e:
            assert 'find_unused_parameters=True' in str(e) and 'b.weight' in str(e), str(e)
        else:
            raise AssertionError('no error for a parameter without a gradient')
    elif name == 'ddp_buckets_reverse_order_small_first':
        model = ember.nn.Sequential(ember.nn.Linear(784, 512), ember.nn.ReLU(), ember.nn.Linear(512, 512),
                                    ember.nn.ReLU(), ember.nn.Linear(512, 10))
        layout = DDP(model)._bucket_layout()
        names = [ns for _, _, _, ns in layout]
        assert names == [['4.bias', '4.weight', '2.bias', '2.weight'], ['0.bias', '0.weight']], names
        assert layout[0][2] * 4 >= 1024 * 1024 and layout[0][2] < layout[1][2] + 1
    elif name == 'ddp_state_dict_prefix':
        ddp = DDP(ember.nn.Linear(2, 2))
        assert list(ddp.state_dict()) == ['module.weight', 'module.bias']
    elif name == 'ddp_broadcasts_rank0_state':
        bn = ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.BatchNorm1d(3))
        with ember.no_grad():
            for t in list(bn.parameters()) + [bn[1].running_mean]:
                t.fill_(float(r + 1))
        DDP(bn)
        assert all(float(t.min()) == float(t.max()) == 1.0 for t in list(bn.parameters()) + [bn[1].running_mean])
    elif name == 'distributed_sampler_from_the_process_group':
        from ember.utils.data import DataLoader, DistributedSampler
        sampler = DistributedSampler(list(range(10)), shuffle=False)     # rank and world size from dist
        assert (sampler.rank, sampler.num_replicas) == (r, n) and list(sampler) == list(range(r, 10, n))
        seen = [None] * n
        loader = DataLoader(list(range(10)), batch_size=2, sampler=DistributedSampler(list(range(10)), seed=3))
        dist.all_gather_object(seen, [int(i) for b in loader for i in b])
        assert sorted(i for s in seen for i in s) == list(range(10))
    else:
        raise AssertionError(f'unknown check {name}')


def suite_ddp(dist, ember):
    results = {}
    for name in DDP_CHECKS:
        try:
            run_ddp(name, dist, ember)
            results[name] = 'ok'
        except Exception:        # noqa: BLE001
            results[name] = traceback.format_exc()
    return results


# --- entry points ----------------------------------------------------------------------------------------------

def _write(outdir, suite, rank, results):
    path = os.path.join(outdir, f'{suite}.rank{rank}.json')
    with open(path + '.tmp', 'w') as f:
        json.dump(results, f)
    os.replace(path + '.tmp', path)


def main(suite, outdir, rank=None, world_size=None, init_method=None):
    import ember
    import ember.distributed as dist
    if suite == 'fail':                    # rank 1 raises in the middle of training; rank 0 keeps reducing
        dist.init_process_group('gloo')
        with open(os.path.join(outdir, f'pid{dist.get_rank()}'), 'w') as f:
            f.write(str(os.getpid()))
        t = ember.ones(4)
        for step in range(200):
            if dist.get_rank() == 1 and step == 3:
                raise ValueError('rank 1 fails on purpose at step 3')
            dist.all_reduce(t)
            time.sleep(0.01)
        return
    if suite == 'killed':                  # rank 1 dies of SIGKILL; rank 0 must get an error, not hang
        import datetime
        import signal
        dist.init_process_group('gloo', timeout=datetime.timedelta(seconds=60))
        r = dist.get_rank()
        t = ember.ones(4)
        dist.all_reduce(t)
        if r == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        start = time.monotonic()
        try:
            dist.all_reduce(t)
            _write(outdir, suite, r, {'error': None})
        except dist.DistBackendError as e:
            _write(outdir, suite, r, {'error': str(e), 'seconds': time.monotonic() - start})
        raise SystemExit(5)
    if suite == 'timeout':                 # rank 1 never joins the collective: rank 0 times out
        import datetime
        dist.init_process_group('gloo', timeout=datetime.timedelta(seconds=2))
        r = dist.get_rank()
        if r == 1:
            time.sleep(6)
            return
        start = time.monotonic()
        try:
            dist.all_reduce(ember.ones(2))
            _write(outdir, suite, r, {'error': None})
        except dist.DistBackendError as e:
            _write(outdir, suite, r, {'error': str(e), 'seconds': time.monotonic() - start})
        raise SystemExit(6)
    if suite in ('store_tcp', 'store_file'):     # init_process_group(store=...): ranks started by hand
        import datetime
        rank, where = int(sys.argv[3]), sys.argv[4]
        if suite == 'store_tcp':
            store = dist.TCPStore('127.0.0.1', int(where), 2, rank == 0, timeout=datetime.timedelta(seconds=60))
        else:
            store = dist.FileStore(where, 2)
        dist.init_process_group('gloo', store=store, rank=rank, world_size=2)
        results = suite_collectives(dist, ember, ['all_reduce_sum[float32-2x3x4]', 'broadcast[int64-5]',
                                                  'ranks_and_sizes'])
        store.set(f'done{rank}', str(dist.get_rank()))       # the store still works after init
        results['store_after_init'] = 'ok' if store.get(f'done{1 - rank}') == str(1 - rank).encode() else 'bad'
        results['published'] = store.get('ember/mpi_rendezvous').decode()
        _write(outdir, suite, rank, results)
        dist.barrier()
        dist.destroy_process_group()
        return
    dist.init_process_group('gloo', init_method=init_method, rank=-1 if rank is None else rank,
                            world_size=-1 if world_size is None else world_size)
    r = dist.get_rank()
    if suite == 'collectives':
        results = suite_collectives(dist, ember)
    elif suite == 'ddp':
        results = suite_ddp(dist, ember)
    elif suite in ('mpiexec', 'spawn', 'multinode'):       # another way to start: a few checks and DDP
        results = suite_collectives(dist, ember, ['all_reduce_sum[float32-2x3x4]', 'broadcast[int64-5]',
                                                  'all_gather[float64-5]', 'objects', 'ranks_and_sizes'])
        results['ddp_matches_single_process'] = suite_ddp_one(dist, ember)
        results['threads'] = ember.get_num_threads()
    else:
        raise SystemExit(f'unknown suite {suite}')
    _write(outdir, suite, r, results)
    dist.destroy_process_group()


def suite_ddp_one(dist, ember):
    try:
        run_ddp('ddp_matches_single_process', dist, ember)
        return 'ok'
    except Exception:            # noqa: BLE001
        return traceback.format_exc()


def spawned(i, outdir, port):
    """``mp.spawn``'s target: rank ``i`` joins through a tcp:// rendezvous."""
    main('spawn', outdir, rank=i, world_size=2, init_method=f'tcp://127.0.0.1:{port}')


if __name__ == '__main__':
    if sys.argv[1] == 'spawn':
        import ember.multiprocessing as mp
        mp.spawn(spawned, args=(sys.argv[2], int(sys.argv[3])), nprocs=2)
    else:
        main(sys.argv[1], sys.argv[2])
