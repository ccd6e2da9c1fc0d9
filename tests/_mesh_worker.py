"""The rank side of tests/test_device_mesh.py: ``python tests/_mesh_worker.py OUTDIR`` under the launcher, writing
``OUTDIR/mesh.rank<R>.json``: {check name: 'ok' or the failure}.

As in _dist_worker.py, every rank runs every check in the same order (a DeviceMesh and a list-of-ranks group
are collective to make) and records failures instead of raising. Inputs are ``_dist_worker.value(rank, ...)``,
so each rank computes the NumPy reference from all ranks' inputs.
"""
import os
import sys
import traceback
import warnings

import numpy as np

from _dist_worker import value, tensor, same, _write

OPS = {'sum': np.sum, 'avg': np.mean, 'product': np.prod, 'min': np.min, 'max': np.max}
FUNCOL = ([f'all_reduce[{op}-{d}]' for op in OPS for d in ('float32', 'int64') if not (op == 'avg' and d == 'int64')]
          + [f'all_gather[{d}]' for d in (0, 1, 2)] + [f'reduce_scatter[{d}]' for d in (0, 1, 2)]
          + ['all_to_all_single_even', 'all_to_all_single_uneven', 'broadcast', 'permute_tensor', 'coalesced',
             'autograd', 'async_collective_tensor', 'group_forms', 'meta_shapes', 'funcol_errors'])
MESH = ('mesh_1d', 'mesh_2x1', 'mesh_1x2', 'mesh_from_a_tensor_in_another_order', 'mesh_equality', 'mesh_errors',
        'collectives_still_agree')


def checks():
    return FUNCOL + list(MESH)


def _ranks(pg, dist):
    return dist.get_process_group_ranks(pg)


def raises(exc, match, f):
    try:
        f()
    except exc as e:
        assert match in str(e), str(e)
    else:
        raise AssertionError(f'no {exc.__name__}')


