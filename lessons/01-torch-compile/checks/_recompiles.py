"""Shared by the chapter's checkers: a backend that counts graphs and their runs, and Dynamo's
recompile reasons (what TORCH_LOGS=recompiles prints), shortened for a failure reason."""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F
from torch._dynamo.utils import guard_failures


class CountingBackend:
    """A torch.compile backend that counts the graphs it is given and the calls that run them.
    With `inner` ("eager", "aot_eager", ...) the graph is compiled by that backend; without, it
    runs as captured. `layer_norms[i]` is how many layer norms graph i holds (a whole-model
    graph holds one per block)."""

    def __init__(self, inner: str | None = None) -> None:
        self.graphs = 0
        self.runs = 0
        self.layer_norms: list[int] = []
        self._inner = torch._dynamo.lookup_backend(inner) if inner else None

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        self.graphs += 1
        self.layer_norms.append(sum(
            1 for n in gm.graph.nodes
            if (n.op == "call_function" and n.target in (F.layer_norm, torch.layer_norm))
            or (n.op == "call_module" and isinstance(gm.get_submodule(n.target), torch.nn.LayerNorm))
        ))
        compiled = self._inner(gm, example_inputs) if self._inner is not None else gm.forward

        def run(*args):
            self.runs += 1
            return compiled(*args)

        return run


def clear() -> None:
    """Forget compiled code and recorded recompile reasons (call before compiling anew)."""
    torch._dynamo.reset()
    guard_failures.clear()


def recompiles(ctx) -> tuple[list[str], list[str], set[str]]:
    """Dynamo's recompile reasons since `clear()`, shortened; its hints; and the kinds of cause
    they point to: "sizes" (a tensor size changed), "number" (a guard on a Python number's
    value, e.g. an int attribute of a module), "backend" (a different backend object)."""
    seen: list[str] = []
    hints: list[str] = []
    kinds: set[str] = set()
    for failures in guard_failures.values():
        for text in failures:
            first = str(text).strip().splitlines()[0] if str(text).strip() else ""
            if "size mismatch" in first:
                kinds.add("sizes")
            if "BACKEND_MATCH" in first:
                kinds.add("backend")
            hint = re.search(r"\(HINT: (.*?)\)\s*$", first)
            said = ctx.t("Dynamo's hint: {hint}", hint=hint.group(1)) if hint else ""
            if hint and said not in hints:
                hints.append(said)
            line = re.sub(r"^\d+/\d+:\s*", "", first)
            guard, _, rest = line.partition("#")
            guard = " ".join(guard.split())
            # A guard on a Python number's value, e.g. `L['self'].calls == 3`.
            if re.fullmatch(r"\S+ == -?\d+(\.\d+)?", guard):
                kinds.add("number")
            code = rest.split("  #")[0].strip()
            short = ctx.t("`{guard}` failed (at `{code}`)", guard=guard, code=code) if code else guard
            if short not in seen:
                seen.append(short)
    return seen, hints, kinds


def shown(ctx, reasons: list[str], limit: int = 3) -> str:
    """The first `limit` reasons, joined, with a count of the rest."""
    text = "; ".join(reasons[:limit])
    if len(reasons) > limit:
        text = ctx.t("{shown}; and {n} more", shown=text, n=len(reasons) - limit)
    return text


def _elsewhere(x: torch.Tensor) -> torch.Tensor:
    """Stands for the rest of a program: code compiled before the learner's, by someone else."""
    return torch.sin(x) * 2.0 + 1.0


class Elsewhere:
    """A function compiled before the learner's code runs, to see whether that code makes
    Dynamo forget it: torch.compiler.reset() (or torch._dynamo.reset()) drops every compiled
    function in the process, and the next call of this one compiles again."""

    def __init__(self, ctx) -> None:
        self.backend = CountingBackend()
        self.fn = torch.compile(_elsewhere, backend=self.backend)
        self.x = ctx.randn(3)
        self.fn(self.x)

    def expect_kept(self, ctx, who: str) -> None:
        self.fn(self.x)
        ctx.expect(
            self.backend.graphs == 1,
            ctx.t(
                "{who} threw away code compiled elsewhere in the process before it ran: a function compiled "
                "earlier had to compile again afterwards. torch.compiler.reset() (or torch._dynamo.reset()) drops "
                "every compiled function in the process, not only this model's: leave it to measuring code",
                who=who,
            ),
        )


def compiler_config() -> dict:
    """torch.compiler.config, which the contract's watch of the Dynamo and Inductor config modules
    does not cover where those only alias it (torch._inductor.config.force_disable_caches, ...)."""
    config = getattr(torch.compiler, "config", None)
    try:
        return dict(config.get_config_copy()) if config is not None else {}
    except Exception:
        return {}


def expect_config_kept(ctx, before: dict, who: str) -> None:
    """No process-wide torch.compiler.config setting changed since `before`."""
    after = compiler_config()
    changed = sorted(k for k in before.keys() | after.keys() if repr(before.get(k)) != repr(after.get(k)))
    what = ", ".join(f"torch.compiler.config.{k} = {after.get(k)!r}" for k in changed[:3])
    ctx.expect(
        not changed,
        ctx.t(
            "{who} left a process-wide compiler setting changed ({what}), which every later compile in the "
            "process inherits: set options for this torch.compile call, or restore the setting before returning",
            who=who,
            what=what,
        ),
    )
