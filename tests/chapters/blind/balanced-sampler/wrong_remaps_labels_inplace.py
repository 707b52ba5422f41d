"""WRONG: remaps the class ids to 0..k-1 in place on torch.as_tensor(labels), which IS the caller's tensor when labels come as an int64 tensor, against "the `labels` you are given stay as they were"; with negative ids the in-place remap also merges classes."""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        t = torch.as_tensor(labels).flatten()
        classes = torch.unique(t)
        for new_id, c in enumerate(classes.tolist()):  # ids -> 0..k-1
            t[t == c] = new_id
        self.num_classes = len(classes)
        self.by_class = [(t == c).nonzero().flatten() for c in range(self.num_classes)]
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self) -> Iterator[int]:
        g, n = self.generator, self.num_samples
        cls = torch.randint(self.num_classes, (n,), generator=g)
        out = torch.empty(n, dtype=torch.long)
        for c, idx in enumerate(self.by_class):
            where = cls == c
            out[where] = idx[torch.randint(len(idx), (int(where.sum()),), generator=g)]
        yield from out.tolist()

    def __len__(self) -> int:
        return self.num_samples
