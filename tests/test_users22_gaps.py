"""Gaps found by running published programs under ``ember run`` (2026-11-27 night): course and book notebooks
(dvgodoy's PyTorchStepByStep, udacity's deep-learning-v2-pytorch, rasbt's deeplearning-models), generative
repositories (PyTorch-GAN, improved-diffusion, PyTorch-VAE) and language-model code (llama2.c, llm.c). Each test
compares with torch in the same process."""
import io
import pickletools
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
import torch

import ember
from _harness import both as _both


def _dt(t):
    return str(t.dtype).split('.')[-1]


# --- tensor(): torch's dtype inference over a nested sequence ---------------------------------------------------

@pytest.mark.parametrize('data', [
    [np.float32(1.5), 2.0], [2.0, np.float32(1.5)], [2.0, np.float64(1.5)], [np.float16(1), 3],
    [[np.float32(1.0)], [2.0]], [np.complex64(1), 2.0], [np.uint8(1), np.int8(1)], [np.uint8(1), True],
    [np.int32(1), 2], [True, 2], [1, 2.5], [1 + 2j, 1], [], [[]], 2.0, np.int8(3), (1, 2.0),
    [__import__('collections').namedtuple('P', 'x y')(1.0, 2.0)],
], ids=repr)
def test_tensor_infers_torch_dtype_from_numpy_scalars_anywhere(data):
    """SBS chapter 3: ``tensor([np.float32(x), 2.0])`` is float32 in torch (a Python float counts as the default
    dtype, promoted with each element's own type); ember let NumPy promote the list to float64."""
    t, e = _both(lambda lib: _dt(lib.tensor(data)))
    assert t == e


@pytest.mark.parametrize('data', [[[1, 2], [3]], [[1, 2], [3, 4, 5]], [[[1], [2]], [[3], [4, 5]]]], ids=repr)
def test_ragged_list_error_names_the_sequence(data):
    t, e = _both(lambda lib: lib.tensor(data))
    assert t == e and t[0] == 'ValueError'


def test_list_of_arrays_warns_once_as_torch():
    msgs = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            lib.tensor([np.zeros(2), np.ones(2)])
        msgs.append([str(x.message).split(' (Triggered')[0] for x in w])
    assert msgs[1] and msgs[0][:1] == msgs[1][:1]


# --- losses -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('xd, yd', [('float64', 'float32'), ('float32', 'float64'), ('float16', 'float32'),
                                    ('float32', 'int64'), ('float32', 'bool')])
def test_bce_with_logits_result_dtype_and_errors(xd, yd):
    """rasbt's dcgan-celeba builds int64 labels: torch refuses them (the in-place multiply), ember trained; and a
    float64 input with float32 target gives a float32 loss (the target's dtype), as torch's in-place chain."""
    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0]).to(getattr(lib, xd))
        y = lib.tensor([1, 0, 1]).to(getattr(lib, yd))
        r = lib.nn.functional.binary_cross_entropy_with_logits(x, y)
        return _dt(r), round(float(r), 3)
    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize('kw', [{}, {'pos_weight': [2.0, 0.5, 1.0]}, {'weight': [0.3, 2.0, 1.0]},
                                {'reduction': 'none'}, {'reduction': 'sum'}])
