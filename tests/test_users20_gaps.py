"""Gaps found running published programs under `ember run` (2026-11-27 evening: d2l, labml, the books' chapters,
PennyLane, PyPose, ...) and in the storage API, each compared with torch."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _both(fn):
    """``fn(lib)`` under torch and ember: (result, None) or (None, (exception class, message))."""
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            try:
                r = fn(lib)
                out.append((r.replace('torch.', '').replace('ember.', '') if isinstance(r, str) else r, None))
            except Exception as e:          # noqa: BLE001 - the class and message are compared
                out.append((None, (type(e).__name__, str(e).replace('torch.', '').replace('ember.', ''))))
    return out


def _bytes(lib):
    return lib.tensor([1, 2, 300], dtype=lib.int16).untyped_storage()


@pytest.mark.parametrize('fn', [
    lambda lib: _bytes(lib).tolist(), lambda lib: list(_bytes(lib)), lambda lib: _bytes(lib)[-1],
    lambda lib: _bytes(lib)[1:4].tolist(), lambda lib: _bytes(lib)[9], lambda lib: _bytes(lib)['a'],
    lambda lib: _bytes(lib).fill_(300).tolist(), lambda lib: _bytes(lib).float().tolist(),
    lambda lib: (_bytes(lib).long().dtype is lib.int64, _bytes(lib).bool().tolist()),
    lambda lib: _bytes(lib).copy_(lib.UntypedStorage([5] * 6)).tolist(), lambda lib: _bytes(lib).copy_(lib.UntypedStorage(3)),
    lambda lib: _bytes(lib).copy_(lib.zeros(6, dtype=lib.uint8)),
    lambda lib: _bytes(lib).type(), lambda lib: repr(_bytes(lib)), lambda lib: repr(lib.UntypedStorage(0)),
    lambda lib: (_bytes(lib).is_pinned(), _bytes(lib).is_shared(), _bytes(lib).get_device(), _bytes(lib).is_cuda,
                 _bytes(lib).is_sparse, _bytes(lib).filename, _bytes(lib).new().nbytes()),
    lambda lib: lib.is_storage(lib.arange(2.).storage()), lambda lib: lib.is_storage(lib.arange(2.)),
    lambda lib: (type(_bytes(lib)).__name__, type(_bytes(lib)).__module__.replace('torch', 'ember')),
    lambda lib: [lib.arange(3.).storage().complex_float().tolist(), lib.arange(3.).storage().clone().tolist()],
])
def test_untyped_storage_methods_as_torchs(fn):
    """UntypedStorage is a public class named as torch's, with its byte indexing, conversions, copies and answers."""
    (want, want_err), (got, got_err) = _both(fn)
    assert got_err == want_err
    assert got == want


def test_storage_setitem_clone_byteswap_write_bytes():
    for lib in (torch, ember):
        s = _bytes(lib)
        c = s.clone()
        c[0] = 7
        c[1:3] = 9
        assert (s[0], c.tolist()) == (1, [7, 9, 9, 0, 44, 1])
        s.byteswap(lib.int16)
        assert s.tolist() == [0, 1, 0, 2, 1, 44]
        with pytest.raises(RuntimeError, match='int types'):
            s[0] = lib.UntypedStorage(1)


@pytest.mark.parametrize('fn', [
    lambda lib: lib.zeros(2).set_(lib.arange(6.)).tolist(),
    lambda lib: lib.zeros(2).set_(lib.arange(6.).untyped_storage(), 1, (2, 2), (2, 1)).tolist(),
    lambda lib: lib.zeros(2).set_(lib.arange(6.).storage(), 1, (2, 2)).tolist(),
    lambda lib: lib.zeros(2).set_(lib.arange(6.).view(2, 3).t()).stride(),
    lambda lib: lib.zeros(2).set_(lib.arange(6.), 1, (2,), (2,)).tolist(),
    lambda lib: lib.zeros(2).set_(source=lib.arange(6.).untyped_storage(), storage_offset=1, size=(2,),
                                  stride=(2,)).tolist(),
    lambda lib: lib.zeros(2).set_().shape,
    lambda lib: lib.zeros(2).set_(lib.arange(6.).untyped_storage()).tolist(),
    lambda lib: lib.zeros(2).set_(lib.zeros(2, dtype=lib.float64)),
    lambda lib: lib.zeros(2).set_(lib.zeros(2, dtype=lib.float64).storage()),
    lambda lib: lib.zeros(2, requires_grad=True).set_(lib.arange(6.)),
    lambda lib: lib.zeros(2).set_(lib.arange(6.).untyped_storage(), -1, (2,)),
    lambda lib: lib.zeros(2).set_(lib.arange(6.).untyped_storage(), 0, (2,), (-1,)),
])
def test_set_as_torchs(fn):
    (want, want_err), (got, got_err) = _both(fn)
    assert got_err == want_err
    assert got == want


