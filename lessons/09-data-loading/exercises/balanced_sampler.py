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
        # TODO: prepare what every pass needs, once: which dataset indices belong to which class.
        # Watch out: class ids can be any integers (not only 0..k-1), a class may have a single
        # item, and the caller's `labels` must not be changed.
        # TODO: this sampler's own source of randomness, seeded with `seed`. Other code in the
        # training script draws from the global random generators; that must not change the order.
        raise NotImplementedError("TODO: group the indices by class and set up the randomness")

    def __iter__(self) -> Iterator[int]:
        # TODO: yield num_samples dataset indices (Python ints): every class equally often, and
        # within a class every item equally likely, however few items it has.
        # Watch out: the next pass (epoch) must give a new order, and two samplers with the same
        # labels and seed must give the same orders.
        raise NotImplementedError("TODO: yield balanced indices")

    def __len__(self) -> int:
        # TODO: how many indices does one pass yield?
        raise NotImplementedError("TODO: return the number of indices per pass")
