"""TorchScript archives, the files ``torch.jit.save`` writes and ``torch.jit.load`` reads.

NOTE [TorchScript archive]: a zip archive (``<name>/`` prefix, entries aligned as in ember.save's checkpoints):

    data.pkl                  the module: each module an object of class ``__torch__.<module path>.<Class>``
                              (NEWOBJ, then BUILD with a dict of its attributes: parameters and buffers as
                              tensors, ``training``, submodules as such objects)
    code/__torch__/<path>.py  the TorchScript source of the classes of one module path (``code/__torch__.py``
                              for ``__torch__.<Class>``): attribute declarations, ``__parameters__`` and
                              ``__buffers__``, methods
    constants.pkl             a tuple of the tensors the code reads as ``CONSTANTS.c<i>``
    data/<key>, constants/<key>   the storages of data.pkl's and constants.pkl's tensors (torch's layout)
    version, byteorder, .data/serialization_id

Two instances of one class whose attributes differ get two TorchScript classes, the second's module path ending
in ``___torch_mangle_<n>`` (torch's mangling). Reading (``read_archive``) unpickles data.pkl and constants.pkl
with ember's restricted unpickler, ``__torch__.*`` classes allowed as attribute holders only (``ScriptObject``),
and returns the sources as text: nothing in the file runs (NOTE [TorchScript interpreter]).
"""
import io
import json
import keyword
import os
import pickle
import sys
import zipfile

import ember
from .. import serialization as _ser
from .._weights_only import RestrictedUnpickler


class ScriptObject:
    """A ``__torch__.*`` object as a file's pickle describes it: its class's qualified name and its attributes
    (set by the pickle's BUILD), nothing else."""
    qualified_name = None


def qualified_name(cls):
    """``__torch__.<module>.<qualname>`` as torch names a module class (ember's classes under torch's names)."""
    module = cls.__module__ or ''
    if module == 'ember' or module.startswith('ember.'):
        module = 'torch' + module[len('ember'):]
    parts = [] if module == '__main__' else module.split('.')
    parts += cls.__qualname__.replace('<locals>', '_locals').split('.')
    return '.'.join(['__torch__'] + [''.join(c if c.isalnum() or c == '_' else '_' for c in p) for p in parts])


# --- writing -------------------------------------------------------------------------------------------------

class _Object:
    """A module (or the function's placeholder module) as data.pkl stores it."""

    def __init__(self, qualified_name, state):
        self.qualified_name, self.state = qualified_name, state


class _ArchivePickler(_ser._Pickler):
    """ember's checkpoint pickler, writing ``_Object`` as torch's TorchScript pickler writes a module object, and
    every tensor (parameters included) as a plain ``_rebuild_tensor_v2`` tensor keeping its requires_grad."""

    def save(self, obj, save_persistent_id=True):
        memo = self.memo.get(id(obj))
        if memo is not None and isinstance(obj, (_Object, ember.Tensor)):
            self.write(self.get(memo[0]))
            return
        if isinstance(obj, _Object):
            module, _, name = obj.qualified_name.rpartition('.')
            self.save(_ser._TorchGlobal(module, name))
            self.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
            self.memoize(obj)
            self.save(obj.state)
            self.write(pickle.BUILD)
            return
        if isinstance(obj, ember.Tensor):
            func, args = _ser._tensor_reduce_args(obj.detach())
            if func is not _ser._REBUILD_TENSOR:
                raise NotImplementedError(f"torch.jit.save: ember writes dense tensors with a typed storage only, "
                                          f"not a {obj.dtype} {obj.layout} tensor")
            return self.save_reduce(func, args[:4] + (bool(obj.requires_grad),) + args[5:], obj=obj)
        super().save(obj, save_persistent_id)


class _Classes:
    """The TorchScript class of each module: declarations by qualified name, mangled where attributes differ."""

    def __init__(self):
        self.sources = {}       # qualified name -> class source
        self.count = 0

    def declare(self, module, forward=None):
        """The qualified name of ``module``'s class (declared once), its methods ``forward`` if given."""
        lines, state = [], {'training': bool(module.training)}
        params = [n for n, p in module._parameters.items() if p is not None]
        buffers = [n for n, b in module._buffers.items() if b is not None]
        lines.append('__parameters__ = [' + ''.join(f'"{n}", ' for n in params) + ']')
        lines.append('__buffers__ = [' + ''.join(f'"{n}", ' for n in buffers) + ']')
        for slots in (module._parameters, module._buffers):
            for n, t in slots.items():
                lines.append(_declaration(n, "NoneType" if t is None else "Tensor"))
                state[n] = t
        lines.append('training : bool')
        for n, sub in module._modules.items():
            state[n] = None if sub is None else self.declare(sub)
            lines.append(_declaration(n, 'NoneType' if sub is None else state[n].qualified_name))
        return _Object(self._name(type(module), lines, forward), state)

    def _name(self, cls, lines, forward):
        name = qualified_name(cls)
        module, _, short = name.rpartition('.')
        body = ''.join(f'  {line}\n' for line in lines) + (forward or '')
        source = f'class {short}(Module):\n{body}'
        while self.sources.get(name, source) != source:
            name = f'{module}.___torch_mangle_{self.count}.{short}'
            self.count += 1
        if '(self: ' in source:
            source = source.replace('(self: __torch__.?', f'(self: {name}')
        self.sources[name] = source
        return name

    def files(self):
        """``{code path: source}``: the classes grouped by module path."""
        out = {}
        for name, source in self.sources.items():
            path = name.rpartition('.')[0]
            out.setdefault('code/' + path.replace('.', '/') + '.py', []).append(source)
        return {k: '\n'.join(v) for k, v in out.items()}


