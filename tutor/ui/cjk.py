"""Line breaking for Chinese text in the app: the rules live in tutor/cjk.py (the CLI uses them
too, without Textual); here they are installed for Textual's Content as well."""

import textual.content

from tutor import cjk
from tutor.cjk import _rich_divide_line, divide_line, has_wide

__all__ = ["_rich_divide_line", "divide_line", "has_wide", "install"]


def install() -> None:
    """Use `divide_line` for every Rich Text and Textual Content wrapped from now on."""
    cjk.install()
    textual.content.divide_line = divide_line  # type: ignore[attr-defined]
