"""Every page of docs/ is runnable: its >>> examples are doctests, so a page cannot drift from the code."""
import doctest
import glob
import os

import pytest

DOCS = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'docs', '*.md')))


def test_there_are_pages():
    assert len(DOCS) >= 2


@pytest.mark.parametrize('page', DOCS, ids=os.path.basename)
def test_page_examples_run(page):
    r = doctest.testfile(page, module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert r.attempted > 3, f'{page}: only {r.attempted} examples'
    assert r.failed == 0, f'{page}: {r.failed} of {r.attempted} examples failed (run python -m doctest -v {page})'
