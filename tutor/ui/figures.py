"""Formatting a verdict's figures: times, bytes and side-by-side bars. Plain Rich, no Textual.

Rules a learner can trust:
- the speedup shown is the ratio of the two times shown beside it (reference ÷ yours), never a
  different statistic; a measurement flagged noisy shows "too noisy to call: <reason>" instead;
- every figure says what it compares (the checker's "compares" words), and its two rows are
  named by what they are (the checker's `sides`: "compiled" and "eager", not "yours" and "ref");
- a figure reads in the learner's language: the checker's words come through `ctx.t`, and its
  labels (`label=`, kept in the `_labels` figure) stand in for the figure names, which stay
  the keys of history and `--json`;
- labels wrap instead of being cut, so nothing is truncated in a 40-column pane.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.text import Text

from tutor.i18n import N_, _
from tutor.runner.protocol import FIGURE_LABELS
from tutor.formatting import fmt_bytes, fmt_seconds

BAR_WIDTH = 16
_EIGHTHS = " ▏▎▍▌▋▊▉█"
NOISY_DEFAULT = N_("the rounds disagreed too much on this machine; check again when it is quieter")


def bar(value: float, biggest: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar, `width` cells for `biggest`, in eighths of a cell."""
    if biggest <= 0 or value <= 0 or not math.isfinite(value):
        return ""
    eighths = max(1, round(min(value / biggest, 1.0) * width * 8))  # non-zero stays visible
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def is_time(value: Any) -> bool:
    return isinstance(value, dict) and "learner_s" in value and "reference_s" in value


def is_memory(value: Any) -> bool:
    return isinstance(value, dict) and "learner_bytes" in value and "reference_bytes" in value


# The checking API's default figure names and words, shown in the learner's language (names
# and words a checker chose itself come translated through ctx.t, and stay as it wrote them).
_KNOWN = {N_("time"), N_("memory"), N_("peak memory"), N_("build"), N_("yours vs the reference solution")}


def _known(text: str) -> str:
    return _(text) if text in _KNOWN else text


def labels_of(figures: dict[str, Any]) -> dict[str, str]:
    """The checker's labels for its figures (`label=`): figure name -> the learner's words."""
    labels = figures.get(FIGURE_LABELS)
    if not isinstance(labels, dict):
        return {}
    return {k: v.strip() for k, v in labels.items() if isinstance(k, str) and isinstance(v, str) and v.strip()}


def label_for(name: str, labels: dict[str, str]) -> str:
    """What the learner reads for the figure `name`: the checker's label, else the name in words."""
    return labels.get(name) or _known(name.replace("_", " "))


def _title(label: str, value: dict[str, Any]) -> Text:
    title = Text(label, style="bold")
    compares = value.get("compares")
    if isinstance(compares, str) and compares.strip():
        title.append(f" · {_known(compares.strip())}", style="")
    return title


_HAN_THEN_LATIN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff])([A-Za-z0-9])")
_LATIN_THEN_HAN = re.compile(r"([A-Za-z0-9])([\u3400-\u4dbf\u4e00-\u9fff])")


def _spaced(text: str) -> str:
    """A sentence built around the checker's side names, with the half-width space Chinese
    text keeps next to Latin words (`编译后的峰值内存是 eager 模式的`, `fp32 更快`)."""
    return _LATIN_THEN_HAN.sub(r"\1 \2", _HAN_THEN_LATIN.sub(r"\1 \2", text))


def _sides(value: dict[str, Any]) -> tuple[str, str] | None:
    """The checker's names for the two rows (`ctx.time(..., sides=...)`), when it gave them."""
    sides = value.get("sides")
    if isinstance(sides, (list, tuple)) and len(sides) == 2 and all(isinstance(x, str) and x.strip() for x in sides):
        return sides[0].strip(), sides[1].strip()
    return None


def _rows(mine: Any, ref: Any, fmt: Any, mine_style: str, sides: tuple[str, str] | None = None) -> list[Text]:
    """Two rows, yours and the reference (or the checker's two sides), bars on one scale;
    values right-aligned."""
    numbers = _number(mine) and _number(ref)
    biggest = max(mine, ref) if numbers else 0
    a, b = fmt(mine) if _number(mine) else str(mine), fmt(ref) if _number(ref) else str(ref)
    width = max(len(a), len(b))
    # The two labels padded to the same cells (a Chinese label is two cells a character).
    yours, ref_label = sides or (_("yours"), _("ref"))
    cells = max(cell_len(yours), cell_len(ref_label))
    yours += " " * (cells - cell_len(yours))
    ref_label += " " * (cells - cell_len(ref_label))
    return [
        Text.assemble(
            f"  {yours} ", (a.rjust(width), "bold"), " ", (bar(mine, biggest) if numbers else "", mine_style)
        ),
        Text.assemble(f"  {ref_label} ", b.rjust(width), " ", (bar(ref, biggest) if numbers else "", "dim")),
    ]


def speedup_of(value: dict[str, Any]) -> float | None:
    """reference ÷ yours from the two times themselves, so it always agrees with them."""
    mine, ref = value.get("learner_s"), value.get("reference_s")
    if isinstance(mine, (int, float)) and isinstance(ref, (int, float)) and _number(mine) and _number(ref) and mine > 0:
        return float(ref) / float(mine)
    return None