def test_bce_with_logits_is_one_node_with_torch_gradients(kw):
    """torch records BinaryCrossEntropyWithLogitsBackward0, whose gradient is sigmoid(x) - t (scaled): the same
    node name and the same first-order gradients, for the input and the target."""
    def run(lib):
        g = lib.Generator().manual_seed(0)
        x = lib.randn(2, 3, generator=g, dtype=lib.float64).requires_grad_()
        y = lib.rand(2, 3, generator=g, dtype=lib.float64).requires_grad_()
        k = {n: (lib.tensor(v, dtype=lib.float64) if isinstance(v, list) else v) for n, v in kw.items()}
        r = lib.nn.functional.binary_cross_entropy_with_logits(x, y, **k)
        gx, gy = lib.autograd.grad(r.sum(), (x, y))
        return type(r.grad_fn).__name__, r.detach().numpy().copy(), gx.numpy(), gy.numpy()
    t, e = _both(run)
    assert t[1][0] == e[1][0] == 'BinaryCrossEntropyWithLogitsBackward0'
    for a, b in zip(t[1][1:], e[1][1:]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize('td', ['int64', 'float64'])
def test_bce_refuses_another_target_dtype(td):
    def run(lib):
        x = lib.tensor([0.2, 0.7])
        return float(lib.nn.functional.binary_cross_entropy(x, lib.tensor([1, 0]).to(getattr(lib, td))))
    t, e = _both(run)
    assert t == e and t[0] == 'RuntimeError'


# --- random draws and devices -----------------------------------------------------------------------------------

@pytest.mark.parametrize('make', [lambda lib: lib.empty(3, 4, 5).permute(2, 0, 1),
                                  lambda lib: lib.empty(2, 3, 8, 8).to(memory_format=lib.channels_last),
                                  lambda lib: lib.empty(4, 5).t(), lambda lib: lib.empty(40)])
def test_randn_like_of_a_strided_tensor_draws_torchs_values(make):
    """PyTorch-VAE's MIWAE: ``randn_like`` of a permuted tensor is ``empty_like(x).normal_()``, which torch fills
    element by element on a non-contiguous tensor; ember had drawn a contiguous block (other values)."""
    def run(lib):
        lib.manual_seed(0)
        y = lib.randn_like(make(lib))
        return y.stride(), y.contiguous().numpy().copy()
    t, e = _both(run)
    assert t[1][0] == e[1][0]
    np.testing.assert_allclose(e[1][1], t[1][1], rtol=1e-6)


@pytest.mark.parametrize('dev', ['cpu', 'meta'])
def test_cuda_with_another_device_type_is_refused(dev):
    t, e = _both(lambda lib: lib.ones(2).cuda(dev))
    assert t == e == ('RuntimeError', 'Invalid device, must be cuda device')
    t, e = _both(lambda lib: lib.nn.Linear(2, 2).cuda(dev))
    assert t == e


# --- linear, RNN graph, reprs -----------------------------------------------------------------------------------

@pytest.mark.parametrize('x_dim', [1, 2, 3, 4])
@pytest.mark.parametrize('w_dim', [1, 2])
@pytest.mark.parametrize('b_dim', [0, 1])
@pytest.mark.parametrize('contiguous', [True, False])
@pytest.mark.parametrize('b_dtype', ['int64', 'float32'])
def test_linear_bias_paths(x_dim, w_dim, b_dim, contiguous, b_dtype):
    """SBS chapter 6 adds an integer bias to a 1-D product. torch's linear takes addmm for a 2-D input and for a
    contiguous input with a 1-D bias (dtypes must match, the weight must be 2-D); otherwise matmul and an in-place
    add, which casts the bias and needs it to fit the output."""
    def run(lib):
        shape = (5, 4, 2, 11)[-x_dim:]
        if contiguous:
            x = lib.ones(shape)
        else:
            x = lib.ones(22)[::2] if x_dim == 1 else lib.ones(shape[:-2] + (11, shape[-2])).transpose(-1, -2)
        w = lib.ones(11) if w_dim == 1 else lib.ones(3, 11)
        b = lib.ones(() if b_dim == 0 else (1 if w_dim == 1 else 3,), dtype=getattr(lib, b_dtype))
        r = lib.nn.functional.linear(x, w, b)
        return _dt(r), tuple(r.shape), float(r.sum())
    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize('cls', ['RNN', 'GRU', 'LSTM'])
def test_batch_first_recurrent_output_node(cls):
    """torch's RNN and GRU turn their output in place (TransposeBackward1); its CPU LSTM does not."""
    def run(lib):
        o, _ = getattr(lib.nn, cls)(3, 4, batch_first=True, num_layers=2)(lib.randn(2, 5, 3))
        return type(o.grad_fn).__name__, o.stride()
    t, e = _both(run)
    assert t == e


def test_repr_names_the_node_class():
    """torch's repr shows ``grad_fn=<CopySlices>`` (the class), not name()'s ``torch::autograd::CopySlices``."""
    def run(lib):
        x = lib.zeros(3, requires_grad=True).clone()
        x[0] = 1
        return repr(x).replace('torch', 'T').replace('ember', 'T')
    t, e = _both(run)
    assert t == e and 'grad_fn=<CopySlices>' in t[1]


# --- warnings ---------------------------------------------------------------------------------------------------

def _warnings_of(fn):
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            fn(lib)
        out.append([(x.category.__name__, str(x.message).replace('torch.', 'T.').replace('ember.', 'T.'))
                    for x in w])
    return out


@pytest.mark.parametrize('name', ['upsample', 'upsample_nearest', 'upsample_bilinear'])
def test_upsample_functions_warn_deprecated(name):
    t, e = _warnings_of(lambda lib: getattr(lib.nn.functional, name)(lib.ones(1, 1, 2, 2), scale_factor=2))
    assert t == e and t


@pytest.mark.parametrize('kw', [{}, {'batch_first': True}, {'batch_first': True, 'norm_first': True},
                                {'batch_first': True, 'nhead': 1}, {'batch_first': True, 'bias': False}])
def test_transformer_encoder_says_why_no_nested_tensors(kw):
    def run(lib):
        k = dict(kw)
        layer = lib.nn.TransformerEncoderLayer(8, k.pop('nhead', 2), **k)
        enc = lib.nn.TransformerEncoder(layer, 2)
        assert enc.use_nested_tensor is not None
        run.flags.append(enc.use_nested_tensor)
    run.flags = []
    t, e = _warnings_of(run)
    assert t == e
    assert run.flags[0] == run.flags[1]


def test_new_tensor_of_a_tensor_warns_in_its_words():
    t, e = _warnings_of(lambda lib: (lib.ones(2).new_tensor(lib.ones(2)), lib.tensor(lib.ones(2))))
    assert t == e and 'tensor.new_tensor(sourceTensor)' in t[0][1]


def test_add_graph_without_input_raises_torchs_error(tmp_path, capsys):
    from ember.utils.tensorboard import SummaryWriter
    with pytest.raises(RuntimeError, match='example_kwarg_inputs should be a dict'):
        SummaryWriter(str(tmp_path)).add_graph(ember.nn.Linear(2, 2))
    assert 'Error occurs, No graph saved' in capsys.readouterr().out


# --- files, modules, autocast -----------------------------------------------------------------------------------

def test_saved_pickle_is_torchs_byte_for_byte():
    """llama2.c's checkpoints: torch writes ``torch FloatStorage`` once per file and then refers to it; ember wrote
    it for every tensor (and a device's type string as a reference). The pickle now has torch's bytes."""
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 2))
        opt = lib.optim.Adam(m.parameters())
        m(lib.randn(5, 4)).sum().backward()
        opt.step()
        b = io.BytesIO()
        lib.save({'model': m.state_dict(), 'opt': opt.state_dict(), 'd': lib.float16, 'dev': lib.device('cpu'),
                  's': lib.Size([2, 3])}, b)
        z = zipfile.ZipFile(b)
        return z.read([n for n in z.namelist() if n.endswith('data.pkl')][0])
    t, e = _both(run)
    if t != e:
        pickletools.dis(e[1])
    assert t == e


