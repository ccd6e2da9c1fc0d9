"""The restricted unpickler behind ``ember.load(weights_only=True)`` (NOTE [restricted unpickling]).

Python's own unpickler executes whatever a file names: any importable callable, called with any arguments,
and ``BUILD`` sets attributes on any object. This module is a separate, small interpreter of the pickle
opcodes that checkpoints use (protocols 2 to 5), so that every opcode with an effect beyond building plain
data is checked before it runs:

- ``GLOBAL``/``STACK_GLOBAL`` resolve only names of the allow-list (ember's defaults, torch's names for
  them, and what ``add_safe_globals`` added); anything else raises before the file's objects run.
- ``REDUCE``/``NEWOBJ`` call only allowed callables and construct only allowed classes.
- ``BUILD`` (state setting) applies only to instances of allowed classes that this load constructed itself:
  never to a tensor, a class, a function or any other object the allow-list hands out, so a file cannot
  change ``ember.float32.itemsize`` or a function's defaults for the whole process.
- ``SETITEM(S)``/``APPEND(S)``/``ADDITEMS`` apply only to dicts, lists and sets made during this load.
- Opcodes with no place in a checkpoint (``INST``, ``OBJ``, ``EXT*``, ``PERSID`` by text) are refused.

Errors are ``pickle.UnpicklingError`` naming the opcode or global at fault.
"""
import codecs
import pickle
import struct
from collections import OrderedDict
from ._core import naming

_U = pickle.UnpicklingError


