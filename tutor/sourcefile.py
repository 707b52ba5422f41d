"""Reading and writing Python source the way Python itself does (PEP 263).

A learner's file may declare another encoding (`# -*- coding: latin-1 -*-`); reading it as
UTF-8 would fail or garble it, and writing it back as UTF-8 under that declaration would make
Python read it wrongly. Plain Python, no torch, no Textual.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from pathlib import Path

_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)


def decode(data: bytes) -> str:
    """Source bytes as text, honouring a BOM or a coding declaration; undecodable bytes are
    shown as replacement characters rather than failing."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown encoding name in the cookie
        encoding = "utf-8"
    if encoding == "utf-8-sig":
        data = data.removeprefix(codecs.BOM_UTF8)
        encoding = "utf-8"
    return data.decode(encoding, errors="replace")


def read(path: Path) -> str:
    return decode(path.read_bytes())


def encode(text: str) -> bytes:
    """Text as the bytes its own coding declaration asks for (UTF-8 when it has none, or when
    the text does not fit the declared encoding)."""
    for line in text.splitlines()[:2]:
        m = _COOKIE.match(line)
        if m:
            try:
                codecs.lookup(m.group(1))
                return text.encode(m.group(1))
            except (LookupError, UnicodeEncodeError):
                break
    return text.encode("utf-8")
