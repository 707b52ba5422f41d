"""Compare what the learner's code produced with what was expected, in learner's terms.

Runs in the supervising process, which never imports the learner's code: the comparison
functions here cannot have been patched by it. Returns None when the values match, else the
reason ("output shape (32, 10) != expected (32, 5)") and detail lines.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from tutor.i18n import _

Failure = tuple[str, list[str]]

# torch.testing.assert_close's defaults, by dtype (rtol, atol).
_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def judge(kind: str, name: str, actual: Any, expected: Any, options: dict[str, Any]) -> Failure | None:
    if kind == "true":
        return None if actual is True else (name, [])
    if kind == "finite":
        return _finite(name, actual)
    if kind == "equal":
        return _close(name, actual, expected, exact=True, options=options)
    if kind == "close":
        return _close(name, actual, expected, exact=False, options=options)
    if kind == "left":
        return _left(name, actual, expected)
    return (_("unknown expectation kind {kind!r} (a bug in the checker)", kind=kind), [])


def _left(call: str, actual: Any, expected: Any) -> Failure | None:
    """A call's contract: every change the learner's call left behind (key, words) must be one
    the reference's same call made too."""
    if not isinstance(actual, (list, tuple)):
        return (_("{name}: the check received a malformed result", name=call), [])
    theirs = {str(item[0]) for item in (expected or []) if isinstance(item, (list, tuple)) and item}
    extra = [
        str(item[1])
        for item in actual
        if isinstance(item, (list, tuple)) and len(item) == 2 and str(item[0]) not in theirs
    ]
    if not extra:
        return None
    return (
        _(
            "{call} left a change behind that the reference solution does not: {what}",
            call=call,
            what=extra[0],
        ),
        extra[1:5],
    )


def _finite(name: str, value: Any) -> Failure | None:
    if not isinstance(value, torch.Tensor):
        if isinstance(value, float) and not math.isfinite(value):
            return (_("{name} is {value}", name=name, value=value), [])
        return None
    if value.is_floating_point() or value.is_complex():
        bad = ~torch.isfinite(value)
        if bool(bad.any()):
            idx = tuple(int(i) for i in bad.nonzero()[0])
            count = int(bad.sum())
            return (
                _(
                    "{name} has {count} non-finite value(s): {value} at index {index}",
                    name=name,
                    count=count,
                    value=_fmt_value(value[idx]),
                    index=_fmt_idx(idx),
                ),
                [],
            )
    return None


def _type_name(x: Any) -> str:
    return "tensor" if isinstance(x, torch.Tensor) else type(x).__name__


