"""Gaps found this session (2026-11-28, fifth session), each compared with torch."""
import pickle

import numpy as np
import pytest
import torch

import ember


def test_functions_that_are_also_methods_bind_no_self_as_class_attributes():
    """``act = torch.tanh`` in a class body: torch's functions are builtins and bind no ``self``; ember's
    functions that are also Tensor methods did (``tanh() takes 1 positional argument but 2 were given``)."""
    for lib in (torch, ember):
        class Block:
            act = lib.tanh
            add = lib.add
            total = lib.sum
            biggest = lib.max
            relu_ = lib.relu_
        b = Block()
        x = lib.tensor([-1., 0.5, 2.])
        assert np.allclose(b.act(x).tolist(), np.tanh([-1., 0.5, 2.]))
        assert b.add(x, 1).tolist() == [0., 1.5, 3.]
        assert b.total(x).item() == 1.5 and b.biggest(x).item() == 2.
        assert b.relu_(x.clone()).tolist() == [0., 0.5, 2.]
        assert type(lib.tanh).__name__ == 'builtin_function_or_method'
    # the methods still bind, and the functions still pickle by name
    x = ember.tensor([1., -2.])
    assert x.abs().tolist() == [1., 2.] and x.max().item() == 1.
    assert pickle.loads(pickle.dumps(ember.tanh)) is ember.tanh
    assert pickle.loads(pickle.dumps(ember.max)) is ember.max


