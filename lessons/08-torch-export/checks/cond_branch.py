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


def _with_mean_abs(ctx, batch, target: float) -> torch.Tensor:
    """Random input whose mean |x| is exactly `target` (so which branch it takes is known);
    `batch` is the number of rows, or the leading dimensions as a tuple."""
    z = ctx.randn(*((batch,) if isinstance(batch, int) else batch), DIM)
    return z * (target / z.abs().mean())


_MATMULS = ("aten::addmm", "aten::mm", "aten::bmm")


def _matmuls(fn, x) -> int:
    """How many matrix multiplies one call of `fn(x)` runs (after a warm-up call)."""
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad():
        fn(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn(x)
    return sum(event.name in _MATMULS for event in prof.events())


def _grads(model: nn.Module, y: torch.Tensor, x: torch.Tensor) -> dict:
    """d(sum y^2)/d(x and every weight); a weight the path never used counts as a zero gradient."""
    names = ["x", *(name for name, _ in model.named_parameters())]
    tensors = [x, *model.parameters()]
    got = torch.autograd.grad(y.square().sum(), tensors, allow_unused=True)
    return {n: torch.zeros_like(t) if g is None else g for n, g, t in zip(names, got, tensors)}


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    model = mine.Gate(DIM).to(ctx.device).eval()
    ctx.expect(isinstance(getattr(model, "cheap", None), nn.Module) and isinstance(getattr(model, "deep", None), nn.Module),
               ctx.t("Gate must keep its `cheap` and `deep` layers: change how forward branches, not the model"))

    example = _with_mean_abs(ctx, 5, 0.7)
    with ctx.build(ctx.t("exporting your Gate…"), figure="export_s", label=ctx.t("exporting your Gate")):
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

    # Only the chosen path runs: the cheap path is one matrix multiply, the deep path two; both
    # computed (before the cond, one selected inside) are 3 whatever the input. A wrong path alone
    # (swapped branches, another predicate) is left to the trials below, which name it.
    costs = {}
    for target, kind in ((0.6, "weak"), (1.6, "strong")):
        x = _with_mean_abs(ctx, 8, target)
        try:
            costs[kind] = _matmuls(program, x)
        except Exception as exc:  # noqa: BLE001  (the learner reads why)
            ctx.fail(ctx.t("your exported program failed on a batch of 8 {kind} inputs: {error}", kind=kind,
                           error=_first_line(exc)), str(exc).strip().splitlines()[1:6])
        ctx.expect(costs[kind] < 3,
                   ctx.t("your exported program runs {count} matrix multiplies for a {kind} input: both paths are "
                         "computed (the cheap one needs 1, the deep one 2). Only the chosen path may run: compute "
                         "inside torch.cond's branches, not before it", count=costs[kind], kind=kind))

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
            try:
                out = program(x)
            except Exception as exc:  # noqa: BLE001
                ctx.fail(ctx.t("your exported program failed on a batch of {batch} {kind} inputs: {error}",
                               batch=batch, kind=kind, error=_first_line(exc)), str(exc).strip().splitlines()[1:6])
            ctx.expect_close(f"exported program's output for a {kind} input (mean |x| = {target}, should take "
                             f"the {path} path)", out, expected)

        # The boundary: every entry ±1 makes mean |x| exactly 1.0, which is not "> 1": the cheap path.
        x = torch.where(ctx.randn(8, DIM) > 0, 1.0, -1.0)
        expected = _original(model, x)
        eager = model(x)
        ctx.expect(torch.allclose(eager, expected, rtol=1e-4, atol=1e-5) or not torch.allclose(eager, model.deep(x)),
                   ctx.t("a batch whose mean |x| is exactly 1.0 took the deep path; the deep path is for mean |x| > 1 "
                         "strictly, so at exactly 1.0 the batch takes the cheap path: compare with > 1.0, not >= 1.0"))
        ctx.expect_close("eager output for a batch whose mean |x| is exactly 1.0 (should take the cheap path)",
                         eager, expected)
        ctx.expect_close("exported program's output for a batch whose mean |x| is exactly 1.0 (should take the "
                         "cheap path)", program(x), expected)

    for kind, count in costs.items():
        ctx.expect_equal(f"matrix multiplies your exported program runs for a {kind} input (only the chosen "
                         f"path may run)", count, 1 if kind == "weak" else 2)

    # Exactly what the original computes, in eager mode: any leading dimensions (nn.Linear takes
    # them), and differentiable in x and in the weights (inside a larger model, a gradient flows
    # back through Gate: no torch.no_grad() around the cond, no detached operand).
    for lead, target in (((2, 5), 1.4), ((), 0.5)):
        x = _with_mean_abs(ctx, lead, target)
        shape = tuple(x.shape)
        try:
            with torch.no_grad():
                eager = model(x)
        except Exception as exc:  # noqa: BLE001
            ctx.fail(ctx.t("your Gate fails on an input of shape {shape}, which the original forward takes (nn.Linear "
                           "accepts any leading dimensions): {error}", shape=shape, error=_first_line(exc)),
                     str(exc).strip().splitlines()[1:6])
        with torch.no_grad():
            ctx.expect_close(f"eager output for an input of shape {shape} (mean |x| = {target})", eager,
                             _original(model, x))
    for target, kind in ((1.6, "strong"), (0.6, "weak")):
        z = _with_mean_abs(ctx, 4, target)
        x = z.clone().requires_grad_(True)
        y = model(x)
        ctx.expect(y.requires_grad,
                   ctx.t("your Gate's output for a {kind} input carries no gradient, while the original forward is "
                         "differentiable: is torch.cond (or the whole forward) under torch.no_grad()?", kind=kind))
        got = _grads(model, y, x)
        ctx.expect(bool(got["x"].abs().sum() > 0),
                   ctx.t("no gradient flows back to x through your Gate on a {kind} input: torch.cond was given a "
                         "detached x (an upstream layer would get no gradient). Pass x itself", kind=kind))
        x0 = z.clone().requires_grad_(True)
        ctx.expect_close(f"gradients through your Gate on a {kind} input (of x and of every weight)", got,
                         _grads(model, _original(model, x0), x0), atol=1e-5, rtol=1e-4)
