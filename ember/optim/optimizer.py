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
On the CPU, Adam's eight operators per parameter cost a char-GPT's 53
parameters ~3 ms a step in dispatch (8.7 against 5.8 ms), so there too Adam and
AdamW run the fused operator by default for plain float32/float64 tensors: its
kernel gives the single-tensor update's bits (tests/test_fused_optim.py), and
under a dispatch or function mode, or for a tensor subclass, the single-tensor
update runs, so what those see is torch's sequence of operators.
``fused=True`` runs it on any device, as torch's.
"""
import collections
import copy
import functools
import itertools
from typing import Any, Iterable, Union

import ember
from ..autograd.profiler import record_function
from ..utils.hooks import RemovableHandle
from ember import Tensor, no_grad

_required = object()
required = _required

# what an optimizer's ``params`` may be: tensors, parameter-group dicts, or (name, tensor) pairs (torch's alias)
ParamsT = Union[Iterable[Tensor], Iterable[dict[str, Any]], Iterable[tuple[str, Tensor]]]


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
        for name in _HOOK_DICTS:
            setattr(self, name, collections.OrderedDict())
        self._patch_step_function()
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
        # load_state_dict goes through here too (as torch's), so hooks already registered are kept; an unpickled
        # optimizer gets empty ones (__getstate__ leaves them out)
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                setattr(self, name, collections.OrderedDict())

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
        if not hasattr(self, '_zero_grad_profile_name'):
            self._patch_step_function()
        with record_function(self._zero_grad_profile_name):
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
        """``hook(optimizer, args, kwargs)`` before each step, ``args`` being step's positional arguments with the
        optimizer first (torch's); may return new (args, kwargs)."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each step."""
        return _register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before :meth:`state_dict` builds the dict; ``prepend=True`` runs it before the
        hooks already registered.

        Example::

            >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(2))], lr=0.1)
            >>> h = opt.register_state_dict_pre_hook(lambda o: print('saving'))
            >>> _ = opt.state_dict()
            saving
            >>> h.remove()
        """
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict or None`` after :meth:`state_dict` builds the dict: it may
        change the dict in place or return the one to use instead.

        Example::

            >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(2))], lr=0.1)
            >>> _ = opt.register_state_dict_post_hook(lambda o, sd: {**sd, 'extra': 1})
            >>> sorted(opt.state_dict())
            ['extra', 'param_groups', 'state']
        """
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict or None`` before :meth:`load_state_dict` loads: it gets a
        shallow copy of the dict passed in and may change it or return the one to load instead.

        Example::

            >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(2))], lr=0.1)
            >>> _ = opt.register_load_state_dict_pre_hook(lambda o, sd: print(sorted(sd)))
            >>> opt.load_state_dict(opt.state_dict())
            ['param_groups', 'state']
        """
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after :meth:`load_state_dict` has loaded the state.

        Example::

            >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(2))], lr=0.1)
            >>> _ = opt.register_load_state_dict_post_hook(lambda o: print('loaded'))
            >>> opt.load_state_dict(opt.state_dict())
            loaded
        """
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def _optimizer_step_code(self):
        """Called after every step; torch's profiler hooks this function to look at the parameters. A no-op."""

    @staticmethod
    def profile_hook_step(func):
        """Wrap a ``step`` method: a profiler range ``Optimizer.step#<class>.step`` around the global and the
        optimizer's own step pre hooks, the step, and the post hooks (torch's order)."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            with record_function(f'Optimizer.step#{type(self).__name__}.step'):    # torch's profiler row
                # a subclass that never calls Optimizer.__init__ (accelerate's AcceleratedOptimizer wraps another
                # optimizer) has no hooks of its own, as torch, which installs them in __init__
                for hook in [*_global_optimizer_pre_hooks.values(),
                             *getattr(self, '_optimizer_step_pre_hooks', _NO_HOOKS).values()]:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if not (isinstance(r, tuple) and len(r) == 2):
                            raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), "
                                               f"but got {r}.")
                        args, kwargs = r
                out = func(*args, **kwargs)
                self._optimizer_step_code()
                for hook in [*getattr(self, '_optimizer_step_post_hooks', _NO_HOOKS).values(),
                             *_global_optimizer_post_hooks.values()]:
                    hook(self, args, kwargs)
                return out
        return wrapper

    def _patch_step_function(self):
        """Name zero_grad's profiler range and make sure the class's ``step`` runs the hooks (torch calls this in
        ``__init__``; wrappers that skip ``Optimizer.__init__``, as pytorch_optimizer's Lookahead, call it)."""
        self._zero_grad_profile_name = f'Optimizer.zero_grad#{type(self).__name__}.zero_grad'
        if not getattr(type(self).step, 'hooked', None):
            type(self).step = self.profile_hook_step(type(self).step)
            type(self).step.hooked = True

    def __init_subclass__(cls, **kw):
        # every class that defines step gets the hooks at once (torch patches the class at its first __init__)
        super().__init_subclass__(**kw)
        step = cls.__dict__.get('step')
        if step is not None and callable(step) and not getattr(step, 'hooked', None):
            cls.step = Optimizer.profile_hook_step(step)
            cls.step.hooked = True

    @staticmethod
    def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
        """``{(device, dtype): (lists, indices)}``: torch.utils._foreach_utils' grouping, for optimizers that call it
        through the class."""
        from ..utils._foreach_utils import _group_tensors_by_device_and_dtype
        return _group_tensors_by_device_and_dtype(tensorlistlist, with_indices)

    # --- state dicts -------------------------------------------------------------
    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` as torch: parameters are
        numbered in group order; ``state`` keys that are not parameters (``state['k'] = ...``) stay as they are.

        Example::

            >>> p = ember.nn.Parameter(ember.ones(2))
            >>> opt = ember.optim.SGD([p], lr=0.1)
            >>> opt.state['k'] = 3
            >>> opt.state_dict()['state']
            {'k': 3}
        """
        for hook in getattr(self, '_optimizer_state_dict_pre_hooks', _NO_HOOKS).values():
            hook(self)
        index, groups = {}, []
        for g in self.param_groups:
            start = len(index)
            for i, p in enumerate(g['params'], start):
                index.setdefault(id(p), i)
            groups.append({**{k: v for k, v in g.items() if k != 'params'},
                           'params': [index[id(p)] for p in g['params']]})
        # a tensor key that is no parameter of any group (state left behind by a removed group) is dropped, where
        # torch raises KeyError
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
                 if not isinstance(k, Tensor) or id(k) in index}
        state_dict = {'state': state, 'param_groups': groups}
        for hook in getattr(self, '_optimizer_state_dict_post_hooks', _NO_HOOKS).values():
            r = hook(self, state_dict)
            if r is not None:
                state_dict = r
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        """A loaded state tensor moved to its parameter: ``step`` keeps its dtype (float32 on the parameter's
        device under ``fused``/``capturable``), every other tensor takes a floating parameter's dtype."""
        if param_groups is None:
            raise AssertionError("Expected param_groups to be set")
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg['params']:
                fused, capturable = pg.get('fused', False), pg.get('capturable', False)
                break
        if key == 'step':
            if capturable or fused:
                return value.to(dtype=ember.float32, device=param.device)
            # torch leaves it where it was; ember moves it to the parameter's device, which its fused CUDA Adam
            # (the default there) needs
            return value.to(device=param.device)
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        for hook in getattr(self, '_optimizer_load_state_dict_pre_hooks', _NO_HOOKS).values():
            r = hook(self, state_dict)
            if r is not None:
                state_dict = r
        groups, saved = self.param_groups, copy.deepcopy(state_dict['param_groups'])
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g['params']) != len(s['params']) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(s['params'] for s in saved),
                          itertools.chain.from_iterable(g['params'] for g in groups)))
        state = collections.defaultdict(dict)
        for k, v in state_dict['state'].items():
            if k in id_map:
                p = id_map[k]
                state[p] = _cast(p, v, k, state_dict['param_groups'])
            else:
                state[k] = v        # not a parameter's state (state['k'] = ...): kept as it is, as torch
        for g, s in zip(groups, saved):
            s['params'] = g['params']
            if 'param_names' in g and 'param_names' not in s:
                s['param_names'] = g['param_names']
        self.__setstate__({'state': state, 'param_groups': saved})
        for hook in getattr(self, '_optimizer_load_state_dict_post_hooks', _NO_HOOKS).values():
            hook(self)

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


def _cast(param, value, param_id=None, param_groups=(), key=None):
    """A copy of a loaded state value with its tensors moved to the parameter (torch's load_state_dict rule:
    _process_value_according_to_param_policy); dict entries pass their key down, sequence items none."""
    if isinstance(value, Tensor):
        return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
    if isinstance(value, dict):
        return {k: _cast(param, v, param_id, param_groups, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v, param_id, param_groups) for v in value)
    return value


def _cast_state(param, name, value):
    """One loaded state value moved to ``param`` (no group options: neither fused nor capturable)."""
    return _cast(param, value, None, (), name)


# the hook tables every optimizer has, under torch's attribute names (libraries register into them directly)
_HOOK_DICTS = ('_optimizer_step_pre_hooks', '_optimizer_step_post_hooks',
               '_optimizer_state_dict_pre_hooks', '_optimizer_state_dict_post_hooks',
               '_optimizer_load_state_dict_pre_hooks', '_optimizer_load_state_dict_post_hooks')


def _register(hooks, hook, prepend=False):
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    if prepend:
        hooks.move_to_end(h.id, last=False)
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


def _check_adam_like(lr, eps, betas, weight_decay):
    """The hyperparameter checks the Adam family's constructors make, in torch's order and words."""
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    _check_weight_decay(weight_decay)


def _check_weight_decay(weight_decay):
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")