def test_set_shares_memory_and_keeps_old_views():
    for lib in (torch, ember):
        a, x = lib.arange(6.), lib.zeros(2)
        old = x.view(2)
        x.set_(a)
        a[0] = 9
        assert x.data_ptr() == a.data_ptr() and x.tolist()[0] == 9 and old.tolist() == [0, 0]
        assert x.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() and x.is_set_to(a)


def test_set_out_of_bounds_raises_instead_of_reading_past_the_storage():
    """torch grows the storage (or reads past it); ember refuses with the sizes at fault."""
    with pytest.raises(RuntimeError, match=r'sizes \[7\].*out of bounds for storage of size 24'):
        ember.zeros(2).set_(ember.arange(6.).untyped_storage(), 0, (7,))


def _seen_by_torch_function(lib, call):
    seen = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = lib.randn(2, 3, 4).as_subclass(Logged)
    out = call(lib, x)
    return seen, [type(o).__name__ for o in (out if isinstance(out, (tuple, list)) else (out,))]


@pytest.mark.parametrize('call', [
    lambda lib, x: x.flatten(), lambda lib, x: lib.flatten(x, 1), lambda lib, x: x.reshape(6, 4),
    lambda lib, x: x.split(1), lambda lib, x: x.chunk(2, -1), lambda lib, x: lib.nn.functional.dropout(x, 0.5),
    lambda lib, x: lib.nn.functional.pad(x, (1, 1)), lambda lib, x: lib.cdist(x, x),
    lambda lib, x: lib.nn.functional.scaled_dot_product_attention(x, x, x), lambda lib, x: x.norm(),
    lambda lib, x: x.float(), lambda lib, x: x.long(), lambda lib, x: x.type_as(x), lambda lib, x: x.dim(),
    lambda lib, x: x.size(), lambda lib, x: x.numel(), lambda lib, x: x.stride(), lambda lib, x: x.is_contiguous(),
    lambda lib, x: x.requires_grad_(), lambda lib, x: x.unflatten(1, (3, 1)), lambda lib, x: x.narrow(1, 0, 2),
    lambda lib, x: x.movedim(0, 1), lambda lib, x: x.std(), lambda lib, x: x.var(1),
])
def test_torch_function_sees_the_call_as_made(call):
    """A composite (flatten, reshape, split, sdpa) or a hand-written method (float, dim, norm) reaches
    ``__torch_function__`` once, under its own name, and its pieces run with the handler off, as in torch."""
    assert _seen_by_torch_function(ember, call) == _seen_by_torch_function(torch, call)


def test_torch_function_mode_sees_composites_whole():
    for lib in (torch, ember):
        seen = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        with Log():
            lib.ones(2, 3).flatten()
        assert seen == ['ones', 'flatten'], lib.__name__