def test_rpc_api_names_exist():
    """rasbt's helper_train.py tests ``isinstance(logits, torch.distributed.rpc.api.RRef)`` on every batch."""
    from ember.distributed.rpc import api
    assert not isinstance(ember.ones(2), api.RRef)
    assert ember.distributed.rpc.RRef is api.RRef
    t, e = _both(lambda lib: lib.distributed.rpc.api.RRef(1))
    assert t == e
    for fn in ('rpc_sync', 'get_worker_info'):
        t, e = _both(lambda lib: getattr(lib.distributed.rpc, fn)('w', print) if fn == 'rpc_sync'
                     else lib.distributed.rpc.get_worker_info())
        assert t == e and t[0] == 'RuntimeError'


@pytest.mark.parametrize('cls', ['LSTM', 'GRU', 'RNN'])
def test_cpu_autocast_recurrent_output_dtypes(cls):
    """torch's CPU LSTM runs oneDNN's layer, a lower-precision autocast operator: bfloat16 outputs and states under
    ``autocast('cpu')``; its GRU keeps float32, its RNN's gemms give bfloat16."""
    def run(lib):
        m = getattr(lib.nn, cls)(3, 4, batch_first=True)
        with lib.autocast('cpu', dtype=lib.bfloat16):
            o, h = m(lib.randn(2, 5, 3))
        return _dt(o), [_dt(x) for x in (h if isinstance(h, tuple) else (h,))]
    t, e = _both(run)
    assert t == e


