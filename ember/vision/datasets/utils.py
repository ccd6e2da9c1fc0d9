"""torchvision.datasets.utils: checksums, downloads and archive extraction, on the standard library (hashlib,
urllib, tarfile, zipfile, gzip/bz2/lzma).

ember.vision's own datasets never download (vision.py); these helpers are for programs and libraries that fetch
data themselves (avalanche's downloadable benchmarks): ``download_url`` fetches with urllib (following
redirects, retrying an https URL over http as torchvision does) and checks the MD5; Google Drive files need the
``gdown`` package, as in torchvision. ``extract_archive`` unpacks .tar/.zip (optionally .gz/.bz2/.xz) archives
and decompresses single .gz/.bz2/.xz files.

>>> verify_str_arg('train', 'split', ('train', 'test'))
'train'
>>> iterable_to_str(['a', 'b'])
"'a', 'b'"
"""
import bz2
import gzip
import hashlib
import lzma
import os
import pathlib
import re
import tarfile
import urllib.error
import urllib.request
import zipfile

__all__ = ['calculate_md5', 'check_md5', 'check_integrity', 'download_url', 'list_dir', 'list_files',
           'download_file_from_google_drive', 'extract_archive', 'download_and_extract_archive', 'iterable_to_str',
           'verify_str_arg']

USER_AGENT = 'pytorch/vision'


