"""RIGHT: groups the items once with a stable argsort on the class index plus per-class offsets (no per-class index lists), then draws class ids and uniform positions inside the chosen class in one vectorised step."""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        labels = torch.as_tensor(labels).flatten()
        _, inverse, counts = torch.unique(labels, return_inverse=True, return_counts=True)
        self.grouped = torch.argsort(inverse, stable=True)  # dataset indices, class after class
        self.counts = counts
        self.starts = torch.cumsum(counts, 0) - counts  # where each class begins in `grouped`
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self) -> Iterator[int]:
        g, n = self.generator, self.num_samples
        cls = torch.randint(len(self.counts), (n,), generator=g)
        size = self.counts[cls]
        offset = (torch.rand(n, generator=g, dtype=torch.float64) * size).long()
        offset = torch.minimum(offset, size - 1)
        yield from self.grouped[self.starts[cls] + offset].tolist()

    def __len__(self) -> int:
        return self.num_samples
