"""WRONG: reseeds the GLOBAL torch RNG in every __iter__ (torch.manual_seed(seed + epoch)) and draws from it: the orders repeat and epochs differ, but each pass resets everybody else's randomness, what the stub forbids ("never from the global np.random or torch RNG") and the guide warns about."""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        labels = torch.as_tensor(labels, dtype=torch.long).flatten()
        self.by_class = [(labels == c).nonzero().flatten() for c in torch.unique(labels)]
        self.seed = seed
        self.epoch = 0

    def __iter__(self) -> Iterator[int]:
        # Like DistributedSampler: seed + epoch, so every run repeats and every epoch differs.
        torch.manual_seed(self.seed + self.epoch)
        self.epoch += 1
        n = self.num_samples
        cls = torch.randint(len(self.by_class), (n,))
        out = torch.empty(n, dtype=torch.long)
        for c, idx in enumerate(self.by_class):
            where = cls == c
            out[where] = idx[torch.randint(len(idx), (int(where.sum()),))]
        yield from out.tolist()

    def __len__(self) -> int:
        return self.num_samples