def test_ember_run_leaves_ember_modules_spec_alone(tmp_path):
    """The torch alias's module fields (``__spec__``, ``__package__``) were written into the ember module behind
    it, so a relative import inside ember.cuda warned ``__package__ != __spec__.parent`` (llama2.c's
    ``torch.cuda.is_available()`` under ``-W error::ImportWarning``)."""
    f = tmp_path / 'p.py'
    f.write_text('import sys, warnings, torch\n'
                 'with warnings.catch_warnings(record=True) as w:\n'
                 '    warnings.simplefilter("always")\n'
                 '    torch.cuda.is_available()\n'
                 'print(sys.modules["ember.cuda"].__spec__.name, [str(x.message) for x in w '
                 'if x.category is ImportWarning])\n')
    out = subprocess.run([sys.executable, '-m', 'ember', 'run', str(f)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['ember.cuda', '[]']


def test_importing_the_data_parallel_module_keeps_the_function():
    """``import torch.nn.parallel.data_parallel`` (a library's import) had rebound the package's ``data_parallel``
    to the submodule, as the submodule was first loaded then; torch's package loads it at import."""
    import importlib
    importlib.import_module('ember.nn.parallel.data_parallel')
    importlib.import_module('torch.nn.parallel.data_parallel')
    assert callable(ember.nn.parallel.data_parallel) and callable(torch.nn.parallel.data_parallel)
    assert ember.nn.parallel.DataParallel.__module__ == torch.nn.parallel.DataParallel.__module__.replace('torch',
                                                                                                         'ember')


@pytest.mark.parametrize('call', ['empty((2.0, 3))', 'empty((2, 3.5))', 'zeros(2, 3.0)', 'ones([2, "a"])',
                                  'randn((2, 3.0))', 'nn.Conv2d(3, 8.0, 1)', 'ones(2, 3).permute(0, 1.0)'])
def test_size_argument_errors_name_the_element(call):
    """A float in a size: torch names the element's position (``at pos 0``), and for a list whose first element is
    an int, the unpacking that failed (PyTorch-GAN's ``nn.Conv2d(3, 8.0, 1)``-style bugs raise the same text)."""
    t, e = _both(lambda lib: eval('lib.' + call))
    assert t[0] == e[0] == 'TypeError'
    assert t[1].replace('torch', 'T') == e[1].replace('ember', 'T')


def test_library_side_warnings_show_once_as_torchs():
    """torch raises these from its Python code at its own frames, so under the default filter each shows once
    however many user lines reach it (DINO printed weight_norm's once under torch, twice under ember)."""
    def make(lib):
        lib.nn.LSTM(3, 4, dropout=0.5)
        lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))
        lib.nn.CrossEntropyLoss(reduce=False)
        lib.nn.Softmax()(lib.ones(2, 3))        # an implicit dim through the module: torch warns at its module.py
    counts = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('default')
            make(lib)
            make(lib)
        counts.append(sorted(x.category.__name__ for x in w))
    assert counts[0] == counts[1] and len(counts[0]) == 4


def test_tensor_of_a_foreign_array_whose_truth_is_false():
    """A torch tensor (or any array-like) holding only zeros is falsy: the dtype walk must not take its truth for
    emptiness (torchvision's tests index ember bins with ``torch.randint``, which drew 0)."""
    assert ember.tensor(torch.tensor([0])).dtype == ember.int64
    assert ember.tensor(torch.tensor([0.0], dtype=torch.float64)).dtype == ember.float64
    assert ember.linspace(0, 1, 5)[torch.tensor([0])].tolist() == [0.0]


def test_rpc_require_initialized_as_pyg_uses_it():
    """PyG's distributed module wraps its helpers with ``rpc.api._require_initialized`` at import (when
    ``rpc.api`` exists): the wrapper must exist and raise torch's error when called."""
    for lib in (torch, ember):
        f = lib.distributed.rpc.api._require_initialized(lambda: 1)
        with pytest.raises(RuntimeError, match='RPC has not been initialized'):
            f()
    assert ember.distributed.rpc.api._is_current_rpc_agent_set() is False


@pytest.mark.parametrize('make', [
    lambda lib: [lib.tensor([3])], lambda lib: [lib.tensor(3), lib.tensor(4)], lambda lib: [lib.tensor([1., 2.])],
    lambda lib: [[lib.tensor(1)], [lib.tensor(2)]], lambda lib: [lib.tensor(1.5), 2],
    lambda lib: [lib.tensor(1, dtype=lib.int32), lib.tensor(2, dtype=lib.int16)],
    lambda lib: [lib.tensor(1.5, dtype=lib.float64), 1.0], lambda lib: [lib.tensor(2., requires_grad=True)]])
