"""The CUDA device from the user's side: moving tensors and modules, training on the GPU against the CPU,
saving and loading, torch.cuda's queries, events and memory statistics, the fallback's warning."""
import io
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from test_nn_gpt import build as build_gpt


def test_tensors_move_and_print_like_torch():
    x = ember.arange(6.).reshape(2, 3)
    g = x.cuda()
    assert g.is_cuda and g.device == ember.device('cuda', 0) and g.get_device() == 0
    assert type(g._a).__module__.startswith('cupy')
    assert repr(g) == "tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='cuda:0')"
    assert g.tolist() == x.tolist() and g.sum().item() == 15.0
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        g.numpy()
    assert np.array_equal(g.cpu().numpy(), x.numpy())
    v = g.t()[1:]             # a view shares the device memory
    assert v.is_cuda and v.stride() == (1, 3) and v.untyped_storage().data_ptr() == g.untyped_storage().data_ptr()
    v.mul_(10)
    assert g.cpu().tolist() == [[0., 10., 20.], [3., 40., 50.]]
    with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device'):
        g + x
    assert (g * ember.tensor(2.)).is_cuda       # a 0-d CPU tensor joins a CUDA operation, as in torch


def test_factories_and_random_on_the_device():
    for t in (ember.zeros(3, device='cuda'), ember.ones(2, 2, device='cuda'), ember.full((2,), 7., device='cuda'),
              ember.arange(5, device='cuda'), ember.eye(3, device='cuda'), ember.empty(4, device='cuda'),
              ember.linspace(0, 1, 5, device='cuda'), ember.zeros_like(ember.ones(3).cuda())):
        assert t.is_cuda
    ember.manual_seed(3)
    a = ember.randn(5, device='cuda')
    ember.manual_seed(3)
    b = ember.randn(5)
    assert a.is_cuda and np.array_equal(a.cpu().numpy(), b.numpy())    # drawn on the host: the CPU's values
    with ember.device('cuda'):
        assert ember.zeros(2).is_cuda and nn.Linear(2, 3).weight.is_cuda


def _train(make, batches, device, opt_cls, steps, loss_fn, **opt_kw):
    with ember.device(device):          # the model's own tensors (an arange in forward) are made there too
        model = make().to(device)
        opt = opt_cls(model.parameters(), **opt_kw)
        losses = []
        for i in range(steps):
            x, y = (t.to(device) for t in batches[i % len(batches)])
            loss = loss_fn(model, x, y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
    return losses, {k: v.cpu() for k, v in model.state_dict().items()}


def _same_training(make, batches, opt_cls, steps=20, rtol=1e-4, loss_fn=lambda m, x, y: F.cross_entropy(m(x), y),
                   **opt_kw):
    ember.manual_seed(0)
    cpu_losses, cpu_state = _train(make, batches, 'cpu', opt_cls, steps, loss_fn, **opt_kw)
    ember.manual_seed(0)
    gpu_losses, gpu_state = _train(make, batches, 'cuda', opt_cls, steps, loss_fn, **opt_kw)
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=rtol)
    for k in cpu_state:
        np.testing.assert_allclose(gpu_state[k].numpy(), cpu_state[k].numpy(), rtol=rtol, atol=rtol / 10, err_msg=k)
    assert cpu_losses[-1] < cpu_losses[0]


def test_mlp_trains_on_the_gpu_as_on_the_cpu():
    rng = np.random.default_rng(0)
    batches = [(ember.from_numpy(rng.standard_normal((32, 20), dtype=np.float32)),
                ember.from_numpy(rng.integers(0, 5, 32))) for _ in range(4)]
    make = lambda: nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.LayerNorm(64), nn.Dropout(0.0), nn.Linear(64, 5))
    _same_training(make, batches, ember.optim.AdamW, lr=1e-2)
    _same_training(make, batches, ember.optim.SGD, lr=0.1, momentum=0.9)


def test_cnn_trains_on_the_gpu_as_on_the_cpu():
    rng = np.random.default_rng(1)
    batches = [(ember.from_numpy(rng.standard_normal((8, 1, 12, 12), dtype=np.float32)),
                ember.from_numpy(rng.integers(0, 3, 8))) for _ in range(2)]
    make = lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    _same_training(make, batches, ember.optim.SGD, steps=8, lr=0.05)


def test_gpt_trains_on_the_gpu_as_on_the_cpu():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 65, (6, 9))
    x, y = ember.from_numpy(data[:, :8].copy()), ember.from_numpy(data[:, 1:].copy())

    # AdamW divides by the root of the second moment, which magnifies float32's different summation order on
    # the GPU in the smallest gradients: a few parts in 1e4 after five steps
    _same_training(lambda: build_gpt(ember), [(x, y)], ember.optim.AdamW, steps=5, lr=3e-3, rtol=5e-4,
                   loss_fn=lambda m, x, y: m(x, y)[1])


