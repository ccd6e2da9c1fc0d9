"""The Optimizer base class: parameter groups, per-parameter state, state dicts and hooks.

Subclasses keep state and validate options; the update math lives in plain
functions (``sgd``, ``adam``, ...) beside each class (STYLE.md: "the class keeps
state, a pure function does the math"). ``state_dict()`` uses torch's layout —
parameters by index, ``step`` as a 0-dim float32 tensor — so an ember
optimizer state loads into torch and back.

NOTE [foreach]: torch's multi-tensor (``foreach``) kernels fuse one operation
over many parameters into one CUDA launch. On NumPy every op is one call per
array either way, so a multi-tensor variant would only save ember's dispatch
overhead (about 3 us per op): under 2% of an MLP step (measured with
bench/bench_train.py). ember accepts ``foreach=`` for compatibility and runs
the single-tensor variant. The ``_foreach_*`` operators themselves exist, for
libraries that call them (timm, lightning): NOTE [foreach operators] in
ember/_ops/foreach.py. On a CUDA device it is otherwise: each of Adam's eight
operators per parameter is a launch after ember's dispatch (~40 us), so where
torch's default is foreach, Adam and AdamW run the fused step instead, one
operator for all the parameters (NOTE [fused optimizer steps] in
ember/_ops/optim_ops.py; ``foreach=False`` keeps the single-tensor update).
``fused=True`` runs it on any device, as torch's.
"""
import collections
import functools

import ember
from ..autograd.profiler import record_function
from ..utils.hooks import RemovableHandle
from ember import Tensor, no_grad

_required = object()
required = _required


class _RequiredParameter:
    def __repr__(self):
        return '<required parameter>'


_NO_HOOKS = {}
# hooks every optimizer's step runs (torch.optim.optimizer.register_optimizer_step_pre_hook / _post_hook): the
# global pre hooks before the optimizer's own, the global post hooks after
_global_optimizer_pre_hooks = collections.OrderedDict()
_global_optimizer_post_hooks = collections.OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs)`` before every optimizer's step; may return new (args, kwargs)."""
    return _register(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after every optimizer's step."""
    return _register(_global_optimizer_post_hooks, hook)


class Optimizer:
    """Base class of optimizers (torch.optim.Optimizer)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        self._step_pre_hooks = collections.OrderedDict()
        self._step_post_hooks = collections.OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + type(params).__name__)
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{'params': groups}]
        for g in groups:
            self.add_param_group(g)

    def __getstate__(self):
        return {'defaults': self.defaults, 'state': self.state, 'param_groups': self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._step_pre_hooks, self._step_post_hooks = collections.OrderedDict(), collections.OrderedDict()

    def __repr__(self):
        s = self.__class__.__name__ + ' ('
        for i, group in enumerate(self.param_groups):
            s += f'\nParameter Group {i}'
            for key in sorted(group):
                if key != 'params':
                    s += f'\n    {key}: {group[key]}'
        return s + '\n)'

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group['params']
        params = [params] if isinstance(params, Tensor) else list(params)
        if isinstance(param_group['params'], set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is _required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g['params']}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        with record_function(f'Optimizer.zero_grad#{type(self).__name__}.zero_grad'):
            self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        g = p.grad
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    # --- hooks ------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each step; may return new (args, kwargs)."""
        return _register(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each step."""
        return _register(self._step_post_hooks, hook)

    @staticmethod
    def _with_hooks(step):
        @functools.wraps(step)
        def wrapper(self, *args, **kwargs):
            with record_function(f'Optimizer.step#{type(self).__name__}.step'):    # torch's profiler row
                # a subclass that never calls Optimizer.__init__ (accelerate's AcceleratedOptimizer wraps another
                # optimizer) has no hooks of its own, as torch, which installs them in __init__
                for hook in [*_global_optimizer_pre_hooks.values(),
                             *getattr(self, '_step_pre_hooks', _NO_HOOKS).values()]:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if not (isinstance(r, tuple) and len(r) == 2):
                            raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), "
                                               f"but got {r}.")
                        args, kwargs = r
                out = step(self, *args, **kwargs)
                for hook in [*getattr(self, '_step_post_hooks', _NO_HOOKS).values(),
                             *_global_optimizer_post_hooks.values()]:
                    hook(self, args, kwargs)
                return out
        return wrapper

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if 'step' in cls.__dict__:
            cls.step = Optimizer._with_hooks(cls.__dict__['step'])

    # --- state dicts -------------------------------------------------------------
    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` as torch."""
        index, groups, start = {}, [], 0
        for g in self.param_groups:
            ids = list(range(start, start + len(g['params'])))
            index.update({id(p): i for p, i in zip(g['params'], ids)})
            groups.append({**{k: v for k, v in g.items() if k != 'params'}, 'params': ids})
            start += len(ids)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {'state': state, 'param_groups': groups}

    def load_state_dict(self, state_dict):
        groups, saved = self.param_groups, state_dict['param_groups']
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g['params']) != len(s['params']) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {i: p for g, s in zip(groups, saved) for i, p in zip(s['params'], g['params'])}
        self.state = collections.defaultdict(dict)
        for k, v in state_dict['state'].items():
            k = int(k)
            if k in id_map:
                p = id_map[k]
                self.state[p] = {name: _cast_state(p, name, val) for name, val in v.items()}
        self.param_groups = [{**s, 'params': g['params']} for g, s in zip(groups, saved)]

    def step(self, closure=None):
        raise NotImplementedError

    # sparse gradients (nn.Embedding(sparse=True)): the optimizers whose step takes them say so, the others
    # raise torch's error rather than densify them
    _sparse_ok = False
    _sparse_error = None

    def _groups_with_state(self, init):
        """``(group, params, states)`` per group, for parameters that have a gradient; a parameter's
        state is created by ``init(param, group)`` the first time it is seen."""
        for group in self.param_groups:
            params = [p for p in group['params'] if p.grad is not None]
            if not self._sparse_ok and any(p.grad.is_sparse for p in params):
                raise RuntimeError(self._sparse_error or f"{type(self).__name__} does not support sparse gradients")
            states = []
            for p in params:
                st = self.state[p]
                if not st:
                    st.update(init(p, group))
                states.append(st)
            yield group, params, states


def _cast_state(param, name, value):
    """State tensors follow the parameter's dtype and device, except ``step`` (torch's rule)."""
    if isinstance(value, Tensor):
        if name == 'step':
            return value.to(device=param.device)
        if value.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cast_state(param, name, v) for v in value]
    return value


def _register(hooks, hook):
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    return h


def _zeros0():
    """A fresh ``step`` counter: a 0-dim float32 tensor, as torch keeps it."""
    return ember.tensor(0., dtype=ember.float32)


def _closure_loss(closure):
    if closure is None:
        return None
    from ..autograd.grad_mode import enable_grad
    with enable_grad():
        return closure()


def _params_with_grad(group):
    return [p for p in group['params'] if p.grad is not None]


def _check_lr(lr):
    if isinstance(lr, Tensor):
        lr = lr.item()
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")