def _rnn_args(lib, mode, proj=0, bias=True, packed=False, batch_first=False):
    lib.manual_seed(0)
    cls = {'lstm': lib.nn.LSTM, 'gru': lib.nn.GRU, 'rnn_tanh': lib.nn.RNN, 'rnn_relu': lib.nn.RNN}[mode]
    kw = dict(proj_size=proj) if proj else {}
    if mode == 'rnn_relu':
        kw['nonlinearity'] = 'relu'
    m = cls(3, 5, 2, bias=bias, bidirectional=True, batch_first=batch_first, **kw)
    x = lib.randn(2, 4, 3) if batch_first else lib.randn(4, 2, 3)
    h = lib.randn(4, 2, proj or 5)
    hx = [h, lib.randn(4, 2, 5)] if mode == 'lstm' else h
    if packed:
        p = lib.nn.utils.rnn.pack_padded_sequence(x, [4, 3], enforce_sorted=True)
        return (p.data, p.batch_sizes, hx, m._flat_weights, bias, 2, 0.0, False, True)
    return (x, hx, m._flat_weights, bias, 2, 0.0, False, True, batch_first)


@pytest.mark.parametrize('mode,proj,bias,packed,batch_first', [
    ('lstm', 0, True, False, False), ('lstm', 2, True, False, True), ('lstm', 2, False, True, False),
    ('gru', 0, True, False, False), ('gru', 0, False, True, False), ('rnn_tanh', 0, True, False, True),
    ('rnn_relu', 0, True, True, False)])
def test_rnn_functions_as_torchs(mode, proj, bias, packed, batch_first):
    """torch.lstm/gru/rnn_tanh/rnn_relu (and torch._VF's), both overloads, the values torch gives."""
    want = getattr(torch, mode)(*_rnn_args(torch, mode, proj, bias, packed, batch_first))
    got = getattr(ember._VF, mode)(*_rnn_args(ember, mode, proj, bias, packed, batch_first))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('name', ['lstm_cell', 'gru_cell', 'rnn_tanh_cell', 'rnn_relu_cell'])