def test_tensors_inside_a_list_are_numbers(make):
    """hunkim's PyTorchZeroToAll: ``LongTensor([t([3])])`` has shape (1,) in torch (a one-element tensor in a list
    is a number of its dtype); a longer one is torch's ValueError."""
    def run(lib):
        r = lib.tensor(make(lib))
        return tuple(r.shape), _dt(r), r.tolist()
    t, e = _both(run)
    assert t == e

@pytest.mark.parametrize('make', [lambda lib: [lib.tensor([3])], lambda lib: [lib.tensor(3), lib.tensor(4)],
                                  lambda lib: [[lib.tensor(1)], [lib.tensor(2)]]])
def test_legacy_constructor_takes_integer_tensors_in_a_list_as_numbers(make):
    t, e = _both(lambda lib: tuple(lib.LongTensor(make(lib)).shape))
    assert t == e


@pytest.mark.parametrize('reduction', ['mean', 'sum'])
def test_nll_loss_of_zero_log_probabilities_is_positive_zero(reduction):
    t, e = _both(lambda lib: repr(lib.nn.functional.nll_loss(lib.zeros(2, 3), lib.tensor([0, 1]),
                                                             reduction=reduction)).split('(')[1])
    assert t == e == ('ok', '0.)')


@pytest.mark.parametrize('order', ['scheduler_first', 'optimizer_first'])
def test_scheduler_stepped_before_the_optimizer_warns(order):
    """practical-pytorch's loops: torch wraps ``optimizer.step`` to note that it ran, and a scheduler's first
    ``step()`` before it warns; ``step(epoch)`` warns with torch's whole deprecation text."""
    def run(lib):
        m = lib.nn.Linear(2, 2)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        s = lib.optim.lr_scheduler.StepLR(opt, 1)
        if order == 'scheduler_first':
            s.step()
            opt.step()
        else:
            opt.step()
            s.step()
        s.step(3)
        assert getattr(opt.step, '_wrapped_by_lr_sched', False)
    t, e = _warnings_of(run)
    assert t == e and len(t) == (2 if order == 'scheduler_first' else 1)


@pytest.mark.parametrize('op', ['gelu', 'clamp_min', 'clamp_max', 'clamp', 'nan_to_num', 'logsigmoid', 'relu'])
def test_unary_output_layout_of_a_transposed_input(op):
    """state-spaces/s4's FFTConv runs transpose -> GELU -> Dropout: torch's GELU (and clamp, nan_to_num) keep a
    transposed input's layout, so the dropout mask falls on other elements when ember's output was C-ordered
    (S4 losses 2.5071 against 2.5090 from step 0); torch's logsigmoid writes a contiguous buffer."""
    fns = {'gelu': lambda lib, x: lib.nn.functional.gelu(x), 'clamp_min': lambda lib, x: x.clamp(min=0),
           'clamp_max': lambda lib, x: x.clamp(max=0), 'clamp': lambda lib, x: x.clamp(-0.5, 0.5),
           'nan_to_num': lambda lib, x: lib.nan_to_num(x), 'logsigmoid': lambda lib, x: lib.nn.functional.logsigmoid(x),
           'relu': lambda lib, x: lib.relu(x)}

    def run(lib):
        g = lib.Generator().manual_seed(0)
        x = lib.randn(16, 32, 100, generator=g).transpose(-1, -2)
        y = fns[op](lib, x)
        lib.manual_seed(0)
        mask = lib.nn.functional.dropout(y, 0.5, True) == 0
        return y.stride(), mask.numpy().tobytes()
    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize('make', [lambda lib: lib.ones(1, 3, 4).expand(2, 3, 4), lambda lib: lib.ones(2, 3, 8)[..., ::2],
                                  lambda lib: lib.ones(2, 4, 3).transpose(-1, -2), lambda lib: lib.ones(3, 4, 2).permute(2, 0, 1)])
def test_dropout_mask_order_follows_empty_like(make):
    """torch's dropout draws its noise into ``empty_like(input)``: the input's layout when it is dense, else a
    contiguous tensor (an expanded or sliced input)."""
    def run(lib):
        lib.manual_seed(0)
        return (lib.nn.functional.dropout(make(lib), 0.5, True) == 0).numpy().tobytes()
    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize('fn', ['stack', 'cat'])
