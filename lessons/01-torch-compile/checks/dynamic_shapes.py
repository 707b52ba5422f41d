"""Check: 8 calls of the compiled Mixer (batch 8/16/32/64 at one sequence length, then at a
second one) cost at most 2 graphs, every call runs compiled code, and outputs equal eager."""

import re

import torch
import torch.nn as nn
import torch.nn.functional as F
from _recompiles import Elsewhere, compiler_config, expect_config_kept
from torch._dynamo.utils import guard_failures

BATCHES = (8, 16, 32, 64)
MAX_GRAPHS = 2  # the first compile plus at most one recompile


class CountingBackend:
    """A torch.compile backend that counts the graphs it is given and the calls that run them."""

    def __init__(self) -> None:
        self.graphs = 0
        self.runs = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        self.graphs += 1

        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


def _expected(model: nn.Module, x: torch.Tensor, call: int) -> torch.Tensor:
    """The Mixer's computation on its `call`-th call, in eager mode with the learner's weights."""
    temperature = max(0.5, 1.0 - 0.1 * call)
    seq = x.shape[1]
    q = F.linear(x, model.q.weight, model.q.bias)
    k = F.linear(x, model.k.weight, model.k.bias)
    scores = q @ k.transpose(1, 2) / (temperature * x.shape[-1] ** 0.5)
    future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    return F.linear(scores.softmax(dim=-1) @ x, model.out.weight, model.out.bias)


def _reasons(ctx) -> tuple[list[str], list[str], list[str]]:
    """Dynamo's recompile reasons (what TORCH_LOGS=recompiles prints), shortened, its hints, and
    the causes they point to, in the learner's words."""
    seen: list[str] = []
    hints: list[str] = []
    sizes = numbers = False
    for failures in guard_failures.values():
        for text in failures:
            sizes = sizes or "size mismatch" in str(text)
            hint = re.search(r"\(HINT: (.*?)\)\s*$", str(text).strip().splitlines()[0])
            said = ctx.t("Dynamo's hint: {hint}", hint=hint.group(1)) if hint else ""
            if hint and said not in hints:
                hints.append(said)
            line = str(text).strip().splitlines()[0]
            line = re.sub(r"^\d+/\d+:\s*", "", line)
            guard, _, rest = line.partition("#")
            guard = " ".join(guard.split())
            code = rest.split("  #")[0].strip()
            # A guard on a Python number's value, e.g. `L['self'].calls == 3`.
            numbers = numbers or bool(re.fullmatch(r"\S+ == -?\d+(\.\d+)?", guard))
            short = ctx.t("`{guard}` failed (at `{code}`)", guard=guard, code=code) if code else guard
            if short not in seen:
                seen.append(short)
    causes = []
    if sizes:
        causes.append(ctx.t("New input sizes recompiled: each graph was specialised to the sizes it was first "
                            "called with."))
    if numbers:
        causes.append(ctx.t("A Python number that forward reads changed between calls: Dynamo guards on its "
                            "value, so every new value is a recompile."))
    return seen, hints, causes


def check(ctx):
    config = compiler_config()  # before the learner's file is imported
    mine = ctx.learner
    dim = 24
    torch.manual_seed(ctx.seed)
    model = mine.Mixer(dim).to(ctx.device)
    for name in ("q", "k", "out"):
        ctx.expect(isinstance(getattr(model, name, None), nn.Linear),
                   ctx.t("Mixer must keep its layer `{name}` (nn.Linear): fix how forward is written, not the model",
                         name=name))
    # Sequence lengths that equal no batch size and not dim, so no two sizes coincide by chance.
    seq_a = ctx.choice([5, 7, 11])
    seq_b = ctx.choice([13, 19, 23])
    shapes = [(b, seq_a) for b in BATCHES] + [(b, seq_b) for b in BATCHES]

    torch._dynamo.reset()
    guard_failures.clear()
    counter = CountingBackend()
    eager_calls: list[int] = []  # calls that ran no compiled graph at all
    elsewhere = Elsewhere(ctx)  # compiled before compile_model runs: it must stay compiled
    compiled = mine.compile_model(model, backend=counter)
    with torch.no_grad():
        for i in ctx.trials(len(shapes), ctx.t("calling the compiled model")):
            call = i + 1
            batch, seq = shapes[i]
            x = ctx.randn(batch, seq, dim)
            runs_before = counter.runs
            out = compiled(x)
            if counter.runs == runs_before:
                eager_calls.append(call)
            if call == 1:
                ctx.expect(counter.graphs >= 1,
                           ctx.t("no graph reached the backend the check passed in: compile_model must call "
                                 "torch.compile(model, backend=backend, ...) with the `backend` it is given"))
            label = ctx.t("output of call {call} (batch {batch}, sequence length {seq})", call=call, batch=batch, seq=seq)
            ctx.expect_close(label, out,
                             _expected(model, x, call), atol=1e-5, rtol=1e-4)

    ctx.figure("graphs", counter.graphs, label=ctx.t("graphs compiled"))
    ctx.figure("recompiles", max(0, counter.graphs - 1), label=ctx.t("recompiles"))
    if counter.graphs > MAX_GRAPHS:
        reasons, hints, causes = _reasons(ctx)
        shown = "; ".join(reasons[:3])
        if len(reasons) > 3:
            shown = ctx.t("{shown}; and {n} more", shown=shown, n=len(reasons) - 3)
        if causes:
            ctx.fail(ctx.t("{calls} calls compiled {graphs} graphs; at most {limit} are allowed. {causes} Dynamo's "
                           "recompile reasons: {shown}", calls=len(shapes), graphs=counter.graphs, limit=MAX_GRAPHS,
                           causes=" ".join(causes), shown=shown),
                     reasons[:8] + hints)
        ctx.fail(ctx.t("{calls} calls compiled {graphs} graphs; at most {limit} are allowed. Dynamo's recompile "
                       "reasons: {shown}", calls=len(shapes), graphs=counter.graphs, limit=MAX_GRAPHS, shown=shown),
                 reasons[:8] + hints)
    # Count calls, not graph runs: with a graph break one call runs two graphs, and that is
    # allowed as long as the graph count stays within the limit.
    ctx.expect(not eager_calls,
               ctx.t("{n} of the {calls} calls (call {which}) ran no compiled graph: they silently fell back to eager "
                     "mode (a recompile limit was reached). Remove the cause of the recompiles instead.",
                     n=len(eager_calls), calls=len(shapes), which=", ".join(map(str, eager_calls))))
    elsewhere.expect_kept(ctx, "compile_model")

    # A second Mixer: its warm-up schedule is its own and starts again at 0.9 on its first call
    # (state kept on the class, or anywhere shared, shows only here).
    ctx.phase(ctx.t("calling a second compiled Mixer"))
    torch.manual_seed(ctx.seed + 1)
    second = mine.Mixer(dim).to(ctx.device)
    compiled = mine.compile_model(second, backend=CountingBackend())
    with torch.no_grad():
        for call in (1, 2):
            x = ctx.randn(BATCHES[call], seq_a, dim)
            ctx.expect_close(ctx.t("output of call {call} of a second Mixer (each Mixer has its own warm-up "
                                   "schedule, which starts at temperature 0.9)", call=call),
                             compiled(x), _expected(second, x, call), atol=1e-5, rtol=1e-4)
    expect_config_kept(ctx, config, ctx.t("your code"))
