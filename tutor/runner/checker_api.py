"""The checking API that exercise checkers use. Runs inside a runner process (imports torch).

A checker is a module in `lessons/NN-slug/checks/` with one function:

    def check(ctx: Context) -> None:
        x = ctx.randn(32, 10)
        ctx.expect_close("output", ctx.learner.sigmoid(x), torch.sigmoid(x))

The runner runs every check twice with the same seed: once with the learner's module as
`ctx.learner`, and once with the reference solution in its place, in a process that never
imports the learner's code. Every `expect_*` call is an observation; the judge pairs the two
runs' observations in order and takes the expected values from the reference run only. So
nothing the learner's code does to its own interpreter (patching torch, this module or the
channel, printing "PASS", exiting early) can make a wrong answer pass. What `ctx.expect(cond)`
states is a fact measured in the learner's process (graph breaks, peak memory, recompiles): a
learner who deliberately rewrites those measurements fools only themselves.
"""

from __future__ import annotations

import contextlib
import math
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping, Sequence

import torch

from tutor.i18n import N_, _
from tutor.runner.contract import Contract
from tutor.runner.memory import Memory
from tutor.runner.protocol import FIGURE_LABELS
from tutor.runner.timing import Timing, median_iqr  # noqa: F401 - part of the checking API

# Sealed before any learner code is imported: the learner's module may patch these names on
# torch, but the checker keeps the originals.
_gradcheck = torch.autograd.gradcheck
_gradgradcheck = torch.autograd.gradgradcheck
_perf_counter = time.perf_counter


