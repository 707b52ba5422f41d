"""Keystroke-to-repaint latency of TypeAlong on a 300-line passage (target: p95 < 16 ms).

    python bench/bench_typing.py [--lines 300] [--keys 300] [--gap-ms 60]

Headless app (`run_test`). For each key: take the time, hand a Key event to the driver (as a
real terminal would), let the app run for `gap` seconds (a fast typist's pace), and take the
time the first repaint (compositor update) after the key handler ran finished. Textual repaints at
most 60 times a second, so keys closer than ~17 ms apart would also measure frame pacing; at
human speed a repaint starts as soon as the key is handled.

The caret starts 25 lines in, so the keys cross lines and scroll the view. Every 25th key is a
wrong character followed by a backspace. Figures: key->repaint latency, and the part spent in
the widget's key handler.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Footer

from tutor.progress import Progress
from tutor.ui.widgets.typealong import TypeAlong

BLOCK = '''\
class Block{n}(torch.nn.Module):
    """A residual MLP block, number {n}."""

    def __init__(self, dim: int, hidden: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, dim)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(self.norm(x))
        h = torch.nn.functional.gelu(h, approximate="tanh")
        if self.training:
            h = self.dropout(h)
        return x + self.down(h)

'''


def passage(lines: int) -> str:
    text, n = "import torch\n\n", 0
    while text.count("\n") < lines:
        text += BLOCK.format(n=n)
        n += 1
    return "\n".join(text.split("\n")[:lines])


class Host(App[None]):
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, target: str, progress: Progress) -> None:
        super().__init__()
        self.target, self.progress = target, progress

    def compose(self) -> ComposeResult:
        yield TypeAlong("bench/passage", self.target, self.progress)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TypeAlong).focus()


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def run(
    lines: int, keys: int, gap: float, size: tuple[int, int], show_slow: bool = False
) -> dict[str, list[float]]:
    target = passage(lines)
    app = Host(target, Progress(Path(tempfile.mkdtemp())))
    repaints: list[float] = []
    handler: list[float] = []
    handled_at: list[float] = []
    async with app.run_test(size=size) as pilot:
        ta = app.query_one(TypeAlong)
        screen = app.screen
        # Time-stamp the end of every repaint (both the partial and the layout path).
        for name in ("_compositor_refresh", "_refresh_layout"):
            original = getattr(screen, name)

            def stamped(*args, _original=original, **kwargs):
                result = _original(*args, **kwargs)
                repaints.append(time.perf_counter())
                return result

            setattr(screen, name, stamped)
        apply = ta._apply

        def timed_apply(edit):
            t = time.perf_counter()
            apply(edit)
            handled_at.append(time.perf_counter())
            handler.append(handled_at[-1] - t)

        ta._apply = timed_apply
        while ta.session.caret_row < 25:  # start mid-passage, not measured
            ta.session.hint()
        ta.query_one("TypingArea").refresh()
        ta.query_one("TypingArea").follow_caret()
        await pilot.pause()

        latencies: list[float] = []
        s = ta.session
        driver = app._driver
        assert driver is not None
        for i in range(keys):
            if s.finished:
                break
            expected = s.target[s.caret]
            if i % 25 == 24:
                key, char = "z", "z"  # a mistake; the next key fixes it
            elif s.caret and s.status_at(s.caret - 1) == "incorrect":
                key, char = "backspace", None
            elif expected == "\n":
                key, char = "enter", "\r"
            elif expected == " ":
                key, char = "space", " "
            else:
                key, char = expected, expected
            event = events.Key(key, char)
            event.set_sender(app)
            handler_before = len(handler)
            repaints.clear()
            t0 = time.perf_counter()
            driver.send_message(event)
            await asyncio.sleep(gap)
            if len(handler) == handler_before:
                raise RuntimeError(f"key {key!r} was not handled")
            # The first repaint after the handler is the one that shows the key.
            done = [t for t in repaints if t >= handled_at[-1]]
            latencies.append((done[0] if done else time.perf_counter()) - t0)
            if show_slow and latencies[-1] > 0.016:
                print(
                    f"  slow: key {i} {key!r}: handled after {(handled_at[-1] - t0) * 1000:.1f} ms, "
                    f"repaints at {[round((t - t0) * 1000, 1) for t in repaints]} ms"
                )
    return {"latency": latencies, "handler": handler}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--gap-ms", type=float, default=60.0)
    parser.add_argument("--size", default="100x30", help="terminal COLSxROWS")
    parser.add_argument("--show-slow", action="store_true", help="print every key over 16 ms")
    args = parser.parse_args()
    cols, rows = (int(v) for v in args.size.split("x"))
    figures = asyncio.run(run(args.lines, args.keys, args.gap_ms / 1000, (cols, rows), args.show_slow))
    print(
        f"TypeAlong, {args.lines}-line passage, {len(figures['latency'])} keys, "
        f"{args.gap_ms:.0f} ms apart, terminal {cols}x{rows}"
    )
    for name, label in (("latency", "key -> repaint"), ("handler", "key handler")):
        ms = [v * 1000 for v in figures[name]]
        print(f"  {label:15s} p50 {pct(ms, 50):6.2f} ms   p95 {pct(ms, 95):6.2f} ms   max {max(ms):6.2f} ms")


if __name__ == "__main__":
    main()
