"""torch.sparse._triton_ops_meta: the table of tuned Triton launch parameters for block-sparse products, keyed by
(operation, device name, version) and then by the operation's input key; ``get_meta`` reads it, ``update`` adds
to it, ``minimize`` is the local search torch tunes entries with. torch ships entries measured on NVIDIA GPUs;
ember runs no Triton kernels, so its table starts empty and ``get_meta`` answers None until a program adds one.

>>> from ember.sparse._triton_ops_meta import get_meta, update
>>> get_meta('bsr_dense_addmm', (16, 16, 16, 16, 16, 1, 0)) is None
True
>>> update('bsr_dense_addmm', 'dev', (0, 'v'), (1, 2), (4, 1, 2, 4))
>>> get_meta('bsr_dense_addmm', (1, 2), device_name='dev', version=(0, 'v'))
{'GROUP_SIZE_ROW': 4, 'SPLIT_N': 1, 'num_stages': 2, 'num_warps': 4}
"""
import itertools
import re
import warnings

import ember

__all__ = ['get_meta', 'update', 'minimize']

_operation_device_version_data = {}
_NAMES = {'scatter_mm': ('GROUP_SIZE', 'SPLIT_N', 'TILE_M', 'TILE_N', 'num_stages', 'num_warps'),
          'bsr_dense_addmm': ('GROUP_SIZE_ROW', 'SPLIT_N', 'num_stages', 'num_warps'),
          '_int_bsr_dense_addmm': ('GROUP_SIZE_ROW', 'SPLIT_N', 'num_stages', 'num_warps')}


def _get_device_name():
    """The accelerator's name, the table's device key ('' on the CPU)."""
    if ember.cuda.is_available():
        return ember.cuda.get_device_name()
    return ''


def _op_data(op, device_name, version, exact):
    data = _operation_device_version_data.get((op, device_name, version))
    if data is None and not exact and device_name and re.match(r"NVIDIA A100[^\d]", device_name):
        data = _operation_device_version_data.get((op, 'NVIDIA A100-SXM4-80GB', version))  # A100s share tunings
    return data


def get_meta(op, key, device_name=None, version=(0, ember.float16, 0.5), exact=False):
    """The launch parameters of ``op`` for input ``key`` as a dict (None when the table has none); a key holding
    ``'*'`` matches any value there and gives a dict of matching keys to parameters."""
    op_data = _op_data(op, _get_device_name() if device_name is None else device_name, version, exact)
    if op_data is None:
        return None
    if '*' in key:
        matching = {k: v for k, v in op_data.items() if all(k2 == '*' or k1 == k2 for k1, k2 in zip(k, key))}
    else:
        matching = {key: op_data[key]} if key in op_data else {}
    if op not in _NAMES and matching:
        raise NotImplementedError(f"names for {op=}")
    meta = {k: dict(zip(_NAMES[op], v)) for k, v in matching.items()}
    if '*' in key:
        return meta
    return meta.get(key)


def update(op, device_name, version, key, value):
    """Record the launch parameters ``value`` of ``op`` for input ``key`` (an empty value is skipped, warned)."""
    if not value:
        warnings.warn(f"skipping empty value for {op}: {device_name=} {version=} {key=}", stacklevel=2)
        return
    _operation_device_version_data.setdefault((op, device_name, version), {})[key] = value


def _directions(n, max_step):
    steps = range(-max_step, max_step + 1)
    return sorted((sum(map(abs, d)), d) for d in itertools.product(*((steps,) * n)) if 0 < sum(map(abs, d)) <= max_step)


def minimize(target_func, initial_parameters, reference_parameters, step_func, max_step=2, verbose=False,
             all_values=None):
    """Local search for the parameter dict that minimizes ``target_func(parameters) -> float``: from the
    initial parameters, try every move of at most ``max_step`` steps (``step_func(name, value, direction,
    parameters)`` gives a parameter's next value) and take the first that improves, until none does.

    Returns ``(parameters, speedup_incr, timing, sensitivity_message)``: the speedup over the reference
    parameters in percent, the minimum, and how much each parameter's neighbours are slower.
    """
    names = sorted(initial_parameters)
    key_of = lambda p: tuple(p[k] for k in names)  # noqa: E731
    all_values = {} if all_values is None else all_values
    reference = _try(target_func, reference_parameters, verbose)
    if reference is not None:
        all_values[key_of(reference_parameters)] = reference
    parameters, initial = initial_parameters, _try(target_func, initial_parameters, verbose)
    if initial is None:
        if reference is None:
            return {}, -1, -1, 'initial and reference parameters both failed'
        parameters, initial = reference_parameters, reference
    reference = initial if reference is None else reference
    initial_key = key_of(parameters)
    best = all_values[initial_key] = initial
    improved = True
    while improved:
        improved = False
        for _, d_tuple in _directions(len(names), max_step):
            nxt = _step(parameters, names, d_tuple, step_func)
            if nxt is None or key_of(nxt) in all_values:
                continue
            value = all_values[key_of(nxt)] = _try(target_func, nxt, verbose, failed='failed')
            if isinstance(value, float) and value < best:
                best, parameters, improved = value, nxt, True
                break
    near = {k for k, v in all_values.items() if isinstance(v, float) and abs(1 - v / best) < 0.001}
    parameters = dict(zip(names, initial_key if initial_key in near else min(near)))   # a stable minimizer
    speedup = (1 - best / reference) * 100
    if speedup < 0:
        return minimize(target_func, reference_parameters, reference_parameters, step_func, max_step, verbose,
                        all_values)
    return parameters, speedup, best, _sensitivity(parameters, names, best, initial, all_values, step_func, max_step)


def _try(target_func, parameters, verbose, failed=None):
    try:
        return target_func(parameters)
    except Exception as msg:
        if verbose and 'out of resource' not in str(msg):
            print(f"{parameters=} lead to failure: {msg}.")
        return failed


def _step(parameters, names, d_tuple, step_func):
    nxt = parameters.copy()
    for name, direction in zip(names, d_tuple):
        if direction:
            value = nxt[name]
            nxt[name] = step_func(name, value, direction, parameters)
            if nxt[name] == value:
                return None             # no step that way
    return nxt


def _sensitivity(parameters, names, best, initial, all_values, step_func, max_step):
    rows = []
    for name in parameters:
        diffs = []
        for direction in (d for d in range(-max_step, max_step + 1) if d):
            value = step_func(name, parameters[name], direction, parameters)
            t = all_values.get(tuple(value if k == name else parameters[k] for k in names))
            diffs.append(0 if value == parameters[name] or not isinstance(t, float) else (t / best - 1) * 100)
        rows.append((max(diffs), diffs, name))
    parts = [f"timing0={initial:.3f}"]
    for _, diffs, name in sorted(rows, reverse=True):
        left, right = ('|'.join(f"{d:.1f}" for d in ds) for ds in (diffs[:max_step], diffs[max_step:]))
        parts.append(f"{name}={parameters[name]} ({left}...{right} %)")
    return ', '.join(parts)