def test_rnn_cell_functions_as_torchs(name):
    def run(lib):
        lib.manual_seed(1)
        g = {'lstm_cell': 4, 'gru_cell': 3}.get(name, 1)
        x, h = lib.randn(2, 3), lib.randn(2, 5)
        ws = (lib.randn(g * 5, 3), lib.randn(g * 5, 5), lib.randn(g * 5), lib.randn(g * 5))
        out = getattr(lib, name)(x, (h, lib.randn(2, 5)) if name == 'lstm_cell' else h, *ws)
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]
    for g, w in zip(run(ember), run(torch), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('make', [lambda lib: lib.nn.LSTM(4, 5), lambda lib: lib.nn.GRU(4, 5, batch_first=True),
                                  lambda lib: lib.nn.RNN(4, 5), lambda lib: lib.nn.LSTMCell(4, 5)])
def test_torch_function_sees_the_rnn_function(make):
    """nn.LSTM/GRU/RNN call torch's lstm/gru/rnn_tanh function, one call a handler sees (not the cell's ops)."""
    def seen(lib):
        names, _ = _seen_by_torch_function(lib, lambda lib, x: make(lib)(x[0] if isinstance(make(lib), lib.nn.LSTMCell)
                                                                        else x))
        return [n for n in names if n not in ('dim', 'size', '__get__')]
    assert seen(ember) == seen(torch)


@pytest.mark.parametrize('call', [lambda x: x[0].permute(np.int64(0)), lambda x: x.permute(np.int64(1), np.int64(0)),
                                  lambda x: x.view(np.int64(-1)), lambda x: x.reshape(np.int64(6)),
                                  lambda x: x.repeat(np.int64(2), 1), lambda x: x[0].expand(np.int64(3)),
                                  lambda x: x.view(x.new_tensor(6, dtype=int) if False else 6)])
def test_a_single_numpy_int_is_a_size(call):
    """PennyLane (autoray) calls ``x.permute(*np_axes)``: a NumPy integer is one dimension, not a list."""
    assert tuple(call(ember.zeros(2, 3)).shape) == tuple(call(torch.zeros(2, 3)).shape)


def test_custom_function_gradient_takes_the_inputs_dtype():
    """A backward returning float64 for a float32 input: torch's engine casts it (PennyLane's parameter shift)."""
    def run(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.double() * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = lib.tensor([0.3, 0.5], requires_grad=True)
        F.apply(x * 3).sum().backward()
        y = lib.tensor([0.3, 0.5], requires_grad=True) * 1.0
        g, = lib.autograd.grad(F.apply(y).sum(), y)
        return x.grad.dtype, g.dtype, x.grad.tolist()
    got, want = run(ember), run(torch)
    assert (str(got[0]), str(got[1]), got[2]) == (str(want[0]).replace('torch', 'ember'),
                                                  str(want[1]).replace('torch', 'ember'), want[2])


def test_a_library_can_replace_wrap_tensor_for_grad():
    """PyPose swaps torch._functorch.eager_transforms._wrap_tensor_for_grad (found by its __module__) to keep its
    LieTensor type inside torch.func.grad; ember.func.grad looks it up at each call, so the swap takes effect."""
    import importlib
    for lib in (torch, ember):
        assert hasattr(lib._functorch, 'vmap') and hasattr(lib._functorch, 'apis')
        original = lib._functorch.eager_transforms._wrap_tensor_for_grad
        module = importlib.import_module(original.__module__)

        class Marked(lib.Tensor):
            pass

        seen = []
        setattr(module, original.__name__, lambda t, level: lib.Tensor.as_subclass(original(t, level), Marked))
        try:
            g = lib.func.grad(lambda x: (seen.append(type(x).__name__), (x * x).sum())[1])(lib.ones(2))
        finally:
            setattr(module, original.__name__, original)
        assert seen == ['Marked'] and g.tolist() == [2.0, 2.0]


def _inplace_views(lib):
    lib.manual_seed(0)
    out = []
    for case in range(4):
        m = lib.randn(2, 3, 3, requires_grad=True)
        b = m * 1
        x = b[0]
        x.t_()
        if case == 1:
            b.mul_(2)
        if case == 2:
            x.mul_(lib.arange(3.))
        if case == 3:
            x.unsqueeze_(0)
            x.mul_(lib.arange(3.))
        y = (x * lib.arange(9.).reshape(x.shape)).sum() + (b * lib.arange(18.).reshape(2, 3, 3)).sum()
        y.backward()
        out.append((tuple(x.shape), x.stride(), m.grad.flatten().tolist(), x._version, x._base is b))
    v = lib.randn(2, 3, 1, requires_grad=True) * 2
    v.squeeze_(-1)
    v.sum().backward()
    out.append(tuple(v.shape))
    return out


def test_inplace_view_methods_on_tensors_with_history():
    """squeeze_/unsqueeze_/t_/transpose_ on a tensor with history (PyPose's bmv): it takes the view's place in the
    graph, and a view of a base stays one (in-place writes through it or its base give torch's gradients)."""
    assert _inplace_views(ember) == _inplace_views(torch)


def test_log_softmax_of_confident_rows_keeps_its_digits():
    """x - log(sum(exp(x))) without the row maximum lost ~1% of a confident row's loss (logits [20, 10]: 4.5776e-5
    where torch gives 4.5418e-5): log_softmax and cross_entropy always subtract the maximum."""
    x = [[20.0, 10.0], [8.455962181091309, 2.2457456588745117], [3.0, -4.0]]
    for f in (lambda lib, t: lib.nn.functional.cross_entropy(t, lib.tensor([0, 0, 0]), reduction='none'),
              lambda lib, t: -lib.nn.functional.log_softmax(t, 1)[:, 0]):
        np.testing.assert_allclose(f(ember, ember.tensor(x)).numpy(), f(torch, torch.tensor(x)).numpy(), rtol=3e-7)


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
@pytest.mark.parametrize('n', [17, 20, 33, 50, 1000])
def test_half_precision_randn_tail_as_torchs(dtype, n):
    """torch's float16/bfloat16 normal_ draws uniforms for the whole blocks only, then 16 for the tail."""
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(n, dtype=getattr(lib, dtype))
        y = lib.empty(n, dtype=getattr(lib, dtype)).normal_(2.0, 0.5)
        return x.float().tolist(), y.float().tolist(), lib.rand(2).tolist()
    assert run(ember) == run(torch)


SUBMODULE_NAMES = '''
import torch
from torch.optim import lr_scheduler
from torch import nn
s = lr_scheduler.StepLR(torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1), 1)
print(lr_scheduler.__name__, s.__module__ == lr_scheduler.__name__)
print(torch.nn.functional.__name__, torch.nn.functional is __import__('sys').modules['torch.nn.functional'])
print(torch.optim.lr_scheduler is lr_scheduler, torch.utils.data.__name__)
print(callable(torch.__config__.show), torch.__config__.__name__, torch.__future__.__name__)   # torchkbnufft
'''


def test_submodules_reached_as_attributes_carry_torchs_names(tmp_path):
    """d2l's train() compares ``scheduler.__module__`` with ``lr_scheduler.__name__``: a submodule reached as an
    attribute of torch's namespace is torch's alias, named as in torch."""
    import subprocess
    import sys
    script = tmp_path / 's.py'
    script.write_text(SUBMODULE_NAMES)
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    got = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], capture_output=True, text=True,
                         timeout=300, env=dict(__import__('os').environ, PYTHONPATH=str(__import__('pathlib')
                                                                                          .Path(ember.__file__)
                                                                                          .parent.parent)))
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


