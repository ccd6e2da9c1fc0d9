"""ember.vision.utils and ember.vision.ops against torch ops and direct transcriptions of torchvision's kernels,
and `import torchvision` resolving to ember.vision under ember's import hook."""
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ember
from ember.vision import ops, utils

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_make_grid_layout_matches_torch_built_grid():
    x = np.random.RandomState(0).rand(5, 3, 4, 6).astype(np.float32)
    g = utils.make_grid(ember.from_numpy(x), nrow=2, padding=1, pad_value=0.5).numpy()
    ref = torch.full((3, 3 * 5 + 1, 2 * 7 + 1), 0.5)
    for k in range(5):
        r, c = divmod(k, 2)
        ref[:, r * 5 + 1:r * 5 + 5, c * 7 + 1:c * 7 + 7] = torch.from_numpy(x[k])
    np.testing.assert_array_equal(g, ref.numpy())
    one = utils.make_grid(ember.from_numpy(x[:2, :1]), padding=0)
    assert one.shape == (3, 4, 12) and np.array_equal(one.numpy()[2], np.concatenate([x[0, 0], x[1, 0]], 1))
    n = utils.make_grid(ember.from_numpy(x * 4 - 1), normalize=True, padding=0, nrow=5).numpy()
    y = x * 4 - 1
    np.testing.assert_allclose(n, np.concatenate(list((y - y.min()) / (y.max() - y.min())), axis=2), atol=1e-6)
    assert utils.make_grid([ember.from_numpy(x[0])] * 3, padding=0).shape == (3, 4, 18)


def test_save_image_roundtrip(tmp_path):
    Image = pytest.importorskip('PIL.Image')
    x = np.random.RandomState(1).rand(4, 3, 5, 5).astype(np.float32)
    path = str(tmp_path / 'g.png')
    utils.save_image(ember.from_numpy(x), path, nrow=2, padding=0)
    img = np.array(Image.open(path))
    grid = np.concatenate([np.concatenate([x[0], x[1]], 2), np.concatenate([x[2], x[3]], 2)], 1)
    expect = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    assert img.shape == (10, 10, 3) and np.array_equal(img, expect)


def _boxes(n, seed):
    rng = np.random.RandomState(seed)
    xy = rng.rand(n, 2) * 20
    wh = rng.rand(n, 2) * 10 + 1
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def test_box_iou_matches_torch_formula():
    a, b = _boxes(6, 0), _boxes(4, 1)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    lt = torch.max(ta[:, None, :2], tb[:, :2])
    rb = torch.min(ta[:, None, 2:], tb[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(2)
    area = lambda t: (t[:, 2] - t[:, 0]) * (t[:, 3] - t[:, 1])  # noqa: E731
    ref = inter / (area(ta)[:, None] + area(tb) - inter)
    np.testing.assert_allclose(ops.box_iou(ember.from_numpy(a), ember.from_numpy(b)).numpy(), ref.numpy(), rtol=1e-6)
    assert ops.box_iou(ember.from_numpy(a), ember.from_numpy(b)).shape == (6, 4)


def _nms_reference(boxes, scores, thr):
    """The greedy rule written pairwise with torch's IoU: keep in score order, drop any box over thr with a kept one."""
    tb = torch.from_numpy(boxes)
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    keep = []
    for i in order:
        ok = True
        for j in keep:
            lt = torch.max(tb[i, :2], tb[j, :2])
            rb = torch.min(tb[i, 2:], tb[j, 2:])
            inter = (rb - lt).clamp(min=0).prod().item()
            ai = ((tb[i, 2] - tb[i, 0]) * (tb[i, 3] - tb[i, 1])).item()
            aj = ((tb[j, 2] - tb[j, 0]) * (tb[j, 3] - tb[j, 1])).item()
            if inter / (ai + aj - inter) > thr:
                ok = False
                break
        if ok:
            keep.append(i)
    return keep


@pytest.mark.parametrize('thr', [0.1, 0.3, 0.7])
def test_nms_matches_greedy_reference(thr):
    boxes = _boxes(40, 2)
    scores = np.random.RandomState(3).rand(40).astype(np.float32)
    keep = ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), thr)
    assert keep.dtype == ember.int64
    ref = _nms_reference(boxes, scores, thr)
    assert keep.tolist() == ref and 0 < len(ref) < 40
    idxs = ember.from_numpy(np.arange(40) % 3)
    bk = ops.batched_nms(ember.from_numpy(boxes), ember.from_numpy(scores), idxs, thr).tolist()
    for c in range(3):
        sel = [i for i in range(40) if i % 3 == c]
        assert [i for i in bk if i % 3 == c] == [sel[k] for k in _nms_reference(boxes[sel], scores[sel], thr)]
    assert sorted(bk, key=lambda i: -scores[i]) == bk


