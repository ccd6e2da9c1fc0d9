"""The examples, the demo and the compat runner run end to end (a few steps each)."""
import os
import subprocess
import sys
import textwrap

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'examples'))


def test_mlp_example_learns():
    import mlp_classifier
    acc = mlp_classifier.main(['--epochs', '2', '--n', '2000'])
    assert acc > 0.6          # four balanced classes: chance is 0.25


def test_cnn_example_runs():
    import cnn_classifier
    acc = cnn_classifier.main(['--epochs', '1', '--n', '512'])
    assert 0.0 <= acc <= 1.0


def test_func_transforms_example():
    import warnings
    import func_transforms
    with warnings.catch_warnings():
        warnings.simplefilter('error')      # every operator it vmaps has a batching rule
        r = func_transforms.main(['--batch', '4', '--steps', '5'])
    assert r['per-sample grads vs loop (max abs diff)'] < 1e-5
    assert r['ensemble vs each model (max abs diff)'] < 1e-5
    assert r['jvp(grad) vs hessian @ v (max abs diff)'] < 1e-3
    first, last = r['MAML outer loss first -> last']
    assert last < first


def test_demo_trains_saves_and_samples(tmp_path):
    from ember.demo import train
    text = ember.data.tinyshakespeare()[:20000] if hasattr(ember, 'data') else None
    r = train(max_steps=12, out_dir=str(tmp_path), eval_every=6, eval_iters=2, n_layer=1, n_embd=32, n_head=2,
              block_size=16, batch_size=4, progress=False, sample_chars=20, text=text)
    assert r['steps'] == 12 and r['val_loss'] < 4.3       # below ln(65) = 4.17 + noise: it learned something
    ck = ember.load(r['checkpoint'])
    assert 'model' in ck and 'optimizer' in ck and ck['step'] == 12
    assert len(r['sample']) == 21


def test_ember_run_executes_a_torch_script(tmp_path):
    script = tmp_path / 's.py'
    script.write_text(textwrap.dedent('''
        import torch
        import torch.nn as nn
        from torch.utils.data import TensorDataset
        m = nn.Linear(3, 2)
        x = torch.randn(4, 3)
        print('OK', tuple(m(x).shape), type(torch.zeros(1)).__mro__[1].__module__.split('.')[0])
        try:
            torch.no_such_api_xyz
        except AttributeError as e:
            print('MISSING', e)
    '''))
    r = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert 'OK (4, 2) ember' in r.stdout
    assert 'MISSING ember does not implement torch.no_such_api_xyz' in r.stdout


def test_compat_report_lists_missing_apis(tmp_path):
    script = tmp_path / 's.py'
    script.write_text('import torch\nimport torch.nn.functional as F\nx = torch.zeros(2)\n'
                      'y = F.relu(x)\nz = torch.fancy_missing_op(x)\nimport torch.utils.mobile_optimizer\n')
    r = subprocess.run([sys.executable, '-m', 'ember', 'compat-report', str(script)], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert 'missing: torch.fancy_missing_op' in r.stdout
    assert 'missing: torch.utils.mobile_optimizer' in r.stdout
    assert 'torch.nn.functional.relu' not in r.stdout.split('missing')[-1]
    assert r.returncode == 1
