"""HistogramObserver: a running histogram of the values, and torch's L2-error search for the range to quantize
(caffe2's NonlinearQuantizationParamsSearch), which cuts outliers off. Public API only."""
import math
import warnings

import numpy as np

import ember
from .observer import UniformQuantizationObserverBase

_F32 = np.float32


class HistogramObserver(UniformQuantizationObserverBase):
    """Records a histogram of ``bins`` bins over the running range; ``calculate_qparams`` picks the sub-range whose
    quantization has the least L2 error, then computes the parameters of that range as MinMaxObserver does.

    >>> obs = HistogramObserver()
    >>> _ = obs(ember.linspace(-1, 1, 100))
    >>> obs.calculate_qparams()[1]
    tensor([128], dtype=ember.int32)
    """

    def __init__(self, bins=2048, dtype=ember.quint8, qscheme=ember.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=ember.finfo(ember.float32).eps,
                 is_dynamic=False, **kwargs):
        if qscheme not in (ember.per_tensor_affine, ember.per_tensor_symmetric):
            raise NotImplementedError("HistogramObserver's qscheme only support torch.per_tensor_symmetric "
                                      "and torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.bins = bins
        self.register_buffer('histogram', ember.zeros(bins))
        self.register_buffer('min_val', ember.tensor(float('inf')))
        self.register_buffer('max_val', ember.tensor(float('-inf')))
        self.dst_nbins = 2 ** (32 if dtype == ember.qint32 else 8)
        self.upsample_rate = 16

    @staticmethod
    def _get_norm(delta_begin, delta_end, density):
        return density * ((delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / 3)

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_w = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_w == 0.0:
            return 0.0
        src_begin = (ember.arange(self.bins) - next_start_bin) * bin_width
        src_end = src_begin + bin_width
        dst_of_begin = ember.clamp(ember.div(src_begin, dst_w, rounding_mode='floor'), 0, self.dst_nbins - 1)
        dst_of_end = ember.clamp(ember.div(src_end, dst_w, rounding_mode='floor'), 0, self.dst_nbins - 1)
        density = self.histogram / bin_width
        norm = ember.zeros(self.bins)
        norm += self._get_norm(src_begin - (dst_of_begin + 0.5) * dst_w, ember.ones(self.bins) * (dst_w / 2), density)
        norm += (dst_of_end - dst_of_begin - 1) * self._get_norm(ember.tensor(-dst_w / 2), ember.tensor(dst_w / 2),
                                                                 density)
        end_center = dst_of_end * dst_w + dst_w / 2
        norm += self._get_norm(ember.tensor(-dst_w / 2), src_end - end_center, density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        """The range [new_min, new_max] that minimizes the quantization error (torch's search, its float32
        comparisons included)."""
        bin_width = (self.max_val - self.min_val) / self.bins
        total = ember.sum(self.histogram).item()
        csum = np.asarray(ember.cumsum(self.histogram, dim=0).tolist(), _F32)
        alpha, beta, start, end, norm_min = 0.0, 1.0, 0, self.bins - 1, math.inf
        while alpha < beta:
            next_alpha, next_beta = alpha + 1e-5, beta - 1e-5
            lo, hi = _F32(next_alpha * total), _F32(next_beta * total)
            l, r = start, end
            while l < end and csum[l] < lo:
                l += 1
            while r > start and csum[r] > hi:
                r -= 1
            nstart, nend = start, end
            if (l - start) > (end - r):
                nstart, alpha = l, next_alpha
            else:
                nend, beta = r, next_beta
            if nstart == start and nend == end:
                continue
            norm = self._compute_quantization_error(nstart, nend)
            if norm > norm_min:
                break
            norm_min, start, end = norm, nstart, nend
        return self.min_val + bin_width * start, self.min_val + bin_width * (end + 1)

    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        histogram = histogram.repeat_interleave(self.upsample_rate) / self.upsample_rate
        bin_size = (orig_max - orig_min) / (self.bins * self.upsample_rate)
        mids = ember.linspace(orig_min.item(), orig_max.item(), self.bins * self.upsample_rate + 1)[:-1] + 0.5 * bin_size
        bounds = ember.linspace(update_min.item(), update_max.item(), self.bins + 1)
        buckets = (ember.bucketize(mids, bounds, right=True) - 1).clamp(0, self.bins - 1)
        return ember.bincount(buckets, weights=histogram, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, update_hist, update_min, update_max):
        if update_min == orig_min and update_max == orig_max:
            return orig_hist + update_hist
        if orig_min == orig_max:
            moved = ember.histc(orig_min, bins=self.bins, min=update_min.item(), max=update_max.item())
            return moved * ember.sum(orig_hist) + update_hist
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max, update_min, update_max)

    def _set(self, name, value):
        buf = getattr(self, name)
        buf.detach_().resize_(value.shape)
        buf.copy_(value)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = ember.aminmax(x)
        if x_min.item() == -math.inf or x_max.item() == math.inf:
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != math.inf]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = ember.aminmax(x)
        if self.min_val.item() == math.inf or self.max_val.item() == -math.inf:
            self._set('min_val', x_min)
            self._set('max_val', x_max)
            self._set('histogram', ember.histc(x, self.bins, min=x_min.item(), max=x_max.item()))
            return x_orig
        new_min, new_max = ember.minimum(self.min_val, x_min), ember.maximum(self.max_val, x_max)
        update = ember.histc(x, self.bins, min=new_min.item(), max=new_max.item())
        combined = self._combine_histograms(self.histogram, self.min_val, self.max_val, update, new_min, new_max)
        self._set('histogram', combined.to(self.histogram.dtype))
        self._set('min_val', new_min)
        self._set('max_val', new_max)
        return x_orig

    def calculate_qparams(self):
        if self.min_val.item() == math.inf and self.max_val.item() == -math.inf:
            warnings.warn("must run observer before calling calculate_qparams. Returning default scale and zero "
                          "point ", stacklevel=2)
            return ember.tensor([1.0]), ember.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the number of bins supplied "
                                 "while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self):
        return f'min_val={self.min_val}, max_val={self.max_val}'