def _roi_align_torch(x, rois, ph, pw, scale, sampling, aligned):
    """torchvision's CPU RoIAlign kernel, transcribed point by point with torch ops (differentiable in x)."""
    H, W = x.shape[-2:]
    outs = []
    for b, x1, y1, x2, y2 in rois.tolist():
        off = 0.5 if aligned else 0.0
        sw, sh, ew, eh = x1 * scale - off, y1 * scale - off, x2 * scale - off, y2 * scale - off
        rw, rh = ew - sw, eh - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = sampling if sampling > 0 else math.ceil(rh / ph)
        gw = sampling if sampling > 0 else math.ceil(rw / pw)
        out = torch.zeros(x.shape[1], ph, pw, dtype=x.dtype)
        for i in range(ph):
            for j in range(pw):
                acc = torch.zeros(x.shape[1], dtype=x.dtype)
                for iy in range(gh):
                    y = sh + i * rh / ph + (iy + 0.5) * rh / ph / gh
                    for ix in range(gw):
                        xx = sw + j * rw / pw + (ix + 0.5) * rw / pw / gw
                        if y < -1.0 or y > H or xx < -1.0 or xx > W:
                            continue
                        yy, xv = max(y, 0.0), max(xx, 0.0)
                        yl, xl = int(yy), int(xv)
                        if yl >= H - 1:
                            yl = yh = H - 1
                            yy = float(yl)
                        else:
                            yh = yl + 1
                        if xl >= W - 1:
                            xl = xh = W - 1
                            xv = float(xl)
                        else:
                            xh = xl + 1
                        ly, lx = yy - yl, xv - xl
                        f = x[int(b)]
                        acc = acc + (1 - ly) * (1 - lx) * f[:, yl, xl] + (1 - ly) * lx * f[:, yl, xh] + \
                            ly * (1 - lx) * f[:, yh, xl] + ly * lx * f[:, yh, xh]
                out[:, i, j] = acc / max(gh * gw, 1)
        outs.append(out)
    return torch.stack(outs)


@pytest.mark.parametrize('aligned', [False, True])
@pytest.mark.parametrize('sampling', [-1, 2])
def test_roi_align_matches_kernel_and_gradient(aligned, sampling):
    x = np.random.RandomState(4).randn(2, 3, 9, 11)
    rois = np.array([[0, 1.0, 1.5, 7.0, 6.0], [1, -2.0, 0.5, 4.0, 12.0], [0, 3.2, 2.1, 3.5, 2.4],
                     [1, 0.0, 0.0, 20.0, 17.0]])
    ex = ember.from_numpy(x.copy()).requires_grad_()
    out = ops.roi_align(ex, ember.from_numpy(rois), (3, 2), spatial_scale=0.5, sampling_ratio=sampling,
                        aligned=aligned)
    tx = torch.from_numpy(x.copy()).requires_grad_()
    ref = _roi_align_torch(tx, rois, 3, 2, 0.5, sampling, aligned)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-10)
    w = np.random.RandomState(5).randn(*ref.shape)
    (out * ember.from_numpy(w)).sum().backward()
    (ref * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    assert np.abs(tx.grad.numpy()).sum() > 0
    # the list-of-boxes form and the module agree with the (K, 5) form
    lst = [ember.from_numpy(rois[rois[:, 0] == i, 1:]) for i in range(2)]
    order = np.argsort(rois[:, 0], kind='stable')
    m = ops.RoIAlign((3, 2), 0.5, sampling, aligned)
    np.testing.assert_allclose(m(ex, lst).detach().numpy(), out.detach().numpy()[order], atol=1e-12)


def _run(code, args=()):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, *args], input=code, capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120)


def test_torchvision_resolves_to_ember_vision_under_ember_run(tmp_path):
    script = tmp_path / 'prog.py'
    script.write_text(textwrap.dedent('''
        import torch
        import torchvision
        from torchvision import datasets, transforms
        import torchvision.models as models
        from torchvision.utils import make_grid
        from torchvision.transforms import functional as TF
        import ember.vision
        assert torchvision.transforms.Normalize is ember.vision.transforms.Normalize
        assert datasets.MNIST is ember.vision.datasets.MNIST and TF.hflip is ember.vision.transforms.functional.hflip
        m = models.resnet18(num_classes=3).eval()
        print(type(m).__module__, m(torch.rand(1, 3, 32, 32)).shape, make_grid(torch.rand(2, 3, 4, 4)).shape)
        import torchvision.io, torchvision.tv_tensors
        from torchvision.transforms.v2 import functional as tvF
        img = torchvision.io.decode_image(torchvision.io.encode_png(torch.zeros(3, 4, 6, dtype=torch.uint8)))
        img = tvF.to_dtype(torchvision.tv_tensors.Image(img), torch.float32, scale=True)
        print('io+v2:', type(img).__name__, tuple(tvF.resize(img, [2, 3]).shape))
        try:
            import torchvision.models.detection
        except ModuleNotFoundError as e:
            print('missing:', e)
    '''))
    r = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert r.returncode == 0, r.stderr
    # torchvision's class path, as torchvision prints it (NOTE [torch's class names under ember run])
    assert 'torchvision.models.resnet torch.Size([1, 3]) torch.Size([3, 8, 14])' in r.stdout.replace('ember.Size',
                                                                                                     'torch.Size')
    assert 'io+v2: Image (3, 2, 3)' in r.stdout
    assert "missing: ember does not implement the torchvision module 'torchvision.models.detection'" in r.stdout
