"""RIGHT: the built-in idea by hand with torch.multinomial: each item weighted 1/count(its class), drawn with replacement from the sampler's own generator, instead of drawing a class and then an index."""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        labels = torch.as_tensor(labels).flatten()
        _, inverse, counts = torch.unique(labels, return_inverse=True, return_counts=True)
        self.weights = 1.0 / counts[inverse].double()  # every class gets the same total weight
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self) -> Iterator[int]:
        picks = torch.multinomial(self.weights, self.num_samples, replacement=True, generator=self.generator)
        return iter(picks.tolist())

    def __len__(self) -> int:
        return self.num_samples
