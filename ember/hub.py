"""torch.hub's cache, without the network: ``load_state_dict_from_url`` loads a checkpoint from the directory
torch.hub downloads into (``get_dir()/checkpoints``: ``$TORCH_HOME/hub``, default ``~/.cache/torch/hub``), so a
file torch has fetched before, or one put there by hand, loads unchanged; ``check_hash=True`` verifies the
SHA-256 prefix in the file name as torch does. An absent file is downloaded there first (``download_url_to_file``,
with urllib). ``load``/``list``/``help`` (which fetch a GitHub repository and run its hubconf.py, code from the
network) are absent with an error saying so.

>>> import ember
>>> ember.hub.get_dir().endswith('hub')
True
"""
import hashlib
import os
import re
import sys
import tempfile
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from ._absent import absent

try:                        # torch.hub's progress bar, which libraries import from here (torchio)
    from tqdm import tqdm
except ImportError:
    class tqdm:
        """torch.hub's stand-in when tqdm is absent: counts and prints the percentage done to stderr."""

        def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
            self.total, self.disable, self.unit, self.n = total, disable, unit, 0

        def update(self, n):
            if self.disable:
                return
            import sys
            self.n += n
            done = f'{100 * self.n / float(self.total):.1f}%' if self.total else f'{self.n} {self.unit or ""}'
            sys.stderr.write(f'\r{done}')

        def close(self):
            self.disable = True

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            if not self.disable:
                import sys
                sys.stderr.write('\n')

__all__ = ['get_dir', 'set_dir', 'load_state_dict_from_url', 'download_url_to_file', 'load', 'list', 'help']

_hub_dir = None
HASH_REGEX = re.compile(r'-([a-f0-9]*)\.')


def _torch_home():
    return os.path.expanduser(os.getenv('TORCH_HOME', os.path.join(os.getenv('XDG_CACHE_HOME', '~/.cache'),
                                                                    'torch')))


def get_dir():
    """The hub directory: set_dir's, else $TORCH_HOME/hub (TORCH_HOME defaults to ~/.cache/torch)."""
    return _hub_dir if _hub_dir is not None else os.path.join(_torch_home(), 'hub')


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def _check_hash(path, prefix):
    sha = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            sha.update(block)
    digest = sha.hexdigest()
    if digest[:len(prefix)] != prefix:
        raise RuntimeError(f'invalid hash value (expected "{prefix}", got "{digest}")')


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to ``dst``, as torch.hub's: into a temporary file beside ``dst``, moved into place once
    complete and its SHA-256 checked against ``hash_prefix``, so a failed download leaves no partial file."""
    dst = os.path.expanduser(os.fspath(dst))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(dst) + '.', suffix='.partial',
                               dir=os.path.dirname(dst) or '.')
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)       # a download's usual permissions, not mkstemp's private ones
    try:
        sha = hashlib.sha256()
        with os.fdopen(fd, 'wb') as f, urlopen(Request(url, headers={'User-Agent': 'torch.hub'})) as u:
            size = u.info().get('Content-Length')
            with tqdm(total=int(size) if size else None, disable=not progress, unit='B', unit_scale=True,
                      unit_divisor=1024) as bar:
                for block in iter(lambda: u.read(8192), b''):
                    f.write(block)
                    sha.update(block)
                    bar.update(len(block))
        if hash_prefix is not None and not sha.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{sha.hexdigest()}")')
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def cached_checkpoint(url, model_dir=None, file_name=None, check_hash=False, progress=True):
    """The path of ``url``'s checkpoint in the hub cache (or ``model_dir``), downloaded there first if absent;
    its SHA-256 is checked against the prefix in its name when ``check_hash``."""
    model_dir = os.path.join(get_dir(), 'checkpoints') if model_dir is None else os.fspath(model_dir)
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urlparse(url).path)
    path = os.path.join(model_dir, name)
    m = HASH_REGEX.search(name) if check_hash else None
    if not os.path.isfile(path):
        sys.stderr.write(f'Downloading: "{url}" to {path}\n')
        download_url_to_file(url, path, m.group(1) if m else None, progress=progress)
    elif m:
        _check_hash(path, m.group(1))
    return path


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """``ember.load`` of ``url``'s checkpoint, downloaded into torch.hub's cache unless it is there already."""
    from . import load as _load
    path = cached_checkpoint(url, model_dir, file_name, check_hash, progress)
    return _load(path, map_location=map_location, weights_only=weights_only)


load = absent('ember.hub.load', ": ember does not fetch GitHub repositories or run their hubconf.py; import the "
              "model's code and load its checkpoint with ember.hub.load_state_dict_from_url or ember.load")
list = absent('ember.hub.list', ': ember does not fetch GitHub repositories')      # noqa: A001 (torch's name)
help = absent('ember.hub.help', ': ember does not fetch GitHub repositories')      # noqa: A001 (torch's name)
