"""Two ranks run this file under torch (``torch.distributed.run``, gloo) and under ember (``ember.distributed.run``):
``python _light_dist_worker.py torch|ember OUTDIR``. Each rank writes what it saw (values as lists, error texts)
to OUTDIR/<lib>.rank<r>.json; tests/test_light_dist.py compares the two libraries' files. The checks: torch's
distributed.utils (_sync_module_states, _verify_param_shape_across_processes), the post-local SGD and PowerSGD
communication hooks, the model averagers, DDP's logging data."""
import json
import os
import sys
import traceback
import warnings
from importlib import import_module

LIB = sys.argv[1]
if LIB == 'torch':
    import torch
    import torch.distributed as dist
else:
    import ember as torch
    import ember.distributed as dist


def _mod(name):
    return import_module(f'{LIB}.distributed.{name}')


def _mlp(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def _round(t):
    return [round(float(v), 5) for v in t.detach().reshape(-1).tolist()]


def sync_module_states(r):
    utils, c10d = _mod('utils'), _mod('distributed_c10d')
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    with torch.no_grad():
        for i, t in enumerate(list(m.parameters()) + [m[1].running_mean]):
            t.fill_(float(10 * r + i))
    # 40 bytes: several broadcast buckets; '0.bias' is kept as each rank has it
    utils._sync_module_states(m, c10d._get_default_group(), 40, src=0, params_and_buffers_to_ignore={'0.bias'})
    return {n: _round(t) for n, t in list(m.named_parameters()) + list(m.named_buffers())}


def verify_shapes(r):
    utils, c10d = _mod('utils'), _mod('distributed_c10d')
    out = {}
    utils._verify_param_shape_across_processes(c10d._get_default_group(), [torch.zeros(2, 3), torch.zeros(4)])
    for name, ts in [('count', [torch.zeros(2)] * (1 + r)), ('shape', [torch.zeros(2, 3 + r)])]:
        try:
            utils._verify_param_shape_across_processes(c10d._get_default_group(), ts)
            out[name] = 'no error'
        except RuntimeError as e:
            out[name] = str(e).split('\n')[0]
    return out


def _train(r, hook, state, steps=4, seed=1, post=None):
    """DDP (rank-dependent data, replicas made equal by DDP) with ``hook``: each step's gradients."""
    model = _mlp(seed)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(3 + r)
    grads = []
    for _ in range(steps):
        x, y = torch.randn(4, 6, generator=gen), torch.randn(4, 3, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        grads.append([_round(p.grad) for p in model.parameters()])
        opt.step()
        if post is not None:
            post(model, opt)
    return grads, model


def post_local_sgd(r):
    hooks = _mod('algorithms.ddp_comm_hooks.post_localSGD_hook')
    out = {}
    try:
        dist.new_subgroups()        # the hook's default subgroup: torch needs CUDA for it
    except ValueError as e:
        out['default_subgroup'] = str(e)
    for allreduce, size in ((True, 1), (True, 2), (False, 2)):
        sub, _ = dist.new_subgroups(group_size=size)
        state = hooks.PostLocalSGDState(None, sub, start_localSGD_iter=2, post_local_gradient_allreduce=allreduce)
        out[f'{allreduce}{size}'], _ = _train(r, hooks.post_localSGD_hook, state)
        out[f'{allreduce}{size}.iter'] = state.iter
    return out


def power_sgd(r):
    hooks = _mod('algorithms.ddp_comm_hooks.powerSGD_hook')
    out = {}
    for rank, ef, warm, batch in [(1, True, True, False), (2, True, False, False), (3, False, True, False),
                                  (1, True, True, True)]:
        state = hooks.PowerSGDState(None, matrix_approximation_rank=rank, start_powerSGD_iter=2, min_compression_rate=1,
                                    use_error_feedback=ef, warm_start=warm, batch_tensors_with_same_shape=batch)
        key = f'rank{rank}-ef{int(ef)}-warm{int(warm)}-batch{int(batch)}'
        out[key], _ = _train(r, hooks.powerSGD_hook, state)
        out[key + '.stats'] = [round(v, 5) for v in state.compression_stats()]
    return out


def batched_power_sgd(r):
    """torch 2.13's batched_powerSGD_hook raises AssertionError (it orthogonalizes a 2-D Q that _orthogonalize
    asserts is 3-D); ember runs the algorithm. At full rank (10 = ceil(sqrt(83)): the bucket as a square) it is
    the exact average."""
    hooks = _mod('algorithms.ddp_comm_hooks.powerSGD_hook')
    default = _mod('algorithms.ddp_comm_hooks.default_hooks')
    out = {}
    for rank in (10, 1):
        state = hooks.PowerSGDState(None, matrix_approximation_rank=rank, start_powerSGD_iter=2)
        got, _ = _train(r, hooks.batched_powerSGD_hook, state)
        want, _ = _train(r, default.allreduce_hook, None)
        out[f'rank{rank}'] = max(abs(a - b) for g, w in zip(got[2:], want[2:]) for gp, wp in zip(g, w)
                                 for a, b in zip(gp, wp))
        out[f'rank{rank}.stats'] = [round(v, 5) for v in state.compression_stats()]
    return out


def model_averaging(r):
    averagers = _mod('algorithms.model_averaging.averagers')
    mutils = _mod('algorithms.model_averaging.utils')
    hooks = _mod('algorithms.ddp_comm_hooks.post_localSGD_hook')
    out = {}
    avg = averagers.PeriodicModelAverager(period=2, warmup_steps=2)
    state = hooks.PostLocalSGDState(None, dist.new_subgroups(group_size=1)[0], start_localSGD_iter=2)
    seen = []
    grads, model = _train(r, hooks.post_localSGD_hook, state, steps=6,
                          post=lambda m, o: (avg.average_parameters(m.parameters()),
                                             seen.append(_round(m[0].weight)[:4])))
    out['post_local_sgd_with_averager'] = seen
    out['averager_step'] = avg.step
    p = torch.nn.Parameter(torch.full((3,), float(r + 1)))
    q = torch.nn.Parameter(torch.full((2,), float(3 * r)))
    q.grad = torch.zeros(2)          # p has no grad: get_params_to_average leaves it out
    opt = torch.optim.SGD([p, q], lr=0.1)
    mutils.average_parameters_or_parameter_groups(opt.param_groups, None)
    out['groups'] = [_round(p), _round(q)]
    mutils.average_parameters(iter([p]), None)
    out['plain'] = _round(p)
    try:
        averagers.PeriodicModelAverager(period=0)
    except ValueError as e:
        out['period0'] = str(e)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        averagers.PeriodicModelAverager(period=1)
    out['period1'] = [str(x.message)[:40] for x in w]
    return out


def logging_data(r):
    ddp = torch.nn.parallel.DistributedDataParallel(_mlp(0), find_unused_parameters=False)
    for _ in range(3):
        ddp(torch.ones(2, 6)).sum().backward()
    d = ddp._get_ddp_logging_data()
    keys = ['module_name', 'backend_name', 'world_size', 'rank', 'broadcast_buffers', 'bucket_cap_bytes',
            'find_unused_parameters', 'gradient_as_bucket_view', 'num_parameter_tensors',
            'total_parameter_size_bytes', 'dtypes', 'bucket_sizes', 'iteration', 'output_device', 'device_ids',
            'has_sync_bn', 'is_multi_device_module', 'static_graph', 'can_set_static_graph', 'master_addr']
    out = {k: d.get(k) for k in keys}
    try:
        ddp._set_static_graph()
    except RuntimeError as e:
        out['static_after_training'] = str(e)
    fresh = torch.nn.parallel.DistributedDataParallel(_mlp(0), find_unused_parameters=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        fresh._set_static_graph()
        fresh._set_static_graph()
    fresh(torch.ones(2, 6)).sum().backward()
    d = fresh._get_ddp_logging_data()
    out['static'] = [fresh.static_graph, d.get('static_graph'), d.get('find_unused_parameters')]
    out['static_warnings'] = [str(x.message)[:40] for x in w]
    return out


CHECKS = [sync_module_states, verify_shapes, post_local_sgd, power_sgd, batched_power_sgd, model_averaging,
          logging_data]


def main(outdir):
    dist.init_process_group('gloo')
    r = dist.get_rank()
    results = {}
    for check in CHECKS:
        try:
            results[check.__name__] = check(r)
        except Exception:        # noqa: BLE001  recorded: the test that owns this check reports it
            results[check.__name__] = 'ERROR ' + traceback.format_exc()
    path = os.path.join(outdir, f'{LIB}.rank{r}.json')
    with open(path + '.tmp', 'w') as f:
        json.dump(results, f)
    os.replace(path + '.tmp', path)
    dist.destroy_process_group()


if __name__ == '__main__':
    main(sys.argv[2])
