"""torch.distributed.device_mesh, ._functional_collectives and .constants on ember, with two ranks.

One launch of two ranks runs every check of tests/_mesh_worker.py (functional collectives against NumPy,
DeviceMesh 1-D, 2x1 and 1x2, the errors); the parametrized tests below read its results. The checks that need
no process group run here.
"""
import datetime
import os
import subprocess
import sys

import pytest

import _mesh_worker as worker
from test_distributed import ROOT, TIMEOUT, _env, _results

WORKER = os.path.join(ROOT, 'tests', '_mesh_worker.py')


@pytest.fixture(scope='module')
def mesh(tmp_path_factory):
    out = tmp_path_factory.mktemp('mesh')
    cmd = [sys.executable, '-m', 'ember.distributed.run', '--standalone', '--nproc_per_node=2', WORKER, str(out)]
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return _results(out, 'mesh')


@pytest.mark.parametrize('check', worker.checks())
def test_two_ranks(mesh, check):
    for rank, results in enumerate(mesh):
        assert results.get(check) == 'ok', f'rank {rank}:\n{results.get(check)}'


def test_the_ranks_ran_this_checkout(mesh):
    assert [r['imported_from'] for r in mesh] == [ROOT, ROOT]


def test_constants_are_torchs_and_the_process_groups_use_them():
    import torch.distributed as tdist
    import torch.distributed.constants as theirs
    import ember.distributed as dist
    from ember.distributed import constants as ours
    assert ours.default_pg_timeout == theirs.default_pg_timeout == datetime.timedelta(minutes=30)
    assert ours.default_pg_nccl_timeout == theirs.default_pg_nccl_timeout
    assert dist.default_pg_timeout is ours.default_pg_timeout and tdist.default_pg_timeout == ours.default_pg_timeout


def test_the_api_matches_torchs():
    import inspect
    import torch.distributed._functional_collectives as theirs
    import torch.distributed.device_mesh as theirs_mesh
    import ember.distributed._functional_collectives as ours
    import ember.distributed.device_mesh as ours_mesh
    for name in ('all_reduce', 'all_gather_tensor', 'all_gather_single', 'reduce_scatter_tensor',
                 'reduce_scatter_single', 'all_to_all_single', 'broadcast', 'permute_tensor', 'wait_tensor',
                 'all_reduce_coalesced', 'all_gather_into_tensor_coalesced', 'reduce_scatter_tensor_coalesced',
                 'all_gather_tensor_autograd', 'reduce_scatter_tensor_autograd', 'all_to_all_single_autograd'):
        assert list(inspect.signature(getattr(ours, name)).parameters) == \
            list(inspect.signature(getattr(theirs, name)).parameters), name
    assert ours.REDUCE_OP_TO_STR == {int(k): v for k, v in theirs.REDUCE_OP_TO_STR.items()}
    assert ours_mesh.__all__ == theirs_mesh.__all__
    for name in ('mesh', 'ndim', 'shape', 'size', 'get_rank', 'get_local_rank', 'get_coordinate', 'get_group',
                 'get_all_groups', '__getitem__'):
        assert hasattr(ours_mesh.DeviceMesh, name) and hasattr(theirs_mesh.DeviceMesh, name), name


def test_torch_names_resolve_and_a_mesh_without_a_process_group_says_what_torch_says(tmp_path):
    script = tmp_path / 'mesh.py'
    script.write_text(
        'import torch.distributed._functional_collectives as funcol\n'
        'from torch.distributed.device_mesh import DeviceMesh, init_device_mesh\n'
        'from torch.distributed.constants import default_pg_timeout\n'
        'import torch.distributed as dist\n'
        'print(funcol.all_reduce.__module__, dist.DeviceMesh is DeviceMesh, default_pg_timeout)\n'
        'try:\n'
        '    init_device_mesh("cpu", (1,))\n'
        'except ValueError as e:\n'
        '    print(e)\n')
    p = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], env=_env(), capture_output=True,
                       text=True, timeout=TIMEOUT, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.splitlines() == [
        'ember.distributed._functional_collectives True 0:30:00',
        'Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, '
        'but not set']