def _close(name: str, actual: Any, expected: Any, *, exact: bool, options: dict[str, Any]) -> Failure | None:
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return (_("{name} is a {kind}, expected a tensor", name=name, kind=_type_name(actual)), [])
        return _tensors(name, actual, expected, exact=exact, options=options)
    if isinstance(expected, (list, tuple)):
        if options.get("exact_type", True) and type(actual) is not type(expected):
            return (
                _(
                    "{name} is a {kind}, expected a {expected}",
                    name=name,
                    kind=_type_name(actual),
                    expected=_type_name(expected),
                ),
                [],
            )
        if not isinstance(actual, (list, tuple)):
            return (
                _(
                    "{name} is a {kind}, expected a {expected}",
                    name=name,
                    kind=_type_name(actual),
                    expected=_type_name(expected),
                ),
                [],
            )
        if len(actual) != len(expected):
            return (
                _(
                    "{name} has {count} items, expected {expected}",
                    name=name,
                    count=len(actual),
                    expected=len(expected),
                ),
                [],
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            failure = _close(f"{name}[{i}]", a, e, exact=exact, options=options)
            if failure:
                return failure
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return (_("{name} is a {kind}, expected a dict", name=name, kind=_type_name(actual)), [])
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing:
            return (_("{name} is missing key(s) {keys}", name=name, keys=", ".join(map(repr, missing))), [])
        if extra:
            return (_("{name} has unexpected key(s) {keys}", name=name, keys=", ".join(map(repr, extra))), [])
        for k in expected:
            failure = _close(f"{name}[{k!r}]", actual[k], expected[k], exact=exact, options=options)
            if failure:
                return failure
        return None
    if isinstance(expected, float) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        if exact:
            return (
                None
                if actual == expected
                else (_("{name} is {actual!r}, expected {expected!r}", name=name, actual=actual, expected=expected), [])
            )
        rtol = float(options["rtol"]) if options.get("rtol") is not None else 1.3e-6
        atol = float(options["atol"]) if options.get("atol") is not None else 1e-5
        if math.isnan(expected) and math.isnan(actual):
            return None
        if abs(actual - expected) <= atol + rtol * abs(expected):
            return None
        return (
            _(
                "{name} is {actual:.6g}, expected {expected:.6g} (difference {diff:.3g}, tolerance {tol:.3g})",
                name=name,
                actual=actual,
                expected=expected,
                diff=abs(actual - expected),
                tol=atol + rtol * abs(expected),
            ),
            [],
        )
    if (
        actual != expected
        or type(actual) is not type(expected)
        and not (isinstance(actual, (int, float)) and isinstance(expected, (int, float)))
    ):
        return (
            _("{name} is {actual}, expected {expected}", name=name, actual=_short(actual), expected=_short(expected)),
            [],
        )
    return None


def _short(x: Any, limit: int = 80) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tensors(
    name: str, actual: torch.Tensor, expected: torch.Tensor, *, exact: bool, options: dict[str, Any]
) -> Failure | None:
    if tuple(actual.shape) != tuple(expected.shape):
        return (
            _(
                "{name}: shape {shape} != expected {expected}",
                name=name,
                shape=tuple(actual.shape),
                expected=tuple(expected.shape),
            ),
            [],
        )
    if options.get("check_dtype", True) and actual.dtype != expected.dtype:
        return (
            _(
                "{name}: dtype {dtype} != expected {expected}",
                name=name,
                dtype=str(actual.dtype).replace("torch.", ""),
                expected=str(expected.dtype).replace("torch.", ""),
            ),
            [],
        )
    if actual.numel() == 0:
        return None
    a = actual.detach()
    e = expected.detach().to(a.dtype) if a.dtype != expected.dtype else expected.detach()
    if exact or not (e.is_floating_point() or e.is_complex()):
        neq = a != e
        if a.is_floating_point():
            neq &= ~(torch.isnan(a) & torch.isnan(e))
        if not bool(neq.any()):
            return None
        idx = tuple(int(i) for i in neq.nonzero()[0])
        return (
            _(
                "{name}: {count} of {total} values differ; first at index {index}: {got} != expected {expected}",
                name=name,
                count=int(neq.sum()),
                total=a.numel(),
                index=_fmt_idx(idx),
                got=_fmt_value(a[idx]),
                expected=_fmt_value(e[idx]),
            ),
            _first_mismatches(a, e, neq),
        )
    default_rtol, default_atol = _TOLERANCES.get(e.dtype, (1.3e-6, 1e-5))
    rtol = float(options["rtol"]) if options.get("rtol") is not None else default_rtol
    atol = float(options["atol"]) if options.get("atol") is not None else default_atol
    a64, e64 = (
        a.to(torch.complex128 if a.is_complex() else torch.float64),
        e.to(torch.complex128 if e.is_complex() else torch.float64),
    )
    a_nan, e_nan = torch.isnan(a64), torch.isnan(e64)
    if bool((a_nan & ~e_nan).any()):
        idx = tuple(int(i) for i in (a_nan & ~e_nan).nonzero()[0])
        return (
            _(
                "{name}: NaN at index {index} where {expected} was expected",
                name=name,
                index=_fmt_idx(idx),
                expected=_fmt_value(e[idx]),
            ),
            [],
        )
    if bool((e_nan & ~a_nan).any()):  # NaN expected (it must propagate), a number given
        idx = tuple(int(i) for i in (e_nan & ~a_nan).nonzero()[0])
        return (
            _(
                "{name}: {got} at index {index} where NaN was expected (NaN must propagate)",
                name=name,
                index=_fmt_idx(idx),
                got=_fmt_value(a[idx]),
            ),
            [],
        )
    both_inf_same = torch.isinf(a64) & torch.isinf(e64) & (a64 == e64)
    diff = (a64 - e64).abs()
    diff = torch.where(both_inf_same | (a_nan & e_nan), torch.zeros_like(diff), diff)
    allowed = atol + rtol * e64.abs()
    allowed = torch.where(torch.isinf(e64), torch.zeros_like(allowed), allowed)
    bad = diff > allowed
    bad |= torch.isinf(a64) & ~both_inf_same
    if not bool(bad.any()):
        return None
    finite_diff = torch.where(torch.isfinite(diff), diff, torch.full_like(diff, math.inf))
    flat = int(torch.argmax(finite_diff.reshape(-1)))
    idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), a.shape))
    worst = float(finite_diff.reshape(-1)[flat])
    count = int(bad.sum())
    return (
        _(
            "{name}: max abs error {worst:.3g} at index {index} (tolerance atol={atol:g}, rtol={rtol:g}); "
            "{count} of {total} values out of tolerance",
            name=name,
            worst=worst,
            index=_fmt_idx(idx),
            atol=atol,
            rtol=rtol,
            count=count,
            total=a.numel(),
        ),
        _first_mismatches(a, e, bad),
    )


def _first_mismatches(a: torch.Tensor, e: torch.Tensor, bad: torch.Tensor, n: int = 5) -> list[str]:
    lines = []
    for row in bad.nonzero()[:n]:
        idx = tuple(int(i) for i in row)
        lines.append(
            _(
                "at {index}: got {got}, expected {expected}",
                index=_fmt_idx(idx),
                got=_fmt_value(a[idx]),
                expected=_fmt_value(e[idx]),
            )
        )
    return lines


def _fmt_idx(idx: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, idx)) + (",)" if len(idx) == 1 else ")")


def _fmt_value(t: torch.Tensor) -> str:
    v = t.item()
    return f"{v:.6g}" if isinstance(v, float) else str(v)
