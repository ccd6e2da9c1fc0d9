"""Broadcasting of shapes, torch's rule (a core rule like dtype promotion: meta functions and public functions
both use it)."""


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes; the error names the last mismatching dimension, as torch's (which compares
    from the trailing dimension) does."""
    out = list(shapes[0])
    for s in shapes[1:]:
        if len(s) > len(out):
            out = [1] * (len(s) - len(out)) + out
        off = len(out) - len(s)
        for i in reversed(range(len(s))):
            n = s[i]
            m = out[off + i]
            if m != n:
                if m == 1:
                    out[off + i] = n
                elif n != 1:
                    dim = off + i - len(out)
                    raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b ({n}) at "
                                       f"non-singleton dimension {len(out) + dim}")
    return tuple(out)