@pytest.mark.parametrize('make', [lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(3),
                                  lambda lib: lib.tensor([0.0, float('-inf')]), lambda lib: lib.zeros(20),
                                  lambda lib: lib.zeros(19, requires_grad=True), lambda lib: lib.full((2, 30), float('nan')),
                                  lambda lib: lib.tensor([0.0, float('-inf'), 1.5])])
def test_print_of_tensors_without_nonzero_finite_values(make):
    """Only zeros, infinities and nans: torch keeps the element width at 1 (no padding, 24 zeros a line)."""
    assert repr(make(ember)).replace('ember', 'torch') == repr(make(torch))


def test_rnn_flat_weights_can_be_assigned():
    """higher's monkeypatched modules assign ``rnn._flat_weights``; forward uses the list, as torch's does."""
    def run(lib):
        lib.manual_seed(0)
        rnn = lib.nn.GRU(5, 8, batch_first=True)
        x = lib.randn(2, 3, 5)
        rnn._flat_weights = [p * 2 for p in rnn._flat_weights]
        a = rnn(x)[0].sum().item()
        rnn.weight_ih_l0 = lib.nn.Parameter(rnn.weight_ih_l0 * 0)       # the assigned list follows
        b = rnn(x)[0].sum().item()
        rnn.double()                                                     # _apply re-reads the parameters
        return a, b, rnn(x.double())[0].sum().item()
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-5)


def test_jit_fork_and_wait_run_eagerly():
    for lib in (torch, ember):
        fut = lib.jit.fork(lambda x, k=1: x * k, lib.ones(2), k=3)
        assert fut.done() and fut.wait().tolist() == lib.jit.wait(fut).tolist() == [3.0, 3.0]
        assert lib.jit.Future is lib.futures.Future


def test_lazy_buffers_and_cuda_indices_raise_as_torch():
    import copy
    (_, want), (_, got) = _both(lambda lib: copy.deepcopy(lib.nn.LazyBatchNorm2d()))
    assert got[0] == want[0] == 'ValueError' and got[1].split(' at 0x')[0] == want[1].split(' at 0x')[0]
    (_, want), (_, got) = _both(lambda lib: lib.ones(2).cuda(1))
    assert got == want == ('RuntimeError', 'Cannot access accelerator device when none is available.')


def test_mha_warns_on_mismatched_mask_types():
    for lib in (torch, ember):
        m = lib.nn.MultiheadAttention(4, 2)
        x = lib.randn(3, 2, 4)
        with pytest.warns(UserWarning, match='mismatched key_padding_mask and attn_mask'):
            m(x, x, x, key_padding_mask=lib.zeros(2, 3, dtype=lib.bool), attn_mask=lib.zeros(3, 3))


