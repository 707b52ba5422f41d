"""WRONG: the torch.Generator is a class attribute, so every sampler shares one stream: building a second sampler reseeds the first one's generator and interleaved passes steal each other's draws, breaking "two samplers built with the same labels and seed yield the same order" and "a different seed gives a different order"."""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    generator = torch.Generator()  # the sampler's own source of randomness

    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        labels = torch.as_tensor(labels, dtype=torch.long).flatten()
        self.by_class = [(labels == c).nonzero().flatten() for c in torch.unique(labels)]
        self.generator.manual_seed(seed)

    def __iter__(self) -> Iterator[int]:
        g, n = self.generator, self.num_samples
        cls = torch.randint(len(self.by_class), (n,), generator=g)
        out = torch.empty(n, dtype=torch.long)
        for c, idx in enumerate(self.by_class):
            where = cls == c
            out[where] = idx[torch.randint(len(idx), (int(where.sum()),), generator=g)]
        yield from out.tolist()

    def __len__(self) -> int:
        return self.num_samples
