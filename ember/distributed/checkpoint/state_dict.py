"""torch.distributed.checkpoint.state_dict: model and optimizer state dicts keyed by parameter names.

``get_optimizer_state_dict(model, optim)`` is the optimizer's state dict with each parameter's index replaced by
its fully qualified name in ``model`` (``'0.weight'``), so a checkpoint survives a change of parameter order and
can be loaded into another optimizer of the same model; ``set_optimizer_state_dict`` turns names back into
indices and loads. Names are the model's own: the ``module.`` of DistributedDataParallel, the ``_orig_mod.`` of a
compiled module and the ``_checkpoint_wrapped_module.`` of ``checkpoint_wrapper`` are left out. Both first make
the optimizer's state exist (one step with zero gradients and zero learning rate, as torch does), so a fresh
optimizer's state dict is complete.

ember's state dicts are whole on every rank (no FSDP, no DTensor), so ``full_state_dict`` changes nothing;
``cpu_offload`` moves tensors to the CPU; ``broadcast_from_rank0`` loads rank 0's values on every rank.

>>> import ember
>>> from ember.distributed.checkpoint.state_dict import get_optimizer_state_dict
>>> m = ember.nn.Linear(2, 1)
>>> sd = get_optimizer_state_dict(m, ember.optim.SGD(m.parameters(), lr=0.1))
>>> sd['param_groups'][0]['params']
['weight', 'bias']
"""
import dataclasses

import ember
from ember import nn

__all__ = ['StateDictOptions', 'get_model_state_dict', 'get_optimizer_state_dict', 'get_state_dict',
           'set_model_state_dict', 'set_optimizer_state_dict', 'set_state_dict']

_STATE, _PG, _PARAMS = 'state', 'param_groups', 'params'
_CHECKPOINT_PREFIX = '_checkpoint_wrapped_module.'


@dataclasses.dataclass
class StateDictOptions:
    """How ``get_*``/``set_*`` build and load state dicts (torch's fields; see the module docstring for the ones
    a whole-on-every-rank state dict makes moot)."""
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = '_fqn_modifiers'


def _fqn(model, name, modifiers='_fqn_modifiers'):
    """The canonical name of the parameter or buffer ``name`` of ``model``: wrapper prefixes left out."""
    from ember.nn.parallel import DistributedDataParallel
    name = name.replace(_CHECKPOINT_PREFIX, '')
    parts, obj, out = name.split('.'), model, []
    for i, part in enumerate(parts):
        if isinstance(obj, DistributedDataParallel) and part == 'module':
            obj = obj.module
        elif part == '_orig_mod' and hasattr(obj, '_orig_mod'):
            obj = obj._orig_mod
        else:
            removed = getattr(obj, modifiers)().get(part) if hasattr(obj, modifiers) else None
            if removed and hasattr(obj, removed):
                obj = getattr(obj, removed)
            out.append(part)
            if i < len(parts) - 1:
                obj = getattr(obj, part)
    return '.'.join(out)


def _param_fqns(model):
    """id(parameter) -> its canonical name, every parameter including shared ones under their first name."""
    names = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), _fqn(model, name))
    return names


def _options(options):
    return StateDictOptions() if options is None else options


def _offload(sd):
    return {k: v.cpu() if isinstance(v, ember.Tensor) else v for k, v in sd.items()}


def get_model_state_dict(model, *, submodules=None, options=None):
    """``model.state_dict()`` with canonical names (and without frozen parameters with ``ignore_frozen_params``).

    >>> import ember
    >>> list(get_model_state_dict(ember.nn.Sequential(ember.nn.Linear(2, 1))))
    ['0.weight', '0.bias']
    """
    options = _options(options)
    frozen = {_fqn(model, n) for n, p in model.named_parameters() if not p.requires_grad}
    sd = {}
    for name, value in model.state_dict().items():
        fqn = _fqn(model, name, options.dsd_fqn_modifiers)
        if not (options.ignore_frozen_params and fqn in frozen):
            sd[fqn] = value
    if submodules:
        sd = _only_submodules(model, sd, submodules, options.keep_submodule_prefixes)
    return _offload(sd) if options.cpu_offload else sd


def _only_submodules(model, sd, submodules, keep_prefixes):
    prefixes = [_fqn(model, n) + '.' for n, m in model.named_modules() if m in submodules]
    out = {}
    for k, v in sd.items():
        for p in prefixes:
            if k.startswith(p):
                out[k if keep_prefixes else k[len(p):]] = v
    return out


def _init_optim_state(optim):
    """Make the optimizer's state exist: one ``step()`` with zero gradients and learning rate zero (not when it
    has state, or any parameter a gradient already)."""
    if optim.state or any(p.grad is not None for g in optim.param_groups for p in g[_PARAMS]):
        return
    for g in optim.param_groups:
        for p in g[_PARAMS]:
            if p.requires_grad:
                p.grad = ember.zeros_like(p)
    lrs = []
    for g in optim.param_groups:
        if 'lr' in g:
            lrs.append(g['lr'])
            g['lr'] = ember.tensor(0.0) if isinstance(g['lr'], ember.Tensor) else 0.0
    optim.step(closure=None)
    for g in optim.param_groups:
        if 'lr' in g:
            g['lr'] = lrs.pop(0)
    optim.zero_grad(set_to_none=True)


