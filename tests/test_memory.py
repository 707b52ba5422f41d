"""Peak memory and its timeline (tutor.runner.memory), measured on the CPU in this process."""

from __future__ import annotations

import torch

from tutor.runner import memory


def _sawtooth() -> object:
    """Three steps of 1 MB, 2 MB, 3 MB live at once, each freed before the next."""
    total = 0.0
    for n in (1, 2, 3):
        x = torch.ones(n * 250_000)  # n MB of float32
        total += float(x[0])
        del x
    return total


def test_peak_is_the_largest_live_allocation_and_the_timeline_shows_the_steps() -> None:
    memory.measure(_sawtooth, torch.device("cpu"))  # the profiler's first run warms it up
    peak, line = memory.measure(_sawtooth, torch.device("cpu"))
    assert abs(peak - 3_000_000) <= 0.02 * 3_000_000
    assert line[0] == [0.0, 0]
    assert len(line) <= memory.TIMELINE_POINTS
    assert max(b for _, b in line) == peak
    times = [t for t, _ in line]
    assert times == sorted(times)
    levels = [b for _, b in line]
    # Each step is freed before the next: memory falls back near zero between the peaks.
    first_3mb = next(i for i, b in enumerate(levels) if b >= 2_900_000)
    assert any(b < 1_100_000 for b in levels[1:first_3mb]), levels


def test_compare_reports_both_sides_with_timelines() -> None:
    m = memory.compare(lambda: torch.ones(500_000).sum(), lambda: torch.ones(1_000_000).sum(), torch.device("cpu"))
    d = m.as_dict()
    assert d["device"] == "cpu"
    assert abs(d["learner_bytes"] - 2_000_000) < 50_000
    assert abs(d["reference_bytes"] - 4_000_000) < 50_000
    assert set(d["timeline"]) == {"learner", "reference"}
    assert max(b for _, b in d["timeline"]["reference"]) == d["reference_bytes"]


def test_thin_keeps_every_peak_and_valley_within_the_limit() -> None:
    points = [[i / 1000, (i % 100) * 10 + (5000 if i == 537 else 0)] for i in range(1000)]
    thinned = memory.thin(points, limit=40)
    assert len(thinned) <= 40
    assert max(b for _, b in thinned) == 5000 + 370
    assert min(b for _, b in thinned) == 0
    assert [t for t, _ in thinned] == sorted(t for t, _ in thinned)
    short = [[0.0, 0], [0.5, 10]]
    assert memory.thin(short) == short