def test_vmap_indexes_with_batched_zero_d_tensors():
    """transformers' masking_utils vmaps ``padding_mask[batch_idx, kv_idx]`` over 0-d index tensors (every GPT-2 or
    BERT forward with an attention_mask): they index as tensors, with no .item()."""
    def run(lib):
        mask = lib.tensor([[True, True, False], [True, False, False]])
        f = lib.vmap(lib.vmap(lambda b, k: mask[b, k], in_dims=(None, 0)), in_dims=(0, None))
        g = lib.vmap(lambda i: lib.arange(12.).reshape(3, 4)[i, 1:])
        return f(lib.arange(2), lib.arange(3)).tolist(), g(lib.tensor([2, 0])).tolist()
    assert run(ember) == run(torch)


@pytest.mark.parametrize('call', [
    lambda lib, x: lib.fft.fft(x, dim=0), lambda lib, x: lib.fft.fft(x, dim=1), lambda lib, x: lib.fft.rfft(x, dim=0),
    lambda lib, x: lib.fft.irfft(x, dim=0), lambda lib, x: lib.fft.fft2(x, dim=(0, 1)),
    lambda lib, x: lib.fft.fft2(x, dim=(1, 0)), lambda lib, x: lib.fft.rfftn(x, dim=(0, 2)),
    lambda lib, x: lib.fft.ifft(x.transpose(0, 2), dim=1), lambda lib, x: lib.fft.fft(x.permute(1, 2, 0), dim=-1),
    lambda lib, x: lib.fft.hfft(x, dim=1), lambda lib, x: lib.fft.ihfft(x, dim=0), lambda lib, x: lib.fft.fftn(x),
    lambda lib, x: lib.fft.fft(lib.fft.fft(x, dim=2), dim=0), lambda lib, x: lib.real(lib.fft.fft(x, dim=0)),
])
def test_fft_results_laid_out_as_torchs(call):
    """torch's transforms put the batch dims outermost (in input stride order) and the transformed ones innermost:
    labml's FNet drops out ``real(fft(x, dim=0))``, whose mask follows memory order."""
    def run(lib):
        lib.manual_seed(0)
        r = call(lib, lib.randn(4, 6, 8))
        return r.shape, r.stride(), lib.nn.functional.dropout(r.real if r.is_complex() else r, 0.5).ne(0).sum().item()
    assert run(ember) == run(torch)


@pytest.mark.parametrize('call', [
    lambda lib, x: lib.fft.fftn(x, dim=(2, 0)), lambda lib, x: lib.fft.rfftn(x, dim=(2, 0)),
    lambda lib, x: lib.fft.irfftn(x, dim=(2, 0)), lambda lib, x: lib.fft.fft(x.permute(1, 2, 0), dim=0),
    lambda lib, x: lib.fft.fft(x.permute(1, 2, 0), dim=1), lambda lib, x: lib.fft.fftn(x, dim=(0, 2, 1)),
    lambda lib, x: lib.fft.rfft2(x.transpose(0, 1))])
def test_more_fft_layouts(call):
    def run(lib):
        lib.manual_seed(0)
        r = call(lib, lib.randn(4, 6, 8))
        return r.shape, r.stride()
    assert run(ember) == run(torch)


def test_cuda_amp_is_a_package_as_torchs():
    """labml's adam_fp16 does ``from torch.cuda.amp import grad_scaler``."""
    import importlib
    for lib in ('torch', 'ember'):
        gs = importlib.import_module(f'{lib}.cuda.amp.grad_scaler')
        am = importlib.import_module(f'{lib}.cuda.amp.autocast_mode')
        common = importlib.import_module(f'{lib}.cuda.amp.common')
        assert gs.OptState.READY.value == 0 and issubclass(gs.GradScaler, importlib.import_module(f'{lib}.amp').GradScaler)
        assert callable(am.custom_fwd) and common.amp_definitely_not_available() is True


@pytest.mark.parametrize('call', [
    lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), lambda lib, x, w, b: lib.addmm(b, x, w.T),
    lambda lib, x, w, b: lib.addmm(b, x, w.T, beta=0.5, alpha=2.0), lambda lib, x, w, b: lib.addmv(b, w, x[0]),
    lambda lib, x, w, b: lib.baddbmm(b.expand(1, 10, 16), x[None], w.T[None]),
    lambda lib, x, w, b: lib.nn.functional.linear(x[None].expand(3, 10, 6), w, b)])
