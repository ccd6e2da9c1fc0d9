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