def calculate_md5(fpath, chunk_size=1024 * 1024):
    """The MD5 hex digest of a file's bytes."""
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, 'rb') as f:
        for chunk in iter(lambda: f.read(chunk_size), b''):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5, **kwargs):
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath, md5=None):
    """True when ``fpath`` is a file and (if ``md5`` is given) has that MD5."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


def _urlretrieve(url, filename, chunk_size=1024 * 32):
    with urllib.request.urlopen(urllib.request.Request(url, headers={'User-Agent': USER_AGENT})) as response, \
            open(filename, 'wb') as fh:
        for chunk in iter(lambda: response.read(chunk_size), b''):
            fh.write(chunk)


def _get_redirect_url(url, max_hops=3):
    initial = url
    headers = {'Method': 'HEAD', 'User-Agent': USER_AGENT}
    for _ in range(max_hops + 1):
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as response:
            if response.url == url or response.url is None:
                return url
            url = response.url
    raise RecursionError(f"Request to {initial} exceeded {max_hops} redirects. The last redirect points to {url}.")


def _get_google_drive_file_id(url):
    parts = urllib.parse.urlparse(url)
    if re.match(r'(drive|docs)[.]google[.]com', parts.netloc) is None:
        return None
    match = re.match(r'/file/d/(?P<id>[^/]*)', parts.path)
    return None if match is None else match.group('id')


def download_url(url, root, filename=None, md5=None, max_redirect_hops=3):
    """Download ``url`` to ``root/filename`` (the URL's basename by default), unless a file with that MD5 is
    already there; RuntimeError when the result does not match ``md5``."""
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url)
    fpath = os.fspath(os.path.join(root, filename))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    url = _get_redirect_url(url, max_hops=max_redirect_hops)
    file_id = _get_google_drive_file_id(url)
    if file_id is not None:
        return download_file_from_google_drive(file_id, root, filename, md5)
    try:
        _urlretrieve(url, fpath)
    except (urllib.error.URLError, OSError) as e:
        if url[:5] != 'https':
            raise e
        _urlretrieve(url.replace('https:', 'http:'), fpath)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def download_file_from_google_drive(file_id, root, filename=None, md5=None):
    """Download a Google Drive file (needs ``gdown``, as torchvision)."""
    try:
        import gdown
    except ModuleNotFoundError:
        raise RuntimeError("To download files from GDrive, 'gdown' is required. You can install it with "
                           "'pip install gdown'.") from None
    root = os.path.expanduser(root)
    filename = filename or file_id
    fpath = os.fspath(os.path.join(root, filename))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    gdown.download(id=file_id, output=fpath, quiet=False, user_agent=USER_AGENT)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def list_dir(root, prefix=False):
    """The directories in ``root`` (joined to it with ``prefix``)."""
    root = os.path.expanduser(root)
    dirs = [p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p))]
    return [os.path.join(root, d) for d in dirs] if prefix else dirs


def list_files(root, suffix, prefix=False):
    """The files in ``root`` whose names end with ``suffix`` (a string or a tuple of them)."""
    root = os.path.expanduser(root)
    files = [p for p in os.listdir(root) if os.path.isfile(os.path.join(root, p)) and p.endswith(suffix)]
    return [os.path.join(root, f) for f in files] if prefix else files


def _extract_tar(from_path, to_path, compression):
    with tarfile.open(from_path, f'r:{compression[1:]}' if compression else 'r') as tar:
        tar.extractall(to_path, filter='data')


_ZIP_COMPRESSION_MAP = {'.bz2': zipfile.ZIP_BZIP2, '.xz': zipfile.ZIP_LZMA}


def _extract_zip(from_path, to_path, compression):
    with zipfile.ZipFile(from_path, 'r',
                         compression=_ZIP_COMPRESSION_MAP[compression] if compression else zipfile.ZIP_STORED) as z:
        z.extractall(to_path)


_ARCHIVE_EXTRACTORS = {'.tar': _extract_tar, '.zip': _extract_zip}
_COMPRESSED_FILE_OPENERS = {'.bz2': bz2.open, '.gz': gzip.open, '.xz': lzma.open}
_FILE_TYPE_ALIASES = {'.tbz': ('.tar', '.bz2'), '.tbz2': ('.tar', '.bz2'), '.tgz': ('.tar', '.gz')}


def _detect_file_type(file):
    """``(suffix, archive type, compression)`` from a file name's suffixes, e.g. ('.tar.gz', '.tar', '.gz')."""
    suffixes = pathlib.Path(file).suffixes
    if not suffixes:
        raise RuntimeError(f"File '{file}' has no suffixes that could be used to detect the archive type and "
                           f"compression.")
    suffix = suffixes[-1]
    if suffix in _FILE_TYPE_ALIASES:
        return (suffix, *_FILE_TYPE_ALIASES[suffix])
    if suffix in _ARCHIVE_EXTRACTORS:
        return suffix, suffix, None
    if suffix in _COMPRESSED_FILE_OPENERS:
        if len(suffixes) > 1 and suffixes[-2] in _ARCHIVE_EXTRACTORS:
            return suffixes[-2] + suffix, suffixes[-2], suffix
        return suffix, None, suffix
    valid = sorted(set(_FILE_TYPE_ALIASES) | set(_ARCHIVE_EXTRACTORS) | set(_COMPRESSED_FILE_OPENERS))
    raise RuntimeError(f"Unknown compression or archive type: '{suffix}'.\nKnown suffixes are: '{valid}'.")


def _decompress(from_path, to_path=None, remove_finished=False):
    suffix, archive_type, compression = _detect_file_type(from_path)
    if not compression:
        raise RuntimeError(f"Couldn't detect a compression from suffix {suffix}.")
    if to_path is None:
        to_path = pathlib.Path(os.fspath(from_path).replace(suffix, archive_type if archive_type is not None else ''))
    with _COMPRESSED_FILE_OPENERS[compression](from_path, 'rb') as rfh, open(to_path, 'wb') as wfh:
        wfh.write(rfh.read())
    if remove_finished:
        os.remove(from_path)
    return pathlib.Path(to_path)


def extract_archive(from_path, to_path=None, remove_finished=False):
    """Unpack an archive (or decompress a single compressed file) into ``to_path`` (default: beside it);
    returns ``to_path`` (the decompressed file's path for a single file), a str when ``from_path`` is one."""
    as_given = (lambda p: str(p)) if isinstance(from_path, str) else (lambda p: p)
    if to_path is None:
        to_path = os.path.dirname(from_path)
    suffix, archive_type, compression = _detect_file_type(from_path)
    if not archive_type:
        target = os.path.join(to_path, os.path.basename(from_path).replace(suffix, ''))
        return as_given(_decompress(from_path, target, remove_finished=remove_finished))
    _ARCHIVE_EXTRACTORS[archive_type](from_path, to_path, compression)
    if remove_finished:
        os.remove(from_path)
    return as_given(pathlib.Path(to_path))


def download_and_extract_archive(url, download_root, extract_root=None, filename=None, md5=None,
                                 remove_finished=False):
    """``download_url`` then ``extract_archive`` (into ``extract_root``, default ``download_root``)."""
    download_root = os.path.expanduser(download_root)
    extract_root = download_root if extract_root is None else extract_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)


def iterable_to_str(iterable):
    return "'" + "', '".join(str(item) for item in iterable) + "'"


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    """``value`` when it is a str among ``valid_values`` (any str when None); ValueError in torchvision's words
    otherwise."""
    if not isinstance(value, str):
        msg = ("Expected type str, but got type {type}." if arg is None else
               "Expected type str for argument {arg}, but got type {type}.")
        raise ValueError(msg.format(type=type(value), arg=arg))
    if valid_values is None or value in valid_values:
        return value
    if custom_msg is not None:
        raise ValueError(custom_msg)
    raise ValueError(f"Unknown value '{value}' for argument {arg}. Valid values are "
                     f"{{{iterable_to_str(valid_values)}}}.")