class CheckFailed(Exception):
    """Raised by a checker (or by the channel after a failed comparison) to end the check."""

    def __init__(self, reason: str, details: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = list(details)


class Channel:
    """Where a Context sends expectations, figures and progress. The runner provides one."""

    @property
    def measures_speed(self) -> bool:
        """False in the reference run, whose timings nobody reads."""
        return True

    def quiet(self) -> None:
        """Wait until nothing else of this run competes for the CPU (before timing)."""

    def expect(self, kind: str, name: str, actual: Any, expected: Any, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def figure(self, name: str, value: Any) -> None:
        raise NotImplementedError

    def phase(self, text: str, **info: Any) -> None:
        raise NotImplementedError


class Context:
    """What a checker gets: the learner's module, the reference module, inputs, and ways to judge."""

    def __init__(
        self,
        *,
        learner: ModuleType | None,
        reference: ModuleType | None,
        channel: Channel,
        seed: int,
        device: str,
        tmpdir: Path,
        learner_path: Path | None = None,
        rank: int = 0,
        world_size: int = 1,
        learner_loader: Callable[[], ModuleType] | None = None,
        reference_loader: Callable[[], ModuleType] | None = None,
        reasons: Mapping[str, str] | None = None,
        allows: Sequence[str] = (),
        guarded: Sequence[ModuleType] = (),
    ) -> None:
        self._reasons = dict(reasons or {})
        # Before the learner's file is imported: a flag set at import is a change too.
        self._contract = Contract(self._observe_left, allows)
        self._learner_view: ModuleType | None = None
        self._learner = learner
        self._learner_loader = learner_loader
        self._reference = reference
        self._reference_loader = reference_loader
        self.channel = channel
        self.seed = seed
        self.device = torch.device(device)
        self.tmpdir = tmpdir
        self.learner_path = learner_path
        self.rank = rank
        self.world_size = world_size
        self.generator = torch.Generator().manual_seed(seed)
        self._figures: dict[str, Any] = {}
        # The learner's run never hands expected values to the channel (the judge takes them
        # from the reference run); the reference run never hands over actual values.
        self._sends_expected = not getattr(channel, "measures_speed", True)
        # The seal lives in a closure made before any learner code runs (the runner keeps its
        # own reference): no attribute to overwrite after a patch. `guarded` are the checker's
        # module and its helpers, whose functions are sealed too.
        self._tampered: Callable[[], str] = _arm(self, tuple(guarded))

    # -- the code under test -------------------------------------------------------------------

    @property
    def learner(self) -> ModuleType:
        """The learner's module, imported on first use (so build phases can be timed). Its
        functions keep the call contract (tutor.runner.contract): a call that leaves behind a
        change the reference's same call does not (an input written in place, a model left in
        eval mode, grad mode off, a flag set) fails the check, naming the change."""
        if self._learner is None:
            assert self._learner_loader is not None
            self._learner = self._learner_loader()
        if self._learner_view is None:
            self._learner_view = self._contract.module(self._learner)
        return self._learner_view

    @property
    def reference(self) -> ModuleType:
        """The reference solution, imported on first use; a slow import (a C++ build) is shown
        as a phase and reported as `reference_build_s`, never inside any timing."""
        if self._reference is None:
            assert self._reference_loader is not None
            self.phase(_("preparing the reference solution"), building=True)
            start = _perf_counter()
            self._reference = self._reference_loader()
            took = _perf_counter() - start
            if took > 0.5:
                self.figure("reference_build_s", took, label=_("building the reference solution"))
        return self._reference

    def load_learner(self, phase: str | None = None) -> ModuleType:
        """Import the learner's module now, timing it as a build step (C++ and CUDA exercises)."""
        if self._learner is not None:
            return self.learner
        with self.build(phase if phase is not None else _("importing your code")):
            return self.learner

    def finish(self) -> None:
        """The end of the check (the runner calls it): what is still changed for everyone since
        the check began, a flag set when the learner's file was imported among them."""
        self._contract.finish()

    @contextlib.contextmanager
    def uncontracted(self) -> Iterator[None]:
        """Calls into learner code inside this block skip the call contract (and its snapshots):
        timing and memory measurements, which the reference run does not repeat."""
        self._contract.paused += 1
        try:
            yield
        finally:
            self._contract.paused -= 1

    # -- inputs --------------------------------------------------------------------------------

    def randn(
        self,
        *shape: int,
        dtype: torch.dtype = torch.float32,
        requires_grad: bool = False,
        device: torch.device | str | None = None,
        scale: float = 1.0,
        noncontiguous: bool = False,
    ) -> torch.Tensor:
        """Fresh random normal values from this run's seed."""
        if noncontiguous:
            # Allocate transposed and transpose back: same shape, non-unit last stride.
            base = torch.randn(*reversed(shape), generator=self.generator, dtype=dtype) * scale
            t = base.permute(*reversed(range(len(shape))))
            assert not t.is_contiguous() or len(shape) < 2 or min(shape) <= 1
        else:
            t = torch.randn(*shape, generator=self.generator, dtype=dtype) * scale
        t = t.to(device or self.device)
        return t.requires_grad_(requires_grad)

    def rand(
        self, *shape: int, dtype: torch.dtype = torch.float32, device: torch.device | str | None = None
    ) -> torch.Tensor:
        return torch.rand(*shape, generator=self.generator, dtype=dtype).to(device or self.device)

    def randint(
        self, low: int, high: int, shape: Sequence[int], device: torch.device | str | None = None
    ) -> torch.Tensor:
        return torch.randint(low, high, tuple(shape), generator=self.generator).to(device or self.device)

    def choice(self, options: Sequence[Any]) -> Any:
        i = int(torch.randint(len(options), (1,), generator=self.generator))
        return options[i]

    def trials(self, n: int, label: str = N_("checking trial")) -> Iterator[int]:
        """Yield 0..n-1, reporting `checking trial i/n` as the phase."""
        for i in range(n):
            self.phase(f"{_(label)} {i + 1}/{n}", step=i + 1, total=n)
            yield i

    # -- progress ------------------------------------------------------------------------------

    def phase(self, text: str, **info: Any) -> None:
        self.channel.phase(text, **info)

    @contextlib.contextmanager
    def build(self, phase: str, figure: str = "build_s", *, label: str | None = None) -> Iterator[None]:
        """Time a build or compile step (load_inline, torch.compile's first call) as a figure,
        separately from any timing of steady-state speed. `label` names the figure for the
        learner (`ctx.t("compile")`), the seconds shown after it."""
        self.phase(phase, building=True)
        start = _perf_counter()
        try:
            yield
        finally:
            self.figure(figure, self._figures.get(figure, 0.0) + _perf_counter() - start, label=label)

    def figure(self, name: str, value: Any, *, label: str | None = None) -> None:
        """Report a figure (a number, or a dict of numbers) in the verdict and history.

        `name` is the figure's key in history and `--json`; `label` is what the learner reads
        for it, in their language (`ctx.t(...)`): for a number, the words before the number
        (units from the name's suffix, `_s` or `_bytes`); for a dict or a list, the whole line,
        its numbers written in through ctx.t's values, since the dict's keys are not words."""
        self._figures[name] = value
        self.channel.figure(name, value)
        if label is not None:
            labels = self._figures.setdefault(FIGURE_LABELS, {})
            labels[name] = label
            self.channel.figure(FIGURE_LABELS, dict(labels))

    # -- judging -------------------------------------------------------------------------------

    def tampered(self) -> str:
        """Which parts of the checking machinery were replaced since this context was made
        (empty when none): a cheap tripwire for code that patches the checker from inside."""
        return self._tampered()

    def _observe(self, kind: str, name: str, actual: Any, expected: Any, options: dict[str, Any]) -> None:
        tampered = self.tampered()
        if tampered:
            raise CheckFailed(
                _("your code replaced part of the checker ({what}); the check cannot trust this run", what=tampered)
            )
        if self._sends_expected:
            self.channel.expect(kind, name, None, _portable(expected), options)
        else:
            self.channel.expect(kind, name, _portable(actual), None, options)

    def _observe_left(self, call: str, changes: list[tuple[str, str]]) -> None:
        """What one call into learner code changed, by key: the judge fails the learner's run
        on a key the reference run's same call did not report."""
        self._observe("left", call, changes, changes, {})

    def _observe_here(self, kind: str, name: str, actual: Any, expected: Any, options: dict[str, Any]) -> None:
        """Both sides from this run: the reference run sends only the kind and name."""
        if self._sends_expected:
            self.channel.expect(kind + "_here", name, None, None, options)
        else:
            self.channel.expect(kind + "_here", name, (_portable(actual), _portable(expected)), None, options)

    def t(self, message: str, /, **values: Any) -> str:
        """`message` in the learner's language, with `{field}`s filled from `values`:
        `ctx.expect(ok, ctx.t("{name} was not called", name=...))`. The translation comes from
        the chapter's `i18n/<lang>.toml` `[reasons]` table (English text as the key); tensor and
        API names belong in the values, so they stay as they are."""
        template = self._reasons.get(message, message)
        try:
            return template.format(**values)
        except (KeyError, IndexError, ValueError):
            return message.format(**values)  # a broken translation never hides the reason

    def fail(self, reason: str, details: Sequence[str] = ()) -> None:
        raise CheckFailed(reason, details)

    def expect(self, condition: bool, reason: str) -> None:
        """A fact checked here; `reason` is what the learner reads when it is false."""
        self._observe("true", reason, bool(condition), True, {})

    def expect_close(
        self,
        name: str,
        actual: Any,
        expected: Any,
        *,
        atol: float | None = None,
        rtol: float | None = None,
        check_dtype: bool = True,
        check_device: bool = True,
        exact_type: bool = True,
        within_run: bool = False,
    ) -> None:
        """`actual` must match `expected`: same type, shape, dtype and device, values within
        dtype-appropriate tolerances (those of `torch.testing.assert_close` unless given).

        `expected` is taken from the reference run. When it is a measurement of this very run
        (a profile, a count of calls, a timing), pass `within_run=True`: both values then come
        from the learner's run, which makes it a fact measured in the learner's process."""
        # Devices are compared here: the values travel to the judge on the CPU.
        if check_device and isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor):
            self.expect(
                actual.device.type == expected.device.type,
                _(
                    "{name}: output is on {device}, expected {expected}",
                    name=name,
                    device=actual.device.type,
                    expected=expected.device.type,
                ),
            )
        options = {
            "atol": atol,
            "rtol": rtol,
            "check_dtype": check_dtype,
            "check_device": check_device,
            "exact_type": exact_type,
        }
        if within_run:
            self._observe_here("close", name, actual, expected, options)
        else:
            self._observe("close", name, actual, expected, options)

    def expect_equal(self, name: str, actual: Any, expected: Any, *, within_run: bool = False) -> None:
        """`actual == expected` exactly (numbers, strings, lists, dicts, tensors); `within_run`
        as for `expect_close`."""
        if within_run:
            self._observe_here("equal", name, actual, expected, {})
        else:
            self._observe("equal", name, actual, expected, {})

    def expect_finite(self, name: str, value: torch.Tensor) -> None:
        self._observe("finite", name, value, None, {})

    def expect_grads_close(
        self,
        actual: dict[str, torch.Tensor | None],
        expected: dict[str, torch.Tensor | None],
        *,
        atol: float | None = None,
        rtol: float | None = None,
    ) -> None:
        """Every named gradient matches (`gradient of weight differs` names the first that doesn't).

        The same observations are made whatever the learner's code did, so the reference run
        and the learner's run stay paired."""
        for key in expected:
            a, e = actual.get(key), expected[key]
            if e is None:
                self.expect(
                    a is None,
                    _(
                        "`{key}` should get no gradient, but yours has one: it is frozen or unused in the reference",
                        key=key,
                    ),
                )
                continue
            self.expect(key in actual, _("gradient of `{key}` is missing from your result", key=key))
            self.expect(
                a is not None,
                _(
                    "`{key}` got no gradient (its .grad is None): usually the "
                    "tensor was detached, replaced by a new tensor, or not used "
                    "in the forward pass",
                    key=key,
                ),
            )
            self.expect_close(_("gradient of `{key}`", key=key), a, e, atol=atol, rtol=rtol)

    def expect_raises(
        self,
        name: str,
        fn: Callable[[], Any],
        exceptions: type[BaseException] | tuple[type[BaseException], ...] = Exception,
        match: str | None = None,
    ) -> BaseException:
        """`fn()` must raise; `name` says what should have been rejected."""
        try:
            fn()
        except exceptions as exc:
            if match is not None and match.lower() not in str(exc).lower():
                self.expect(
                    False,
                    _(
                        "{name}: the error message should mention {match!r}, it says: {said}",
                        name=name,
                        match=match,
                        said=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                    ),
                )
            self.expect(True, name)
            return exc
        self.expect(False, _("{name}: expected an error, but nothing was raised", name=name))
        raise AssertionError("unreachable")  # pragma: no cover - the channel ends the run

    def probe(
        self, name: str, make: Callable[[tuple[int, ...], torch.dtype], tuple[Any, ...]], **promises: Any
    ) -> None:
        """Sweep `learner.<name>` over the inputs its task promises, each against the reference
        (or `truth=`) on equal copies: other dtypes, shapes, strides, extreme values, gradients,
        second derivatives, vmap, repeated calls. `make(shape, dtype)` draws one call's
        arguments; the promises are listed in tutor.runner.probes."""
        from tutor.runner.probes import probe

        probe(self, name, make, **promises)

    def no_mutation(self, fn: Callable[..., Any], *inputs: Any) -> Any:
        """Call `fn(*inputs)` and expect no tensor input to have been changed in place."""
        before = [x.detach().clone() if isinstance(x, torch.Tensor) else None for x in inputs]
        versions = [x._version if isinstance(x, torch.Tensor) else None for x in inputs]
        out = fn(*inputs)
        for i, (x, b, v) in enumerate(zip(inputs, before, versions)):
            if b is None:
                continue
            now = x.detach()
            same = (
                now.shape == b.shape and bool(((now == b) | (now.isnan() & b.isnan())).all())
                if now.is_floating_point() or now.is_complex()
                else torch.equal(now, b)
            )
            changed = x._version != v or not same
            self.expect(not changed, _("your function changed its input #{number} in place", number=i + 1))
        return out

    def gradcheck(
        self, name: str, fn: Callable[..., Any], inputs: Sequence[torch.Tensor], second_order: bool = False, **kw: Any
    ) -> None:
        """gradcheck (and gradgradcheck if `second_order`) in float64; a failure says which."""
        inputs = tuple(
            x.detach().double().requires_grad_(x.requires_grad)
            if isinstance(x, torch.Tensor) and x.is_floating_point()
            else x
            for x in inputs
        )
        self.phase(f"gradcheck: {name}")
        try:
            # gradcheck calls `fn` dozens of times on copies it makes itself: the call contract
            # (checked on every other call) would add snapshots without adding a finding.
            with self.uncontracted():
                ok = _gradcheck(fn, inputs, raise_exception=True, **kw)
        except Exception as exc:  # gradcheck raises GradcheckError with the Jacobians
            self.expect(False, _("gradcheck of {name} failed: {why}", name=name, why=_first_line(exc)))
            return
        self.expect(ok, _("gradcheck of {name} failed", name=name))
        if second_order:
            self.phase(f"gradgradcheck: {name}")
            try:
                with self.uncontracted():
                    ok = _gradgradcheck(fn, inputs, raise_exception=True, **kw)
            except Exception as exc:
                self.expect(
                    False,
                    _("gradgradcheck (second derivatives) of {name} failed: {why}", name=name, why=_first_line(exc)),
                )
                return
            self.expect(ok, _("gradgradcheck (second derivatives) of {name} failed", name=name))

    # -- speed and memory ----------------------------------------------------------------------

    def time(
        self,
        learner: Callable[[], Any],
        reference: Callable[[], Any],
        *,
        name: str = "time",
        compares: str = "yours vs the reference solution",
        sides: tuple[str, str] | None = None,
        label: str | None = None,
        budget_s: float = 0.3,
        min_rounds: int = 7,
        warmup: int = 2,
    ) -> Timing:
        """Time learner and reference side by side: warm-up, then interleaved rounds (ABBA),
        each a block of calls long enough to measure; medians, IQR and the speedup.
        `compares` says in words what the two sides are (shown beside the figure); `sides`
        names the two rows when they are not the learner's code and the reference's (e.g.
        (ctx.t("compiled"), ctx.t("eager")) when a check times two ways of running one model);
        `label` is the figure's heading in the learner's language when `name` is not "time"."""
        from tutor.runner import timing  # torch-side helper, imported only when used

        if not getattr(self.channel, "measures_speed", True):
            # The reference run: nobody reads its timings, and timing here would steal the CPU
            # from the learner's run. Not a number, so no fact can be decided on it.
            return Timing(math.nan, math.nan, 0.0, 0.0, 0, 0, self.device.type)
        self.channel.quiet()
        self.phase(_("timing {name}", name=label or name))
        with self.uncontracted():
            result = timing.interleaved(
                learner, reference, device=self.device, budget_s=budget_s, min_rounds=min_rounds, warmup=warmup
            )
        self.figure(name, _described(result.as_dict(), compares, sides), label=label)
        return result

    def peak_memory(self, fn: Callable[[], Any]) -> int:
        """Peak bytes of tensor memory allocated while `fn()` runs (above what was live before)."""
        from tutor.runner import memory

        with self.uncontracted():
            return memory.peak_bytes(fn, self.device)

    def memory(
        self,
        learner: Callable[[], Any],
        reference: Callable[[], Any],
        *,
        name: str = "memory",
        compares: str = "yours vs the reference solution",
        sides: tuple[str, str] | None = None,
        label: str | None = None,
    ) -> Memory:
        """Peak tensor memory of learner and reference, each in its own measured call;
        `compares`, `sides` and `label` as for `time`."""
        from tutor.runner import memory

        self.phase(_("measuring {name}", name=label or name))
        with self.uncontracted():
            result = memory.compare(learner, reference, self.device)  # peaks and timelines
        self.figure(name, _described(result.as_dict(), compares, sides), label=label)
        return result


def _described(figure: dict[str, Any], compares: str, sides: tuple[str, str] | None) -> dict[str, Any]:
    """A time or memory figure with the words that say what its two rows are."""
    return {**figure, "compares": compares, **({"sides": list(sides)} if sides else {})}


def _arm(ctx: "Context", guarded: tuple[ModuleType, ...]) -> Callable[[], str]:
    """Set `ctx._tampered` (what `Context.tampered` answers: the parts replaced since now,
    named), then seal, itself included."""

    def tampered() -> str:
        return ", ".join(_changed(sealed, _seal(ctx, guarded)))

    ctx.__dict__["_tampered"] = tampered  # sealed with the rest, itself included
    sealed = _seal(ctx, guarded)
    return tampered


def _seal(ctx: "Context", guarded: tuple[ModuleType, ...] = ()) -> dict[str, Any]:
    """Identities of what judging goes through: the Context's methods (and their code), the
    channel's, the context's own attributes, and the functions and classes of the checker's
    modules (a helper replaced by learner code could forward the expected value)."""
    seal: dict[str, Any] = {}
    for owner in (Context, type(ctx.channel)):
        for key, value in vars(owner).items():
            fn = getattr(value, "__func__", value)
            if callable(fn):
                seal[f"{owner.__name__}.{key}"] = (fn, getattr(fn, "__code__", None))
    for key, value in list(getattr(ctx.channel, "__dict__", {}).items()):
        if callable(value):  # the channel's sender, bound when it was made
            seal[f"channel.{key}"] = value
    for module in guarded:
        for key, value in list(vars(module).items()):
            if callable(value) and not key.startswith("__"):
                seal[f"{module.__name__}.{key}"] = (value, getattr(value, "__code__", None))
    for key in ("channel", "_observe", "_tampered", "expect", "expect_close", "expect_equal", "time"):
        seal[f"ctx.{key}"] = ctx.__dict__.get(key)
    seal["channel.expect"] = ctx.channel.__dict__.get("expect") if hasattr(ctx.channel, "__dict__") else None
    seal["ctx.channel"] = ctx.channel
    return seal


def _changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    changed = []
    for key in before.keys() | after.keys():
        a, b = before.get(key), after.get(key)
        if isinstance(a, tuple) and isinstance(b, tuple):
            if a[0] is not b[0] or a[1] is not b[1]:
                changed.append(key)
        elif a is not b:
            changed.append(key)
    return sorted(changed)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _portable(value: Any) -> Any:
    """Detach tensors and move them to CPU so they can travel to the judge."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu() if value.device.type != "meta" else value.detach()
    if isinstance(value, (list, tuple)):
        return (
            type(value)(_portable(v) for v in value)
            if not hasattr(value, "_fields")
            else type(value)(*(_portable(v) for v in value))
        )
    if isinstance(value, dict):
        return {k: _portable(v) for k, v in value.items()}
    return value
