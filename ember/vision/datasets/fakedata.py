"""FakeData: random images (from ember's RNG, seeded per index) and labels, for smoke runs."""
import ember

from .vision import VisionDataset


class FakeData(VisionDataset):
    """``size`` random PIL images of ``image_size`` (C, H, W); item ``i`` is the same on every read.

    >>> len(FakeData(size=3, image_size=(3, 4, 4)))
    3
    """

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes, self.image_size, self.random_offset = size, num_classes, image_size, random_offset

    def __getitem__(self, index):
        from ..transforms import functional as F
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        state = ember.get_rng_state()       # each item from its own seed, leaving the caller's stream alone
        ember.manual_seed(index + self.random_offset)
        img = ember.randn(*self.image_size)
        target = ember.randint(0, self.num_classes, size=(1,), dtype=ember.long)[0]
        ember.set_rng_state(state)
        img = F.to_pil_image(img)
        img, target = self._apply_transforms(img, target)
        return img, target.item()

    def __len__(self):
        return self.size
