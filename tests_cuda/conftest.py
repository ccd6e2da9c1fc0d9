"""Tests of the CUDA backend (NOTE [cuda backend] in ember/_backends/cuda). They need CuPy and a GPU, which the
CI machine has not, so they live outside tests/ and run by hand on a GPU machine:

    python -m pytest tests_cuda -n 6

Every operator's OpInfo samples run on the CPU and on the GPU and are compared; the operators that ran on
the host (the fallback) are written to ``$EMBER_FALLBACK_REPORT`` when that is set."""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'tests'))

import ember  # noqa: E402

if not ember.cuda.is_available():
    from ember._backends import cuda as _backend
    raise pytest.UsageError(f"tests_cuda needs the CUDA backend: {_backend.why_unavailable()}")


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get('EMBER_FALLBACK_REPORT')
    if path:
        from ember._backends import cuda as backend
        with open(path, 'a') as f:
            f.write(json.dumps({'fallbacks': backend.FALLBACKS, 'reasons': backend.REASONS}) + '\n')


def pytest_runtest_logreport(report):
    """With ``EMBER_FAILURE_LOG`` set, each failure's last message line is appended there as it happens (a run
    cut short by a time limit still leaves its failures)."""
    path = os.environ.get('EMBER_FAILURE_LOG')
    if path and report.failed and not os.environ.get('PYTEST_XDIST_WORKER'):     # once, by the controller
        text = str(report.longrepr).strip().splitlines()
        msg = ' / '.join(ln[1:].strip() for ln in text if ln.startswith('E ') and ln[1:].strip())[:600] or \
            (text[-1] if text else '')
        where = text[-1] if text else ''
        with open(path, 'a') as f:
            f.write(f'{report.nodeid} | {msg} | {where[:200]}\n')
