"""Scoreboard: run pytorch/examples programs under torch and under ``ember run``, and compare what they print.

Usage (from the project root, so the tree's ember is the one imported)::

    python bench/corpus.py CORPUS_DIR [--only NAME ...] [--keep] [--timeout S] [-v]

CORPUS_DIR is a checkout of github.com/pytorch/examples; nothing of it is copied into
this project. Each program runs in a scratch copy of its folder (a temporary
directory), with small settings (one short epoch, a few batches, its own flags such
as ``--epochs 1`` / ``--dry-run`` / ``--log-interval``) and with the data it would
download generated locally in the exact on-disk format it expects (there is no
network). Each program runs twice with the same seed: under torch
(``python script.py``) and under ember (``python -m ember run script.py``, with
the project root first on PYTHONPATH and an editable install of another checkout kept
from supplying modules this tree lacks; ``--ember-root`` picks another checkout).

What counts as a pass (the tolerance, stated once here and in COMPAT.md):

* both runs exit 0 within the timeout, and every number the program prints after a
  metric word (loss, ppl, accuracy, reward, ...) is finite;
* both print the same sequence of metric names (same count per name);
* ember's RNG stream differs from torch's, so the same seed gives different initial
  weights and batches: the **first** value of each metric must agree within
  ``first`` (default 15 % relative + 0.01 absolute) and the **last** within ``last``
  (default 30 % relative + 0.01); perplexities are compared as their logarithm (the
  loss), accuracies (fractions) within 0.15 absolute, first and last. Programs whose numbers are dominated by
  that randomness (reinforcement learning rewards, early-stopped regression) state
  a looser per-program band; it is printed with each failure.

Programs that need ``torchvision`` cannot run under torch here (torchvision is not
installed beside torch 2.13), so they run under ember only (``torchvision`` resolves
to ``ember.vision`` under ``ember run``); they pass when they run to their end, every
printed metric is finite and the printed loss falls from its first to its last value
(where a program prints more than one).

The distributed programs (``distributed/ddp-tutorial-series``) are written for GPUs (``torch.cuda.set_device``,
``backend="nccl"``, ``.to(local_rank)``, ``device_ids=[local_rank]``). Under ember they run unchanged with
``ember run --cuda-as-cpu`` (NOTE [cuda as cpu] in ember/_core/device.py: the program's CUDA devices are the CPU,
nccl runs on MPI), two ranks started by ``ember run torchrun`` or by the program's own ``mp.spawn``. torch
cannot run them on a CPU as written (``set_device`` raises "Torch not compiled with CUDA enabled"), so its
reference run makes those same substitutions by hand in its copy (``torch_patch``: no set_device, gloo,
no ``.to(gpu)``, no ``device_ids``, ``map_location='cpu'``) and is launched by torchrun on gloo. They print
no metric: what each rank prints (epochs, batch sizes, steps per epoch from the DistributedSampler, snapshot
saved and resumed from) is compared as a sorted list of records (``compare_records``) and must be equal.

Programs of other published repositories run too when their checkout is named: ``--repo
karpathy/nanoGPT=PATH`` (train.py on Tiny Shakespeare with the README's CPU settings, then sample.py),
``--repo karpathy/minGPT=PATH`` (projects/chargpt) and ``--repo karpathy/makemore=PATH`` (its six model
types); they are compared like the others, by their printed losses. ``--repo rasbt/LLMs-from-scratch=PATH``
adds chapter 5's pretraining script and chapter 4's KV-cache attention variants, shrunk, whose whole output
(losses and generated text) must equal torch's.

Output: one ``PASS name`` / ``FAIL name: first error (file:line)`` line per program,
then ``N passed, M failed``.
"""
import argparse
import gzip
import io
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# `python -m ember run`, except that an editable install of another ember checkout (setuptools' __editable__
# finder on sys.meta_path) must not supply the submodules this tree lacks: the run would silently mix trees.
EMBER_RUN = ("import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if not "
             "getattr(f, '__module__', '').startswith('__editable__')]; sys.argv[0] = 'ember'; "
             "runpy.run_module('ember', run_name='__main__', alter_sys=True)")
SHAKESPEARE = '/work/shared/data/tinyshakespeare.txt'

# ----------------------------------------------------------------------------- data


def _words(n, offset=0):
    """``n`` whitespace-separated words of Shakespeare (or a fixed word list when the file is absent)."""
    if os.path.exists(SHAKESPEARE):
        with open(SHAKESPEARE, encoding='utf8') as f:
            words = f.read().split()
    else:
        words = ('to be or not to be that is the question whether tis nobler in the mind to suffer '
                 'the slings and arrows of outrageous fortune').split() * 200
    return words[offset:offset + n]


def wikitext(d, train=2400, valid=700, test=700):
    """word_language_model: data/wikitext-2/{train,valid,test}.txt, one sentence of ~12 words a line."""
    p = os.path.join(d, 'data', 'wikitext-2')
    os.makedirs(p, exist_ok=True)
    off = 0
    for name, n in (('train', train), ('valid', valid), ('test', test)):
        w = _words(n, off)
        off += n
        lines = [' '.join(w[i:i + 12]) for i in range(0, len(w), 12)]
        with open(os.path.join(p, name + '.txt'), 'w', encoding='utf8') as f:
            f.write('\n'.join(lines) + '\n')