@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
def test_half_products_with_bias_round_once(call, dtype):
    def run(lib):
        lib.manual_seed(0)
        dt = getattr(lib, dtype)
        x, w, b = lib.randn(10, 6).to(dt), lib.randn(16, 6).to(dt), lib.randn(16).to(dt)
        return call(lib, x, w, b).float().numpy()
    np.testing.assert_array_equal(run(ember), run(torch))


def test_ember_run_reports_an_uncaught_exception_as_python(tmp_path):
    """The traceback starts at the script's own frame (no runpy or runner frames), exit status 1; a syntax error
    shows no frames at all."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    (tmp_path / 'e.py').write_text('import torch\n\ndef f():\n    raise ValueError("boom")\n\nf()\n')
    (tmp_path / 's.py').write_text('x = (\n')
    for name in ('e.py', 's.py'):
        want = subprocess.run([sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        got = subprocess.run([sys.executable, '-m', 'ember', 'run', name], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, env=env)
        assert got.returncode == want.returncode == 1
        assert got.stderr.replace(str(tmp_path) + '/', '') == want.stderr.replace(str(tmp_path) + '/', '')


def test_rnn_modules_pickle_and_load_whole(tmp_path):
    """word_language_model saves the whole model: the weight references behind _flat_weights are not pickled
    (torch drops them too), and a torch-saved LSTM loads and runs in ember."""
    import copy
    import pickle
    torch.manual_seed(0)
    tm = torch.nn.LSTM(3, 4, 2)
    torch.save(tm, tmp_path / 'lstm.pt')
    em = ember.load(tmp_path / 'lstm.pt', weights_only=False)
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(em(ember.from_numpy(x))[0].detach().numpy(),
                               tm(torch.from_numpy(x))[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    for m in (pickle.loads(pickle.dumps(em)), copy.deepcopy(em)):
        np.testing.assert_array_equal(m(ember.from_numpy(x))[0].detach().numpy(),
                                      em(ember.from_numpy(x))[0].detach().numpy())
    ember.save(em, tmp_path / 'e.pt')
    assert isinstance(ember.load(tmp_path / 'e.pt', weights_only=False), ember.nn.LSTM)


@pytest.mark.parametrize('kind', ['LSTM', 'GRU'])
def test_per_sample_gradients_of_recurrent_layers(kind):
    """vmap(grad) over nn.LSTM/GRU (their fused cells have batching rules): each sample's gradients equal torch's
    per-sample ones (torch's own vmap of nn.GRU fails on its in-place hidden-state update)."""
    def run(lib, batched):
        lib.manual_seed(0)
        m = getattr(lib.nn, kind)(3, 4)
        params = {k: v.detach() for k, v in m.named_parameters()}
        xs = lib.randn(3, 5, 2, 3)

        def loss(p, x):
            return lib.func.functional_call(m, p, (x,))[0].pow(2).sum()
        if batched:
            g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, xs)
        else:
            each = [lib.func.grad(loss)(params, xs[i]) for i in range(3)]
            g = {k: lib.stack([e[k] for e in each]) for k in each[0]}
        return {k: v.numpy() for k, v in g.items()}
    got, want = run(ember, True), run(torch, False)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize('call', [lambda lib: lib.arange(3.).as_strided((0,), (1,), 10).shape,
                                  lambda lib: lib.arange(3.).as_strided((2,), (1,), 2),
                                  lambda lib: lib.zeros(1).set_(lib.arange(3.).untyped_storage(), 9, (0, 2)).shape])
def test_storage_bounds_as_torchs(call):
    """One bounds check (torch's checkInBoundsForStorage) for as_strided, set_ and loaded checkpoints: a geometry
    with no elements needs no bytes, whatever its offset."""
    (want, want_err), (got, got_err) = _both(call)
    assert got_err == want_err and (got is None) == (want is None)
    assert got is None or tuple(got) == tuple(want)
