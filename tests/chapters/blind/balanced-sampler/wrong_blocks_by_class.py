"""WRONG: gives every class an exact quota but yields the draws class by class (all of class A, then all of class B, ...), so every DataLoader batch holds a single class; the guide's two-step draw ("draw a class, then an index of that class") makes each position's class random, and "each class drawn equally often" is meant per pass, not in blocks."""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        labels = torch.as_tensor(labels, dtype=torch.long).flatten()
        self.by_class = [(labels == c).nonzero().flatten() for c in torch.unique(labels)]
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self) -> Iterator[int]:
        g, k = self.generator, len(self.by_class)
        # Exactly equal shares: num_samples // k per class, the remainder to the first classes.
        quotas = [self.num_samples // k + (c < self.num_samples % k) for c in range(k)]
        for idx, quota in zip(self.by_class, quotas):
            pick = torch.randint(len(idx), (quota,), generator=g)
            yield from idx[pick].tolist()

    def __len__(self) -> int:
        return self.num_samples
