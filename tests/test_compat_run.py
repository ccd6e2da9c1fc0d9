"""``ember run`` reaches child processes (spawned DataLoader workers, multiprocessing children, fresh
interpreters), and ``ember compat-report`` walks a folder. Each program runs in a subprocess with a time limit."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROG = textwrap.dedent('''
    import subprocess, sys
    import torch
    import torch.multiprocessing as mp
    from torch.utils.data import DataLoader, Dataset


    def which():
        import torch.nn.functional as F     # a torch submodule imported inside the child
        return type(F.relu(torch.zeros(1))).__module__


    class DS(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return which()


    def child(rank, q):
        q.put(which())


    if __name__ == '__main__':
        dl = DataLoader(DS(), batch_size=2, num_workers=1, multiprocessing_context='spawn')
        print('worker', next(iter(dl))[0])
        ctx = mp.get_context('spawn')
        q = ctx.SimpleQueue()
        mp.spawn(child, args=(q,), nprocs=1)
        print('spawn', q.get())
        p = ctx.Process(target=child, args=(0, q))
        p.start(); p.join(60)
        print('process', q.get())
        out = subprocess.run([sys.executable, '-c', 'import torch; print(type(torch.zeros(1)).__module__)'],
                             capture_output=True, text=True, timeout=60)
        print('subprocess', out.stdout.strip())
        print('main', which())
''')


def _ember(args, cwd, timeout=120):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, '-m', 'ember', *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_run_resolves_torch_in_every_child(tmp_path):
    (tmp_path / 'prog.py').write_text(PROG)
    r = _ember(['run', 'prog.py'], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(line.split(' ', 1) for line in r.stdout.strip().splitlines())
    assert set(lines) == {'worker', 'spawn', 'process', 'subprocess', 'main'}
    for where, module in lines.items():
        assert module.startswith('ember'), (where, module)     # real torch would say torch


def test_compat_report_walks_a_folder(tmp_path):
    (tmp_path / 'a.py').write_text('import torch\nx = torch.zeros(2)\n')
    (tmp_path / 'sub').mkdir()
    (tmp_path / 'sub' / 'b.py').write_text('import torch\nimport torch.onnx_missing_thing\ny = torch.no_such_api(1)\n')
    (tmp_path / 'sub' / 'c.py').write_text('def broken(:\n')
    (tmp_path / 'notes.txt').write_text('import torch.nothing\n')
    r = _ember(['compat-report', str(tmp_path)], tmp_path)
    out = r.stdout
    assert r.returncode == 1
    assert f"{tmp_path / 'a.py'}: " in out and '0 missing' in out.split('\n')[0]
    assert 'missing: torch.no_such_api' in out and 'missing: torch.onnx_missing_thing' in out
    assert f"{tmp_path / 'sub' / 'c.py'}: cannot parse" in out
    assert 'notes.txt' not in out
    assert '3 files, 1 fully covered, 2 with missing APIs or errors' in out


def test_compat_report_single_file_still_works(tmp_path):
    (tmp_path / 'a.py').write_text('import torch\nx = torch.zeros(2)\n')
    r = _ember(['compat-report', str(tmp_path / 'a.py')], tmp_path)
    assert r.returncode == 0 and r.stdout.strip().endswith('0 missing')
