"""Run a script under the real torchvision, in a separate process, when one is provided.

torchvision is no dependency of ember; set EMBER_TV_ORACLE to a directory holding a torchvision that matches
the installed torch (``pip install --target DIR --no-deps torchvision==0.28.0``) to run the oracle tests.
A CUDA wheel on a CPU-only torch cannot register its C++ ops; the script skips that module (its image codecs
then also need LD_LIBRARY_PATH to find stand-ins for the CUDA libraries, or those tests skip).
"""
import os
import subprocess
import sys
import textwrap

import pytest

PRELUDE = ("import sys, types, warnings\nwarnings.simplefilter('ignore')\n"
           "sys.modules['torchvision._meta_registrations'] = types.ModuleType('m')\n"
           "import numpy as np, torch, torchvision\n")


def run(script, workdir):
    """Run ``script`` (after PRELUDE) with cwd ``workdir``; skip when no oracle is configured or it cannot load."""
    path = os.environ.get('EMBER_TV_ORACLE')
    if not path:
        pytest.skip('set EMBER_TV_ORACLE to a directory with torchvision to compare against it')
    env = dict(os.environ, PYTHONPATH=path)
    r = subprocess.run([sys.executable, '-c', PRELUDE + textwrap.dedent(script)], cwd=workdir, env=env,
                       capture_output=True, text=True, timeout=300)
    if r.returncode == 3:
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout
