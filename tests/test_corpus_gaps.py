"""Gaps that published PyTorch programs (pytorch/examples, run by bench/corpus.py) revealed, each reproduced here
against torch so that the project's tests never need the fetched corpus.

Each test names the program and the call it makes.
"""
import importlib
import io

import numpy as np
import pytest
import torch

import ember


def test_fill_tensor_value_word_language_model_generate():
    # word_language_model/generate.py: ``input.fill_(word_idx)`` with word_idx a 0-d int64 tensor from multinomial
    for dt_t, dt_e, v in ((torch.int64, ember.int64, 7), (torch.float32, ember.float32, 2.5)):
        t = torch.zeros(1, 1, dtype=dt_t).fill_(torch.tensor(v))
        e = ember.zeros(1, 1, dtype=dt_e).fill_(ember.tensor(v))
        assert e.dtype == dt_e and e.tolist() == t.tolist()


def test_fill_tensor_value_gradient_and_error():
    vt = torch.tensor(1.5, requires_grad=True)
    ve = ember.tensor(1.5, requires_grad=True)
    zt = torch.zeros(2, 3).fill_(vt) * torch.arange(6.).view(2, 3)
    ze = ember.zeros(2, 3).fill_(ve) * ember.arange(6.).view(2, 3)
    zt.sum().backward()
    ze.sum().backward()
    np.testing.assert_allclose(ze.detach().numpy(), zt.detach().numpy())
    assert ve.grad.item() == pytest.approx(vt.grad.item())
    with pytest.raises(RuntimeError, match='0-dimension value tensor') as et:
        torch.zeros(2).fill_(torch.ones(2))
    with pytest.raises(RuntimeError, match='0-dimension value tensor'):
        ember.zeros(2).fill_(ember.ones(2))
    assert type(et.value) is RuntimeError


def test_onnx_module_imports_and_exports():
    # word_language_model/main.py: ``import torch.onnx`` at the top (export only with --onnx-export, which
    # tests/test_onnx.py follows with the program's models)
    import torch.onnx as tonnx
    eonnx = importlib.import_module('ember.onnx')
    assert hasattr(tonnx, 'export') and callable(eonnx.export)
    assert eonnx.is_in_onnx_export() is tonnx.is_in_onnx_export() is False
    onnx = pytest.importorskip('onnx')
    buf = io.BytesIO()
    eonnx.export(ember.nn.Linear(2, 2), (ember.zeros(1, 2),), buf)
    assert [n.op_type for n in onnx.load_model_from_string(buf.getvalue()).graph.node] == ['Gemm']


@pytest.mark.parametrize('module,name', [
    ('activation', 'MultiheadAttention'), ('linear', 'NonDynamicallyQuantizableLinear'),
    ('container', 'ModuleList'), ('dropout', 'Dropout'), ('linear', 'Linear'), ('normalization', 'LayerNorm'),
    ('sparse', 'Embedding'), ('transformer', 'TransformerEncoder'), ('transformer', 'TransformerEncoderLayer'),
    ('rnn', 'GRU'), ('rnn', 'LSTM'), ('rnn', 'RNN'),
    # super_resolution/super_resolve.py names torch.nn.modules.pixelshuffle.PixelShuffle
    ('pixelshuffle', 'PixelShuffle'), ('pixelshuffle', 'PixelUnshuffle'), ('upsampling', 'Upsample'),
    ('upsampling', 'UpsamplingNearest2d'), ('upsampling', 'UpsamplingBilinear2d'), ('fold', 'Fold'),
    ('fold', 'Unfold'), ('channelshuffle', 'ChannelShuffle')])
def test_nn_module_paths_named_in_safe_globals(module, name):
    # word_language_model/main.py and generate.py list these torch.nn.modules.* classes for torch.load
    t = getattr(importlib.import_module(f'torch.nn.modules.{module}'), name)
    e = getattr(importlib.import_module(f'ember.nn.modules.{module}'), name)
    assert e.__name__ == t.__name__
    assert e is getattr(ember.nn, name, e)


def test_multihead_attention_out_proj_class():
    t = torch.nn.MultiheadAttention(4, 2).out_proj
    e = ember.nn.MultiheadAttention(4, 2).out_proj
    assert type(e).__name__ == type(t).__name__ == 'NonDynamicallyQuantizableLinear'
    assert isinstance(e, ember.nn.Linear) and isinstance(t, torch.nn.Linear)


def test_ember_run_puts_the_script_folder_on_sys_path(tmp_path):
    # fast_neural_style: `python neural_style/neural_style.py` imports utils.py beside the script
    import os
    import subprocess
    import sys
    sub = tmp_path / 'pkg'
    sub.mkdir()
    (sub / 'helper_mod_corpus.py').write_text('VALUE = 41\n')
    (sub / 'main.py').write_text('import helper_mod_corpus, torch\nprint(helper_mod_corpus.VALUE + 1, torch.ones(1).sum().item())\n')
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    outs = [subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
            for cmd in ([sys.executable, 'pkg/main.py'], [sys.executable, '-m', 'ember', 'run', 'pkg/main.py'])]
    assert [o.returncode for o in outs] == [0, 0], outs[1].stderr
    assert outs[0].stdout == outs[1].stdout == '42 1.0\n'


def test_nn_parallel_on_a_cpu_only_machine():
    # dcgan/main.py: ``import torch.nn.parallel``; nn.parallel.data_parallel only on CUDA inputs
    import torch.nn.parallel  # noqa: F401
    import ember.nn.parallel  # noqa: F401
    torch.manual_seed(0)
    lt = torch.nn.Linear(3, 2)
    le = ember.nn.Linear(3, 2)
    le.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in lt.state_dict().items()})
    dt, de = torch.nn.DataParallel(lt, device_ids=[0, 1]), ember.nn.DataParallel(le, device_ids=[0, 1])
    assert de.device_ids == dt.device_ids == []
    assert list(dict(de.named_parameters())) == list(dict(dt.named_parameters()))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(de(ember.tensor(x)).detach().numpy(), dt(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match='device type could not be determined'):
        torch.nn.parallel.data_parallel(lt, torch.ones(1, 3))
    with pytest.raises(RuntimeError, match='device type could not be determined'):
        ember.nn.parallel.data_parallel(le, ember.ones(1, 3))


def test_nn_module_files_are_attributes_of_nn_modules():
    # super_resolution: torch.nn.modules.pixelshuffle.PixelShuffle, reached by attribute access
    for name in ('pixelshuffle', 'upsampling', 'fold', 'channelshuffle', 'flatten'):
        assert hasattr(torch.nn.modules, name) and hasattr(ember.nn.modules, name)
    assert ember.nn.modules.pixelshuffle.PixelShuffle is ember.nn.PixelShuffle


def test_distributed_is_importable_and_says_it_is_absent():
    # imagenet: import torch.distributed at the top, used only with --world-size > 1
    import ember.distributed as dist
    assert dist.is_available() is False and dist.is_initialized() is False
    with pytest.raises(RuntimeError, match='no process groups yet'):
        dist.init_process_group('gloo')
    with pytest.raises(ValueError, match='Default process group has not been initialized'):
        dist.get_rank()
    with pytest.raises(ValueError, match='Default process group has not been initialized'):
        torch.distributed.get_rank()       # torch raises the same outside a process group