def _optimizers(optimizers):
    return (optimizers,) if isinstance(optimizers, ember.optim.Optimizer) else tuple(optimizers)


def _one_optim_state_dict(model, optim, names):
    _init_optim_state(optim)
    sd = optim.state_dict()
    index_to_fqn = {}
    for group, sd_group in zip(optim.param_groups, sd[_PG]):
        for p, idx in zip(group[_PARAMS], sd_group[_PARAMS]):
            index_to_fqn[idx] = names[id(p)]
        sd_group[_PARAMS] = [index_to_fqn[i] for i in sd_group[_PARAMS]]
    sd[_STATE] = {index_to_fqn[i]: s for i, s in sd[_STATE].items()}
    return sd


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """The optimizers' state dict keyed by parameter names (module docstring); several optimizers' are merged."""
    options = _options(options)
    names = _param_fqns(model)
    merged = {_STATE: {}, _PG: []}
    for optim in _optimizers(optimizers):
        sd = _one_optim_state_dict(model, optim, names)
        merged[_STATE].update(sd[_STATE])
        merged[_PG].extend(sd[_PG])
    if options.cpu_offload:
        merged[_STATE] = {k: _offload(v) for k, v in merged[_STATE].items()}
    return _flatten(merged) if options.flatten_optimizer_state_dict else merged


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))


def _flatten(sd):
    """torch's flat layout: ``state.<fqn>.<key>`` (nested dicts joined by dots) and ``param_groups.<fqn>.<key>``."""
    def nested(d, prefix, out):
        for k, v in d.items():
            key = f'{prefix}.{k}'
            if isinstance(v, dict):
                nested(v, key, out)
            elif not isinstance(v, (ember.Tensor, int, float)):
                raise NotImplementedError("Flattening optimizer state_dict only supports tensor, int, float, dict "
                                          f"states now. Type is {type(v)}.")
            else:
                out[key] = v
    out = {}
    for fqn, state in sd[_STATE].items():
        nested(state, f'{_STATE}.{fqn}', out)
    for group in sd[_PG]:
        for fqn in group[_PARAMS]:
            out.update({f'{_PG}.{fqn}.{k}': v for k, v in group.items() if k != _PARAMS})
    return out


def _unflatten(optim, names, flat):
    state, groups = {}, []
    for group in optim.param_groups:
        fqns = [names[id(p)] for p in group[_PARAMS]]
        for fqn in fqns:
            prefix, entry = f'{_STATE}.{fqn}.', {}
            for k, v in flat.items():
                if k.startswith(prefix):
                    *path, last = k[len(prefix):].split('.')
                    d = entry
                    for part in path:
                        d = d.setdefault(part, {})
                    d[last] = v
            if entry:
                state[fqn] = entry
        first = fqns[0]
        groups.append({**{k: flat[f'{_PG}.{first}.{k}'] for k in group if k != _PARAMS and
                          f'{_PG}.{first}.{k}' in flat}, _PARAMS: fqns})
    return {_STATE: state, _PG: groups}


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load a state dict keyed by canonical names into ``model``; returns the missing and unexpected keys."""
    options = _options(options)
    if options.broadcast_from_rank0:
        model_state_dict = _from_rank0(model_state_dict)
    by_fqn = {_fqn(model, n, options.dsd_fqn_modifiers): n for n in model.state_dict()}
    renamed = {by_fqn.get(k, k): v for k, v in model_state_dict.items()}
    return model.load_state_dict(renamed, strict=options.strict)


def _from_rank0(sd):
    import ember.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        return sd
    box = [sd]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """Load a state dict keyed by parameter names (as ``get_optimizer_state_dict`` gives) into the optimizers."""
    options = _options(options)
    names = _param_fqns(model)
    if options.broadcast_from_rank0:
        optim_state_dict = _from_rank0(optim_state_dict)
    for optim in _optimizers(optimizers):
        _init_optim_state(optim)
        sd = _unflatten(optim, names, optim_state_dict) if options.flatten_optimizer_state_dict else optim_state_dict
        own = {names[id(p)] for g in optim.param_groups for p in g[_PARAMS]}
        groups = [g for g in sd[_PG] if set(g[_PARAMS]) & own]
        if len(groups) != len(optim.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        fqn_to_index, index = {}, 0
        for group in optim.param_groups:
            for p in group[_PARAMS]:
                fqn_to_index[names[id(p)]] = index
                index += 1
        optim.load_state_dict({
            _STATE: {fqn_to_index[k]: v for k, v in sd[_STATE].items() if k in fqn_to_index},
            _PG: [{**g, _PARAMS: [fqn_to_index[f] for f in g[_PARAMS]]} for g in groups]})


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """``set_model_state_dict`` then ``set_optimizer_state_dict``; returns the model's missing and unexpected
    keys."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
