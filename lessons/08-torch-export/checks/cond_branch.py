"""Check: Gate exports (with a dynamic batch) into a graph that contains torch.cond, and the
exported program and the eager model take the right branch on strong and weak inputs."""

import torch
import torch.nn as nn
from torch.export import Dim

DIM = 16


def _original(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The stub's forward, run eagerly with the learner's layers."""
    if x.abs().mean() > 1.0:
        return model.deep(x)
    return model.cheap(x)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _with_mean_abs(ctx, batch: int, target: float) -> torch.Tensor:
    """Random input whose mean |x| is exactly `target` (so which branch it takes is known)."""
    z = ctx.randn(batch, DIM)
    return z * (target / z.abs().mean())


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    model = mine.Gate(DIM).to(ctx.device).eval()
    ctx.expect(isinstance(getattr(model, "cheap", None), nn.Module) and isinstance(getattr(model, "deep", None), nn.Module),
               ctx.t("Gate must keep its `cheap` and `deep` layers: change how forward branches, not the model"))

    example = _with_mean_abs(ctx, 5, 0.7)
    with ctx.build(ctx.t("exporting your Gate…"), figure="export_s"):
        try:
            ep = torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
        except Exception as exc:
            text = str(exc)
            if "data-dependent" in text or "DataDependent" in type(exc).__name__ or "data dependent" in text:
                ctx.fail(ctx.t("torch.export cannot capture a Python `if` on a tensor's value (\"Could not guard on "
                               "data-dependent expression\"): the branch must be inside the graph. Use "
                               "torch.cond(pred, true_fn, false_fn, (x,))."), text.strip().splitlines()[:6])
            if "Expect operands to be a tuple" in text:
                ctx.fail(ctx.t("torch.export.export(Gate(), (x,)) failed: {error}. torch.cond takes its operands "
                               "as a tuple, even a single one: (x,), not x", error=_first_line(exc)),
                         text.strip().splitlines()[1:8])
            ctx.fail(ctx.t("torch.export.export(Gate(), (x,)) failed: {error}", error=_first_line(exc)),
                     text.strip().splitlines()[1:8])

    has_cond = any(node.op == "call_function" and node.target is torch.ops.higher_order.cond
                   for node in ep.graph.nodes)
    ctx.expect(has_cond, ctx.t("the exported graph contains no torch.cond: the branch was decided while exporting "
                               "(or both sides are always computed). Write the branch as torch.cond(pred, true_fn, "
                               "false_fn, (x,)) so the graph itself chooses."))
    program = ep.module()

    # Strong (deep path) and weak (cheap path) inputs alternate; batch sizes vary, including 1.
    plans = [(1.6, "strong"), (0.6, "weak"), (2.5, "strong"), (0.9, "weak"), (1.2, "strong"), (0.3, "weak")]
    with torch.no_grad():
        for i in ctx.trials(len(plans)):
            target, kind = plans[i]
            batch = ctx.choice([1, 3, 8, 33]) if i > 1 else (1 if i == 0 else 8)
            x = _with_mean_abs(ctx, batch, target)
            expected = _original(model, x)
            path = "deep" if kind == "strong" else "cheap"
            eager = model(x)
            wrong = model.cheap(x) if kind == "strong" else model.deep(x)
            if not torch.allclose(eager, expected, rtol=1e-4, atol=1e-5) and torch.allclose(eager, wrong):
                if kind == "strong":
                    ctx.fail(ctx.t("a strong input (mean |x| = {target}) took the cheap path; it should take the "
                                   "deep path: check which function is torch.cond's true_fn and that the predicate is "
                                   "mean |x| > 1.0", target=target))
                ctx.fail(ctx.t("a weak input (mean |x| = {target}) took the deep path; it should take the cheap "
                               "path: check which function is torch.cond's true_fn and that the predicate is "
                               "mean |x| > 1.0", target=target))
            ctx.expect_close(f"eager output for a {kind} input (mean |x| = {target}, should take the {path} path)",
                             eager, expected)
            ctx.expect_close(f"exported program's output for a {kind} input (mean |x| = {target}, should take "
                             f"the {path} path)", program(x), expected)
