"""torch.fx.experimental: ``proxy_tensor.make_fx`` (graphs of aten operators) and ``symbolic_shapes``'s errors."""
