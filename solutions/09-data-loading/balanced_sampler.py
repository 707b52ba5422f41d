"""Reference solution: a sampler that draws every class equally often from an imbalanced dataset."""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        labels = torch.as_tensor(labels, dtype=torch.long).flatten()
        classes = torch.unique(labels)
        self.by_class = [(labels == c).nonzero().flatten() for c in classes]  # key
        self.generator = torch.Generator().manual_seed(seed)  # key

    def __iter__(self) -> Iterator[int]:
        g, n = self.generator, self.num_samples
        cls = torch.randint(len(self.by_class), (n,), generator=g)  # key
        out = torch.empty(n, dtype=torch.long)
        for c, idx in enumerate(self.by_class):
            where = cls == c
            pick = torch.randint(len(idx), (int(where.sum()),), generator=g)  # key
            out[where] = idx[pick]
        yield from out.tolist()

    def __len__(self) -> int:
        return self.num_samples
