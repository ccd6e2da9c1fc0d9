"""torch.torch_version: ``TorchVersion``, the string type of ``torch.__version__`` that compares with strings and
tuples by version order (``torch.__version__ >= (2, 0)``, ``torch.__version__ > '2.1'``).

Under ``ember run``, ``torch.__version__`` is the version of torch's API that ember follows, with ember's mark as
its local part (``2.13.0+ember``): programs and libraries that check for a recent torch take the paths that this
API serves (NOTE [torch version under ember run] in compat.py).

>>> TorchVersion('2.13.0+ember') >= (2, 0), TorchVersion('2.13.0') < '2.13.1'
(True, True)
"""
import re

__all__ = ['TorchVersion']


def _key(v):
    """(release numbers, is-final) of a version string or tuple: '2.13.0rc1' sorts before '2.13.0'."""
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v), 1
    m = re.match(r'(\d+(?:\.\d+)*)(.*)', str(v).split('+')[0])
    if not m:
        raise ValueError(f"Invalid version: {v!r}")
    return tuple(int(x) for x in m.group(1).split('.')), 0 if m.group(2) else 1


def _cmp(a, b):
    (ra, fa), (rb, fb) = _key(a), _key(b)
    n = max(len(ra), len(rb))
    ra, rb = ra + (0,) * (n - len(ra)), rb + (0,) * (n - len(rb))
    return (ra > rb) - (ra < rb) or (fa > fb) - (fa < fb)


class TorchVersion(str):
    def __gt__(self, other):
        return _cmp(self, other) > 0

    def __ge__(self, other):
        return _cmp(self, other) >= 0

    def __lt__(self, other):
        return _cmp(self, other) < 0

    def __le__(self, other):
        return _cmp(self, other) <= 0

    def __eq__(self, other):
        return str.__eq__(self, other) if isinstance(other, str) and not _versionlike(other) else _cmp(self, other) == 0

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


def _versionlike(s):
    return re.match(r'\d+(\.\d+)*', s) is not None
