"""ember.utils.tensorboard (torch.utils.tensorboard): SummaryWriter over tensorboardX, ember Tensors taken where
torch's writer takes torch Tensors. The event files are read back record by record (TFRecord framing, Event
protocol buffers) and their values compared with what was written."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from tensorboardX.proto import event_pb2


def _events(root):
    """Every Event in the event files under ``root``, as (relative directory, Event)."""
    out = []
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if 'tfevents' not in f:
                continue
            data = open(os.path.join(d, f), 'rb').read()
            i = 0
            while i < len(data):
                (n,) = struct.unpack('<Q', data[i:i + 8])
                ev = event_pb2.Event()
                ev.ParseFromString(data[i + 12:i + 12 + n])
                out.append((os.path.relpath(d, root), ev))
                i += 12 + n + 4
    return out


def _values(root):
    return [(d, ev.step, v) for d, ev in _events(root) if ev.HasField('summary') for v in ev.summary.value]


def test_scalars_from_tensors_and_numbers(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalar('loss', ember.tensor(0.5), 0)
        w.add_scalar('loss', 0.25, 1)
        w.add_scalar('acc', ember.tensor([0.75]).sum(), 2)          # a 0-d result of an op
        w.add_scalars('run', {'a': ember.tensor(1.5), 'b': 2.5}, 3)
    got = {(d, v.tag, step): v.simple_value for d, step, v in _values(tmp_path)}
    assert got[('.', 'loss', 0)] == 0.5 and got[('.', 'loss', 1)] == 0.25 and got[('.', 'acc', 2)] == 0.75
    assert got[(os.path.join('run', 'a'), 'run', 3)] == 1.5
    assert got[(os.path.join('run', 'b'), 'run', 3)] == 2.5


def test_histogram_image_text_and_embedding(tmp_path):
    x = ember.arange(100, dtype=ember.float32)
    img = ember.zeros(3, 4, 5)
    img[0] = 1.0                                                    # a red image
    with SummaryWriter(str(tmp_path)) as w:
        w.add_histogram('w', x, 7)
        w.add_image('img', img, 7)
        w.add_images('batch', ember.rand(2, 3, 4, 5), 7)
        w.add_text('note', 'hello', 7)
        w.add_embedding(ember.randn(5, 3), metadata=list('abcde'), global_step=7)
        w.add_pr_curve('pr', ember.tensor([0, 1, 1, 0]), ember.tensor([0.1, 0.9, 0.8, 0.3]), 7)
    vals = {v.tag: v for _, _, v in _values(tmp_path)}
    h = vals['w'].histo
    assert (h.min, h.max, h.num, h.sum) == (0.0, 99.0, 100.0, float(np.arange(100).sum()))
    assert (vals['img'].image.height, vals['img'].image.width) == (4, 5)
    assert vals['img'].image.encoded_image_string[:4] == b'\x89PNG'
    assert 'batch' in vals and 'pr' in vals
    assert any('hello' in str(v.tensor.string_val) for k, v in vals.items() if k.startswith('note'))
    assert (tmp_path / '00007' / 'default' / 'tensors.tsv').exists()      # the projector's files


def test_add_graph_writes_the_onnx_export(tmp_path):
    pytest.importorskip('onnx')
    model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU(), ember.nn.Linear(3, 2))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, ember.randn(2, 4))
    graphs = [ev for _, ev in _events(tmp_path) if ev.HasField('graph_def')]
    assert len(graphs) == 1
    from tensorboardX.proto import graph_pb2
    g = graph_pb2.GraphDef()
    g.ParseFromString(graphs[0].graph_def)
    ops = [n.op for n in g.node]
    assert ops.count('Gemm') + ops.count('MatMul') >= 2 and 'Relu' in ops
    # no input: torch's jit.trace has nothing to run and add_graph prints and raises its words
    with pytest.raises(RuntimeError, match='example_kwarg_inputs should be a dict'):
        SummaryWriter(str(tmp_path / 'x')).add_graph(model)


def test_torch_utils_tensorboard_resolves_under_ember_run(tmp_path):
    prog = tmp_path / 'prog.py'
    prog.write_text("import sys, torch\nfrom torch.utils.tensorboard import SummaryWriter\n"
                    "w = SummaryWriter(sys.argv[1])\nw.add_scalar('x', torch.ones(()) * 3, 0)\nw.close()\n"
                    "print(type(w) is __import__('ember').utils.tensorboard.SummaryWriter, type(w).__module__)\n")
    r = subprocess.run([sys.executable, '-m', 'ember', 'run', str(prog), str(tmp_path / 'runs')],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # ember's class, under torch's name (NOTE [torch's class names under ember run])
    assert r.stdout.split() == ['True', 'torch.utils.tensorboard.writer']
    assert [v.simple_value for _, _, v in _values(tmp_path / 'runs')] == [3.0]


def test_without_tensorboardx_the_import_error_says_what_to_install():
    code = ("import sys; sys.modules['tensorboardX'] = None\n"
            "try:\n    import ember.utils.tensorboard\nexcept ImportError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert 'pip install tensorboardX' in r.stdout, r.stdout + r.stderr
