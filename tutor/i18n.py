"""The language tutor speaks, and the message catalogue of everything it says itself.

Lesson text is translated as data (`guide/<lang>/`, `i18n/<lang>.toml`); this module covers
tutor's own words: the UI, the CLI, the runner's and the judge's reasons. Messages are marked
with `_("...")` (English is the message id, `{name}` placeholders filled by `.format`), and
extracted with Babel (`pybabel extract -F babel.cfg -o tutor/locale/tutor.pot .`). The
catalogues are `tutor/locale/<lang>/LC_MESSAGES/tutor.po`, read with Babel at first use: no
compiled `.mo` file can fall out of date. Plain Python: no torch, no Textual.

The language comes from, in order: `tutor --lang`, `TUTOR_LANG`, the preference remembered
from the app's language switch, then the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`), else English.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT = "en"
_LOCALE_DIR = Path(__file__).resolve().parent / "locale"

_current = DEFAULT
_tables: dict[str, dict[str, str]] = {}
_lock = threading.Lock()


def normalize(value: str | None) -> str | None:
    """'zh_CN.UTF-8', 'zh-Hans', 'ZH' -> 'zh'; 'en_US' -> 'en'; unknown or empty -> None."""
    if not value:
        return None
    code = value.strip().split(".")[0].split("@")[0].replace("-", "_").lower()
    base = code.split("_")[0]
    if base in ("c", "posix"):
        return None
    return base if base in LANGUAGES else None


def resolve(flag: str | None = None, env: Mapping[str, str] | None = None, remembered: str | None = None) -> str:
    """The language to use, from the sources in order of precedence (see the module doc)."""
    env = os.environ if env is None else env
    for candidate in (flag, env.get("TUTOR_LANG"), remembered):
        lang = normalize(candidate)
        if lang:
            return lang
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if env.get(var):  # the first one set decides, as in POSIX
            return normalize(env[var]) or DEFAULT
    return DEFAULT


def set_language(lang: str) -> None:
    global _current
    _current = normalize(lang) or DEFAULT


def language() -> str:
    return _current


def _table(lang: str) -> dict[str, str]:
    with _lock:
        if lang not in _tables:
            _tables[lang] = _read_po(catalogue_file(lang))
        return _tables[lang]


def catalogue_file(lang: str) -> Path:
    """`tutor/locale/<lang>/LC_MESSAGES/tutor.po`: tutor's own messages in `lang`."""
    return _LOCALE_DIR / lang / "LC_MESSAGES" / "tutor.po"


def catalogue(lang: str) -> dict[str, str]:
    """tutor's own messages in `lang`: English -> translation (empty for English)."""
    return dict(_table(lang)) if lang in LANGUAGES and lang != "en" else {}


def _read_po(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        catalog = read_po(f)
    return {
        m.id: m.string
        for m in catalog
        if isinstance(m.id, str) and m.id and isinstance(m.string, str) and m.string and not m.fuzzy
    }


def gettext(message: str) -> str:
    """`message` in the current language (itself when there is no translation)."""
    if _current == DEFAULT:
        return message
    return _table(_current).get(message, message)


def _(message: str, /, **values: object) -> str:
    """Translate, then fill `{placeholders}` from `values` (when any are given)."""
    text = gettext(message)
    return text.format(**values) if values else text


def N_(message: str, /) -> str:
    """Mark a message for extraction where it is translated later (a constant, a table)."""
    return message
