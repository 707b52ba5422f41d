"""The garbage collector, paused while `tutor start` builds its first screen.

Start-up allocates a few hundred thousand objects that live as long as the process (modules,
classes, styles, widgets), and the cyclic collector scans them again and again as they
arrive: about 55 ms of a 370 ms start on a small CPU, one full collection alone 25 ms. The
launcher pauses it; the app resumes it after the first paint, with start-up's objects set
aside (`gc.freeze()`): resumed plainly, its first collection would scan all of them at once
(25-45 ms, right after the paint). Two seconds later `settle` collects once what start-up
threw away and sets the survivors aside again, so the collections that run while the learner
types scan only new objects.

While the learner types, each key allocates a few thousand tracked objects (strips, segments,
messages): with the default threshold (700) that was ~5 young collections a key and a full one
every ~25 keys (25-90 ms, a visible stall). Resumed, the collector waits for 20,000
allocations before a young collection; cycles are still collected, a little later.

Only the `tutor` command pauses it: tests and the runner's processes never do.
"""

from __future__ import annotations

import gc

_paused = False
YOUNG_THRESHOLD = 20_000


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> bool:
    """Turn the collector back on if `pause` turned it off; True if it did."""
    global _paused
    if not _paused:
        return False
    _paused = False
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 10, 10)
    gc.enable()
    return True


def settle() -> None:
    """Collect start-up's garbage once and set the long-lived objects aside."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
