"""Every exercise's input seeds: a small pool fixed by its id.

A learner's check draws its seed from this pool, the chapter tests and `tutor dev mutate` run
the reference and the mutants on the same seeds, so every verdict a learner can get was drawn
from inputs the suite has seen the reference pass on (a threshold that a rare draw would
miss cannot turn a correct answer into a failure). `tutor check --seed N` still runs any seed.
"""

from __future__ import annotations

import secrets
import zlib

POOL = 3


def seed_pool(exercise_id: str, n: int = POOL) -> list[int]:
    """The exercise's first `n` seeds (the same on every machine and in every release)."""
    start = zlib.crc32(exercise_id.encode("utf-8"))
    return [(start + k * 7_919) % 2**31 for k in range(n)]


def draw(exercise_id: str) -> int:
    """A seed for one check of `exercise_id`, from its pool."""
    return secrets.choice(seed_pool(exercise_id))
