"""The ``ember`` command: ``ember demo``, ``ember run script.py``, ``ember compat-report script.py``."""
import argparse
import os
import subprocess
import sys


def main(argv=None):
    argv_given = argv is not None
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ('-h', '--help'):
        print("usage: ember demo [--minutes M | --steps N] [--out DIR]\n"
              "       ember run script.py [args...]        run a PyTorch script with torch resolving to ember\n"
              "       ember run torchrun [flags] script.py  (or -m torch.distributed.run) ember's launcher, emberrun\n"
              "       ember run --cuda-as-cpu ...          a GPU program on the CPU: 'cuda' devices are the CPU, nccl runs on MPI\n"
              "       ember compat-report PATH            list the torch APIs a script (or each .py in a folder) uses that ember lacks")
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == 'demo':
        from .demo import main as demo_main
        return demo_main(rest)
    if cmd == 'run':
        if rest[:1] == ['--cuda-as-cpu']:
            rest = rest[1:]
            if os.environ.get('EMBER_CUDA_AS_CPU') != '1':
                return _cuda_as_cpu(rest, explicit=argv_given)
        if not rest or rest[0] in ('-h', '--help'):
            print('usage: ember run [--cuda-as-cpu] script.py [args...]   (or: ember run torchrun [flags] script.py)',
                  file=sys.stdout if rest else sys.stderr)
            return 0 if rest else 2
        if rest[0] == 'torchrun' or rest[:2] in (['-m', 'torch.distributed.run'], ['-m', 'ember.distributed.run']):
            return _torchrun(rest[1:] if rest[0] == 'torchrun' else rest[2:])
        from .compat import run
        _drop_launcher_path()
        run(rest[0], rest[1:])
        return 0
    if cmd == 'compat-report':
        ap = argparse.ArgumentParser(prog='ember compat-report')
        ap.add_argument('path', help='a script, or a folder whose .py files are reported one by one')
        a = ap.parse_args(rest)
        from .compat import report_main
        return report_main(a.path)
    print(f"ember: unknown command '{cmd}' (try 'ember --help')", file=sys.stderr)
    return 2


def _drop_launcher_path():
    """``python script.py`` puts only the script's folder on sys.path (``run`` adds it); the entry the launcher
    added, the current directory for ``python -m ember`` or the console script's folder for ``ember``, goes."""
    main = sys.modules.get('__main__')
    spec = getattr(main, '__spec__', None)
    if spec is not None and spec.name == 'ember.__main__':
        entries = ('', os.getcwd())
    elif getattr(main, '__file__', None):
        entries = (os.path.dirname(os.path.abspath(main.__file__)),)
    else:
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # the folder ember is imported from
    if sys.path and sys.path[0] in entries and os.path.abspath(sys.path[0] or '.') != here:
        del sys.path[0]     # (kept where it is what makes ember importable: a checkout run without installing)


def _cuda_as_cpu(rest, explicit):
    """``ember run --cuda-as-cpu ...`` (NOTE [cuda as cpu] in ember/_core/device.py): say so once, then run the
    same command again in a process whose environment has ``EMBER_CUDA_AS_CPU=1``, so that ember reads it when
    it is first imported (as do the ranks a launcher starts, which inherit it)."""
    print("ember run --cuda-as-cpu: the program's CUDA devices are the CPU and backend 'nccl' runs on MPI "
          "(ember.cuda.is_available() stays False)", file=sys.stderr, flush=True)
    env = dict(os.environ, EMBER_CUDA_AS_CPU='1')
    if explicit or not getattr(sys, 'orig_argv', None):
        return subprocess.call([sys.executable, '-m', 'ember', 'run', *rest], env=env)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


def _torchrun(args):
    """torchrun under ``ember run``: ember's launcher, with torch resolving to ember in the ranks it starts."""
    from .compat import install
    install()                       # puts the torch shim on PYTHONPATH, which the ranks inherit
    from .distributed.run import main as launch
    return launch(args)


if __name__ == '__main__':
    sys.exit(main())