def run_funcol(name, dist, ember, fc):
    r, n = dist.get_rank(), dist.get_world_size()
    shape = (2, 4, 6)
    if name.startswith('all_reduce['):
        op, dtype = name[11:-1].split('-')
        xs = [value(k, dtype, shape) for k in range(n)]
        x = tensor(xs[r])
        y = fc.all_reduce(x, op.upper() if op == 'max' else op, [0, 1])     # the name is not case sensitive
        same(y, OPS[op](np.stack(xs), axis=0).astype(dtype))
        same(x, xs[r])                                                      # the input is left as it was
    elif name.startswith('all_gather['):
        d = int(name[11:-1])
        xs = [value(k, 'float32', shape) for k in range(n)]
        x = tensor(xs[r])
        same(fc.all_gather_tensor(x, d, dist.group.WORLD), np.concatenate(xs, axis=d))
        same(fc.all_gather_single(x.transpose(0, 2), d, [0, 1]),            # a non-contiguous input
             np.concatenate([a.transpose(2, 1, 0) for a in xs], axis=d))
    elif name.startswith('reduce_scatter['):
        d = int(name[15:-1])
        xs = [value(k, 'int64', shape) for k in range(n)]
        total = np.sum(np.stack(xs), axis=0)
        same(fc.reduce_scatter_tensor(tensor(xs[r]), 'sum', d, [0, 1]), np.split(total, n, axis=d)[r])
        same(fc.reduce_scatter_single(tensor(xs[r]), 'max', d, [0, 1]),
             np.split(np.max(np.stack(xs), axis=0), n, axis=d)[r])
    elif name == 'all_to_all_single_even':
        xs = [value(k, 'float64', (4, 3)) for k in range(n)]
        y = fc.all_to_all_single(tensor(xs[r]), None, None, [0, 1])
        same(y, np.concatenate([np.split(xs[k], n)[r] for k in range(n)]))
    elif name == 'all_to_all_single_uneven':
        send = [[1, 2], [3, 1]]                    # send[k][j]: rows rank k sends to rank j
        xs = [value(k, 'float32', (sum(send[k]), 2)) for k in range(n)]
        y = fc.all_to_all_single(tensor(xs[r]), [send[k][r] for k in range(n)], send[r], [0, 1])
        pieces = [xs[k][sum(send[k][:r]):sum(send[k][:r + 1])] for k in range(n)]
        same(y, np.concatenate(pieces))
    elif name == 'broadcast':
        xs = [value(k, 'int64', (3,)) for k in range(n)]
        for src in range(n):
            same(fc.broadcast(tensor(xs[r]), src, [0, 1]), xs[src])
    elif name == 'permute_tensor':
        xs = [value(k, 'float32', (2, 3)) for k in range(n)]
        same(fc.permute_tensor(tensor(xs[r]), [1, 0], [0, 1]), xs[1 - r])          # 0 sends to 1, 1 to 0
        same(fc.permute_tensor(tensor(xs[r]), [0, 1], [0, 1]), xs[r])              # everyone keeps its own
    elif name == 'coalesced':
        xs = [value(k, 'float32', (4,)) for k in range(n)]
        ys = [value(k, 'int64', (2, 2)) for k in range(n)]
        a, b = fc.all_reduce_coalesced([tensor(xs[r]), tensor(ys[r])], 'sum', [0, 1])
        same(a, np.sum(xs, axis=0).astype(np.float32))
        same(b, np.sum(ys, axis=0))
        a, b = fc.all_gather_into_tensor_coalesced([tensor(xs[r]), tensor(ys[r])], [0, 1])
        same(a, np.concatenate(xs))
        same(b, np.concatenate(ys))
        a, b = fc.reduce_scatter_tensor_coalesced([tensor(xs[r]), tensor(ys[r])], 'sum', [0, 1], [0, 1])
        same(a, np.split(np.sum(xs, axis=0), n)[r].astype(np.float32))
        same(b, np.split(np.sum(ys, axis=0), n, axis=1)[r])
    elif name == 'autograd':
        w = np.arange(1, 5, dtype=np.float32)
        a = ember.ones(2, requires_grad=True)              # d/da of sum over ranks of (gather(a) * w)
        (fc.all_gather_tensor_autograd(a, 0, [0, 1]) * tensor(w)).sum().backward()
        same(a.grad, n * w[2 * r:2 * r + 2])
        a = ember.ones(4, requires_grad=True)
        (fc.reduce_scatter_tensor_autograd(a, 'sum', 0, [0, 1]) * (r + 1)).sum().backward()
        same(a.grad, np.repeat(np.arange(1, n + 1, dtype=np.float32), 2))
        a = ember.ones(4, requires_grad=True)
        (fc.all_to_all_single_autograd(a, None, None, [0, 1]) * tensor(w + 10 * r)).sum().backward()
        same(a.grad, np.concatenate([w[2 * r:2 * r + 2], w[2 * r:2 * r + 2] + 10]))
        assert not fc.all_reduce(ember.ones(2, requires_grad=True), 'sum', [0, 1]).requires_grad
    elif name == 'async_collective_tensor':
        y = fc.all_reduce(ember.ones(3), 'sum', [0, 1])
        assert isinstance(y, fc.AsyncCollectiveTensor) and isinstance(y, ember.Tensor)
        plain = fc.wait_tensor(y)
        assert type(plain) is ember.Tensor and y.wait() is plain and y.trigger_wait() is plain
        assert type(y + 1) is ember.Tensor and (y + 1).tolist() == [n + 1.0] * 3
        assert repr(y) == f'AsyncCollectiveTensor({plain!r})'
        t = ember.ones(2)
        assert fc.wait_tensor(t) is t
    elif name == 'group_forms':
        x = tensor(value(r, 'float32', (3,)))
        ref = np.sum([value(k, 'float32', (3,)) for k in range(n)], axis=0).astype(np.float32)
        mesh = ember.distributed.device_mesh.init_device_mesh('cpu', (n,))
        mesh2 = ember.distributed.device_mesh.init_device_mesh('cpu', (n, 1))
        sub = dist.new_group([0, 1])
        for group in ([0, 1], [1, 0], dist.group.WORLD, dist.group.WORLD.group_name, sub, sub.group_name, mesh,
                      (mesh2, 0)):
            same(fc.all_reduce(x, 'sum', group), ref)
        same(fc.all_reduce(x, 'sum', (mesh2, 1)), x.numpy())          # a group of one rank
    elif name == 'meta_shapes':
        m = ember.empty(2, 3, device='meta')
        assert fc.all_gather_tensor(m, 1, [0, 1]).shape == (2, 3 * n)
        assert fc.reduce_scatter_tensor(ember.empty(4, 2, device='meta'), 'sum', 0, [0, 1]).shape == (4 // n, 2)
        assert fc.all_to_all_single(ember.empty(3, device='meta'), [1, 4], [2, 1], [0, 1]).shape == (5,)
    elif name == 'funcol_errors':
        x = ember.ones(3)
        raises(RuntimeError, 'Unrecognized reduce_op: bogus', lambda: fc.all_reduce(x, 'bogus', [0, 1]))
        raises(AssertionError, 'input dimension 0 (3 must be a multiple of group_size 2)',
               lambda: fc.reduce_scatter_tensor(x, 'sum', 0, [0, 1]))
        raises(AssertionError, 'All output_split_sizes must be int',
               lambda: fc.all_to_all_single(ember.ones(4), ember.tensor([2, 2]), None, [0, 1]))
        mesh2 = ember.distributed.device_mesh.init_device_mesh('cpu', (n, 1))
        raises(AssertionError, 'Only 1D mesh is supported', lambda: fc.all_reduce(x, 'sum', mesh2))
        raises(ValueError, 'Unsupported group type', lambda: fc.all_reduce(x, 'sum', None))
        raises(ValueError, 'not a list of lists', lambda: fc.all_reduce(x, 'sum', [[0], [1]]))
    else:
        raise AssertionError(f'unknown check {name}')


def run_mesh(name, dist, ember, fc):
    from ember.distributed.device_mesh import DeviceMesh, init_device_mesh
    r, n = dist.get_rank(), dist.get_world_size()
    if name == 'mesh_1d':
        m = init_device_mesh('cpu', (n,), mesh_dim_names=('dp',))
        assert m.mesh.tolist() == list(range(n)) and m.mesh.dtype == ember.int32
        assert (m.ndim, m.shape, m.size(), m.size(0), m.device_type) == (1, (n,), n, n, 'cpu')
        assert (m.get_rank(), m.get_local_rank(), m.get_local_rank('dp'), m.get_coordinate()) == (r, r, r, (r,))
        assert m.get_group() is dist.group.WORLD and m.get_group('dp') is m.get_all_groups()[0]
        assert m.mesh_dim_names == ('dp',) and m['dp'] is m
        assert repr(m) == "DeviceMesh((dp=2), 'cpu', stride=(1,))"
        assert repr(init_device_mesh('cpu', (n,))) == "DeviceMesh((2,), 'cpu', stride=(1,))"
    elif name == 'mesh_2x1':
        m = init_device_mesh('cpu', (n, 1), mesh_dim_names=('dp', 'tp'))
        assert m.mesh.tolist() == [[0], [1]] and m.shape == (2, 1) and m.ndim == 2 and m.size() == 2
        assert m.size(0) == 2 and m.size(1) == 1
        assert m.get_coordinate() == (r, 0)
        assert (m.get_local_rank('dp'), m.get_local_rank(0), m.get_local_rank('tp'), m.get_local_rank(1)) == \
            (r, r, 0, 0)
        assert [_ranks(g, dist) for g in m.get_all_groups()] == [[0, 1], [r]]
        assert _ranks(m.get_group('tp'), dist) == [r] and dist.get_world_size(m.get_group(1)) == 1
        dp, tp = m['dp'], m['tp']
        assert dp.mesh.tolist() == [0, 1] and dp.get_coordinate() == (r,) and dp.mesh_dim_names == ('dp',)
        assert tp.mesh.tolist() == [r] and tp.get_coordinate() == (0,) and tp.get_group() is m.get_group('tp')
        assert repr(m) == "DeviceMesh((dp=2, tp=1), 'cpu', stride=(1, ()))"
        assert repr(tp) == "DeviceMesh((tp=1), 'cpu', stride=((),))" and m['dp', 'tp'] is m
        assert repr(m['tp', 'dp']) == "DeviceMesh((tp=1, dp=2), 'cpu', stride=((), 1))"
        x = tensor(value(r, 'float32', (3,)))
        same(fc.all_reduce(x, 'sum', (m, 0)), value(0, 'float32', (3,)) + value(1, 'float32', (3,)))
        same(fc.all_reduce(x, 'sum', tp), x.numpy())
    elif name == 'mesh_1x2':
        m = init_device_mesh('cpu', (1, n), mesh_dim_names=('pp', 'tp'))
        assert m.mesh.tolist() == [[0, 1]] and m.get_coordinate() == (0, r)
        assert (m.get_local_rank('pp'), m.get_local_rank('tp')) == (0, r)
        assert [_ranks(g, dist) for g in m.get_all_groups()] == [[r], [0, 1]]
        assert m['tp'].mesh.tolist() == [0, 1] and m['pp'].mesh.tolist() == [r]
        assert m['pp'].get_coordinate() == (0,) and m['tp'].get_coordinate() == (r,)
        assert repr(m) == "DeviceMesh((pp=1, tp=2), 'cpu', stride=((), 1))"
        assert repr(m['tp']) == "DeviceMesh((tp=2), 'cpu', stride=(1,))"
        unnamed = init_device_mesh('cpu', (1, n))
        assert unnamed.mesh_dim_names is None and repr(unnamed) == "DeviceMesh((1, 2), 'cpu', stride=((), 1))"
        xs = [value(k, 'int64', (2, 2)) for k in range(n)]
        for group in ((m, 'tp'), (m, 1), m['tp']):
            same(fc.all_gather_tensor(tensor(xs[r]), 1, group), np.concatenate(xs, axis=1))
        same(fc.broadcast(tensor(xs[r]), 0, (m, 0)), xs[r])          # group rank 0 of a group of one
    elif name == 'mesh_from_a_tensor_in_another_order':
        m = DeviceMesh('cpu', ember.tensor([1, 0]), mesh_dim_names=('x',))
        assert m.get_coordinate() == (1 - r,)                          # its place in the mesh ...
        assert m.get_local_rank() == r and _ranks(m.get_group(), dist) == [0, 1]     # ... its rank in the group
        m = DeviceMesh('cpu', [[0], [1]])
        assert m.get_coordinate() == (r, 0) and [_ranks(g, dist) for g in m.get_all_groups()] == [[0, 1], [r]]
        small = init_device_mesh('cpu', (1,))                          # a mesh without rank 1
        assert small.mesh.tolist() == [0] and small.get_coordinate() == ((0,) if r == 0 else None)
    elif name == 'mesh_equality':
        a = init_device_mesh('cpu', (1, n), mesh_dim_names=('a', 'b'))
        b = DeviceMesh('cpu', [[0, 1]], mesh_dim_names=('a', 'b'))
        assert a == b and hash(a) == hash(b) and not a != b
        assert a != DeviceMesh('cpu', [[0, 1]]) and a != init_device_mesh('cpu', (n, 1), mesh_dim_names=('a', 'b'))
        assert DeviceMesh('cpu', [0, 1]) == DeviceMesh('cpu', ember.tensor([0, 1])) and a != 5
        assert a != DeviceMesh('cuda', [[0, 1]], mesh_dim_names=('a', 'b'))
    elif name == 'mesh_errors':
        raises(RuntimeError, 'Mesh should not be bigger than default world size 2, but found 3 ranks!',
               lambda: init_device_mesh('cpu', (3,)))
        raises(RuntimeError, 'Mesh should not be bigger than default world size 2, but found 4 ranks!',
               lambda: DeviceMesh('cpu', [[0, 1], [2, 3]]))
        m = init_device_mesh('cpu', (n, 1), mesh_dim_names=('dp', 'tp'))
        raises(KeyError, "Invalid mesh_dim_names ('pp',) specified. Valid mesh_dim_names are ['dp', 'tp'].",
               lambda: m['pp'])
        raises(KeyError, "Mesh dimension 'pp' does not exist.", lambda: m.get_group('pp'))
        raises(KeyError, "Mesh dimension 'pp' does not exist.", lambda: m.get_local_rank('pp'))
        raises(RuntimeError, 'Slicing overlapping dim_names', lambda: m['dp', 'dp'])
        raises(RuntimeError, 'Optional kwarg `mesh_dim` needs to be specified', lambda: m.get_group())
        raises(RuntimeError, 'Optional kwarg `mesh_dim` needs to be specified', lambda: m.get_local_rank())
        raises(IndexError, 'out of range', lambda: m.get_group(2))
        raises(RuntimeError, 'Cannot slice a DeviceMesh without mesh_dim_names!',
               lambda: init_device_mesh('cpu', (n,))['dp'])
        raises(RuntimeError, 'mesh_shape and mesh_dim_names should have same length!',
               lambda: init_device_mesh('cpu', (n,), mesh_dim_names=('a', 'b')))
        raises(RuntimeError, 'Each mesh_dim_name must be unique',
               lambda: init_device_mesh('cpu', (n, 1), mesh_dim_names=('a', 'a')))
        raises(RuntimeError, 'Device type with index is not supported but got cpu:0',
               lambda: init_device_mesh('cpu:0', (n,)))
    elif name == 'collectives_still_agree':     # after all those groups, the ranks still make groups in step
        g = dist.new_group([0, 1])
        t = ember.ones(2) * (r + 1)
        dist.all_reduce(t, group=g)
        assert t.tolist() == [3.0, 3.0]
    else:
        raise AssertionError(f'unknown check {name}')


def main(outdir):
    import ember
    import ember.distributed as dist
    import ember.distributed._functional_collectives as fc
    warnings.simplefilter('ignore', FutureWarning)          # torch's older names (all_gather_tensor, ...) warn
    dist.init_process_group('gloo')
    results = {'imported_from': os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))}
    for name in checks():
        try:
            (run_mesh if name in MESH else run_funcol)(name, dist, ember, fc)
            results[name] = 'ok'
        except Exception:        # noqa: BLE001  recorded: the test that owns this check reports it
            results[name] = traceback.format_exc()
    _write(outdir, 'mesh', dist.get_rank(), results)
    dist.destroy_process_group()


if __name__ == '__main__':
    main(sys.argv[1])
