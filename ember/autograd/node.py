"""The autograd graph: Node, AccumulateGrad and saved variables.

A Node is one backward function. ``next_functions`` holds one edge per
differentiable input: ``(node, input_nr)`` where ``node`` is the input's
``grad_fn``, its AccumulateGrad (a leaf that requires grad) or None. Nodes for
operators are generated from the derivative formulas in the operator table
(see kernels.py); the engine (engine.py) runs them.

NOTE [saved outputs]: a node that saves its own output must not keep the
output's ``grad_fn`` (itself) alive through it, or every graph would be a
reference cycle. A SavedVariable of an output keeps only the data and
re-attaches the node when unpacked.
"""
import itertools
import types
import re
import weakref

from ..utils.hooks import RemovableHandle

from .._core.dispatch_key import AUTOGRAD_BIT, FORWARD_AD_BIT, BATCHED_BIT
from .forward import LEVELS as _FW_LEVELS


_SEQ = itertools.count()
_new = object.__new__


# NOTE [lazy node fields]: most nodes never get a hook or metadata, and a forward pass with requires_grad creates
# one node per operator (plus an AccumulateGrad per leaf input whose previous one was freed), so a node's hook
# tables start as one shared, read-only empty mapping on the class: a truth test reads them, ``.get`` and
# ``.values()`` work, and a write (which would change every node) raises. The first registration replaces it
# with the node's own dict. Node.__init__ then sets two fields instead of building five dicts.
_NO_HOOKS = types.MappingProxyType({})


class Node:
    """Base class of backward functions (torch.autograd.graph.Node)."""
    _saved = None           # dict of SavedVariable / values, None once released
    _released = False
    _anomaly_trace = None
    # NOTE [gradient ownership]: True for ember's own nodes, whose backward returns new tensors or passes
    # its incoming gradient on; a node running user code (a custom Function) may return a tensor the user
    # holds, so its outputs are never owned by the engine
    _fresh_outputs = False
    # NOTE [lazy node fields]
    _hooks = _NO_HOOKS
    _pre_hooks = _NO_HOOKS
    _tensor_pre_hooks = _NO_HOOKS    # output_nr -> {id: hook}: Tensor.register_hook on outputs
    _retain_grad_hooks = _NO_HOOKS   # output_nr -> hook
    _metadata = None
    _saved_names = None     # the keys the formulas name (kernels.py)
    _saved_attrs = None     # NOTE [saved attribute names]
    next_functions = ()

    def __init__(self):
        self._seq = next(_SEQ)       # creation order: the engine runs the most recent ready node first

    @property
    def metadata(self):
        m = self._metadata
        if m is None:
            m = self._metadata = {}
        return m

    def name(self):
        return type(self).__name__

    def apply(self, grad_outputs):
        raise NotImplementedError

    def __call__(self, *grads):
        return self.apply(grads)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return new grad_inputs."""
        if self._hooks is _NO_HOOKS:
            self._hooks = {}
        h = RemovableHandle(self._hooks)
        self._hooks[h.id] = fn
        return h

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; it may return new grad_outputs."""
        if self._pre_hooks is _NO_HOOKS:
            self._pre_hooks = {}
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = fn
        return h

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is _NO_HOOKS:
            self._tensor_pre_hooks = {}
        d = self._tensor_pre_hooks.setdefault(output_nr, {})
        h = RemovableHandle(d)
        d[h.id] = fn
        return h

    def _set_retain_grad_hook(self, output_nr, fn):
        if self._retain_grad_hooks is _NO_HOOKS:
            self._retain_grad_hooks = {}
        self._retain_grad_hooks[output_nr] = fn

    def __repr__(self):     # the class name, as torch's (an AccumulateGrad's name() is torch's C++ name)
        return f'<{type(self).__name__} object at {hex(id(self))}>'

    def __getattr__(self, name):
        # ``_saved_self`` / ``_raw_saved_self``: introspection of what the node saved (as torch's nodes do)
        if name.startswith('_saved_') or name.startswith('_raw_saved_'):
            return _saved_attr(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        # torch's nodes list their saved values (``_saved_dim``, ``_raw_saved_self``) and nothing of ember's
        # bookkeeping: libraries find what a node saved with ``[a for a in dir(node) if a.startswith('_saved')]``
        saved = self.__dict__.get('_saved') or {}
        # only what this node saved: a formula may not save an input whose partner needs no gradient
        names = {a: k for a, k in _attr_table(self, saved).items() if k in saved}
        raw = {'_raw_saved_' + a for a, k in names.items() if _is_saved_tensor(saved.get(k))}
        return sorted((set(super().__dir__()) - _BOOKKEEPING) | {'_saved_' + a for a in names} | raw)

    def _release(self):
        """Free the saved tensors (after backward without retain_graph). A node that saved no tensor can
        run again, as in torch; one that did raises "Trying to backward through the graph a second time"."""
        saved = self._saved
        if saved:
            for v in saved.values():
                if v.__class__ is SavedVariable or (isinstance(v, (tuple, list)) and v and
                                                    isinstance(v[0], SavedVariable)):
                    self._saved = None
                    self._released = True
                    return


_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
          "have already been freed). Saved intermediate values of the graph are freed when you call "
          ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
          "graph a second time or if you need to access saved tensors after calling backward.")


