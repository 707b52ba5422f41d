"""Learner text (program output, tracebacks, failure reasons) made safe to show.

Learner code can print anything: terminal escape sequences that clear the screen or write to
the clipboard (OSC 52), bare carriage returns, other control bytes. Everything that shows learner
text passes it through `clean()` first, and shows the result as plain text, never as markup.
"""

from __future__ import annotations

import re

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other two-byte ESC sequences, and the C1
# single-byte forms of CSI/OSC.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|(?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c)"  # OSC, terminated by BEL or ST
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c)"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]",  # any other escape
    re.DOTALL,
)
# C0 controls except tab and newline, DEL, and the C1 range.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """`text` without terminal escape sequences; other control characters shown as `\\xNN`.

    A lone carriage return (progress bars) becomes a newline so no line overwrites another."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
