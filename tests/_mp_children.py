"""Functions run in child processes by test_multiprocessing.py (importable by name, as spawn needs)."""
import ember


def hogwild_step(rank, model, n):
    """n in-place SGD-like updates of the shared parameters, as mnist_hogwild's workers do."""
    with ember.no_grad():
        for _ in range(n):
            for p in model.parameters():
                p.add_(1.0)


def add_rank(rank, t):
    t[rank] += rank + 1


def fail(rank, lib_name):
    if rank == 1:
        raise ValueError(f'boom from {rank}')


def exit_code(rank):
    import os
    os._exit(3)


def echo_plus_one(q_in, q_out):
    t = q_in.get()
    t.add_(1)               # the parent's tensor is the same memory
    q_out.put(ember.arange(4.) * 2)
    q_out.put('done')



def report_kinds(rank, out, *tensors):
    """What arrived (type, requires_grad, sum) for each argument; then one in-place add to the first (the test
    runs it for torch and ember: the no_grad is that library's)."""
    import importlib
    lib = importlib.import_module(type(tensors[1]).__module__.split('.')[0])
    out.put([(type(t).__name__, t.requires_grad, round(float(t.sum()), 4)) for t in tensors])
    with lib.no_grad():
        tensors[0].add_(1)
