"""Shared by this chapter's checkers."""

import random
from collections import Counter

import numpy as np
import torch

# What a learner calls to reseed each global generator, in the order they are reported.
GLOBAL_RNGS = ("torch.manual_seed", "random.seed", "np.random.seed")
_START = (0x5EED_2468, 0x5EED_1357)  # two start seeds no code would pick itself


def _states():
    return torch.get_rng_state(), random.getstate(), np.random.get_state()


def _same(name, a, b):
    if name == "torch.manual_seed":
        return torch.equal(a, b)
    if name == "np.random.seed":
        return a[0] == b[0] and np.array_equal(a[1], b[1]) and tuple(a[2:]) == tuple(b[2:])
    return a == b


def reseeded_global_rngs(run):
    """The global generators (torch, Python's random, NumPy) that `run()` reseeds, however often
    and with whatever seed (a seed + epoch differs every time). Drawing from them is fine.

    Three signs, any one is enough: torch.initial_seed() is no longer the start seed; random.seed
    or np.random.seed was called; or `run()`, gone twice from two different states of a
    generator, left the same end state both times (set back to a fixed state). The caller's
    generator states are put back afterwards."""
    saved = _states()
    calls = Counter()
    originals = {"random.seed": (random, random.seed), "np.random.seed": (np.random, np.random.seed)}

    def counting(name, fn):
        def seed(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)

        return seed

    ends, reseeded = [], set()
    try:
        for start in _START:
            torch.manual_seed(start)
            random.seed(start)
            np.random.seed(start % 2**32)
            for name, (owner, fn) in originals.items():
                owner.seed = counting(name, fn)
            try:
                run()
            finally:
                for owner, fn in originals.values():
                    owner.seed = fn
            if torch.initial_seed() != start:
                reseeded.add("torch.manual_seed")
            ends.append(_states())
    finally:
        torch.set_rng_state(saved[0])
        random.setstate(saved[1])
        np.random.set_state(saved[2])
    reseeded |= {name for name in calls if calls[name]}
    reseeded |= {name for name, a, b in zip(GLOBAL_RNGS, ends[0], ends[1]) if _same(name, a, b)}
    return [name for name in GLOBAL_RNGS if name in reseeded]
