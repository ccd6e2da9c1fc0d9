"""The device registry is process-wide: tests that register devices take a snapshot first and restore it."""


def snapshot():
    """A function that puts the device registry (and the PrivateUse1 name) back as it is now."""
    from ember._core import device as _device
    import ember.utils as _utils
    saved = dict(_device._REGISTRY), dict(_device._BY_KEY), list(_utils._privateuse1)

    def restore():
        _device._REGISTRY.clear()
        _device._REGISTRY.update(saved[0])
        _device._BY_KEY.clear()
        _device._BY_KEY.update(saved[1])
        _utils._privateuse1[:] = saved[2]
        _device.device._cache.clear()
    return restore
