"""A check at several world sizes: one supervised run per size, in order, one verdict.

An exercise whose task holds for any number of ranks declares `needs = { processes = [2, 4] }`;
code that silently assumes one world size (a hard-coded 2, `rank == 1` as the last rank, a batch
split in halves) passes at that size and fails at the other. Each size is a complete run of its
own (the reference's ranks and the learner's, judged as ever, with the request's seed and time
limit), so nothing here judges anything: it runs the sizes one after the other, stops at the
first that does not pass, and says which size the reason is about ("with 4 processes: ...").

While it runs, every phase says the size it belongs to, and the events' clocks (and a time limit
an event announces) count from the start of the whole check, as the client's deadline does.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from tutor import i18n
from tutor.i18n import _
from tutor.runner.protocol import OUTPUT_CAP, PASSED, Event, RunRequest, Verdict
from tutor.runner.supervisor import Emit, Supervisor

# The reference run kept for one world size (None: none kept), and where to keep a new one.
Cached = Callable[[int], "bytes | None"]
Store = Callable[[int, bytes], None]


def sizes(request: RunRequest) -> list[int]:
    """The world sizes a request runs at, in order (one, unless it lists several)."""
    return list(request.worlds) if len(request.worlds) > 1 else [request.processes]


def at_size(request: RunRequest, n: int) -> RunRequest:
    """The request for one of its world sizes: what a single-size run of `n` processes gets."""
    return dataclasses.replace(request, processes=n, worlds=[])


def with_size(n: int, text: str) -> str:
    return _("with {n} processes: {text}", n=n, text=text)


def _shifted(event: Event, n: int, offset: float) -> Event:
    """`event` of the run at size `n`, its clock (and any new limit) counted from the start of
    the whole check; a phase names the size unless it already does (the launch phases)."""
    info = dict(event.info)
    limit = info.get("timeout_s")
    if isinstance(limit, (int, float)):
        info["timeout_s"] = float(limit) + offset
    text = event.text
    if event.kind == "phase" and "launching" not in info:
        text = with_size(n, text)
        info["world"] = n
    return Event(event.kind, text, event.elapsed_s + offset, info)


def supervise(
    request: RunRequest,
    emit: Emit,
    tmpdir: Path,
    cached: Cached | None = None,
    store: Store | None = None,
) -> Verdict:
    """Run `request` at each of its world sizes; the verdict of the first size that does not
    pass (its reason naming the size), else a pass.

    The figures are those of the run the verdict speaks for: the size that failed, or the first
    size when all pass (the one the exercise's guide describes). The output holds every size's,
    each under a line naming it."""
    i18n.set_language(request.lang)  # the sizes' phases and headers, before any Supervisor sets it
    worlds = sizes(request)
    if len(worlds) == 1:
        one = at_size(request, worlds[0])
        return Supervisor(
            one,
            emit,
            tmpdir,
            cached_reference=cached(worlds[0]) if cached else None,
            store_reference=(lambda data: store(worlds[0], data)) if store else None,
        ).run()
    offset = 0.0
    outputs: list[str] = []
    truncated = False
    first: Verdict | None = None
    verdict: Verdict | None = None
    for i, n in enumerate(worlds):
        where = tmpdir / f"world-{n}"
        where.mkdir()
        header = "--- " + _("with {n} processes", n=n) + " ---\n"
        outputs.append(header)
        emit(Event("output", header, offset))
        # The client's deadline moves on with each size: this size has the whole limit again.
        emit(
            Event(
                "phase",
                _("checking with {n} processes ({i}/{count})", n=n, i=i + 1, count=len(worlds)),
                offset,
                {"timeout_s": offset + request.timeout, "world": n},
            )
        )

        def shifted(event: Event, n: int = n, offset: float = offset) -> None:
            emit(_shifted(event, n, offset))

        verdict = Supervisor(
            at_size(request, n),
            shifted,
            where,
            cached_reference=cached(n) if cached else None,
            store_reference=(lambda data, n=n: store(n, data)) if store else None,  # type: ignore[misc]
        ).run()
        offset += verdict.duration_s
        outputs.append(verdict.output)
        truncated = truncated or verdict.output_truncated
        first = first or verdict
        if verdict.status != PASSED:
            verdict.reason = with_size(n, verdict.reason)
            break
    assert verdict is not None and first is not None
    text = "".join(outputs)
    return Verdict(
        status=verdict.status,
        reason=verdict.reason,
        details=verdict.details,
        figures=verdict.figures if verdict.status != PASSED else first.figures,
        output=text[: OUTPUT_CAP * len(worlds)],
        output_truncated=truncated or len(text) > OUTPUT_CAP * len(worlds),
        duration_s=offset,
        seed=request.seed,
    )
