"""Exercise: a sampler that draws every class equally often from an imbalanced dataset.

The labels come in as an argument (never read them by loading every item), the order comes from
the sampler's own torch.Generator (never from the global np.random or torch RNG), and one pass
yields `num_samples` indices.
"""

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class BalancedClassSampler(Sampler[int]):
    def __init__(self, labels: Sequence[int] | torch.Tensor, num_samples: int, seed: int = 0) -> None:
        self.num_samples = num_samples
        # TODO: turn `labels` into a 1-D int64 tensor, find its classes (they need not be
        # 0..k-1) and keep, for each class, the tensor of dataset indices with that label.
        # TODO: create this sampler's own torch.Generator, seeded with `seed`, once, here.
        raise NotImplementedError("TODO: group the indices by class and create the generator")

    def __iter__(self) -> Iterator[int]:
        # TODO: draw num_samples classes uniformly, then for each draw a random index of that
        # class, using only self's generator; yield the indices as Python ints.
        raise NotImplementedError("TODO: yield balanced indices")

    def __len__(self) -> int:
        # TODO: how many indices does one pass yield?
        raise NotImplementedError("TODO: return the number of indices per pass")
