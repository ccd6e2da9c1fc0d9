"""Modules as functions of their state: functional_call and stack_module_state (torch.func's).

``functional_call`` runs a module with some of its parameters and buffers replaced by the given tensors, for the
duration of the call only, by swapping the entries of the modules' parameter and buffer tables (what torch's
reparametrization does) and putting the originals back afterwards, even when the call raises.
"""
import contextlib

import ember


def _owner(module, name):
    *path, leaf = name.split('.')
    m = module
    for p in path:
        m = getattr(m, p)
    return m, leaf


def _tied_groups(module):
    """Names (parameters and buffers, duplicates kept) grouped by the tensor they hold: torch's tied weights."""
    groups = {}
    for n, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        groups.setdefault(id(t), []).append(n)
    return [g for g in groups.values() if len(g) > 1]


def _expand_tied(module, values):
    values = dict(values)
    for group in _tied_groups(module):
        given = [n for n in group if n in values]
        if not given:
            continue
        first = values[given[0]]
        if any(values[n] is not first for n in given[1:]):
            raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. Consider using "
                             f"tie_weights=False")
        for n in group:
            values[n] = first
    return values


def _check_strict(module, values):
    names = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
        {n for n, _ in module.named_buffers(remove_duplicate=False)}
    missing = sorted(names - set(values))
    unexpected = sorted(set(values) - names)
    msgs = []
    if unexpected:
        msgs.append('Unexpected key(s): ' + ', '.join(repr(k) for k in unexpected) + '.')
    if missing:
        msgs.append('Missing key(s): ' + ', '.join(repr(k) for k in missing) + '.')
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + '\n\t'.join(msgs))


@contextlib.contextmanager
def _reparametrize(module, values):
    undo = []
    try:
        for name, value in values.items():
            m, leaf = _owner(module, name)
            for table in (m._parameters, m._buffers):
                if leaf in table:
                    undo.append((table, leaf, table[leaf]))
                    table[leaf] = value
                    break
            else:
                had = leaf in m.__dict__
                undo.append((m, leaf, m.__dict__[leaf] if had else _ABSENT))
                object.__setattr__(m, leaf, value)
        yield
    finally:
        for owner, leaf, old in reversed(undo):
            if isinstance(owner, dict):
                owner[leaf] = old
            elif old is _ABSENT:
                object.__delattr__(owner, leaf)
            else:
                object.__setattr__(owner, leaf, old)


_ABSENT = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by those given (torch.func.functional_call).

    >>> import ember
    >>> from ember.func import functional_call
    >>> lin = ember.nn.Linear(2, 1)
    >>> functional_call(lin, {'weight': ember.ones(1, 2), 'bias': ember.zeros(1)}, (ember.tensor([[1., 2.]]),))
    tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(f"Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        seen, dup = set(), []
        for d in parameter_and_buffer_dicts:
            dup.extend(k for k in d if k in seen)
            seen.update(d)
        if dup:
            raise ValueError(f"{sorted(set(dup))} appeared in multiple dictionaries; behavior of functional call is "
                             f"ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if tie_weights:
        values = _expand_tied(module, values)
    if strict:
        _check_strict(module, values)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, values):
        return module(*args, **kwargs)


def stack_module_state(models):
    """The parameters and buffers of several models of the same structure, each stacked along a new first
    dimension: ``(params, buffers)`` for ``functional_call`` under ``vmap`` (torch.func.stack_module_state).

    >>> import ember
    >>> from ember.func import stack_module_state
    >>> params, buffers = stack_module_state([ember.nn.Linear(3, 2) for _ in range(4)])
    >>> params['weight'].shape
    ember.Size([4, 2, 3])
    """
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        tables = [dict(named(m)) for m in models]
        out = {}
        for k in tables[0]:
            ts = [t[k] for t in tables]
            s = ember.stack([t.detach() for t in ts])
            out[k] = s.requires_grad_() if all(t.requires_grad for t in ts) else s
        return out
    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())


def replace_all_batch_norm_modules_(root):
    """Every batch norm module in ``root`` stops tracking running statistics, in place (torch.func's): its
    ``running_mean``, ``running_var`` and ``num_batches_tracked`` become None and ``track_running_stats``
    False, so under ``vmap`` each sample normalizes with its own batch's statistics. Returns ``root``.

    >>> import ember
    >>> from ember.func import replace_all_batch_norm_modules_
    >>> replace_all_batch_norm_modules_(ember.nn.BatchNorm1d(3)).running_mean is None
    True
    """
    from ember.nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = m.running_var = m.num_batches_tracked = None
            m.track_running_stats = False
    return root