def cora(d, nodes=1700, feats=48, classes=7, edges=4000, seed=0):
    """gcn/gat: ./cora/cora.{content,cites} (and cora.tgz, served by a local ``requests`` stand-in for gcn)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    ids = rng.choice(10 ** 6, size=nodes, replace=False) + 1
    labels = rng.integers(0, classes, nodes)
    names = [f'Class_{c}' for c in range(classes)]
    # features correlate with the label so that the model has something to learn
    x = (rng.random((nodes, feats)) < 0.08).astype(int)
    x[np.arange(nodes), labels * (feats // classes)] = 1
    src = rng.integers(0, nodes, edges)
    dst = np.where(rng.random(edges) < 0.7,
                   # same-class neighbours mostly
                   np.array([rng.choice(np.flatnonzero(labels == labels[s])) for s in src]),
                   rng.integers(0, nodes, edges))
    keep = src != dst
    os.makedirs(os.path.join(d, 'cora'), exist_ok=True)
    with open(os.path.join(d, 'cora', 'cora.content'), 'w') as f:
        for i in range(nodes):
            f.write('\t'.join([str(ids[i]), *map(str, x[i]), names[labels[i]]]) + '\n')
    with open(os.path.join(d, 'cora', 'cora.cites'), 'w') as f:
        for s, t in zip(src[keep], dst[keep]):
            f.write(f'{ids[s]}\t{ids[t]}\n')
    with tarfile.open(os.path.join(d, 'cora.tgz'), 'w:gz') as t:
        t.add(os.path.join(d, 'cora'), arcname='cora')
    # gcn always "downloads": a local stand-in for requests.get that streams cora.tgz from disk
    with open(os.path.join(d, 'requests.py'), 'w') as f:
        f.write('"""Local stand-in for requests.get (no network in the corpus runner): serves ./cora.tgz."""\n'
                'import contextlib, os, types\n'
                '@contextlib.contextmanager\n'
                'def get(url, stream=False, **kw):\n'
                '    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cora.tgz"), "rb") as f:\n'
                '        yield types.SimpleNamespace(raw=f, status_code=200)\n')


def mnist_raw(d, root='../data', train=320, test=160, seed=0):
    """MNIST in torchvision's raw layout: <root>/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte(.gz)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    raw = os.path.normpath(os.path.join(d, root, 'MNIST', 'raw'))
    os.makedirs(raw, exist_ok=True)
    for prefix, n in (('train', train), ('t10k', test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        imgs = (rng.random((n, 28, 28)) * 60).astype(np.uint8)
        for i, l in enumerate(labels):      # a class-dependent bright bar: learnable, so the loss falls
            imgs[i, 2 + 2 * l:5 + 2 * l, 4:24] = 255
        files = {f'{prefix}-images-idx3-ubyte': struct.pack('>IIII', 2051, n, 28, 28) + imgs.tobytes(),
                 f'{prefix}-labels-idx1-ubyte': struct.pack('>II', 2049, n) + labels.tobytes()}
        for name, blob in files.items():
            with open(os.path.join(raw, name), 'wb') as f:
                f.write(blob)
            with gzip.open(os.path.join(raw, name + '.gz'), 'wb') as f:
                f.write(blob)


def images(folder, n, size=(64, 64), seed=0, ext='jpg'):
    """``n`` small random RGB images (PIL) in ``folder``."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    for i in range(n):
        a = (rng.random((size[1], size[0], 3)) * 255).astype('uint8')
        Image.fromarray(a).save(os.path.join(folder, f'{i:04d}.{ext}'))


def bsds300(d):
    """super_resolution: dataset/BSDS300/images/{train,test}/*.jpg (data.py skips the download when present)."""
    base = os.path.join(d, 'dataset', 'BSDS300', 'images')
    images(os.path.join(base, 'train'), 8, size=(96, 96))
    images(os.path.join(base, 'test'), 4, size=(96, 96), seed=1)


def image_folder(d):
    """imagenet: sample/{train,val}/<class>/*.jpg, two classes."""
    for split in ('train', 'val'):
        for c in ('a', 'b'):
            images(os.path.join(d, 'sample', split, c), 4, seed=hash((split, c)) % 1000)


# ----------------------------------------------------------------------------- programs
# step: (script, args); patch: [(file, old, new)] shrinking data-size constants in the scratch copy;
# stop_after: (regex, count) ends a program that has no episode limit after its count-th matching line.

W = ['--emsize', '32', '--nhid', '32', '--lr', '5', '--epochs', '1', '--log-interval', '1', '--batch_size', '10',
     '--bptt', '20']


def wlm(model):
    # the ReLU RNN diverges in spikes at lr 5 on this small vocabulary, under torch as under ember: lr 1
    lr = ['--lr', '1'] if model == 'RNN_RELU' else []
    return dict(folder='word_language_model', setup=wikitext,
                steps=[('main.py', W + ['--model', model] + lr),
                       ('generate.py', ['--words', '40', '--log-interval', '10'])])


# CartPole: one episode's reward is at the mercy of the initial weights and the sampled actions; the running
# average (0.95 * previous + 0.05 * episode, from 10) is what is compared, loosely
RL = dict(ignore=('last reward',), tol=dict(first=(0.3, 0.0), last=(0.5, 0.0)))

PROGRAMS = {
    'regression': dict(folder='regression', steps=[('main.py', [])],
                       # runs until loss < 1e-3 from a random target: only "< 1e-3 on both" is meaningful
                       tol=dict(first=(0.0, 1e-3), last=(0.0, 1e-3))),
    'time_sequence_prediction': dict(
        folder='time_sequence_prediction',
        patch=[('generate_sine_wave.py', 'L = 1000', 'L = 120'), ('generate_sine_wave.py', 'N = 100', 'N = 12'),
               ('train.py', 'future = 1000', 'future = 100')],
        steps=[('generate_sine_wave.py', []), ('train.py', ['--steps', '2'])],
        # the program's torch.load(traindata.pt) of a NumPy array needs the documented switch under torch 2.13
        env={'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': '1'},
        tol=dict(first=(0.5, 0.05), last=(1.0, 0.05))),
    **{f'word_language_model[{m}]': wlm(m) for m in ('RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU', 'Transformer')},
    # --onnx-export: torch 2.13's exporter needs onnxscript (not installed here), so ember only; the program's
    # own export_onnx calls init_hidden, which only its RNN models have
    **{f'word_language_model[{m} --onnx-export]': dict(wlm(m), ember_only=True, steps=[
        ('main.py', W + ['--model', m, '--dry-run', '--onnx-export', 'model.onnx'])]) for m in ('LSTM', 'GRU')},
    'gcn': dict(folder='gcn', setup=cora, steps=[('main.py', ['--epochs', '2', '--val-every', '1'])]),
    'gat': dict(folder='gat', setup=cora, steps=[('main.py', ['--epochs', '2', '--val-every', '1',
                                                              '--hidden-dim', '8', '--num-heads', '2'])]),
    'reinforcement_learning[reinforce]': dict(
        folder='reinforcement_learning', steps=[('reinforce.py', ['--log-interval', '1'])],
        stop_after=(r'^Episode', 5), **RL),
    'reinforcement_learning[actor_critic]': dict(
        folder='reinforcement_learning', steps=[('actor_critic.py', ['--log-interval', '1'])],
        stop_after=(r'^Episode', 5), **RL),
    # --- programs that need torchvision: ember only
    'mnist': dict(folder='mnist', vision=True, setup=mnist_raw,
                  steps=[('main.py', ['--epochs', '1', '--log-interval', '1', '--batch-size', '64',
                                      '--test-batch-size', '80', '--save-model'])]),
    'mnist_rnn': dict(folder='mnist_rnn', vision=True, setup=mnist_raw,
                      steps=[('main.py', ['--epochs', '1', '--log-interval', '1', '--batch-size', '64',
                                          '--test-batch-size', '80'])]),
    'mnist_forward_forward': dict(folder='mnist_forward_forward', vision=True,
                                  setup=lambda d: mnist_raw(d, root='./data'),
                                  steps=[('main.py', ['--epochs', '2', '--no_accel', '--log-interval', '1',
                                                      '--train_size', '320', '--test_size', '160'])]),
    'mnist_hogwild': dict(folder='mnist_hogwild', vision=True, setup=mnist_raw,
                          steps=[('main.py', ['--epochs', '3', '--log-interval', '1', '--num-processes', '2',
                                              '--batch-size', '64', '--test-batch-size', '80'])]),
    'vae': dict(folder='vae', vision=True, setup=mnist_raw,
                steps=[('main.py', ['--epochs', '1', '--log-interval', '1', '--batch-size', '64'])]),
    'siamese_network': dict(folder='siamese_network', vision=True, setup=mnist_raw,
                            steps=[('main.py', ['--epochs', '1', '--log-interval', '1', '--batch-size', '32',
                                                '--test-batch-size', '32'])]),
    'dcgan': dict(folder='dcgan', vision=True,
                  steps=[('main.py', ['--dataset', 'fake', '--dry-run', '--batchSize', '4', '--imageSize', '64',
                                      '--ngf', '8', '--ndf', '8', '--niter', '1', '--workers', '0'])]),
    'super_resolution': dict(folder='super_resolution', vision=True, setup=bsds300,
                             steps=[('main.py', ['--upscale_factor', '3', '--batchSize', '4', '--testBatchSize',
                                                 '4', '--nEpochs', '1', '--lr', '0.001', '--threads', '0']),
                                    ('super_resolve.py', ['--input_image', 'dataset/BSDS300/images/test/0000.jpg',
                                                          '--model', 'model_epoch_1.pth',
                                                          '--output_filename', 'out.png'])]),
    # the VGG16 it asks for is ImageNet-trained weights, a download: a checkpoint in torchvision's layout with
    # random weights stands in (TORCH_HOME points into the scratch folder), so the program runs as written
    # and the program spells Pillow's LANCZOS filter by its alias ANTIALIAS, removed in Pillow 10: the one
    # edit made to a program for its environment rather than for size (it fails the same way under torch)
    'fast_neural_style': dict(folder='fast_neural_style', vision=True, env={'TORCH_HOME': 'torch_home'},
                              patch=[('neural_style/utils.py', 'Image.ANTIALIAS', 'Image.LANCZOS')],
                              loss_re=r'total:\s*([-+0-9.e]+)',      # it prints content/style/total losses
                              setup=lambda d: (images(os.path.join(d, 'train', 'x'), 4, size=(64, 64)),
                                               vgg16_checkpoint(d)),
                              steps=[('neural_style/neural_style.py',
                                      ['train', '--dataset', 'train', '--style-image',
                                       'images/style-images/mosaic.jpg', '--save-model-dir', 'models',
                                       '--epochs', '1', '--batch-size', '2', '--image-size', '32',
                                       '--style-size', '32', '--log-interval', '1'])]),
    # --dummy feeds random images with random labels: nothing to learn, so only finite metrics are required
    'imagenet': dict(folder='imagenet', vision=True, learnable=False,
                     steps=[('main.py', ['--dummy', '-a', 'resnet18', '--epochs', '1', '-b', '2', '-j', '0',
                                         '--print-freq', '1'])], stop_after=(r'^Epoch: \[0\]\[\s*3/', 1)),
}

# pytorch/examples/fx: programs that print graphs and generated code rather than metrics. Compared as text:
# ember's output with 'ember' read as 'torch' must equal torch's line by line, numbers within 1e-4 relative
# (a float32 result that torch prints as 1. and ember as 1.0000 differs only in the last bit).
# custom_tracer prints with tabulate (pip install tabulate on both sides); module_tracer needs torchvision,
# so it runs under ember only
FX = dict(folder='fx', text=True)
PROGRAMS.update({
    **{f'fx[{n}]': dict(FX, steps=[(f'{n}.py', [])]) for n in (
        'custom_tracer', 'inline_function', 'invert', 'primitive_library', 'proxy_based_graph_creation',
        'replace_op', 'subgraph_rewriter_basic_use', 'wrap_output_dynamically')},
    'fx[module_tracer]': dict(FX, vision=True, steps=[('module_tracer.py', [])]),
})

# distributed/ddp-tutorial-series: GPU programs, run on the CPU (see the module docstring). Each runs twice in
# the same folder: 2 epochs saving a snapshot every epoch, then 3 epochs, which resume from that snapshot.
# Edits for torch's reference run only; multigpu.py counts GPUs to choose its world size (0 here) under both.
_TORCH_CPU = [('.to(self.gpu_id)', ''), ('.to(self.local_rank)', ''), ('model.to(gpu_id)', 'model'),
              ('backend="nccl"', 'backend="gloo"'), ('device_ids=[self.gpu_id]', 'device_ids=None'),
              ('device_ids=[self.local_rank]', 'device_ids=None'), ('device_ids=[gpu_id]', 'device_ids=None'),
              ('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))', 'pass'), ('torch.cuda.set_device(rank)', 'pass'),
              ('f"cuda:{self.gpu_id}"', '"cpu"'), ('f"cuda:{self.local_rank}"', '"cpu"')]


_DDP_RECORDS = (r'\[GPU\d\] Epoch \d+ \| Batchsize: \d+ \| Steps: \d+|Epoch \d+ \| Training (?:snapshot|checkpoint) '
                r'saved at [^\s\[]+|Loading snapshot|Resuming training from snapshot at Epoch \d+')
# (a path ends before a '[': two ranks sharing one pipe can print 'saved at checkpoint.pt[GPU1] Epoch ...')


def _ddp_tutorial(script, launched=True):
    torchrun = ['--standalone', '--nproc_per_node=2'] if launched else None
    return dict(folder='distributed/ddp-tutorial-series', launcher=torchrun, ember_flags=['--cuda-as-cpu'],
                torch_patch=[(script, old, new) for old, new in _TORCH_CPU],
                records=_DDP_RECORDS, steps=[(script, ['2', '1']), (script, ['3', '1'])],
                **({} if launched else dict(patch=[(script, 'world_size = torch.cuda.device_count()',
                                                    'world_size = 2')])))


PROGRAMS.update({
    'ddp-tutorial-series[multigpu_torchrun]': _ddp_tutorial('multigpu_torchrun.py'),
    'ddp-tutorial-series[multinode]': _ddp_tutorial('multinode.py'),
    'ddp-tutorial-series[multigpu]': _ddp_tutorial('multigpu.py', launched=False),
})



def _shakespeare_input(d):
    shutil.copy(SHAKESPEARE, os.path.join(d, 'input.txt'))


def _nanogpt_input(d):
    shutil.copy(SHAKESPEARE, os.path.join(d, 'data', 'shakespeare_char', 'input.txt'))


# Programs of other published repositories, run when a checkout is given (--repo OWNER/NAME=PATH): karpathy's
# nanoGPT (the README's CPU settings, shortened), minGPT's char-level GPT and makemore's six model types. Their
# data is Tiny Shakespeare (shipped in ../shared/data) or the names file inside the repository.
_NANOGPT = ['config/train_shakespeare_char.py', '--device=cpu', '--compile=False', '--eval_iters=5',
            '--eval_interval=20', '--log_interval=5', '--block_size=64', '--batch_size=12', '--n_layer=4',
            '--n_head=4', '--n_embd=128', '--max_iters=40', '--lr_decay_iters=40', '--dropout=0.0']
PROGRAMS.update({
    'nanoGPT/shakespeare_char': dict(
        repo='karpathy/nanoGPT', folder='.', setup=_nanogpt_input,
        steps=[('data/shakespeare_char/prepare.py', []), ('train.py', _NANOGPT),
               ('sample.py', ['--out_dir=out-shakespeare-char', '--device=cpu', '--num_samples=1',
                              '--max_new_tokens=40'])]),
    'minGPT/chargpt': dict(
        repo='karpathy/minGPT', folder='projects/chargpt', also=['mingpt'], setup=_shakespeare_input,
        steps=[('chargpt.py', ['--model.model_type=gpt-nano', '--trainer.max_iters=41',
                               '--trainer.batch_size=16', '--trainer.num_workers=0'])]),
})


def _gpt2_bpe_offline(d):
    """tiktoken's GPT-2 encoding without a download: the repository ships the two BPE files; tiktoken finds them
    in its cache (TIKTOKEN_CACHE_DIR, relative to the run's folder) under the SHA-1 of their URLs."""
    import hashlib
    cache = os.path.join(d, 'tiktoken_cache')
    os.makedirs(cache, exist_ok=True)
    for f in ('vocab.bpe', 'encoder.json'):
        url = f'https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/{f}'
        shutil.copy(os.path.join(d, 'bpe', 'gpt2_model', f), os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()))


# rasbt/LLMs-from-scratch: chapter 5's pretraining script (GPT, AdamW, dropout, a shuffled DataLoader, sampling
# with temperature) on its own short story, shrunk to 2 layers of width 128 and 2 epochs; and chapter 4's
# KV-cache variants (grouped-query, multi-head latent, sliding-window attention, mixture of experts) generating
# from an untrained seeded model. Since the random streams are torch's, the whole printed text must be equal
# (``text``), or the generated tokens (``records``).
_LLM = dict(repo='rasbt/LLMs-from-scratch', env={'TIKTOKEN_CACHE_DIR': 'tiktoken_cache'})
PROGRAMS['LLMs-from-scratch/ch05-gpt_train'] = dict(
    _LLM, folder='ch05/01_main-chapter-code', text=True,
    also=['ch02/01_main-chapter-code', 'ch02/02_bonus_bytepair-encoder'],
    setup=lambda d: (shutil.copytree(os.path.join(d, 'ch02/02_bonus_bytepair-encoder'), os.path.join(d, 'bpe')),
                     shutil.copy(os.path.join(d, 'ch02/01_main-chapter-code/the-verdict.txt'), d),
                     _gpt2_bpe_offline(d)),
    patch=[('gpt_train.py', '"emb_dim": 768, ', '"emb_dim": 128, '),
           ('gpt_train.py', '"n_heads": 12, ', '"n_heads": 4, '),
           ('gpt_train.py', '"n_layers": 12, ', '"n_layers": 2, '),
           ('gpt_train.py', '"num_epochs": 10,', '"num_epochs": 2,')],
    steps=[('gpt_train.py', [])])
for _name, _folder, _script, _extra in (
        ('gqa', 'ch04/04_gqa', 'gpt_with_kv_gqa.py', ['--n_kv_groups', '2']),
        ('mla', 'ch04/05_mla', 'gpt_with_kv_mla.py', ['--latent_dim', '16']),
        ('swa', 'ch04/06_swa', 'gpt_with_kv_swa.py', ['--sliding_window_size', '8']),
        ('moe', 'ch04/07_moe', 'gpt_with_kv_moe.py', ['--num_experts', '4', '--num_experts_per_tok', '2',
                                                       '--hidden_dim', '128'])):
    PROGRAMS[f'LLMs-from-scratch/ch04-{_name}'] = dict(
        _LLM, folder=_folder, also=['ch02/02_bonus_bytepair-encoder'], records=r'Output(?: text)?: [^\n]*',
        setup=lambda d: (shutil.copytree(os.path.join(d, 'ch02/02_bonus_bytepair-encoder'), os.path.join(d, 'bpe')),
                         _gpt2_bpe_offline(d)),
        steps=[(_script, ['--emb_dim', '64', '--n_heads', '4', '--n_layers', '2', '--max_new_tokens', '10',
                          *_extra])])

for _t in ('transformer', 'rnn', 'gru', 'bow', 'mlp', 'bigram'):
    PROGRAMS[f'makemore[{_t}]'] = dict(repo='karpathy/makemore', folder='.', steps=[(
        'makemore.py', ['--type', _t, '--max-steps', '201', '--num-workers', '0', '-o', 'out'])])

NOT_RUN = {
    'language_translation': 'needs torchtext (no release for torch 2.13) and spaCy models downloaded at run time',
    'legacy/snli': 'needs torchtext.legacy (removed from torchtext) and a spaCy model download',
    'fx/profiling_tracer': 'prints profiler timings (nothing to compare as text) and calls '
                           'torch.ops.profiler._record_function_enter, which ember.profiler does not define',
    'fx/native_interpreter': 'TorchScript and C++ (no torch.jit in ember)',
    'distributed/ddp': 'exits at once unless torch.accelerator counts 2 GPUs (prints "Unable to locate '
                       'sufficient 2 gpus"), under torch as under ember',
    'distributed/minGPT-ddp': 'needs hydra-core, boto3 and fsspec (not installed) and exits unless '
                              'torch.accelerator counts 2 GPUs; its device code has no CPU path '
                              '(torch.device(f"{acc}:{rank}") with acc None)',
    'distributed/ddp-tutorial-series/single_gpu.py': 'one GPU, no distribution: .to(0) with torch.cuda absent '
                                                     '(ember run --cuda-as-cpu runs it; torch cannot)',
    'distributed/FSDP, FSDP2, rpc, tensor_parallelism': 'FSDP, RPC and DTensor are not in ember.distributed',
}

METRIC = re.compile(r'(?i)\b((?:average|avg|last|running|test|train|val|valid)[ _])?'
                    r'(loss|ppl|perplexity|accuracy|acc|reward)((?:_[a-z]+)?)\b[a-z_ ]*?[:=]?\s*'
                    r'([-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf))')


def metrics(text):
    """[(name, value)] for every 'loss 1.23' / 'acc_val: 0.5' / 'Average reward: 9.8' in what a program printed."""
    out = []
    for line in text.splitlines():
        for m in METRIC.finditer(line):
            name = m.group(2).lower()
            name = {'perplexity': 'ppl', 'acc': 'accuracy'}.get(name, name)
            if m.group(1):
                name = m.group(1).lower().replace('_', ' ') + name
            out.append((name + m.group(3).lower(), float(m.group(4))))
    return out


def first_error(text):
    """'ExceptionType: message (file:line)' from a traceback, the frame being the last one in the program or ember."""
    lines = [l for l in text.strip().splitlines() if l.strip()]
    frames = [m for m in (re.match(r'\s*File "([^"]+)", line (\d+)', l) for l in lines) if m]
    where = ''
    for m in reversed(frames):
        f = m.group(1)
        if f.startswith('<') or 'site-packages' in f or '/lib/python' in f or f.endswith(
                ('ember/compat.py', 'ember/__main__.py')):
            continue
        if True:
            where = f' ({os.path.relpath(f, ROOT) if f.startswith(ROOT) else os.path.basename(f)}:{m.group(2)})'
            break
    for pat in (r'^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b', r'^[A-Za-z_][\w.]*:'):
        for l in reversed(lines):
            if re.match(pat, l):
                return l.strip()[:300] + where
    return (lines[-1][:300] if lines else 'no output') + where


def run_one(cmd, cwd, env, timeout, stop_after):
    """Run ``cmd``; returns (rc, combined output). ``stop_after`` ends it cleanly after N matching lines."""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    out, hits = [], 0
    try:
        for line in p.stdout:
            out.append(line)
            if stop_after and re.search(stop_after[0], line):
                hits += 1
                if hits >= stop_after[1]:
                    os.killpg(p.pid, 9)
                    p.wait()
                    return 0, ''.join(out)
            if time.time() - t0 > timeout:
                raise subprocess.TimeoutExpired(cmd, timeout)
        p.wait(timeout=max(1, timeout - (time.time() - t0)))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.wait()
        return 124, ''.join(out) + f'\nTimeoutError: no end within {timeout}s'
    return p.returncode, ''.join(out)


def prepare(corpus, spec, dest, runtime='torch'):
    src = os.path.join(corpus, spec['folder'])
    if not os.path.isdir(src):
        raise FileNotFoundError(f'{src} is missing from the corpus')
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns('.git'))
    for extra in spec.get('also', ()):          # a package of the repository the program imports
        shutil.copytree(os.path.join(corpus, extra), os.path.join(dest, extra))
    for f, old, new in spec.get('patch', ()):
        p = os.path.join(dest, f)
        with open(p) as fh:
            text = fh.read()
        if old not in text:
            raise ValueError(f'{f}: expected {old!r} to patch; the corpus changed')
        with open(p, 'w') as fh:
            fh.write(text.replace(old, new))
    if runtime == 'torch' and spec.get('torch_patch'):     # torch's reference needs edits; they must change it
        for f in {f for f, _, _ in spec['torch_patch']}:
            p = os.path.join(dest, f)
            with open(p) as fh:
                text = orig = fh.read()
            for _, old, new in (e for e in spec['torch_patch'] if e[0] == f):
                text = text.replace(old, new)
            if text == orig:
                raise ValueError(f'{f}: none of the edits for torch\'s reference applies; the corpus changed')
            with open(p, 'w') as fh:
                fh.write(text)
    for script, _ in spec['steps']:
        if not os.path.exists(os.path.join(dest, script)):
            raise FileNotFoundError(f'{spec["folder"]}/{script} is missing from the corpus')
    if spec.get('setup'):
        spec['setup'](dest)


def vgg16_checkpoint(d):
    """torchvision's vgg16 file name and state-dict layout, random weights (written by ember.vision)."""
    path = os.path.join(d, 'torch_home', 'hub', 'checkpoints', 'vgg16-397923af.pth')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    code = f'import ember, ember.vision as tv; ember.save(tv.models.vgg16().state_dict(), {path!r})'
    subprocess.run([sys.executable, '-c', code], check=True, cwd=ROOT, timeout=600)


def run_program(corpus, name, spec, timeout, keep, verbose, ember_root=ROOT, accel=False):
    """One program under one or both runtimes; returns (ok, message, {runtime: output}). With ``accel``, a
    script that has an ``--accel`` switch gets it (scripts with ``--no-accel`` use an accelerator by themselves)."""
    runtimes = ['ember'] if spec.get('vision') or spec.get('ember_only') else ['torch', 'ember']
    outputs, results = {}, {}
    tmp = tempfile.mkdtemp(prefix=f'corpus_{re.sub(r"[^A-Za-z0-9_]", "_", name)}_')
    try:
        for rt in runtimes:
            d = os.path.join(tmp, rt)
            prepare(corpus, spec, d, rt)
            env = dict(os.environ, PYTHONHASHSEED='0', OMP_NUM_THREADS='1', MPLBACKEND='Agg', **spec.get('env', {}))
            if rt == 'ember':
                env['PYTHONPATH'] = ember_root + os.pathsep + env.get('PYTHONPATH', '')
            text = ''
            for script, args in spec['steps']:
                if accel and "'--accel'" in open(os.path.join(d, script)).read():
                    args = [*args, '--accel']
                cmd = _command(spec, rt, script, args)
                rc, out = run_one(cmd, d, env, timeout, spec.get('stop_after'))
                text += out
                if verbose:
                    shown = ['-m', 'ember', 'run'] + cmd[4:] if rt == 'ember' else cmd[1:]
                    print(f'--- {name} [{rt}] $ {" ".join(shown)}\n{out}', flush=True)
                if rc != 0:
                    outputs[rt] = text
                    return False, f'[{rt}] ' + first_error(out), outputs
            outputs[rt] = text
            if spec.get('records'):
                results[rt] = sorted(re.findall(spec['records'], text))
            elif not spec.get('text'):
                results[rt] = metrics(text) + [('loss', float(v)) for v in re.findall(spec.get('loss_re', r'$^'),
                                                                                       text)]
        if spec.get('text'):
            return compare_text(outputs) + (outputs,)
        if spec.get('records'):
            return compare_records(results) + (outputs,)
        return compare(spec, results)
    finally:
        if keep:
            print(f'    kept {tmp}')
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _command(spec, rt, script, args):
    """torch: ``python [-m torch.distributed.run FLAGS] script args``; ember: ``python -m ember run
    [EMBER_FLAGS] [torchrun FLAGS] script args``."""
    launch = spec.get('launcher')
    if rt == 'torch':
        return [sys.executable] + (['-m', 'torch.distributed.run', *launch] if launch is not None else []) + \
            [script, *args]
    return [sys.executable, '-c', EMBER_RUN, 'run', *spec.get('ember_flags', ())] + \
        (['torchrun', *launch] if launch is not None else []) + [script, *args]


def compare_records(results):
    """Programs compared by the records their ranks print (``records``: a regex of one record), sorted: the
    ranks' order of printing is not the program's, ember's launcher prefixes each line with its rank, and
    torch's ranks, which share one pipe unprefixed, can print two records on one line."""
    t, e = results['torch'], results['ember']
    if not t:
        return False, 'torch printed none of the lines compared'
    if t != e:
        only_t = [x for x in t if x not in e][:2]
        only_e = [x for x in e if x not in t][:2]
        return False, f'printed records differ: torch only {only_t}, ember only {only_e} ({len(t)} vs {len(e)})'
    return True, ''


_NUMBER = re.compile(r'[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+)')


def compare_text(outputs):
    """(ok, message) for programs compared by what they print: line by line, 'ember' read as 'torch', the
    numbers in a line within 1e-4 relative, object addresses ignored. Ember-only runs (torchvision) need only
    finish."""
    if 'torch' not in outputs:
        return True, ''
    addr = re.compile(r'0x[0-9a-fA-F]+')        # object addresses in reprs differ from run to run
    t = addr.sub('0x?', outputs['torch']).splitlines()
    e = addr.sub('0x?', outputs['ember'].replace('ember', 'torch')).splitlines()
    if len(t) != len(e):
        return False, f'printed {len(e)} lines, torch {len(t)}'
    for i, (a, b) in enumerate(zip(t, e)):
        if a == b:
            continue
        na, nb = _NUMBER.findall(a), _NUMBER.findall(b)
        same_words = _NUMBER.sub('#', a).replace(' ', '') == _NUMBER.sub('#', b).replace(' ', '')
        if not (same_words and len(na) == len(nb) and all(_close(float(x), float(y), (1e-4, 1e-6))
                                                          for x, y in zip(na, nb))):
            return False, f'line {i + 1}: torch {a.strip()[:80]!r}, ember {b.strip()[:80]!r}'
    return True, ''


def _close(a, b, tol):
    rel, ab = tol
    return abs(a - b) <= ab + rel * max(abs(a), abs(b))


def compare(spec, results):
    for rt, ms in results.items():
        bad = [(n, v) for n, v in ms if not math.isfinite(v)]
        if bad:
            return False, f'[{rt}] non-finite {bad[0][0]} = {bad[0][1]}', results
    if 'torch' not in results:          # ember-only (torchvision) programs
        ms = results['ember']
        losses = [v for n, v in ms if n == 'loss']
        if not ms:
            return False, '[ember] printed no metrics', results
        if len(losses) > 1 and spec.get('learnable', True) and not losses[-1] < losses[0]:
            return False, f'[ember] loss did not fall: first {losses[0]:.4g}, last {losses[-1]:.4g}', results
        return True, '', results
    t, e = results['torch'], results['ember']
    tn, en = [n for n, _ in t], [n for n, _ in e]
    # the set of metric names must agree; their counts may not (LBFGS evaluates its closure a varying number
    # of times, regression stops at a random batch), a crash shows in the exit status instead
    if sorted(set(tn)) != sorted(set(en)):
        return False, f'printed different metrics: torch {tn[:8]}..., ember {en[:8]}...', results
    if not t:
        return False, 'printed no metrics', results
    tol = {'first': (0.15, 0.01), 'last': (0.30, 0.01), 'accuracy': (0.0, 0.15), **spec.get('tol', {})}
    for key in sorted(set(tn) - set(spec.get('ignore', ()))):
        # perplexity is exp(loss): compare its logarithm, so the band means the same as for the loss
        f = (lambda v: math.log(max(v, 1e-300))) if key.endswith('ppl') else (lambda v: v)
        tv = [f(v) for n, v in t if n == key]
        ev = [f(v) for n, v in e if n == key]
        for which, i in (('first', 0), ('last', -1)):
            band = tol['accuracy'] if 'accuracy' in key else tol[which]
            if not _close(tv[i], ev[i], band):
                return False, (f'{which} {"log " if key.endswith("ppl") else ""}{key}: torch {tv[i]:.4g} vs ember {ev[i]:.4g} '
                               f'(tolerance {band[0]:.0%} rel + {band[1]:g} abs)'), results
    return True, '', results


def agreement(spec, results):
    """The largest relative difference between torch's and ember's first and last value of any compared
    metric (ppl as its logarithm), or None for an ember-only run: how closely a run followed torch's, now
    that the seeded random streams are torch's (NOTE [torch's random streams])."""
    if not results or 'torch' not in results or 'ember' not in results or \
            not all(isinstance(v, list) for v in results.values()):     # programs compared as text or records
        return None
    t, e, worst = results['torch'], results['ember'], 0.0
    for key in sorted({n for n, _ in t} & {n for n, _ in e} - set(spec.get('ignore', ()))):
        f = (lambda v: math.log(max(v, 1e-300))) if key.endswith('ppl') else (lambda v: v)
        tv, ev = [f(v) for n, v in t if n == key], [f(v) for n, v in e if n == key]
        for i in (0, -1):
            worst = max(worst, abs(tv[i] - ev[i]) / max(abs(tv[i]), abs(ev[i]), 1e-12))
    return worst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('corpus', help='folder of a pytorch/examples checkout')
    ap.add_argument('--only', nargs='+', metavar='NAME', help='program names (a prefix selects all its variants)')
    ap.add_argument('--keep', action='store_true', help='keep the scratch folders')
    ap.add_argument('--timeout', type=float, default=300, help='seconds per program run (default 300)')
    ap.add_argument('--ember-root', default=ROOT, help='checkout whose ember runs (default: this project)')
    ap.add_argument('-v', '--verbose', action='store_true', help='print each run\'s output')
    ap.add_argument('--accel', action='store_true', help='pass --accel to the scripts that take it (on a GPU '
                                                         'machine: torch and ember both train on the GPU)')
    ap.add_argument('--repo', action='append', default=[], metavar='OWNER/NAME=PATH',
                    help='a checkout of another repository whose programs to run too (karpathy/nanoGPT, '
                         'karpathy/minGPT, karpathy/makemore, rasbt/LLMs-from-scratch)')
    a = ap.parse_args(argv)
    repos = dict(r.split('=', 1) for r in a.repo)
    unknown = set(repos) - {spec['repo'] for spec in PROGRAMS.values() if 'repo' in spec}
    if unknown:
        ap.error(f'no program of {", ".join(sorted(unknown))} is known')
    names = [n for n in PROGRAMS if (not a.only or any(n == o or n.startswith(o + '[') for o in a.only))
             and PROGRAMS[n].get('repo', 'pytorch/examples') in ({'pytorch/examples'} | set(repos))]
    if not names:
        ap.error(f'no program matches {a.only}; known: {", ".join(PROGRAMS)}')
    passed = failed = 0
    agree = []
    for name in names:
        t0 = time.time()
        close = None
        try:
            spec = PROGRAMS[name]
            ok, msg, res = run_program(repos.get(spec.get('repo'), a.corpus), name, spec, a.timeout, a.keep,
                                       a.verbose, os.path.abspath(a.ember_root), a.accel)
            close = agreement(spec, res) if ok else None
        except Exception as ex:        # a runner-side problem (corpus missing a file): report, go on
            ok, msg = False, f'{type(ex).__name__}: {ex}'
        passed += ok
        failed += not ok
        if close is not None:
            agree.append(close)
        print(f'PASS {name}' + (f' (first/last metrics within {close:.1e} relative)' if close is not None else '')
              if ok else f'FAIL {name}: {msg}', f'  [{time.time() - t0:.0f}s]' if a.verbose else '', flush=True)
    if not a.only:
        for name, why in NOT_RUN.items():
            print(f'SKIP {name}: {why}')
    print(f'{passed} passed, {failed} failed')
    if agree:
        print(f'{sum(x <= 1e-3 for x in agree)} of the {len(agree)} programs run under both follow torch within 1e-3 '
              f'relative on every first and last metric, {sum(x <= 1e-2 for x in agree)} within 1e-2')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