# NOTE [saved attribute names]: a node shows what it saved as torch's generated nodes do, ``_saved_<name>``,
# and torch-pruning and friends branch on those names. An argument saved under its own name keeps it
# (``_saved_dim``, ``_saved_split_sizes``); of a tensor's metadata (a formula's ``self_sizes``, NOTE in
# kernels.py) torch shows the sizes, strides and numel as symbolic values (``_saved_self_sym_sizes``) and no
# dtype, device, offset or rank, so neither does ember, and ``_saved_self_sizes`` does not exist. A node class
# gives the table from torch's name to its saved key in ``_saved_attrs``; a node without one (a custom
# Function's) shows its saved keys as they are.
_TORCH_META = {'_sizes': '_sym_sizes', '_strides': '_sym_strides', '_numel': '_sym_numel'}
_BOOKKEEPING = frozenset({'_saved', '_saved_names', '_saved_attrs'})


def saved_attrs(names, meta_suffix):
    """torch's attribute name (after ``_saved_``) -> saved key, for the saved ``names``; ``meta_suffix(name)`` is
    the metadata suffix of a name that saves a tensor's metadata, else None."""
    table = {}
    for n in names:
        suf = meta_suffix(n)
        if suf is None:
            table[n] = n
        elif suf in _TORCH_META:
            table[n[:-len(suf)] + _TORCH_META[suf]] = n
    return table


def _attr_table(node, saved):
    table = type(node)._saved_attrs
    return table if table is not None else {k: k for k in saved}


def _is_saved_tensor(v):
    return v.__class__ is SavedVariable or (isinstance(v, (tuple, list)) and bool(v) and
                                            isinstance(v[0], SavedVariable))


def _saved_attr(node, name):
    raw = name.startswith('_raw_saved_')
    attr = name[len('_raw_saved_'):] if raw else name[len('_saved_'):]
    saved = node.__dict__.get('_saved')
    table = _attr_table(node, saved or {})
    key = table.get(attr)
    if key is None and saved and attr in saved and attr not in (type(node)._saved_names or ()):
        key = attr      # a value saved beside the named ones: ``result`` when the formulas name ``results``
    if key is None or (saved is not None and not node._released and key not in saved):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    if node._released or saved is None:
        raise RuntimeError(_FREED)
    v = saved[key]
    if raw:
        if isinstance(v, SavedVariable):
            return SavedTensor(v, node, key)
        if isinstance(v, (tuple, list)) and v and isinstance(v[0], SavedVariable):
            return type(v)(SavedTensor(x, node, key) for x in v)
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    if isinstance(v, SavedVariable):
        return v.unpack(node, key)
    if isinstance(v, (tuple, list)) and v and isinstance(v[0], SavedVariable):
        return type(v)(x.unpack(node, key) for x in v)
    return _as_tuples(v)


def _as_tuples(v):
    """torch hands out saved int lists (dims, sizes) as tuples, nested ones too (torchviz hashes them)."""
    return tuple(_as_tuples(x) for x in v) if isinstance(v, list) else v