@pytest.mark.parametrize('name', ['add', 'relu', 'abs', 'sum', 'max', 'tanh', 'matmul'])
def test_torch_function_receives_the_public_function(name):
    def seen(lib):
        calls = []

        class T(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append(func)
                return super().__torch_function__(func, types, args, kwargs or {})
        x = lib.ones(2).as_subclass(T)
        f = getattr(lib, name)
        f(x, x) if name in ('add', 'matmul') else f(x)
        return calls[0] is f
    assert seen(ember) == seen(torch) is True


@pytest.mark.parametrize('mode,kw', [('nearest', {}), ('nearest-exact', {}), ('bilinear', {'align_corners': False}),
                                     ('bilinear', {'align_corners': True}), ('bicubic', {'align_corners': False}),
                                     ('area', {})])
def test_a_non_finite_pixel_reaches_only_the_outputs_that_read_it(mode, kw):
    """torch's resampling kernels read each output's taps; ember's dense (out, in) matrix products turned one
    inf or nan into a channel of NaN (ptflops' and torchview's models)."""
    import warnings
    res = {}
    for lib in (torch, ember):
        x = lib.tensor(np.random.default_rng(0).random((1, 2, 6, 6)).astype(np.float32))
        x[0, 0, 2, 3] = float('inf')
        x[0, 1, 4, 1] = float('nan')
        with warnings.catch_warnings():
            warnings.simplefilter('error')          # and no NumPy invalid-value warning
            y = lib.nn.functional.interpolate(x, size=(9, 11), mode=mode, **kw)
            p = lib.nn.functional.adaptive_avg_pool2d(x, (4, 5))
        res[lib] = [t.numpy() for t in (y, p)]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_array_equal(np.isfinite(e), np.isfinite(t))
        np.testing.assert_allclose(e[np.isfinite(e)], t[np.isfinite(t)], rtol=1e-5, atol=1e-6)
        assert 0 < (~np.isfinite(e)).sum() < e.size // 2


def test_resampling_shows_no_matrix_product():
    """A FLOP counter sees no matrix product in a resize (torch's upsample kernels count none), and the
    resampled gradient still matches torch's."""
    from ember.utils.flop_counter import FlopCounterMode
    x = ember.rand(1, 3, 14, 14, requires_grad=True)
    with FlopCounterMode(display=False) as fc:
        y = ember.nn.functional.interpolate(x, scale_factor=2, mode='bilinear')
    assert fc.get_total_flops() == 0
    grads = {}
    for lib in (torch, ember):
        g = lib.tensor(x.detach().numpy(), requires_grad=True)
        for mode in ('nearest', 'bilinear', 'bicubic'):
            lib.nn.functional.interpolate(g, scale_factor=(1.5, 2.0), mode=mode).pow(2).sum().backward()
        grads[lib] = g.grad.numpy()
    np.testing.assert_allclose(grads[ember], grads[torch], rtol=1e-4, atol=1e-5)
    assert y.shape == (1, 3, 28, 28)


def test_v2_transforms_offer_their_v1_get_params():
    """torchvision's v2 transforms bind their v1 class's ``get_params`` (lightly's RandomResizedCropWithLocation
    subclasses v2.RandomResizedCrop and calls ``self.get_params``)."""
    from ember.vision import transforms as v1
    from ember.vision.transforms import v2
    for name in ('RandomResizedCrop', 'RandomCrop', 'RandomRotation', 'RandomAffine', 'RandomPerspective',
                 'ColorJitter', 'GaussianBlur'):
        assert getattr(v2, name).get_params is getattr(v1, name).get_params, name

    class WithLocation(v2.RandomResizedCrop):
        def forward(self, img):
            i, j, h, w = self.get_params(img, self.scale, self.ratio)
            return (i, j, h, w), v2.functional.resized_crop(img, i, j, h, w, self.size)
    ember.manual_seed(0)
    (i, j, h, w), out = WithLocation(8)(ember.rand(3, 32, 32))
    assert out.shape == (3, 8, 8) and 0 <= i <= 32 - h and 0 <= j <= 32 - w


def test_module_backward_flops_with_an_unused_output_and_multi_grad_hooks():
    """FlopCounterMode gives a module the FLOPs of its backward when one of its outputs gets no gradient (its
    ModuleTracker waits for the outputs the engine reaches, torch's register_multi_grad_hook); a multi-grad hook
    on the tensor backward starts from never fires (torch counts only nodes an edge leads to)."""
    def counts(lib):
        from importlib import import_module
        FlopCounterMode = import_module(lib.__name__ + '.utils.flop_counter').FlopCounterMode
        reg = import_module(lib.__name__ + '.autograd.graph').register_multi_grad_hook
        nn = lib.nn

        class Two(nn.Module):
            def __init__(self):
                super().__init__()
                self.l = nn.Linear(8, 8)

            def forward(self, x):
                y = self.l(x)
                return y, y * 2

        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.sub = Two()

            def forward(self, x):
                return self.sub(x)[0].sum()
        lib.manual_seed(0)
        x = lib.randn(4, 8, requires_grad=True)
        with FlopCounterMode(display=False) as fc:
            Outer()(x).backward()
        fired = []
        y = x * 2
        reg((y,), lambda gs: fired.append('root'))
        z = y * 3
        reg((y, x), lambda gs: fired.append(tuple(g is None for g in gs)))
        z.sum().backward()
        return {k: sum(v.values()) for k, v in fc.get_flop_counts().items()}, fired
    assert counts(ember) == counts(torch)


def test_multihead_attention_hands_one_call_to_torch_function():
    """nn.MultiheadAttention calls the public F.multi_head_attention_forward, so a torch function mode (torchview's
    graphs) sees that one call, not the ~20 inside it."""
    def seen(lib):
        from importlib import import_module
        Mode = import_module(lib.__name__ + '.overrides').TorchFunctionMode
        names = []

        class M(Mode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                names.append(getattr(func, '__name__', str(func)))
                return func(*args, **(kwargs or {}))
        m = lib.nn.MultiheadAttention(8, 2)
        x = lib.rand(3, 1, 8)
        with M():
            m(x, x, x)
        return [n for n in names if n not in ('__get__', 'dim')]
    assert seen(ember) == seen(torch) == ['multi_head_attention_forward']


def test_resnet_blocks_add_the_shortcut_in_place():
    """torchvision's BasicBlock and Bottleneck write ``out += identity`` (torchview draws add_)."""
    import ember.vision
    from ember.overrides import TorchFunctionMode
    names = []

    class M(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(getattr(func, '__name__', str(func)))
            return func(*args, **(kwargs or {}))
    for block in (ember.vision.models.resnet.BasicBlock(4, 4), ember.vision.models.resnet.Bottleneck(16, 4)):
        names.clear()
        with M():
            block(ember.rand(2, block.conv1.in_channels, 5, 5))
        assert any(n in ('__iadd__', 'add_') for n in names) and 'add' not in names, names


def test_trace_of_a_bound_forward_is_a_traced_module():
    """torch.jit.trace(model.forward, x) traces the module (torchview's traced MLP reads ``.training``)."""
    import warnings
    for lib in (torch, ember):
        m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            t = lib.jit.trace(m.forward, lib.ones(1, 3))
        assert type(t).__name__ == 'TopLevelTracedModule' and t.training and isinstance(t, lib.nn.Module)
        assert t(lib.ones(2, 3)).shape == (2, 2)


def test_profiler_events_have_torchs_fields():
    """fvcore's and ptflops' profiler readers touch ``flops``, ``device_time_total``, ``node_id`` and the rest:
    present, with torch's values for a CPU run without FLOP counting."""
    def fields(lib):
        from importlib import import_module
        profile = import_module(lib.__name__ + '.profiler').profile
        m, x = lib.nn.Linear(8, 8), lib.rand(4, 8)
        with profile() as p:
            m(x)
        e, a = p.events()[0], p.key_averages()[0]
        return (e.name, e.flops, e.node_id, e.kernels, e.device_time_total, e.self_device_time_total, e.use_device,
                a.flops, a.node_id, a.device_time_total, a.self_device_time_total)
    assert fields(ember) == fields(torch)


def test_sdpa_interpolate_and_tensordot_reach_no_patched_tensor_method():
    """ptflops patches Tensor.matmul/mm/softmax... to count FLOPs; torch's scaled_dot_product_attention (math
    path) and interpolate are C++ and never reach them, so a patched method sees no call (ptflops counted the
    attention's products twice and a resize as 16x its MACs)."""
    def patched_calls(lib):
        F = lib.nn.functional
        names = ['matmul', 'mm', 'bmm', 'mul', 'add', 'softmax', 'transpose', 'movedim', 'contiguous', 'permute',
                 'reshape']
        saved = {n: getattr(lib.Tensor, n) for n in names}
        calls = []

        def spy(n, f):
            def w(*a, **k):
                calls.append(n)
                return f(*a, **k)
            return w
        for n, f in saved.items():
            setattr(lib.Tensor, n, spy(n, f))
        try:
            q = lib.rand(2, 6, 16)
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
            F.interpolate(lib.rand(1, 3, 10, 10), size=(20, 20), mode='bilinear')
            F.interpolate(lib.rand(1, 3, 10, 10), scale_factor=2)
            lib.tensordot(q, q, dims=([2], [2]))
        finally:
            for n, f in saved.items():
                setattr(lib.Tensor, n, f)
        return calls
    assert patched_calls(ember) == patched_calls(torch) == []


def test_v2_mixup_and_cutmix_as_torchvision():
    """v2.MixUp and v2.CutMix (torchvision's reference training recipes): lam from Beta(alpha, alpha) drawn as
    torch draws it for the seed; images mixed with the batch rolled by one, labels one-hot and mixed alike."""
    from ember.vision import tv_tensors
    from ember.vision.transforms import v2
    torch.manual_seed(0)
    timgs = torch.rand(4, 3, 8, 10)
    lam = float(torch.distributions.Beta(torch.tensor([0.7]), torch.tensor([0.7])).sample(()))
    ember.manual_seed(0)
    imgs, labels = ember.rand(4, 3, 8, 10), ember.tensor([0, 1, 2, 0])
    out, mixed = v2.MixUp(num_classes=3, alpha=0.7)(imgs, labels)
    want = timgs.roll(1, 0).mul_(1 - lam).add_(timgs.mul(lam))
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(mixed[1].numpy(), [1 - lam, lam, 0.], rtol=1e-6)
    img, mixed = v2.CutMix(num_classes=3)(tv_tensors.Image(imgs), labels)
    assert type(img).__name__ == 'Image' and mixed.shape == (4, 3)
    changed = (img != imgs).any(1)          # one box, the same in every image, taken from the previous image
    assert bool((img[1][:, changed[1]] == imgs[0][:, changed[1]]).all())
    kept = 1 - changed[1].float().mean().item() if changed.any() else 1.0
    assert abs(float(mixed[1, 1]) - kept) < 0.02 or bool((imgs[0] == imgs[1]).all())
    with pytest.raises(ValueError, match='num_classes must be passed'):
        v2.MixUp()(imgs, labels)
    with pytest.raises(ValueError, match='Expected a batched input with 4 dims'):
        v2.CutMix(num_classes=3)(imgs[0], labels)


def test_v2_random_erasing_draws_as_v1():
    """v2.RandomErasing: one ``rand(1)`` for ``p``, then v1's draws for the rectangle (compared with torchvision
    0.28 on torch when written: the same rectangles and pixels for a seed); masks pass through with a warning."""
    from ember.vision import transforms as v1, tv_tensors
    from ember.vision.transforms import v2
    img = ember.rand(3, 16, 20)
    for value in (0.0, 'random', (0.1, 0.2, 0.3)):
        ember.manual_seed(3)
        ember.rand(1)
        i, j, h, w, v = v1.RandomErasing.get_params(img, scale=(0.1, 0.5), ratio=(0.3, 3.3),
                                                    value=[0.0] if value == 0.0 else None if value == 'random'
                                                    else list(value))
        ember.manual_seed(3)
        out = v2.RandomErasing(p=1.0, scale=(0.1, 0.5), value=value)(img)
        changed = (out != img).any(0)
        assert bool(changed[i:i + h, j:j + w].all()) and int(changed.sum()) == h * w
    with pytest.warns(UserWarning, match='passing through inputs of type tv_tensors.Mask'):
        out = v2.RandomErasing(p=1.0)({'image': tv_tensors.Image(img), 'mask': tv_tensors.Mask(ember.ones(16, 20))})
    assert float(out['mask'].sum()) == 320.0
    with pytest.raises(ValueError, match="it should be 'random'"):
        v2.RandomErasing(value='x')
    assert v2.RandomErasing.get_params is v1.RandomErasing.get_params
