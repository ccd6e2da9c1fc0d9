"""``ember run --cuda-as-cpu`` (NOTE [cuda as cpu]): GPU data-parallel programs, unchanged, on the CPU; and the
corpus runner's way of comparing them with torch (bench/corpus.py: torch's reference makes the same
substitutions by hand). The programs here are written in the GPU idioms of pytorch/examples'
distributed/ddp-tutorial-series, so these tests need no corpus checkout.
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'bench'))
import corpus  # noqa: E402

# the tutorial's idioms: set_device(LOCAL_RANK), nccl, .to(gpu_id), DDP(device_ids=[gpu_id]), map_location cuda
GPU_PROGRAM = '''
import os, sys
import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed import init_process_group, destroy_process_group


class Trainer:
    def __init__(self, model):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(self.gpu_id)
        if os.path.exists("snapshot.pt"):
            loc = f"cuda:{self.gpu_id}"
            self.model.load_state_dict(torch.load("snapshot.pt", map_location=loc))
            print("Loading snapshot")
        self.model = DDP(self.model, device_ids=[self.gpu_id])

    def run(self, steps):
        opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        for step in range(steps):
            x = torch.full((4, 3), float(self.gpu_id + 1)).to(self.gpu_id)
            loss = F.mse_loss(self.model(x), torch.zeros(4, 1).to(self.gpu_id))
            opt.zero_grad()
            loss.backward()
            opt.step()
            w = self.model.module.weight.detach()
            print(f"[GPU{self.gpu_id}] Epoch {step} | Batchsize: 4 | Steps: {steps}")
        if self.gpu_id == 0:
            torch.save(self.model.module.state_dict(), "snapshot.pt")
            print(f"Epoch {steps} | Training snapshot saved at snapshot.pt")
        return w


torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
init_process_group(backend="nccl")
torch.manual_seed(0)
w = Trainer(torch.nn.Linear(3, 1)).run(int(sys.argv[1]))
gathered = [torch.zeros_like(w) for _ in range(2)]
torch.distributed.all_gather(gathered, w)
assert torch.equal(gathered[0], gathered[1]) and w.device == torch.device("cpu")
destroy_process_group()
'''


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS='1')
    for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT', 'TORCHELASTIC_RUN_ID',
              'EMBER_CUDA_AS_CPU'):
        env.pop(k, None)
    return dict(env, **extra)


def test_devices_under_the_option():
    code = ('import ember, ember.distributed as dist\n'
            'assert ember.device("cuda:1") == ember.device("cpu") and ember.device(0) == ember.device("cpu")\n'
            'x = ember.ones(2).to(1)\n'
            'assert x.device == ember.device("cpu") and not x.is_cuda and ember.ones(2, device="cuda").sum() == 2\n'
            'assert not ember.cuda.is_available() and ember.cuda.device_count() == 0\n'
            'ember.cuda.set_device(3)\n'
            'm = ember.nn.parallel.DistributedDataParallel\n'
            'dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)\n'
            't = ember.ones(3); dist.all_reduce(t); assert t.tolist() == [1., 1., 1.]\n'
            'm(ember.nn.Linear(2, 2).to(0), device_ids=[0], output_device=0)\n'
            'print("ok")\n')
    p = subprocess.run([sys.executable, '-c', code], env=_env(EMBER_CUDA_AS_CPU='1'), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == 'ok\n', p.stderr


def test_without_the_option_cuda_stays_absent():
    code = ('import ember, ember.distributed as dist\n'
            'assert ember.device("cuda:1").type == "cuda"\n'
            'for f in (lambda: ember.ones(2).to(0), lambda: ember.cuda.set_device(0)):\n'
            '    try:\n'
            '        f()\n'
            '        raise SystemExit("no error")\n'
            '    except AssertionError as e:\n'
            '        assert "Torch not compiled with CUDA enabled" in str(e)\n'
            'try:\n'
            '    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)\n'
            '    raise SystemExit("no error")\n'
            'except RuntimeError as e:\n'
            '    assert "only supported with GPUs" in str(e)\n'
            'print("ok")\n')
    p = subprocess.run([sys.executable, '-c', code], env=_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == 'ok\n', p.stderr


def test_a_gpu_program_runs_unchanged_under_ember_run_cuda_as_cpu(tmp_path):
    (tmp_path / 'train.py').write_text(GPU_PROGRAM)
    launch = ['torchrun', '--standalone', '--nproc_per_node=2', 'train.py', '2']
    plain = subprocess.run([sys.executable, '-m', 'ember', 'run', *launch], env=_env(), cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode != 0 and 'Torch not compiled with CUDA enabled' in plain.stderr
    for attempt in ('fresh', 'resumed'):
        p = subprocess.run([sys.executable, '-m', 'ember', 'run', '--cuda-as-cpu', *launch], env=_env(),
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stderr.count('ember run --cuda-as-cpu: ') == 1          # one warning, not one per rank
        assert "[rank0]:ember.distributed: backend 'nccl' runs on MPI" in p.stderr
        records = sorted(corpus.re.findall(corpus._DDP_RECORDS, p.stdout))
        expected = [f'[GPU{r}] Epoch {s} | Batchsize: 4 | Steps: 2' for r in (0, 1) for s in (0, 1)]
        expected += ['Epoch 2 | Training snapshot saved at snapshot.pt']
        expected += ['Loading snapshot'] * 2 if attempt == 'resumed' else []
        assert records == sorted(expected), p.stdout


def test_corpus_runner_compares_a_gpu_program_with_torchs_cpu_reference(tmp_path):
    # a corpus of one program, in the tutorial's folder: torch runs a copy edited for the CPU under torchrun and
    # gloo, ember the program as written under ember run --cuda-as-cpu; their records must agree
    folder = tmp_path / 'distributed' / 'ddp-tutorial-series'
    folder.mkdir(parents=True)
    (folder / 'multigpu_torchrun.py').write_text(GPU_PROGRAM)
    spec = dict(corpus._ddp_tutorial('multigpu_torchrun.py'), steps=[('multigpu_torchrun.py', ['2'])])
    ok, msg, outputs = corpus.run_program(str(tmp_path), 'fake', spec, 120, False, False)
    assert ok, (msg, outputs)
    assert 'nccl' in outputs['ember'] and 'gloo' not in open(folder / 'multigpu_torchrun.py').read()
    # and the comparison can fail: a record missing on one side
    bad = {'torch': ['Epoch 2 | Training snapshot saved at snapshot.pt'], 'ember': []}
    assert corpus.compare_records(bad)[0] is False


def test_torch_reference_edits_must_apply(tmp_path):
    folder = tmp_path / 'distributed' / 'ddp-tutorial-series'
    folder.mkdir(parents=True)
    (folder / 'multigpu_torchrun.py').write_text('print("no GPU idioms here")\n')
    with pytest.raises(ValueError, match="none of the edits for torch's reference applies"):
        corpus.prepare(str(tmp_path), corpus._ddp_tutorial('multigpu_torchrun.py'), str(tmp_path / 'scratch'))