def test_join_float16_with_bfloat16(fn):
    """torch promotes float16 with bfloat16 to float32; NumPy has no common type for them (ember raised
    DTypePromotionError)."""
    def run(lib):
        r = getattr(lib, fn)([lib.ones(2, dtype=lib.float16), lib.full((2,), 2.5, dtype=lib.bfloat16)])
        return _dt(r), r.tolist()
    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize('make', [lambda lib: lib.empty(4, 3).t(), lambda lib: lib.empty(5, 6),
                                  lambda lib: lib.empty(2, 3, 8, 8).to(memory_format=lib.channels_last)])
def test_randint_like_is_empty_like_then_random(make):
    def run(lib):
        lib.manual_seed(1)
        r = lib.randint_like(make(lib), 3, 7)
        return r.stride(), _dt(r), r.flatten().tolist()
    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize('cls', ['GRU', 'LSTM', 'RNN'])
def test_whole_recurrent_module_saved_by_ember_loads_in_torch(cls):
    """practical-pytorch saves its whole model: torch's RNNBase.__setstate__ reads ``_flat_weights`` from the
    state, which ember's left out (AttributeError in torch)."""
    ember.manual_seed(0)
    m = getattr(ember.nn, cls)(4, 3, 2)
    buf = io.BytesIO()
    ember.save(m, buf)
    buf.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        t = torch.load(buf, weights_only=False)
    x = np.ones((2, 1, 4), np.float32)
    np.testing.assert_allclose(t(torch.tensor(x))[0].detach().numpy(), m(ember.tensor(x))[0].detach().numpy(),
                               rtol=1e-6)


def test_ember_run_alias_lists_submodules(tmp_path):
    """``dir(torch.optim)`` lists ``lr_scheduler`` (d2l's notebooks print it); the alias held submodules back from
    its ``__dict__`` until first reached, and ``dir`` missed them."""
    f = tmp_path / 'd.py'
    f.write_text('import torch, torch.nn as nn, torch.optim as optim\n'
                 'print(all(n in dir(optim) for n in ("lr_scheduler", "swa_utils")),\n'
                 '      all(n in dir(nn) for n in ("functional", "init", "utils", "parallel")),\n'
                 '      all(n in dir(torch) for n in ("autograd", "linalg", "fft", "distributions")))\n')
    out = subprocess.run([sys.executable, '-m', 'ember', 'run', str(f)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['True', 'True', 'True']


@pytest.mark.parametrize('batch_first', [True, False])
def test_recurrent_output_is_no_view(batch_first):
    """torch's RNN output is a tensor of its own: an in-place op on it records AddBackward0 (ember's was a view of
    the layers' rows, so it recorded AsStridedBackward0)."""
    def run(lib):
        out, _ = lib.nn.GRU(3, 4, batch_first=batch_first)(lib.randn(2, 5, 3))
        return out._base is None, type(out.add_(1).grad_fn).__name__
    t, e = _both(run)
    assert t == e


def test_parallel_apply_and_replicate_raise_torchs_cpu_errors():
    """On a machine without accelerators torch's parallel_apply and replicate raise; ember's too (they were
    missing, an AttributeError)."""
    def run(fn):
        return lambda lib: fn(lib, lib.nn.Linear(2, 2))
    for fn in (lambda lib, m: lib.nn.parallel.parallel_apply([m, m], [lib.ones(1, 2)] * 2),
               lambda lib, m: lib.nn.parallel.replicate(m, [0, 1]), lambda lib, m: lib.nn.parallel.replicate(m, ['cpu'])):
        t, e = _both(run(fn))
        assert t == e and t[0] != 'ok'


@pytest.mark.parametrize('name', ['FloatTensor', 'LongTensor'])
def test_cuda_legacy_type_without_cuda_is_a_type_error(name):
    """PyTorchZeroToAll-style ``torch.cuda.FloatTensor(2)`` guarded by ``except TypeError``: torch's legacy CUDA
    types raise TypeError on a machine without CUDA (ember raised the device layer's AssertionError)."""
    t, e = _both(lambda lib: getattr(lib.cuda, name)(2))
    assert t[0] == e[0] == 'TypeError'
    assert t[1].replace('torch', 'T') == e[1].replace('ember', 'T')


def test_volatile_reads_warn_as_torch():
    t, e = _warnings_of(lambda lib: (lib.autograd.Variable(lib.ones(2), volatile=True).volatile, lib.ones(2).volatile))
    assert t == e and len(t) == 3
