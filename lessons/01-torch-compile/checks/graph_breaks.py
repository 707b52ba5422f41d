"""Check: Router.forward has no graph breaks (torch._dynamo.explain), compiles with
fullgraph=True, and computes what the original forward computed, on both sides of its branch."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _original(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The stub's forward, run in eager mode with the learner's weights (without the print)."""
    h = F.linear(x, model.fc1.weight, model.fc1.bias)
    h = h / h.abs().max().item()
    h = torch.relu(h) if h.mean() > 0 else torch.tanh(h)
    return F.linear(h, model.fc2.weight, model.fc2.bias)


def _why(ctx, reason: str) -> str:
    first = reason.strip().splitlines()[0] if reason.strip() else ctx.t("unknown reason")
    if "item()" in reason:
        return ctx.t(".item() turns a tensor into a Python number, which the graph cannot hold")
    if "print" in reason:
        return ctx.t("print() is Python I/O that cannot go into a graph")
    if "jump" in reason or "Data-dependent branching" in reason:
        return ctx.t("a Python `if` on a tensor's value: the graph cannot tell which way it goes")
    return first


def _describe(ctx, explanation) -> list[str]:
    lines = []
    for br in explanation.break_reasons:
        frame = br.user_stack[-1] if br.user_stack else None
        why = _why(ctx, br.reason)
        if frame is None:
            lines.append(ctx.t("somewhere: {why}", why=why))
        elif frame.line:
            lines.append(ctx.t("line {line} `{code}`: {why}", line=frame.lineno, code=frame.line.strip(), why=why))
        else:
            lines.append(ctx.t("line {line}: {why}", line=frame.lineno, why=why))
    return lines


def check(ctx):
    mine = ctx.learner
    dim, hidden = 32, 64
    torch.manual_seed(ctx.seed)
    model = mine.Router(dim, hidden).to(ctx.device).eval()
    ctx.expect(isinstance(getattr(model, "fc1", None), nn.Linear) and isinstance(getattr(model, "fc2", None), nn.Linear),
               ctx.t("Router must keep its layers fc1 and fc2 (nn.Linear): change how forward is written, not the model"))

    x = ctx.randn(5, dim)
    ctx.phase(ctx.t("looking for graph breaks with torch._dynamo.explain"))
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(model)(x)
    if explanation.graph_break_count:
        details = _describe(ctx, explanation)
        ctx.fail(ctx.t("Router.forward still has {n} graph break(s), so it compiles to {graphs} graphs: {where}",
                       n=explanation.graph_break_count, graphs=explanation.graph_count, where="; ".join(details[:3])),
                 details)

    ctx.phase(ctx.t('compiling with fullgraph=True (backend="eager": capture only)'))
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    try:
        compiled(x)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        ctx.fail(ctx.t("torch.compile(Router(), fullgraph=True) failed: {error}: {first}",
                       error=type(exc).__name__, first=first))

    u = model.fc1.weight.detach().mean(dim=0)  # mean(fc1(x)) over features = x @ u + mean(bias)
    for trial in ctx.trials(6):
        positive = trial % 2 == 0
        small = trial >= 4
        batch = ctx.choice([1, 3, 8, 17]) if trial < 2 else ctx.choice([5, 8, 17])
        # Trials 4-5: small inputs, so every hidden feature is below 1 in magnitude (the peak is
        # about 0.3-0.8): dividing by the peak enlarges them, and a divisor floored at 1 gives
        # another model. On the other trials the peak is about 3-6.
        x = ctx.randn(batch, dim, scale=0.1 if small else 1.0)
        with torch.no_grad():
            # Set each sample's hidden mean: on trials 0-1 every sample is on the same side; on
            # trials 2-3 the samples disagree (one in three on the other side) while the mean
            # over the whole batch stays clearly on one side. Only the batch mean decides the
            # branch; a per-sample (or per-feature) branch gives a different model.
            sign = 1.0 if positive else -1.0
            target = sign * ((0.04 + 0.04 * ctx.rand(batch)) if small else (0.4 + 0.4 * ctx.rand(batch)))
            if 2 <= trial < 4:
                target[1::3] = -sign * (0.2 + 0.2 * ctx.rand(len(range(1, batch, 3))))
            now = F.linear(x, model.fc1.weight, model.fc1.bias).mean(dim=-1)
            x = x + ((target - now) / (u @ u)).unsqueeze(-1) * u
            expected = _original(model, x)
            hidden = F.linear(x, model.fc1.weight, model.fc1.bias)
            side = ctx.t("positive (relu branch)") if hidden.mean() > 0 else ctx.t("negative (tanh branch)")
            mixed = bool((hidden.mean(dim=-1) > 0).any() and (hidden.mean(dim=-1) <= 0).any())
            if small:
                what = ctx.t("the mean of the hidden features is {side} and the largest of them is {peak:.2f} in "
                             "magnitude (below 1: dividing by it enlarges them)", side=side,
                             peak=float(hidden.abs().max()))
            elif mixed:
                what = ctx.t("the mean of the hidden features is {side}, though some samples' own means are on the "
                             "other side (the branch follows the mean over the whole batch)", side=side)
            else:
                what = ctx.t("the mean of the hidden features is {side}", side=side)
            ctx.expect_close(ctx.t("output when {what}", what=what), model(x), expected, atol=1e-5, rtol=1e-4)
            ctx.expect_close(ctx.t("compiled output when {what}", what=what), compiled(x), expected,
                             atol=1e-5, rtol=1e-4)

    # The branch's boundary: a batch mean of exactly 0 is not positive, so the original takes tanh
    # (a `>=` takes relu). fc1 made to give every sample the same hidden features, +c and -c in
    # turn: divided by their peak they are exactly +1 and -1, whose mean is exactly 0.
    with torch.no_grad():
        c = 0.5 + float(ctx.rand(1))
        model.fc1.weight.zero_()
        model.fc1.bias.copy_(c * torch.tensor([1.0, -1.0], device=ctx.device).repeat(model.fc1.out_features // 2))
        x = ctx.randn(3, dim)
        expected = _original(model, x)
        what = ctx.t("the mean of the hidden features is exactly 0 (not positive: the tanh branch)")
        ctx.expect_close(ctx.t("output when {what}", what=what), model(x), expected, atol=1e-5, rtol=1e-4)
        ctx.expect_close(ctx.t("compiled output when {what}", what=what), compiled(x), expected,
                         atol=1e-5, rtol=1e-4)

    # The point of the fix, as counts: the graphs Dynamo makes of your forward against those it
    # makes of the original one (its .item() and its `if` on a tensor each end a graph).
    torch._dynamo.reset()
    before = torch._dynamo.explain(lambda t: _original(model, t))(x)
    torch._dynamo.reset()
    ctx.figure("graphs", explanation.graph_count, label=ctx.t("graphs Dynamo makes of your forward"))
    ctx.figure("original_graphs", before.graph_count,
               label=ctx.t("graphs it makes of the original forward ({breaks} graph breaks)",
                           breaks=before.graph_break_count))
