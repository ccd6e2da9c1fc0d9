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
        return type(F.relu(torch.zeros(1))).__mro__[1].__module__      # Tensor's base: ember's TensorImpl


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
        out = subprocess.run([sys.executable, '-c', 'import torch; print(type(torch.zeros(1)).__mro__[1].__module__)'],
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


HOGWILD = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.multiprocessing as mp


    class Net(nn.Module):                   # defined in __main__, as pytorch/examples' mnist_hogwild
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x)


    def train(rank, model, barrier):
        opt = torch.optim.SGD(model.parameters(), lr=0.25)
        loss = model(torch.ones(4, 3)).sum()    # every gradient element is 4: each step moves each weight by -1
        loss.backward()
        opt.step()                          # updates the shared parameters in place
        barrier.wait(60)                    # all steps done before the adds below (no lost update to test)
        with torch.no_grad():               # each child its own element: no lost update between them
            for p in model.parameters():
                p.view(-1)[rank].add_(1000.0)


    if __name__ == '__main__':
        mp.set_start_method('spawn', force=True)
        model = Net()
        model.share_memory()
        before = [p.detach().clone() for p in model.parameters()]
        barrier = mp.Barrier(2)
        procs = [mp.Process(target=train, args=(r, model, barrier)) for r in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        print('exitcodes', [p.exitcode for p in procs])
        print('shifts', [[round(d) for d in (p.detach() - b).view(-1)[:3].tolist()]
                         for p, b in zip(model.parameters(), before)])
''')


def test_run_hogwild_with_spawn_and_a_model_defined_in_main(tmp_path):
    (tmp_path / 'hogwild.py').write_text(HOGWILD)
    r = _ember(['run', 'hogwild.py'], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert 'exitcodes [0, 0]' in r.stdout, r.stdout + r.stderr[-2000:]
    # both children's SGD steps (-1 each) and their own element's +1000 landed in the parent's parameters
    assert 'shifts [[998, 998, -2], [998, 998]]' in r.stdout, r.stdout


def test_run_help_prints_usage_not_a_traceback(capsys):
    from ember.__main__ import main
    assert main(['run', '--help']) == 0
    assert capsys.readouterr().out.startswith('usage: ember run')
    assert main(['run']) == 2           # no script: usage on stderr, an error status
    assert 'usage: ember run' in capsys.readouterr().err


CLASS_NAMES = textwrap.dedent('''
    import inspect, io, pickle
    import torch, torch.nn as nn
    from torch.utils.data import TensorDataset


    class Tracer(torch.fx.Tracer):      # timm's rule for leaves: torch.nn's own modules
        def is_leaf_module(self, m, name):
            return m.__module__.startswith('torch.nn') and not isinstance(m, nn.Sequential)


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.act = nn.Linear(2, 2), nn.GELU()

        def forward(self, x):
            return self.act(self.fc(x))


    model = nn.Sequential(Block(), nn.BatchNorm1d(2))
    print(type(model[0].fc), type(model[1]), nn.Parameter.__module__)
    opt = torch.optim.AdamW(model.parameters())     # ember imports the optimizers' modules on first use
    print(type(opt), type(torch.optim.lr_scheduler.StepLR(opt, 2)), type(TensorDataset(torch.zeros(2))))
    print(type(torch.distributions.Normal(0., 1.)), type(torch.fx.symbolic_trace(nn.Linear(2, 2))).__module__)
    print([n.op for n in Tracer().trace(model).nodes])
    again = pickle.loads(pickle.dumps(model))
    print(type(again[1]), inspect.getsource(type(again[0].fc)).lstrip().startswith('class Linear'))
    buf = io.BytesIO()
    torch.save({'p': nn.Parameter(torch.ones(2)), 'model': model}, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    print(type(loaded['p']), loaded['p'].requires_grad, type(loaded['model'][0].act))
''')


def test_run_names_ember_classes_as_torch(tmp_path):
    """NOTE [torch's class names under ember run]: classes print, pickle and trace under torch's module paths
    (a tracer that keeps torch.nn's modules as leaves gives torch's graph), as under torch itself."""
    (tmp_path / 'prog.py').write_text(CLASS_NAMES)
    torch_run = subprocess.run([sys.executable, 'prog.py'], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert torch_run.returncode == 0, torch_run.stderr[-3000:]
    r = _ember(['run', 'prog.py'], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout == torch_run.stdout
    assert "call_module" in r.stdout and "<class 'torch.optim.adamw.AdamW'>" in r.stdout
