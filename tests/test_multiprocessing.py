"""ember.multiprocessing and shared tensors: Hogwild updates land in the parent, tensors cross queues by shared
memory, spawn propagates errors as torch does. Every child runs under a bounded join."""
import multiprocessing

import pytest
import torch

import ember
import ember.multiprocessing as mp
import _mp_children as kids

TIMEOUT = 60


def _join_all(procs):
    for p in procs:
        p.join(TIMEOUT)
        assert not p.is_alive(), 'child did not finish in time'
        assert p.exitcode == 0


def test_share_memory_like_torch():
    for lib in (torch, ember):
        x = lib.arange(6.).reshape(2, 3)
        before = x.is_shared()
        y = x.share_memory_()
        m = lib.nn.Linear(3, 2)
        m.share_memory()
        got = (before, y is x, x.is_shared(), x.tolist(), all(p.is_shared() for p in m.parameters()),
               lib.ones(2).detach().is_shared())
        if lib is torch:
            want = got
    assert got == want and want[2] is True


@pytest.mark.parametrize('method', ['fork', 'spawn'])
def test_hogwild_updates_land_in_parent(method):
    ctx = mp.get_context(method)
    model = ember.nn.Linear(3, 2)
    model.share_memory()
    start = [p.detach().clone() for p in model.parameters()]
    procs = [ctx.Process(target=kids.hogwild_step, args=(r, model, 5)) for r in range(2)]
    for p in procs:
        p.start()
    _join_all(procs)
    for p, s in zip(model.parameters(), start):
        assert ember.allclose(p.detach() - s, ember.full_like(s, 10.0))
    assert len(start) == 2


def test_spawn_children_write_one_shared_tensor():
    t = ember.zeros(3).share_memory_()
    mp.spawn(kids.add_rank, args=(t,), nprocs=3, join=True)
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_tensors_travel_through_queues_by_shared_memory():
    ctx = mp.get_context('spawn')
    q_in, q_out = ctx.Queue(), ctx.Queue()
    t = ember.zeros(5)
    p = ctx.Process(target=kids.echo_plus_one, args=(q_in, q_out))
    p.start()
    q_in.put(t)
    got = q_out.get(timeout=TIMEOUT)
    assert q_out.get(timeout=TIMEOUT) == 'done'
    _join_all([p])
    assert t.is_shared()            # sending moved it to shared memory, as torch does
    assert t.tolist() == [1.0] * 5  # the child's in-place add landed here
    assert got.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_spawn_raises_the_childs_error_like_torch():
    errs = []
    for lib in (torch, ember):
        with pytest.raises(lib.multiprocessing.ProcessRaisedException) as info:
            lib.multiprocessing.spawn(kids.fail, args=(lib.__name__,), nprocs=2)
        errs.append(info.value)
    for e in errs:
        assert 'ValueError: boom from 1' in str(e)
        assert '-- Process 1 terminated with the following error:' in str(e)
        assert e.error_index == 1
    assert type(errs[1]).__name__ == type(errs[0]).__name__


def test_spawn_exit_code_and_nonblocking_context():
    with pytest.raises(mp.ProcessExitedException, match='process 0 terminated with exit code 3'):
        mp.spawn(kids.exit_code, nprocs=1)
    ctx = mp.spawn(kids.add_rank, args=(ember.zeros(1).share_memory_(),), nprocs=1, join=False)
    assert len(ctx.pids()) == 1
    while not ctx.join(TIMEOUT):
        pass


def test_namespace_has_torchs_names():
    for name in ['Process', 'Queue', 'SimpleQueue', 'Pool', 'spawn', 'set_start_method', 'get_start_method',
                 'get_context', 'cpu_count', 'ProcessRaisedException', 'ProcessExitedException',
                 'get_sharing_strategy', 'set_sharing_strategy', 'get_all_sharing_strategies']:
        assert hasattr(torch.multiprocessing, name)
        assert hasattr(mp, name), name
    assert mp.cpu_count() == multiprocessing.cpu_count()


def _spawn_parameters(lib):
    lib.manual_seed(0)
    p = lib.nn.Parameter(lib.randn(2, 3))
    frozen = lib.nn.Parameter(lib.ones(2), requires_grad=False)
    t = lib.randn(3, requires_grad=True)
    ctx = multiprocessing.get_context('spawn')
    out = ctx.SimpleQueue()
    before = p.sum().item()
    lib.multiprocessing.start_processes(kids.report_kinds, args=(out, p, frozen, t), nprocs=1,
                                        start_method='spawn')
    return out.get(), p.is_shared(), round(p.sum().item() - before, 4)


def test_spawn_parameter_args_arrive_as_parameters_like_torch():
    """A Parameter stays a Parameter (requires_grad kept) in a spawned child, shares the parent's memory; its
    shared segment must outlive the pickling (it once was a temporary detach(), unlinked too early)."""
    got, want = _spawn_parameters(ember), _spawn_parameters(torch)
    assert got == want
    assert [k[:2] for k in want[0]] == [('Parameter', True), ('Parameter', False), ('Tensor', True)]
    assert want[1:] == (True, 6.0)
