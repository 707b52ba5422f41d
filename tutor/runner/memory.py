"""Peak tensor memory of a call, and how it rose and fell (runner processes only).

CUDA: the caching allocator's own peak counter. CPU: the profiler's memory events, summed in
time order (tracemalloc cannot see torch's allocator); the peak of that running sum is the
most tensor memory that was live at once. The timeline comes from the same profiler events on
both devices (the allocator reports every block it hands out or takes back, CUDA's included),
thinned to a few dozen points that keep every peak and valley.
"""

from __future__ import annotations

import gc
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

TIMELINE_POINTS = 40  # at most this many [t_s, bytes] points per side


@dataclass
class Memory:
    """Peak tensor memory (bytes) of one call, learner and reference, measured one after another;
    with `timeline`, how the live bytes of each evolved ([t_s, bytes] points)."""

    learner_bytes: int
    reference_bytes: int
    device: str
    timeline: dict[str, list[list[float]]] | None = field(default=None)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "learner_bytes": self.learner_bytes,
            "reference_bytes": self.reference_bytes,
            "device": self.device,
        }
        if self.timeline is not None:
            out["timeline"] = self.timeline
        return out


def peak_bytes(fn: Callable[[], Any], device: torch.device) -> int:
    return measure(fn, device)[0]


def measure(fn: Callable[[], Any], device: torch.device) -> tuple[int, list[list[float]]]:
    """(peak bytes above what was live before, timeline of live bytes) for one call of `fn`."""
    from torch.profiler import ProfilerActivity, profile

    gc.collect()
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
        if cuda:
            torch.cuda.synchronize(device)
        del result
    events = prof.profiler.kineto_results.events()
    t0 = min((e.start_ns() for e in events), default=0)
    kind = torch.device(device).type
    changes = sorted(
        (e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]" and _device_type(e) in (kind, None)
    )
    live = list(itertools.accumulate(n for _, n in changes))
    points = [[0.0, 0]] + [[(t - t0) / 1e9, b] for (t, _), b in zip(changes, live)]
    if cuda:
        peak = torch.cuda.max_memory_allocated(device) - base
    else:
        peak = max(live, default=0)
    return int(max(peak, 0)), thin(points)


def _device_type(event: Any) -> str | None:
    try:
        return str(event.device_type()).rsplit(".", 1)[-1].lower()
    except (AttributeError, RuntimeError):
        return None


def thin(points: list[list[float]], limit: int = TIMELINE_POINTS) -> list[list[float]]:
    """At most `limit` points: split time into limit/2 buckets, keep each bucket's lowest and
    highest point in time order, so the shape (every peak and valley) survives."""
    if len(points) <= limit:
        return [[round(t, 6), int(b)] for t, b in points]
    start, end = points[0][0], points[-1][0]
    buckets = max(1, limit // 2)
    width = (end - start) / buckets or 1.0
    groups: dict[int, list[list[float]]] = {}
    for p in points:
        groups.setdefault(min(buckets - 1, int((p[0] - start) / width)), []).append(p)
    out: list[list[float]] = []
    for i in sorted(groups):
        g = groups[i]
        keep = {id(min(g, key=lambda p: p[1])): None, id(max(g, key=lambda p: p[1])): None}
        out.extend(p for p in g if id(p) in keep)
    return [[round(t, 6), int(b)] for t, b in out[:limit]]


def compare(
    learner: Callable[[], Any], reference: Callable[[], Any], device: torch.device, timeline: bool = True
) -> Memory:
    """Peak memory of learner and reference, each in its own measured call, with timelines."""
    mine, mine_line = measure(learner, device)
    ref, ref_line = measure(reference, device)
    lines = {"learner": mine_line, "reference": ref_line} if timeline else None
    return Memory(mine, ref, device.type, lines)
