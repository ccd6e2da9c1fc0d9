"""The docs/ pages are runnable: every `>>>` example of every page runs here (as
`python -m pytest --doctest-glob='docs/*.md' docs/` runs them), and each page ends with its
"Where this lives in the code" links, every one to a file or folder that exists."""
import doctest
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md')))


def test_the_learning_pages_exist():
    names = {os.path.basename(p) for p in PAGES}
    assert {'tensors-and-storage.md', 'dispatcher.md', 'autograd.md', 'profiler.md', 'new-device.md', 'meta-tensors.md',
            'nn-module.md', 'dataloader.md', 'fx.md', 'dtypes.md', 'caching-allocator.md', 'func.md', 'ddp.md',
            'random.md'} <= names


@pytest.mark.parametrize('page', PAGES, ids=os.path.basename)
def test_examples_run(page):
    # pytest's doctest runner uses ELLIPSIS by default; the same flag here
    failed, attempted = doctest.testfile(page, module_relative=False, optionflags=doctest.ELLIPSIS,
                                         encoding='utf-8')
    assert attempted >= 10, f'{page}: only {attempted} examples'
    assert failed == 0, f'{page}: {failed} of {attempted} examples failed (output above)'


@pytest.mark.parametrize('page', PAGES, ids=os.path.basename)
def test_page_ends_with_where_it_lives_in_the_code(page):
    text = open(page, encoding='utf-8').read()
    tail = text.split('\n## Where this lives in the code\n')
    assert len(tail) == 2, f'{page}: no "Where this lives in the code" section at the end'
    links = re.findall(r'\]\((\.\./[^)]+)\)', tail[1])
    assert links, f'{page}: the section links no file'
    for link in links:
        assert os.path.exists(os.path.normpath(os.path.join(os.path.dirname(page), link))), f'{page}: {link}'
    assert '\n## ' not in tail[1], f'{page}: a section follows "Where this lives in the code"'