def _declaration(name, type_name):
    """``name : T``, or ``__annotations__["0"] = T`` for a name that is no identifier (a Sequential's index)."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return f'{name} : {type_name}'
    return f'__annotations__[{json.dumps(name)}] = {type_name}'


def write_archive(f, root, forward, extra_files=None):
    """Write the TorchScript archive of ``root`` (an nn.Module) whose top class has the method source ``forward``
    (typed ``self: __torch__.?``) to ``f``, a path or a writable binary file, with ``extra_files`` ({name: str or
    bytes}) as torch's ``_extra_files`` (``extra/<name>``). Nothing is written to ``f`` unless the whole archive
    could be made: a path is written through a temporary file, a file object gets the finished bytes."""
    source, constants = forward
    classes = _Classes()
    obj = classes.declare(root, ''.join(f'  {line}\n' for line in source.splitlines()))
    data, storages = _pickled(obj)
    consts, const_storages = _pickled(tuple(constants))

    def write(fh, prefix):
        w = _ser._AlignedZipWriter(fh, prefix)
        w.write('data.pkl', data)
        for path, text in sorted(classes.files().items()):
            w.write(path, text.encode())
        w.write('constants.pkl', consts)
        for name, content in sorted((extra_files or {}).items()):
            w.write(f'extra/{name}', content.encode() if isinstance(content, str) else bytes(content))
        for folder, table in (('data', storages), ('constants', const_storages)):
            for key, storage, dtype in sorted(table.values(), key=lambda v: int(v[0])):
                w.write(f'{folder}/{key}', _ser._storage_bytes(storage))
        w.write('version', b'3\n')
        w.write('byteorder', sys.byteorder.encode())
        w.write('.data/serialization_id', str(int.from_bytes(os.urandom(16), 'little')).encode())
        w.close()
    if isinstance(f, (str, os.PathLike)):
        _ser.write_atomically(f, write)
    else:
        buf = io.BytesIO()
        write(buf, 'archive')
        f.write(buf.getvalue())


def _pickled(obj):
    storages, buf = {}, io.BytesIO()
    _ArchivePickler(buf, _ser.DEFAULT_PROTOCOL, storages).dump(obj)
    return buf.getvalue(), storages


# --- reading -------------------------------------------------------------------------------------------------

class _ArchiveUnpickler(RestrictedUnpickler):
    """ember's restricted unpickler with every ``__torch__.*`` class a fresh ScriptObject subclass."""

    def __init__(self, data, persistent_load):
        allowed = dict(_ser._DEFAULT_SAFE)
        super().__init__(io.BytesIO(data), allowed, persistent_load, (ScriptObject,))
        self.classes = {}

    def find(self, module, name):
        if module != '__torch__' and not module.startswith('__torch__.'):
            return super().find(module, name)
        key = f'{module}.{name}'
        cls = self.classes.get(key)
        if cls is None:
            cls = self.classes[key] = type(name, (ScriptObject,), {'qualified_name': key})
            self.callables.append(cls)
        return cls


class Archive:
    """A TorchScript archive read without running it: ``obj`` (data.pkl's root ScriptObject), ``constants``
    (constants.pkl's tuple), ``source(path)`` the text of a code file."""

    def __init__(self, f, map_location=None):
        opened = isinstance(f, (str, os.PathLike))
        fh = open(f, 'rb') if opened else f
        try:
            self._read(fh, map_location)
        finally:
            if opened:
                fh.close()

    def _read(self, fh, map_location):
        try:
            zf = zipfile.ZipFile(fh)
            names = zf.namelist()
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}") from None
        pkl = next((n for n in names if n.endswith('/data.pkl') or n == 'data.pkl'), None)
        if pkl is None:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        self.prefix = prefix = pkl[:-len('data.pkl')]
        if prefix + 'constants.pkl' not in names or not any(n.startswith(prefix + 'code/') for n in names):
            raise RuntimeError(f"{fh.name if hasattr(fh, 'name') else 'the file'} is no TorchScript archive "
                               f"(it has no code/ or constants.pkl): load a checkpoint with torch.load")
        self.obj = self._unpickle(zf, pkl, prefix + 'data/', map_location)
        self.constants = self._unpickle(zf, prefix + 'constants.pkl', prefix + 'constants/', map_location)
        self.sources = {n[len(prefix):]: zf.read(n).decode('utf-8') for n in names
                        if n.startswith(prefix + 'code/') and n.endswith('.py')}
        self.extra = {n[len(prefix + 'extra/'):]: zf.read(n) for n in names if n.startswith(prefix + 'extra/')}

    @staticmethod
    def _unpickle(zf, name, folder, map_location):
        loader = _ser._storage_loader(zf, None, folder, map_location)
        data = zf.read(name)
        if b'torch.jit._pickle' in data:     # build_intlist & co.: what torch.jit.script's archives hold
            raise NotImplementedError("ember.jit.load reads archives of traced modules (torch.jit.trace); this one "
                                      "was written by torch.jit.script (its data.pkl uses torch.jit._pickle), whose "
                                      "code needs TorchScript's compiler")
        return _ser._restricted(_ArchiveUnpickler(data, loader))

    def source_of(self, qualified):
        """``(file name, text)`` of the code file declaring the class ``qualified`` (``__torch__.a.B``)."""
        path = 'code/' + qualified.rpartition('.')[0].replace('.', '/') + '.py'
        if path not in self.sources:
            raise RuntimeError(f"torch.jit.load: the archive has no {path} for class {qualified}")
        return path, self.sources[path]
