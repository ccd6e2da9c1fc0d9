"""``nn.Module``: the base class of every layer.

A Module keeps its parameters, buffers and submodules in three ordered dicts
filled by ``__setattr__`` (so ``self.w = Parameter(...)`` registers ``w``), and
everything else (``parameters()``, ``state_dict()``, ``to()``, hooks, ``repr``)
walks those dicts the way torch.nn.Module does. Calling a module with no hooks
anywhere is one dict-emptiness test and ``forward`` (torch's ``_call_impl``
fast path): the MLP benchmark depends on it.
"""
import functools
import itertools
import typing
from ember._warn import warnings
import weakref
from ...utils.hooks import RemovableHandle
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor
from ... import _functions as _E
from ... import float16, float32, float64, bfloat16, dtype as _dtype
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, Buffer, is_lazy

__all__ = ['Module', 'register_module_forward_pre_hook', 'register_module_forward_hook',
           'register_module_backward_hook', 'register_module_full_backward_hook',
           'register_module_full_backward_pre_hook',
           'register_module_buffer_registration_hook', 'register_module_module_registration_hook',
           'register_module_parameter_registration_hook']




class _IncompatibleKeys(namedtuple('IncompatibleKeys', ['missing_keys', 'unexpected_keys'])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return '<All keys matched successfully>'
        return super().__repr__()

    __str__ = __repr__


_EXTRA_STATE_KEY_SUFFIX = '_extra_state'     # the state_dict key of get_extra_state(), as torch names it
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
# True: the global backward hooks are full ones; False: non-full (register_module_backward_hook); None: none yet
_global_is_full_backward_hook = None
_MIXED_GLOBAL = ("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                 "Please use only one of them.")


def register_module_forward_pre_hook(hook):
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook, *, always_call=False):
    h = RemovableHandle(_global_forward_hooks, extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[h.id] = hook
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_backward_hook(hook):
    """Deprecated non-full backward hook for every module (see ``Module.register_backward_hook``)."""
    return _register_global_backward_hook(hook, full=False)


def register_module_full_backward_hook(hook):
    return _register_global_backward_hook(hook, full=True)


def _register_global_backward_hook(hook, full):
    """Every module's backward hooks are all full or all not, as torch's: mixing the two kinds raises."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError(_MIXED_GLOBAL)
    _global_is_full_backward_hook = full
    h = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[h.id] = hook
    return h


def register_module_full_backward_pre_hook(hook):
    h = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[h.id] = hook
    return h


# hooks every module runs when a parameter, buffer or submodule is registered: ``hook(module, name, value)`` may
# return a replacement (torch's register_module_*_registration_hook)
_global_parameter_registration_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()


def _add_hook(hooks, hook):
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    return h


def register_module_parameter_registration_hook(hook):
    return _add_hook(_global_parameter_registration_hooks, hook)


def register_module_buffer_registration_hook(hook):
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    return _add_hook(_global_module_registration_hooks, hook)


def _registered(hooks, module, name, value):
    for hook in hooks.values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


def _addindent(s_, num_spaces):
    s = s_.split('\n')
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * ' ') + line for line in s]
    return first + '\n' + '\n'.join(s)


def _typename(v):
    if isinstance(v, Tensor):
        return v.type()     # the legacy type name, as torch's messages give it
    m = type(v).__module__
    return (m + '.' if m not in ('builtins', None) else '') + type(v).__qualname__


def _backward_hook_function():
    """An identity autograd Function whose backward hands all its gradients to a callback at once
    (torch's BackwardHookFunction); built on first use, after ember.autograd is ready."""
    global _BHF
    if _BHF is None:
        from ...autograd import Function

        class BackwardHookFunction(Function):
            @staticmethod
            def forward(ctx, fn, *tensors):
                ctx.fn = fn
                return tuple(t.view_as(t) for t in tensors)

            @staticmethod
            def backward(ctx, *grads):
                return (None,) + tuple(ctx.fn(grads))
        _BHF = BackwardHookFunction
    return _BHF


_BHF = None


def _call_non_full_hook(module_ref, hook, grad_inputs, grad_outputs):
    module = module_ref()
    if module is None:
        raise RuntimeError("You are trying to call the hook of a dead Module!")
    return hook(module, grad_inputs, grad_outputs)


def _maybe_warn_non_full_backward_hook(inputs, result, grad_fn):
    """torch's FutureWarnings for a non-full hook whose grad_fn is not the whole module (its
    ``Module._maybe_warn_non_full_backward_hook``)."""
    def tensors(v):
        return (v,) if isinstance(v, Tensor) else v if isinstance(v, tuple) and all(
            isinstance(t, Tensor) for t in v) else None
    result, inputs = tensors(result), tensors(inputs)
    msg = None
    if result is None:
        msg = ("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
               "Tensors is deprecated and will be removed in future versions. This hook will be missing some of "
               "the grad_output. Please use register_full_backward_hook to get the documented behavior.")
    elif inputs is None:
        msg = ("Using non-full backward hooks on a Module that does not take as input a single Tensor or a tuple "
               "of Tensors is deprecated and will be removed in future versions. This hook will be missing some of "
               "the grad_input. Please use register_full_backward_hook to get the documented behavior.")
    else:
        out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
            msg = ("Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                   "and will be removed in future versions. This hook will be missing some grad_output.")
        elif len(out_fns) > 1:
            msg = ("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                   "deprecated and will be removed in future versions. This hook will be missing some "
                   "grad_output. Please use register_full_backward_hook to get the documented behavior.")
        elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
            msg = ("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                   "deprecated and will be removed in future versions. This hook will be missing some "
                   "grad_input. Please use register_full_backward_hook to get the documented behavior.")
    if msg:
        warnings.warn(msg, FutureWarning, stacklevel=4)


class _BackwardHook:
    """Full backward (pre-)hooks, as torch's ``BackwardHook``: the module's tensor inputs and outputs pass
    through identity Functions. The outputs' one sees every grad_output (pre-hooks may replace them); the
    inputs' one sees every grad_input, calls ``hook(module, grad_input, grad_output)`` and passes on what
    the hooks return. With no input requiring grad the hooks run on the outputs' side with Nones."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.in_idx, self.n_args = [], 0

    def _wrap(self, tensors, fn):
        out = _backward_hook_function().apply(fn, *tensors)
        return out if isinstance(out, tuple) else (out,)

    def setup_input(self, args):
        self.n_args = len(args)
        self.in_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        # tensor inputs that need no grad get zeros in grad_input, as torch gives them
        self.no_grad_in = {i: a for i, a in enumerate(args) if isinstance(a, Tensor) and not a.requires_grad}
        if not self.in_idx or not self.hooks:
            return args
        new = self._wrap([args[i] for i in self.in_idx], self._on_input_grads)
        out = list(args)
        for k, i in enumerate(self.in_idx):
            out[i] = new[k]
        return tuple(out)

    def setup_output(self, result):
        single = isinstance(result, Tensor)
        outs = [result] if single else list(result) if isinstance(result, tuple) else None
        if outs is None:
            warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of Tensors"
                          f" but received {type(result)}", stacklevel=3)
            return result
        self.n_out = len(outs)
        self.out_idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        if not self.out_idx:
            return result
        new = self._wrap([outs[i] for i in self.out_idx], self._on_output_grads)
        for k, i in enumerate(self.out_idx):
            outs[i] = new[k]
        return outs[0] if single else tuple(outs)

    def _on_output_grads(self, grads):
        go = [None] * self.n_out
        for k, i in enumerate(self.out_idx):
            go[i] = grads[k]
        go = tuple(go)
        for hook in self.pre_hooks:
            r = hook(self.module, go)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(go):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(r)}, "
                                       f"but expected {len(go)}")
                go = r
        self.grad_outputs = go
        if not self.in_idx and self.hooks:
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=5)
            gi = (None,) * self.n_args
            for hook in self.hooks:
                hook(self.module, gi, go)
        return [go[i] for i in self.out_idx]

    def _on_input_grads(self, grads):
        gi = [None] * self.n_args
        for k, i in enumerate(self.in_idx):
            gi[i] = grads[k]
        for i, a in self.no_grad_in.items():
            gi[i] = _E.zeros_like(a)
        gi = tuple(gi)
        go = self.grad_outputs if self.grad_outputs is not None else ()
        for hook in self.hooks:
            r = hook(self.module, gi, go)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(gi):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(r)}, but "
                                       f"expected {len(gi)}")
                gi = r
        return [gi[i] for i in self.in_idx]


class Module:
    """Base class for all neural network modules.

    >>> import ember
    >>> from ember import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(2, 3)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> [n for n, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
    """
    T_destination = typing.TypeVar('T_destination', bound=typing.Dict[str, typing.Any])   # state_dict's typing
    dump_patches = False
    _version = 1
    call_super_init = False
    training: bool

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        d = self.__dict__
        d['training'] = True
        d['_parameters'] = {}
        d['_buffers'] = {}
        d['_non_persistent_buffers_set'] = set()
        d['_backward_pre_hooks'] = OrderedDict()
        d['_backward_hooks'] = OrderedDict()
        d['_is_full_backward_hook'] = None
        d['_forward_hooks'] = OrderedDict()
        d['_forward_hooks_with_kwargs'] = OrderedDict()
        d['_forward_hooks_always_called'] = OrderedDict()
        d['_forward_pre_hooks'] = OrderedDict()
        d['_forward_pre_hooks_with_kwargs'] = OrderedDict()
        d['_state_dict_hooks'] = OrderedDict()
        d['_state_dict_pre_hooks'] = OrderedDict()
        d['_load_state_dict_pre_hooks'] = OrderedDict()
        d['_load_state_dict_post_hooks'] = OrderedDict()
        d['_modules'] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # --- registration ---------------------------------------------------------------
    def _check_slot_name(self, kind, table, name):
        """torch's checks before registering a buffer or parameter called ``name``."""
        if table not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if '.' in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if name == '':
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in self.__dict__[table]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        self._check_slot_name('buffer', '_buffers', name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
        if _global_buffer_registration_hooks:
            tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        self._check_slot_name('parameter', '_parameters', name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        else:
            if _global_parameter_registration_hooks:
                param = _registered(_global_parameter_registration_hooks, self, name, param)
            self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if '.' in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == '':
            raise KeyError("module name can't be empty string \"\"")
        if _global_module_registration_hooks:
            module = _registered(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name, module):
        self.add_module(name, module)

    def get_submodule(self, target):
        if target == '':
            return self
        mod = self
        for item in target.split('.'):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        if target == '':
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split('.')
        parent = self.get_submodule('.'.join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition('.')
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, buffer_name = target.rpartition('.')
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # --- attribute protocol -------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        if '_parameters' in d:
            p = d['_parameters']
            if name in p:
                return p[name]
        if '_buffers' in d:
            b = d['_buffers']
            if name in b:
                return b[name]
        if '_modules' in d:
            m = d['_modules']
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*dicts_or_sets):
            for s in dicts_or_sets:
                if name in s:
                    if isinstance(s, dict):
                        del s[name]
                    else:
                        s.discard(name)

        params = d.get('_parameters')
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get('_modules')
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                if _global_module_registration_hooks:
                    value = _registered(_global_module_registration_hooks, self, name, value)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                if _global_module_registration_hooks:
                    value = _registered(_global_module_registration_hooks, self, name, value)
                modules[name] = value
            else:
                buffers = d.get('_buffers')
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    persistent = value.persistent if isinstance(value, Buffer) else \
                        name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for k in ('_forward_pre_hooks', '_forward_pre_hooks_with_kwargs', '_forward_hooks_with_kwargs',
                  '_forward_hooks_always_called', '_state_dict_hooks', '_state_dict_pre_hooks',
                  '_load_state_dict_pre_hooks', '_load_state_dict_post_hooks', '_backward_pre_hooks'):
            if k not in self.__dict__:
                self.__dict__[k] = OrderedDict()
        if '_non_persistent_buffers_set' not in self.__dict__:
            self._non_persistent_buffers_set = set()
        if '_is_full_backward_hook' not in self.__dict__:
            self._is_full_backward_hook = None

    def __getstate__(self):
        state = self.__dict__.copy()
        if getattr(state.get('forward'), '_ember_compiled', False):
            del state['forward']     # Module.compile()'s compiled forward is not saved (torch drops _compiled_call_impl)
        return state

    # --- iteration ------------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix='', recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ('.' if module_prefix else '') + k, v

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix='', recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix='', recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix='', remove_duplicate=True):
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                yield from module.named_modules(memo, prefix + ('.' if prefix else '') + name, remove_duplicate)

    # --- modes and conversions -------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    with no_grad():
                        g.copy_(_E.zeros_like(g))

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            param.data = param_applied       # keeps the Parameter object (optimizers hold it)
            if param._grad is not None:
                with no_grad():
                    g = fn(param._grad)
                param._grad = g
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        device, dtype, non_blocking, memory_format = _parse_module_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")
        fmt = lambda t: {'memory_format': memory_format} if memory_format is not None and t.dim() in (4, 5) else {}

        def convert(t):
            if t.is_floating_point() or t.is_complex():
                return t.to(device, dtype, **fmt(t)) if dtype is not None else t.to(device, **fmt(t))
            return t.to(device, **fmt(t))
        return self._apply(convert)

    def _cast_float(self, dt):
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def float(self):
        return self._cast_float(float32)

    def double(self):
        return self._cast_float(float64)

    def half(self):
        return self._cast_float(float16)

    def bfloat16(self):
        return self._cast_float(bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def xpu(self, device=None):
        return self._apply(lambda t: t.to('xpu' if device is None else device))

    def ipu(self, device=None):
        return self._apply(lambda t: t.to('ipu' if device is None else device))

    def mtia(self, device=None):
        return self._apply(lambda t: t.to('mtia' if device is None else device))

    def to_empty(self, *, device=None, recurse=True):
        from ... import _functions as F
        return self._apply(lambda t: F.empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        """Move every parameter, gradient and buffer into shared memory in place (see Tensor.share_memory_)."""
        return self._apply(lambda t: t.share_memory_())

    # --- state dict --------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if getattr(self.__class__, 'get_extra_state', Module.get_extra_state) is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix='', keep_vars=False):
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead.", FutureWarning, stacklevel=2)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, '_metadata'):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + '.', keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        assign = local_metadata.get('assign_to_params_buffers', False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f'Tensor-like object from checkpoint but received {type(input_param)}')
                continue
            lazy = is_lazy(param)       # a lazy module's parameter the checkpoint has no value for either
            if not lazy and param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if not lazy and tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f'{param.size()} and whose dimensions in the checkpoint are '
                                  f'{input_param.size()}, an exception occurred : {ex.args}.')
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, 'set_extra_state', Module.set_extra_state) is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split('.', 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        from collections.abc import Mapping
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, '_metadata', None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=''):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata['assign_to_params_buffers'] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + '.'
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be "
                                         "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ', '.join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ', '.join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    def register_state_dict_pre_hook(self, hook):
        h = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook):
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = functools.partial(hook, self)
        return h

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = functools.partial(hook, self) if with_module else hook
        return h

    def register_load_state_dict_post_hook(self, hook):
        h = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    # --- hooks -------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        h = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        h = RemovableHandle(self._forward_hooks,
                            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend=False):
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_hook(self, hook, prepend=False):
        return self._register_backward_hook(hook, full=True, prepend=prepend)

    def _register_backward_hook(self, hook, full, prepend=False):
        """A module's backward hooks are all full or all not, as torch's: mixing the two kinds raises."""
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = full
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_backward_hook(self, hook):
        """Deprecated non-full backward hook, as torch runs it: ``hook(module, grad_input, grad_output)`` is
        registered on the ``grad_fn`` of the forward's (first) output, so it sees that LAST autograd node's
        gradients (for ``nn.Linear``, addmm's three) and may return new ones. The forward warns
        (FutureWarning) where that differs from the module's inputs; use ``register_full_backward_hook``.

        >>> lin = ember.nn.Linear(4, 3)
        >>> h = lin.register_backward_hook(lambda m, gi, go: print(len(gi), len(go)))
        >>> lin(ember.randn(2, 4)).sum().backward()
        3 1
        """
        return self._register_backward_hook(hook, full=False)

    def _get_backward_hooks(self):
        """(full hooks, non-full hooks) this call runs: global ones first, as torch orders them."""
        full, non_full = [], []
        for is_full, hooks in ((_global_is_full_backward_hook, _global_backward_hooks),
                               (self._is_full_backward_hook, self._backward_hooks)):
            if hooks:
                (full if is_full else non_full).extend(hooks.values())
        return full, non_full

    def _register_non_full_backward_hooks(self, args, result, hooks):
        """torch's non-full path: the hooks go on the grad_fn of the output's first tensor."""
        var = result
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        ref = weakref.ref(self)
        for hook in hooks:
            grad_fn.register_hook(functools.update_wrapper(functools.partial(_call_non_full_hook, ref, hook), hook))
        _maybe_warn_non_full_backward_hook(args, result, grad_fn)

    # --- calling -----------------------------------------------------------------------
    def compile(self, *args, **kwargs):
        """Compile this module's forward in place with ``ember.compile(*args, **kwargs)`` (torch's
        ``Module.compile``): the module object stays the same, its calls run the compiled forward (hooks run
        around it, eagerly)."""
        from ... import compile as _compile
        compiled = _compile(type(self).forward.__get__(self), *args, **kwargs)
        compiled.owner = self           # a graph break compiles the children, as for ember.compile(module)
        self.__dict__['forward'] = compiled

    def _call_impl(self, *args, **kwargs):
        d = self.__dict__
        if not (d['_forward_hooks'] or d['_forward_pre_hooks'] or d['_backward_hooks'] or d['_backward_pre_hooks']
                or _global_forward_hooks or _global_forward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    __call__ = _call_impl
    _compiled_call_impl = None      # torch's slot for Module.compile(); ember keeps the compiled forward instead

    def _wrapped_call_impl(self, *args, **kwargs):
        return self._call_impl(*args, **kwargs)

    def _slow_forward(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        result = None
        called = set()
        try:
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if isinstance(r, tuple) and len(r) == 2:
                            args, kwargs = r
                        else:
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {r}.")
                else:
                    r = hook(self, args)
                    if r is not None:
                        args = r if isinstance(r, tuple) else (r,)
            bw_hooks, non_full = self._get_backward_hooks() if (_global_backward_hooks or self._backward_hooks) \
                else ((), ())
            bw_pre = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
            bw = None
            if bw_hooks or bw_pre:
                from ...autograd.grad_mode import is_grad_enabled
                if is_grad_enabled():
                    bw = _BackwardHook(self, bw_hooks, bw_pre)
                    args = bw.setup_input(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                    called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r
            if bw is not None:
                result = bw.setup_output(result)
            if non_full:
                self._register_non_full_backward_hooks(args, result, non_full)
            return result
        except Exception:
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                always = hook_id in self._forward_hooks_always_called or \
                    hook_id in _global_forward_hooks_always_called
                if always and hook_id not in called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            r = hook(self, args, kwargs, result)
                        else:
                            r = hook(self, args, result)
                        if r is not None:
                            result = r
                    except Exception as e:
                        warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                      f"silenced as another error was raised in forward: {e}", stacklevel=2)
            raise

    # --- printing ----------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        return ''

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split('\n')
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append('(' + key + '): ' + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main_str = self._get_name() + '('
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += '\n  ' + '\n  '.join(lines) + '\n'
        return main_str + ')'

    def _replicate_for_data_parallel(self):
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = dict(replica._parameters)
        replica._buffers = dict(replica._buffers)
        replica._modules = dict(replica._modules)
        return replica


def _parse_module_to(args, kwargs):
    """``Module.to``'s arguments: ``(device)``, ``(dtype)``, ``(device, dtype)``, ``(tensor)``, keywords."""
    device = kwargs.pop('device', None)
    dtype = kwargs.pop('dtype', None)
    non_blocking = kwargs.pop('non_blocking', False)
    memory_format = kwargs.pop('memory_format', None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, bool):
            non_blocking = a
        elif a is not None:
            device = a
    return device, dtype, non_blocking, memory_format
