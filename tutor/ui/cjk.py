"""Line breaking for Chinese text: the rules live in tutor/cjk.py (the CLI uses them too,
without Textual); this name stays for the app's imports."""

from tutor.cjk import _rich_divide_line, divide_line, has_wide, install

__all__ = ["_rich_divide_line", "divide_line", "has_wide", "install"]