def time_view(label: str, value: dict[str, Any]) -> list[RenderableType]:
    """A timing: `label` (in the learner's words), the two rows and the speedup between them."""
    speedup = speedup_of(value)
    noisy = bool(value.get("noisy"))
    style = "yellow" if noisy or speedup is None or speedup < 1 else "green"
    sides = _sides(value)
    parts: list[RenderableType] = [
        _title(label, value),
        *_rows(value["learner_s"], value["reference_s"], fmt_seconds, style, sides),
    ]
    if noisy:
        reason = value.get("noise_reason")
        reason = reason.strip() if isinstance(reason, str) and reason.strip() else _(NOISY_DEFAULT)
        parts.append(Text("  " + _("too noisy to call: {reason}", reason=reason), style="italic yellow"))
    elif speedup is not None:
        if 0.95 <= speedup <= 1.05:
            verdict = _("about the same speed")
        elif sides:
            verdict = _("{side} is faster", side=sides[0]) if speedup > 1 else _("{side} is slower", side=sides[0])
        else:
            verdict = _("yours is faster") if speedup > 1 else _("yours is slower")
        if sides:
            line = _(
                "speedup {speedup}× ({second} ÷ {first}): {verdict}",
                speedup=f"{speedup:.2f}",
                first=sides[0],
                second=sides[1],
                verdict=verdict,
            )
        else:
            line = _("speedup {speedup}× (ref ÷ yours): {verdict}", speedup=f"{speedup:.2f}", verdict=verdict)
        parts.append(Text("  " + _spaced(line), style="italic"))
    return parts


def memory_view(label: str, value: dict[str, Any]) -> list[RenderableType]:
    """Peak memory: `label`, the two rows and the ratio of the first to the second."""
    mine, ref = value["learner_bytes"], value["reference_bytes"]
    style = "green" if _number(mine) and _number(ref) and mine <= ref else "yellow"
    sides = _sides(value)
    parts: list[RenderableType] = [_title(label, value), *_rows(mine, ref, fmt_bytes, style, sides)]
    if _number(mine) and _number(ref) and ref > 0:
        ratio = mine / ref
        same = 0.995 <= ratio <= 1.005
        if sides:
            first, second = sides
            words = (
                _("{first} uses the same peak memory as {second}", first=first, second=second)
                if same
                else _(
                    "{first} uses {ratio}× the peak memory of {second}",
                    first=first,
                    second=second,
                    ratio=f"{ratio:.2f}",
                )
            )
        else:
            words = (
                _("yours uses the same peak memory as the reference")
                if same
                else _("yours uses {ratio}× the reference's peak memory", ratio=f"{ratio:.2f}")
            )
        # A side named 你的 (yours) before the zh sentence's own 的: 你的峰值内存, not 你的的.
        parts.append(Text(f"  {_spaced(words.replace('的的', '的'))}", style="italic"))
    return parts


def figures_view(figures: dict[str, Any]) -> Group | None:
    """Timing, memory, build figures and any other numbers the checker reported, each under
    the checker's label when it gave one (a labelled dict or list shows its label alone)."""
    labels = labels_of(figures)
    shown = {k: v for k, v in figures.items() if k != FIGURE_LABELS}
    if not shown:
        return None
    parts: list[RenderableType] = []
    others: list[Text] = []
    for name, value in shown.items():
        label = label_for(name, labels)
        if is_time(value):
            parts.extend(time_view(label, value))
        elif is_memory(value):
            parts.extend(memory_view(label, value))
        elif name.endswith("_s") and _number(value):
            words = labels.get(name) or _known(name[:-2].replace("_", " "))
            others.append(Text.assemble((words, "bold"), "  ", fmt_seconds(value)))
        elif (name.endswith("_bytes") or name == "size") and _number(value):
            words = labels.get(name) or (name[:-6].replace("_", " ") if name.endswith("_bytes") else label)
            others.append(Text.assemble((words, "bold"), "  ", fmt_bytes(value)))
        elif isinstance(value, (dict, list)) and name in labels:
            others.append(Text(label))  # the checker's sentence, its numbers written in
        elif isinstance(value, dict):
            inner = ", ".join(_item(k, v) for k, v in value.items() if k != "timeline")
            others.append(Text.assemble((label, "bold"), "  ", inner))
        else:
            others.append(Text.assemble((label, "bold"), "  ", _num(value)))
    parts.extend(others)
    return Group(*parts)


def _num(v: Any) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        if abs(v) >= 1000:
            return f"{v:,.0f}"  # 12,460, not 1.246e+04
        return f"{v:.4g}"
    return str(v)


def _item(key: str, value: Any) -> str:
    """One `key value` of a figure that is a dict: units read from the key's suffix
    (compile_s 0.1686 -> "compile 168.60 ms"), a speedup as a factor."""
    if _number(value):
        for suffix, scale in (("_s", 1.0), ("_ms", 1e-3), ("_us", 1e-6)):
            if key.endswith(suffix):
                return f"{key[: -len(suffix)].replace('_', ' ')} {fmt_seconds(value * scale)}"
        if key.endswith("_bytes"):
            return f"{key[:-6].replace('_', ' ')} {fmt_bytes(value)}"
        if key == "speedup":
            return f"speedup {value:.2f}×"
    return f"{key.replace('_', ' ')} {_num(value)}"
