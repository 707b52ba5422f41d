"""Peak tensor memory of a call (runner processes only).

CUDA: the caching allocator's own peak counter. CPU: the profiler's memory events, summed in
time order (tracemalloc cannot see torch's allocator); the peak of that running sum is the
most tensor memory that was live at once.
"""

from __future__ import annotations

import gc
import itertools
from typing import Any, Callable

import torch


def peak_bytes(fn: Callable[[], Any], device: torch.device) -> int:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        result = fn()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del result
        return int(peak)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
        del result
    events = prof.profiler.kineto_results.events()  # type: ignore[union-attr]
    sizes = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]")
    return int(max(itertools.accumulate(n for _, n in sizes), default=0))
