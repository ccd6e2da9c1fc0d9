"""The base of every ember.vision dataset: a root folder, optional transforms, and a readable repr.

Datasets never download (ember runs offline); a dataset whose files are missing raises a
RuntimeError naming the folder and the files to put there, whatever ``download`` says, and
``download=True`` with the files present does nothing, as torchvision.
"""
import os

from ember.utils.data import Dataset
from .utils import calculate_md5, check_integrity  # noqa: F401  (their home was here)


class VisionDataset(Dataset):
    """``root`` plus ``transform`` (input), ``target_transform`` (label) or ``transforms`` (both)."""

    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_separate = transform is not None or target_transform is not None
        if transforms is not None and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform, self.target_transform = transform, target_transform
        if has_separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index):
        raise NotImplementedError

    def _apply_transforms(self, input, target):
        """``(transform(input), target_transform(target))``, each where given: every dataset's last step."""
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __len__(self):
        raise NotImplementedError

    def extra_repr(self):
        return ''

    def __repr__(self):
        lines = [f'Number of datapoints: {self.__len__()}']
        if self.root is not None:
            lines.append(f'Root location: {self.root}')
        lines += [l for l in self.extra_repr().splitlines() if l]
        if self.transforms is not None:
            lines += [repr(self.transforms)]
        body = '\n'.join(' ' * self._repr_indent + l for l in lines)
        return f'Dataset {self.__class__.__name__}\n{body}'


class StandardTransform:
    """``transform`` applied to the input and ``target_transform`` to the target (either may be None): what a
    dataset given the two separately keeps as its ``transforms``."""

    def __init__(self, transform=None, target_transform=None):
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    @staticmethod
    def _format_transform_repr(transform, head):
        lines = repr(transform).splitlines()
        return [f'{head}{lines[0]}'] + [' ' * len(head) + line for line in lines[1:]]

    def __repr__(self):
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += self._format_transform_repr(self.transform, 'Transform: ')
        if self.target_transform is not None:
            body += self._format_transform_repr(self.target_transform, 'Target transform: ')
        return '\n'.join(body)


def missing_files_error(name, folder, files, urls=(), note=''):
    """The error for absent data: where to put which files (ember.vision never downloads)."""
    where = '\n'.join(f'  {os.path.join(folder, f)}' for f in files)
    src = ('\nThey are published at:\n' + '\n'.join(f'  {u}' for u in urls)) if urls else ''
    return RuntimeError(f"Dataset {name} not found. ember.vision does not download datasets (no network access "
                        f"is assumed); put these files in place{note}:\n{where}{src}")
