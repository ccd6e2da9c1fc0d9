"""``GradScaler``: dynamic loss scaling for mixed-precision training (torch.amp.GradScaler).

One iteration is ``scale(loss).backward()``, optionally ``unscale_(optimizer)``,
``step(optimizer)``, ``update()``. The scale and the growth tracker are 0-dim
tensors (float32 and int32) made at the first ``scale``; each optimizer moves
through the stages READY -> UNSCALED -> STEPPED between two updates, and the
same misuse torch refuses (unscale_ twice, step twice) raises torch's errors.
``update`` follows torch's ``_amp_update_scale_``: a step that found inf/NaN
multiplies the scale by ``backoff_factor`` and resets the tracker; after
``growth_interval`` clean steps in a row the scale grows by ``growth_factor``.
With ``enabled=False`` every method passes through.
"""
import enum
from ember._warn import warnings
from collections import abc, defaultdict

import ember

__all__ = ['GradScaler', 'OptState']


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {'stage': OptState.READY, 'found_inf_per_device': {}}


def _cuda_available():
    fn = getattr(getattr(ember, 'cuda', None), 'is_available', None)
    return bool(fn()) if fn is not None else False


class GradScaler:
    """Scale the loss so low-precision gradients keep their small values, then unscale them.

    >>> import ember
    >>> model = ember.nn.Linear(2, 1)
    >>> opt = ember.optim.SGD(model.parameters(), lr=0.1)
    >>> scaler = ember.amp.GradScaler('cpu')
    >>> with ember.autocast('cpu'):
    ...     loss = model(ember.ones(4, 2)).float().mean()
    >>> scaler.scale(loss).backward()
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> scaler.get_scale()
    65536.0
    """

    def __init__(self, device='cuda', init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == 'cuda' and enabled and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            self._enabled = False
        if self._enabled:
            assert growth_factor > 1.0, "The growth factor must be > 1.0."
            assert backoff_factor < 1.0, "The backoff factor must be < 1.0."
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        assert self._scale is not None, f"Attempted {funcname} but _scale is None.  " + fix
        assert self._growth_tracker is not None, f"Attempted {funcname} but _growth_tracker is None.  " + fix
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        assert self._growth_tracker is None, "_growth_tracker initialized before _scale"
        self._scale = ember.full((), self._init_scale, dtype=ember.float32, device=dev)
        self._growth_tracker = ember.full((), self._init_growth_tracker, dtype=ember.int32, device=dev)

    def scale(self, outputs):
        """Multiply ``outputs`` (a tensor or nested iterables of tensors) by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, ember.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply_scale(val):
            if isinstance(val, ember.Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_found_inf = {}
        with ember.no_grad():
            for group in optimizer.param_groups:
                for param in group['params']:
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype == ember.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = param.grad
                    dev = str(grad.device)
                    if dev not in per_device_found_inf:
                        per_device_found_inf[dev] = found_inf.to(grad.device, copy=True)
                    # torch's _amp_foreach_non_finite_check_and_unscale_: flag any inf/NaN, always unscale
                    if not bool(ember.isfinite(grad).all()):
                        per_device_found_inf[dev].fill_(1.0)
                    grad.mul_(inv_scale.to(grad.device))
        return per_device_found_inf

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale in place (once per iteration), e.g.
        before gradient clipping."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state['stage'] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        elif state['stage'] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = ember.full((), 0.0, dtype=ember.float32, device=self._scale.device)
        state['found_inf_per_device'] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state['stage'] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in optimizer_state['found_inf_per_device'].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscale (if not done yet) and call ``optimizer.step()`` unless a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if 'closure' in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state['stage'] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state['stage'] is OptState.READY:
            self.unscale_(optimizer)
        assert len(optimizer_state['found_inf_per_device']) > 0, "No inf checks were recorded for this optimizer."
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state['stage'] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Back off the scale after a skipped step, or grow it after ``growth_interval`` clean steps."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                assert new_scale.device.type == self._device, reason
                assert new_scale.numel() == 1, reason
                assert new_scale.requires_grad is False, reason
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state['found_inf_per_device'].values()]
            assert len(found_infs) > 0, "No inf checks were recorded prior to update."
            found_inf_combined = found_infs[0]
            for f in found_infs[1:]:
                found_inf_combined = found_inf_combined + f
            # torch._amp_update_scale_
            if found_inf_combined.item():
                _scale.mul_(self._backoff_factor)
                _growth_tracker.fill_(0)
            else:
                successful = _growth_tracker.item() + 1
                if successful == self._growth_interval:
                    grown = _scale * self._growth_factor
                    if bool(ember.isfinite(grown)):
                        _scale.copy_(grown)
                    _growth_tracker.fill_(0)
                else:
                    _growth_tracker.fill_(successful)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._get_scale_async().item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``{'scale', 'growth_factor', 'backoff_factor', 'growth_interval', '_growth_tracker'}``
        (empty when disabled)."""
        if self._enabled:
            return {'scale': self.get_scale(), 'growth_factor': self._growth_factor,
                    'backoff_factor': self._backoff_factor, 'growth_interval': self._growth_interval,
                    '_growth_tracker': self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict['scale']
        if self._scale is not None:
            self._scale.fill_(state_dict['scale'])
        self._growth_factor = state_dict['growth_factor']
        self._backoff_factor = state_dict['backoff_factor']
        self._growth_interval = state_dict['growth_interval']
        self._init_growth_tracker = state_dict['_growth_tracker']
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict['_growth_tracker'])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            assert len(self._per_optimizer_states) == 0, (
                "A GradScaler instance may only be pickled at the beginning of an iteration, "
                "or at the end after scaler.update().")
            state['_init_scale'] = self.get_scale()
            state['_init_growth_tracker'] = self._get_growth_tracker()
            state['_scale'] = None
            state['_growth_tracker'] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def deprecated_scaler(device, module, doc):
    """The deprecated ``torch.<device>.amp.GradScaler(...)``: ``GradScaler(device, ...)`` after torch's
    FutureWarning (``ember.cpu.amp`` and ``ember.cuda.amp`` each hold one)."""
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                      f"`torch.amp.GradScaler('{device}', args...)` instead.", FutureWarning, stacklevel=2)
        GradScaler.__init__(self, device, init_scale=init_scale, growth_factor=growth_factor,
                            backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
    return type('GradScaler', (GradScaler,), {'__init__': __init__, '__doc__': doc, '__module__': module})
