"""Entry point of the `tutor` command (and `python -m tutor`): the CLI, with the garbage
collector paused from the first import until `tutor start` has painted (see tutor.gcpause)."""

from __future__ import annotations

from collections.abc import Sequence

from tutor import gcpause


def main(argv: Sequence[str] | None = None) -> int:
    gcpause.pause()
    try:
        from tutor.cli import main as cli_main

        return cli_main(argv)
    finally:
        gcpause.resume()