class RestrictedUnpickler:
    """``RestrictedUnpickler(file, allowed, persistent_load).load()``.

    ``allowed`` maps ``(module, name)`` to the object a GLOBAL of that name yields; ``persistent_load(pid)``
    turns a persistent id (a storage) into an object.
    """

    def __init__(self, file, allowed, persistent_load, build_types=()):
        self.read, self.readline = file.read, file.readline
        self.allowed = allowed
        self.persistent_load = persistent_load
        self.handed_out = {id(v) for v in allowed.values()}     # objects a file may name but never mutate
        self.callables = [v for v in allowed.values() if callable(v)]
        self.build_types = tuple(build_types)      # classes whose fresh instances BUILD may set state on
        self.made = set()                          # ids of containers and instances made by this load
        self.memo = {}

    # --- the interpreter loop -------------------------------------------------------------
    def load(self):
        self.stack, self.metastack = [], []
        while True:
            key = self.read(1)
            if not key:
                raise _U("pickle data was truncated")
            op = _OPS.get(key[0])
            if op is None:
                raise _U(f"Weights only load failed: unsupported pickle opcode {key!r} "
                         f"({_NAMES.get(key[0], 'unknown')})")
            if op is _stop:
                if len(self.stack) != 1 or self.metastack:
                    raise _U("pickle data is malformed: the stack does not hold exactly one object at STOP")
                return self.stack[0]
            op(self)

    def _read(self, n):
        data = self.read(n)
        if len(data) != n:
            raise _U("pickle data was truncated")
        return data

    def _line(self):
        line = self.readline()
        if not line.endswith(b'\n'):
            raise _U("pickle data was truncated")
        return line[:-1].decode('utf-8')

    def pop(self):
        if not self.stack:
            raise _U("pickle data is malformed: pop from an empty stack")
        return self.stack.pop()

    def top(self):
        if not self.stack:
            raise _U("pickle data is malformed: empty stack")
        return self.stack[-1]

    def pop_mark(self):
        if not self.metastack:
            raise _U("pickle data is malformed: no MARK")
        items, self.stack = self.stack, self.metastack.pop()
        return items

    def push_new(self, obj):
        """A container or instance this load made: later opcodes may fill it."""
        self.made.add(id(obj))
        self.stack.append(obj)

    # --- checked operations ------------------------------------------------------------------
    def find(self, module, name):
        obj = self.allowed.get((module, name))
        if obj is None:
            raise _U(f"Weights only load failed. Unsupported global: GLOBAL {module}.{name} was not an allowed "
                     f"global by default. Loading with weights_only=False would execute code from the file: do it "
                     f"only if you trust its source. To allow this global, use "
                     f"{naming.shown}.serialization.add_safe_globals([{name}]) or the "
                     f"{naming.shown}.serialization.safe_globals([{name}]) context manager.")
        return obj

    def call(self, func, args):
        if not any(func is c for c in self.callables):
            raise _U(f"Weights only load failed: REDUCE of {func!r}, which is not an allowed global")
        if not isinstance(args, tuple):
            raise _U(f"Weights only load failed: REDUCE arguments must be a tuple, got {type(args).__name__}")
        return func(*args)

    def new(self, cls, args, kwargs=None):
        if not (isinstance(cls, type) and any(cls is c for c in self.callables)):
            raise _U(f"Weights only load failed: NEWOBJ of {cls!r}, which is not an allowed class")
        if not isinstance(args, tuple) or not isinstance(kwargs or {}, dict):
            raise _U("Weights only load failed: NEWOBJ arguments must be a tuple (and a dict)")
        return cls.__new__(cls, *args, **(kwargs or {}))

    def build(self, inst, state):
        """State setting, only on an instance this load constructed from an allowed class."""
        if id(inst) in self.handed_out or id(inst) not in self.made or not isinstance(inst, self.build_types):
            raise _U(f"Weights only load failed: BUILD (setting the state of an object) is refused for an object "
                     f"of type {type(inst).__name__}; only instances of allowed classes made by this load "
                     f"(OrderedDict and classes passed to add_safe_globals) take state")
        setstate = getattr(inst, '__setstate__', None)
        if setstate is not None and type(inst).__setstate__ is not getattr(object, '__setstate__', None):
            setstate(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            if not isinstance(state, dict):
                raise _U("Weights only load failed: BUILD state must be a dict")
            inst.__dict__.update(state)
        if slots:
            for k, v in slots.items():
                setattr(inst, k, v)

    def fill_target(self, kind, types):
        target = self.top()
        if type(target) not in types or id(target) not in self.made:
            raise _U(f"Weights only load failed: {kind} on an object of type {type(target).__name__}; only "
                     f"containers made by this load may be filled")
        return target


# --- opcodes: one small function each ----------------------------------------------------------
def _stop(u):
    pass


def _proto(u):
    p = u._read(1)[0]
    if p > pickle.HIGHEST_PROTOCOL:
        raise _U(f"unsupported pickle protocol: {p}")


def _frame(u):
    u._read(8)


def _global(u):
    module, name = u._line(), u._line()
    if module == '__builtin__':      # protocol 2 spells builtins so
        module = 'builtins'
    u.stack.append(u.find(module, name))


def _stack_global(u):
    name, module = u.pop(), u.pop()
    if not (isinstance(module, str) and isinstance(name, str)):
        raise _U("STACK_GLOBAL requires str")
    u.stack.append(u.find(module, name))


def _reduce(u):
    args = u.pop()
    func = u.pop()
    r = u.call(func, args)
    if type(r) in (OrderedDict, dict, list, set) or isinstance(r, u.build_types):
        u.push_new(r)
    else:
        u.stack.append(r)


def _newobj(u):
    args = u.pop()
    cls = u.pop()
    u.push_new(u.new(cls, args))


def _newobj_ex(u):
    kwargs, args, cls = u.pop(), u.pop(), u.pop()
    u.push_new(u.new(cls, args, kwargs))


def _build(u):
    state = u.pop()
    u.build(u.top(), state)


def _binpersid(u):
    u.stack.append(u.persistent_load(u.pop()))


def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


def _pop(u):
    u.pop()


def _pop_mark(u):
    u.pop_mark()


def _dup(u):
    u.stack.append(u.top())


def _append(u):
    item = u.pop()
    u.fill_target('APPEND', (list,)).append(item)


def _appends(u):
    items = u.pop_mark()
    u.fill_target('APPENDS', (list,)).extend(items)


def _setitem(u):
    v, k = u.pop(), u.pop()
    u.fill_target('SETITEM', (dict, OrderedDict))[k] = v


def _setitems(u):
    items = u.pop_mark()
    if len(items) % 2:
        raise _U("SETITEMS needs key/value pairs")
    d = u.fill_target('SETITEMS', (dict, OrderedDict))
    for i in range(0, len(items), 2):
        d[items[i]] = items[i + 1]


def _additems(u):
    items = u.pop_mark()
    u.fill_target('ADDITEMS', (set,)).update(items)


def _memo_get(n_fmt):
    def op(u):
        i = u._read(1)[0] if n_fmt is None else struct.unpack(n_fmt, u._read(4))[0]
        if i not in u.memo:
            raise _U(f"Memo value not found at index {i}")
        u.stack.append(u.memo[i])
    return op


def _memo_put(n_fmt):
    def op(u):
        i = u._read(1)[0] if n_fmt is None else struct.unpack(n_fmt, u._read(4))[0]
        u.memo[i] = u.top()
    return op


def _memoize(u):
    u.memo[len(u.memo)] = u.top()


def _const(value):
    return lambda u: u.stack.append(value)


def _fresh(factory):
    return lambda u: u.push_new(factory())


def _tuple_n(n):
    def op(u):
        if len(u.stack) < n:
            raise _U("pickle data is malformed: too few items for a tuple")
        items = u.stack[len(u.stack) - n:]
        del u.stack[len(u.stack) - n:]
        u.stack.append(tuple(items))
    return op


def _unpack(fmt, size):
    return lambda u: u.stack.append(struct.unpack(fmt, u._read(size))[0])


def _long(nfmt, nsize):
    def op(u):
        n = struct.unpack(nfmt, u._read(nsize))[0]
        if n < 0:
            raise _U("LONG pickle has negative byte count")
        u.stack.append(pickle.decode_long(u._read(n)))
    return op


def _unicode(nfmt, nsize):
    def op(u):
        n = struct.unpack(nfmt, u._read(nsize))[0]
        u.stack.append(str(u._read(n), 'utf-8', 'surrogatepass'))
    return op


def _bytes(nfmt, nsize, kind=bytes):
    def op(u):
        n = struct.unpack(nfmt, u._read(nsize))[0]
        u.stack.append(kind(u._read(n)))
    return op


def _short_binstring(u):        # protocol 2 str of Python 2: read as latin-1 text, as torch.load does
    n = u._read(1)[0]
    u.stack.append(u._read(n).decode('latin1'))


def _tuple(u):
    items = u.pop_mark()        # first: pop_mark replaces u.stack
    u.stack.append(tuple(items))


def _list(u):
    items = u.pop_mark()
    u.push_new(items)


def _dict(u):
    items = u.pop_mark()
    d = {items[i]: items[i + 1] for i in range(0, len(items) - 1, 2)}
    u.push_new(d)


def _frozenset(u):
    items = u.pop_mark()
    u.stack.append(frozenset(items))


_P = pickle
_OPS = {
    _P.STOP[0]: _stop, _P.PROTO[0]: _proto, _P.FRAME[0]: _frame, _P.GLOBAL[0]: _global,
    _P.STACK_GLOBAL[0]: _stack_global, _P.REDUCE[0]: _reduce, _P.NEWOBJ[0]: _newobj, _P.NEWOBJ_EX[0]: _newobj_ex,
    _P.BUILD[0]: _build, _P.BINPERSID[0]: _binpersid, _P.MARK[0]: _mark, _P.POP[0]: _pop,
    _P.POP_MARK[0]: _pop_mark, _P.DUP[0]: _dup, _P.APPEND[0]: _append, _P.APPENDS[0]: _appends,
    _P.SETITEM[0]: _setitem, _P.SETITEMS[0]: _setitems, _P.ADDITEMS[0]: _additems,
    _P.BINGET[0]: _memo_get(None), _P.LONG_BINGET[0]: _memo_get('<I'), _P.BINPUT[0]: _memo_put(None),
    _P.LONG_BINPUT[0]: _memo_put('<I'), _P.MEMOIZE[0]: _memoize,
    _P.NONE[0]: _const(None), _P.NEWTRUE[0]: _const(True), _P.NEWFALSE[0]: _const(False),
    _P.EMPTY_TUPLE[0]: _const(()), _P.EMPTY_LIST[0]: _fresh(list), _P.EMPTY_DICT[0]: _fresh(dict),
    _P.EMPTY_SET[0]: _fresh(set), _P.TUPLE[0]: _tuple, _P.TUPLE1[0]: _tuple_n(1), _P.TUPLE2[0]: _tuple_n(2),
    _P.TUPLE3[0]: _tuple_n(3), _P.LIST[0]: _list, _P.DICT[0]: _dict, _P.FROZENSET[0]: _frozenset,
    _P.BININT[0]: _unpack('<i', 4), _P.BININT1[0]: _unpack('<B', 1), _P.BININT2[0]: _unpack('<H', 2),
    _P.BINFLOAT[0]: _unpack('>d', 8), _P.LONG1[0]: _long('<B', 1), _P.LONG4[0]: _long('<i', 4),
    _P.BINUNICODE[0]: _unicode('<I', 4), _P.SHORT_BINUNICODE[0]: _unicode('<B', 1),
    _P.BINUNICODE8[0]: _unicode('<Q', 8), _P.BINBYTES[0]: _bytes('<I', 4), _P.SHORT_BINBYTES[0]: _bytes('<B', 1),
    _P.BINBYTES8[0]: _bytes('<Q', 8), _P.BYTEARRAY8[0]: _bytes('<Q', 8, bytearray),
    _P.SHORT_BINSTRING[0]: _short_binstring,
}
_NAMES = {getattr(pickle, n)[0]: n for n in dir(pickle) if n.isupper() and isinstance(getattr(pickle, n), bytes)
          and len(getattr(pickle, n)) == 1}


def encode(obj, encoding='latin1'):
    """``_codecs.encode``, which protocol 2 uses to pickle bytes: text only, to bytes only."""
    if not isinstance(obj, str) or not isinstance(encoding, str):
        raise _U("_codecs.encode in a checkpoint takes a str and an encoding name")
    return codecs.encode(obj, encoding)
