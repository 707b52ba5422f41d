"""Shared by this chapter's checkers."""

import sys


def traced_vmap(fn, *args):
    """Call fn(*args) and also report whether it went through torch.func.vmap (every vmap entry
    point calls torch._functorch.vmap.vmap_impl). Watches calls; patches nothing."""
    seen = []

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "vmap_impl":
            seen.append(True)

    previous = sys.getprofile()
    sys.setprofile(profiler)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(previous)
    return out, bool(seen)
