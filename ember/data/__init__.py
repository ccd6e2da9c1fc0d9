"""Data shipped with ember: the Tiny Shakespeare text (public domain), gzip-compressed."""
import gzip
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def tinyshakespeare():
    """The Tiny Shakespeare corpus (about 1.1 MB of text) as a string."""
    with gzip.open(os.path.join(_HERE, 'tinyshakespeare.txt.gz'), 'rt', encoding='utf-8') as f:
        return f.read()
