"""torch.nn.parallel.parallel_apply: run modules on their inputs, one accelerator each. On a machine without
accelerators torch's raises before running anything (it asks for the current accelerator), and so does ember's.

>>> import ember
>>> from ember.nn.parallel import parallel_apply
>>> parallel_apply([ember.nn.Linear(2, 2)], [ember.ones(1, 2)])
Traceback (most recent call last):
RuntimeError: Cannot access accelerator device when none is available.
"""
__all__ = ['parallel_apply']


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """torch's ``parallel_apply``; ember has no accelerator, so it raises torch's CPU-only error."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    raise RuntimeError("Cannot access accelerator device when none is available.")
