"""The CPU autocast policy: which operators autocast casts, and to what (one table).

Each entry names an operator (all its overloads) and one of three policies, as
torch 2.13's CPU autocast lists (checked by running torch under
``torch.autocast('cpu', dtype=torch.bfloat16)``):

  ``lower``    floating inputs (float64 excepted) are cast to the autocast dtype
               (bfloat16 or float16) and the op runs there: the GEMM-bound ops;
  ``fp32``     floating inputs are cast to float32: ops whose accuracy suffers in
               low precision (reductions like prod, losses, factorizations);
  ``promote``  floating inputs are cast to the widest floating dtype among them,
               so ops that take several tensors accept mixed precisions;
  ``unchanged`` (ember only) no cast, and the operations inside run with autocast
               off: for what ember composes from listed ops where torch has one
               unlisted primitive (interpolate's upsample kernels), so the result
               keeps its input dtype as torch's does.

An operator not in the table runs unchanged under autocast: its output has the
dtype its inputs give it. Names that ember does not declare as operators (for
example losses ember writes in ``nn.functional`` as compositions) are kept so the
table stays torch's; ember's loss composites in ``nn.functional`` look their
policy up here by torch's name through ``_dispatch.autocast.autocast_composite``.
"""

_LOWER = ('conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear _convolution matmul conv_tbc '
          'mkldnn_rnn_layer conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention '
          '_native_multi_head_attention')

_FP32 = ('avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist trace '
         'view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse '
         'max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d '
         'replication_pad1d replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss '
         'nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss huber_loss '
         'margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div '
         'multilabel_margin_loss binary_cross_entropy_with_logits '
         # ember's fused forward of nll_loss / nll_loss2d (what torch's nll_loss decomposes into)
         'nll_loss_forward nll_loss2d_forward '
         'fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn '
         'fft_irfftn fft_hfft fft_ihfft '
         'linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh '
         'linalg_inv linalg_householder_product linalg_tensorinv linalg_tensorsolve fake_quantize_per_tensor_affine '
         'geqrf _lu_with_info qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d '
         'adaptive_max_pool3d multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd linalg_eig '
         'linalg_eigh linalg_lstsq linalg_inv_ex')

_PROMOTE = 'stack cat index_copy'

# ember's primitives and composites whose torch counterparts decompose into (or are) listed ops
_EMBER_LOWER = 'einsum'        # torch's einsum is CompositeImplicit over bmm
_EMBER_UNCHANGED = 'interpolate'

CPU_POLICY = {**{n: 'lower' for n in _LOWER.split()},
              **{n: 'fp32' for n in _FP32.split()},
              **{n: 'promote' for n in _PROMOTE.split()},
              **{n: 'lower' for n in _EMBER_LOWER.split()},
              **{n: 'unchanged' for n in _EMBER_UNCHANGED.split()}}