@pytest.mark.parametrize('name', ['_fused_adam_', '_fused_adamw_'])
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16'])
@pytest.mark.parametrize('options', [dict(amsgrad=False, maximize=False, weight_decay=0.0),
                                     dict(amsgrad=True, maximize=True, weight_decay=0.1),
                                     dict(amsgrad=False, maximize=False, weight_decay=0.01, scaled=True)])
def test_the_fused_adam_kernel_updates_as_the_cpu_kernel(name, dtype, options):
    """NOTE [fused optimizer steps]: the device's elementwise kernel against the CPU's NumPy kernel, every variant
    (weight decay added or decoupled, amsgrad, maximize, half precision in float32, an unscaled gradient)."""
    options = dict(options)
    scaled = options.pop('scaled', False)
    rng = np.random.default_rng(3)
    shapes = [(7, 5), (11,), ()]
    arrays = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(5)]
    arrays[3] = [np.abs(a) for a in arrays[3]]
    arrays[4] = [2 * a for a in arrays[3]]

    def run(device):
        p, g, m, v, vmax = [[ember.tensor(a, device=device) for a in group] for group in arrays]
        extra = dict(grad_scale=ember.tensor(4.0, device=device), found_inf=ember.tensor(0.0, device=device)) \
            if scaled else {}
        getattr(ember, name)(p, g, m, v, vmax if options['amsgrad'] else [], [ember.tensor(3.0)] * 3, lr=0.01,
                             beta1=0.9, beta2=0.99, eps=1e-8, **options, **extra)
        return [t.cpu().float().numpy() for t in p + g + m + v + (vmax if options['amsgrad'] else [])]
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == 'float16' else dict(rtol=1e-5, atol=1e-6)
    for got, want in zip(run('cuda'), run('cpu')):
        np.testing.assert_allclose(got, want, **tol)


def test_save_from_the_gpu_and_load_anywhere(tmp_path):
    m = nn.Linear(3, 2).cuda()
    p = tmp_path / 'm.pt'
    ember.save(m.state_dict(), p)
    on_gpu = ember.load(p)
    assert on_gpu['weight'].is_cuda
    on_cpu = ember.load(p, map_location='cpu')
    assert not on_cpu['weight'].is_cuda and np.array_equal(on_cpu['weight'].numpy(), m.weight.detach().cpu().numpy())
    buf = io.BytesIO()
    ember.save(nn.Linear(3, 2).state_dict(), buf)
    buf.seek(0)
    assert ember.load(buf, map_location='cuda')['bias'].is_cuda


def test_cuda_queries_events_and_memory():
    assert ember.cuda.is_available() and ember.cuda.device_count() >= 1 and ember.cuda.current_device() == 0
    name = ember.cuda.get_device_name(0)
    assert isinstance(name, str) and name and ember.cuda.get_device_capability()[0] >= 3
    assert ember.cuda.get_device_properties(0).total_memory > 1 << 30
    ember.cuda.empty_cache()
    before = ember.cuda.memory_allocated()
    t = ember.empty(1 << 24, device='cuda')         # 64 MiB
    assert ember.cuda.memory_allocated() >= before + (1 << 26)
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    del t
    assert ember.cuda.memory_allocated() == before and ember.cuda.memory_reserved() >= 1 << 26
    ember.cuda.empty_cache()
    assert ember.cuda.memory_reserved() < 1 << 26
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    a = ember.randn(512, 512, device='cuda')
    start.record()
    for _ in range(10):
        a = a @ a / 512
    end.record()
    ember.cuda.synchronize()
    assert end.query() and start.elapsed_time(end) > 0
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total


def test_an_operator_without_a_device_kernel_runs_on_the_host_and_says_so():
    from ember._backends import cuda as backend
    x = ember.randn(4, 4, device='cuda')
    x = x @ x.T + 4 * ember.eye(4, device='cuda')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        inv = ember.linalg.inv(x)
    assert inv.is_cuda and backend.FALLBACKS.get('linalg_inv', 0) >= 1
    assert any("'aten::linalg_inv' is not currently supported on the CUDA backend" in str(m.message) for m in w)
    np.testing.assert_allclose((x @ inv).cpu().numpy(), np.eye(4), atol=1e-5)
    with pytest.raises(RuntimeError, match='singular'):
        ember.linalg.inv(ember.zeros(3, 3, device='cuda'))      # the CPU kernel's error, as torch raises on CUDA


def test_a_typical_training_script_runs_on_the_gpu():
    """The idioms of published programs: a device chosen by is_available(), a DataLoader with pin_memory,
    non_blocking copies, cudnn flags, evaluation under no_grad, accuracy through .item()."""
    import ember as torch
    from ember.utils.data import DataLoader, TensorDataset
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    x = torch.randn(256, 10)
    y = (x[:, 0] > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, pin_memory=True)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter('error')          # no pin_memory warning with a GPU, no host fallback in this loop
        for _ in range(5):
            for xb, yb in loader:
                assert xb.is_pinned()
                xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
                loss = F.cross_entropy(model(xb), yb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    model.eval()
    with torch.no_grad():
        correct = (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
    assert correct / len(x) > 0.9 and next(model.parameters()).is_cuda