class SavedTensor:
    """``node._raw_saved_self``: a handle on one saved tensor (torch._C._autograd.SavedTensor)."""

    def __init__(self, sv, node, name):
        self._sv, self._node, self._name = sv, node, name

    def register_hooks(self, pack_hook, unpack_hook):
        """Re-pack the saved tensor through ``pack_hook`` now; backward will call ``unpack_hook``."""
        sv = self._sv
        if sv.unpack_hook is not None:
            raise RuntimeError("SavedTensor hooks have already been set. Please only call register_hooks once.")
        if sv.data is None:
            raise RuntimeError(_FREED)
        t = sv.data
        sv.packed = pack_hook(t)
        sv.unpack_hook = unpack_hook
        sv.data = None

    def unpack(self):
        return self._sv.unpack(self._node, self._name)

    @property
    def data(self):
        return self.unpack()


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds incoming gradients into ``variable.grad``."""

    def __init__(self, variable):      # leaf_edge builds one without this __init__: keep both in step
        super().__init__()
        self.variable = variable

    def name(self):
        return 'torch::autograd::AccumulateGrad'     # torch's C++ name, which user code may compare

    def apply(self, grad_outputs):
        from .engine import accumulate_grad
        accumulate_grad(self.variable, grad_outputs[0])
        return ()


def gradient_edge(t):
    """The edge through which gradient flows into tensor ``t``: its grad_fn, or its AccumulateGrad."""
    fn = t._grad_fn
    if fn is not None:
        b = t._base
        if b is not None and (b._hist != t._hist or t._creation_meta):
            from .views import view_edge      # NOTE [view history], NOTE [view creation meta]
            return view_edge(t)
        return (fn, t._output_nr)
    if t._requires_grad:
        return leaf_edge(t)
    if t._creation_meta:        # a view made with grad mode off: no edge (NOTE [view creation meta])
        from .views import check_view_version
        check_view_version(t)
    return (None, 0)


def leaf_edge(t):
    """The edge into leaf ``t``: its AccumulateGrad, made anew when the previous one died (a leaf holds its
    accumulator weakly, as torch's does, so a graph that is gone frees it)."""
    ref = t._acc_ref
    node = ref() if ref is not None else None
    if node is None:
        node = _new(AccumulateGrad)     # AccumulateGrad(t), without the two __init__ frames
        node._seq = next(_SEQ)
        node.variable = t
        t._acc_ref = weakref.ref(node)
    return (node, 0)


def grad_accumulator(t):
    return leaf_edge(t)[0]


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved (NOTE [version counter])."""
    __slots__ = ('data', 'version', 'is_output', 'output_nr', 'requires_grad', 'packed', 'unpack_hook',
                 'leaf_ref', 'name', 'fw_ref')

    def __init__(self, t, is_output=False, hooks=None):
        if t._is_inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created "
                               "in inference mode in computation tracked by autograd. To work around this, you can "
                               "make a clone to get a normal tensor and use it in autograd, or use "
                               "`ember.no_grad()` instead of `ember.inference_mode()`.")
        self.version = t._vc[0]
        self.is_output = is_output
        self.output_nr = t._output_nr
        self.requires_grad = t._requires_grad or t._grad_fn is not None
        self.unpack_hook = None
        self.leaf_ref = None
        self.fw_ref = None
        if is_output:
            if _FW_LEVELS.stack:    # NOTE [forward AD]: the output's tangent is attached after it is saved
                self.fw_ref = weakref.ref(t)
            t = _strip_grad_fn(t)   # NOTE [saved outputs]
        if hooks is not None:
            pack, self.unpack_hook = hooks
            self.packed = pack(t)
            self.data = None
        else:
            self.data = t

    def unpack(self, node, name):
        t = self.data if self.unpack_hook is None else self.unpack_hook(self.packed)
        if self.unpack_hook is None and t._vc[0] != self.version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{_type_str(t)} {list(t.shape)}]{_producer(t, node, self)} is at version {t._vc[0]}; "
                f"expected version {self.version} "
                f"instead. Hint: enable anomaly detection to find the operation that failed to compute its "
                f"gradient, with ember.autograd.set_detect_anomaly(True).")
        if self.is_output:
            out = _strip_grad_fn(t)
            if not self.requires_grad:      # an output without gradient (a mask, indices): no history to attach
                return out
            src = self.fw_ref() if self.fw_ref is not None else None
            if src is not None and src._fw is not None:
                out._fw, out._keys = src._fw, out._keys | (src._keys & FORWARD_AD_BIT)
            out._grad_fn = node
            out._output_nr = self.output_nr
            out._keys |= AUTOGRAD_BIT
            return out
        return t


def _strip_grad_fn(t):
    """A new handle on the same data and version counter, with no autograd history."""
    from .._core.tensor_impl import make_tensor
    s = make_tensor(t._a, t._dtype, t._device)
    s._vc, s._storage, s._base = t._vc, t._storage, t._base
    s._offset, s._strides = t._offset, t._strides      # where in the storage it lies (a view filled in place)
    if t._fw is not None:       # NOTE [forward AD]: a saved output keeps its tangents (torch saves its fw_grad)
        s._fw, s._keys = t._fw, s._keys | (t._keys & FORWARD_AD_BIT)
    if t._bt is not None:       # NOTE [vmap]: and a BatchedTensor its batch
        s._bt, s._keys = t._bt, s._keys | (t._keys & BATCHED_BIT)
    if t._grad_fn is None and t._requires_grad:
        return t       # a leaf stays itself, so its gradient edge stays its AccumulateGrad
    return s


def _producer(t, node, saved):
    """torch's ", which is output 0 of Mul," (its node's name without "Backward0"); nothing for a leaf."""
    fn = node if saved.is_output else t._grad_fn
    if fn is None:
        return ''
    return f", which is output {saved.output_nr} of {re.sub(r'Backward[0-9]*$', '', fn.name())},"


def _type_str(t):
    from .._core.dtype import legacy_type_name
    return legacy_type_name(t.dtype)
