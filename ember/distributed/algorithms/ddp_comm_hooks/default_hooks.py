"""DDP communication hooks, torch's ``default_hooks``: ``hook(process_group, bucket) -> Future`` of the reduced
flat gradient, registered with ``DistributedDataParallel.register_comm_hook(process_group, hook)``.

- ``allreduce_hook``: what DDP does without a hook, divide by the world size and all-reduce.
- ``fp16_compress_hook`` / ``bf16_compress_hook``: send the bucket as float16 / bfloat16 (half the bytes),
  average, and write the result back into the bucket in its own dtype.
- ``fp16_compress_wrapper`` / ``bf16_compress_wrapper``: the same compression around another hook.

>>> # ddp.register_comm_hook(None, fp16_compress_hook)     # None: the default process group
"""
import ember
import ember.distributed as dist

__all__ = ['allreduce_hook', 'fp16_compress_hook', 'bf16_compress_hook', 'fp16_compress_wrapper',
           'bf16_compress_wrapper']


def _allreduce_fut(process_group, tensor):
    """Average ``tensor`` over the group in place, asynchronously: a Future of ``tensor``."""
    tensor.div_(dist.get_world_size(process_group))
    return dist.all_reduce(tensor, group=process_group, async_op=True).get_future().then(lambda f: tensor)


def allreduce_hook(process_group, bucket):
    """Average the bucket over ``process_group`` (None: the default group)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(dist.get_world_size(process_group))
    fut = dist.all_reduce(compressed, group=process_group, async_op=True).get_future()

    def decompress(_):
        buffer.copy_(compressed)
        return buffer
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average the bucket sent as float16: half the bytes of float32, at float16's precision."""
    return _compress_hook(ember.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Average the bucket sent as bfloat16 (float32's range, 8 bits of mantissa)."""
    return _compress_hook(ember.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(process_group, bucket):
        buffer = bucket.buffer()
        compressed = dist.GradBucket(bucket.index(), buffer.to(dtype), bucket.parameters(), bucket.gradients(),
                                     bucket.is_last())
        fut = hook(process_group, compressed)

        def back(f):
            r = f.value()
            buffer.copy_(r[0] if isinstance(r, (list, tuple)) else r)
            return buffer
        return fut.then(back)
    return wrapped


def fp16_compress_wrapper(hook):
    """``hook`` on a bucket rounded to float16."""
    return _compress_wrapper(ember.float16, hook)


def bf16_compress_wrapper(hook):
    """``hook`` on a bucket rounded to bfloat16."""
    return _compress_wrapper(ember.bfloat16, hook)
