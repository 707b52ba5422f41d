"""Check: accumulated_step runs the model on exactly `micro_batches` micro-batches (uneven
splits included), uses the loss function it is given, leaves the full-batch gradients and
parameters, and returns the full-batch loss as a float (no tensor, no graph)."""

import copy
import math

import torch
from torch import nn
from torch.nn import functional as F


# Peak memory of the 4-micro-batch step may be at most 50% above the reference's (the nearest
# half-right answer, every graph kept alive, is 100% above it).
MAX_OVER_REFERENCE = 1.5


def _model(d_in, classes):
    return nn.Sequential(nn.Linear(d_in, 32), nn.Tanh(), nn.Linear(32, classes))


def _smoothed(outputs, targets):
    """A loss that is not F.cross_entropy: a hard-coded loss function shows."""
    return F.cross_entropy(outputs, targets, label_smoothing=0.2)


def _same(got, want):
    return all(got[k] is not None and torch.allclose(got[k], w, atol=1e-6, rtol=1e-4) for k, w in want.items())


def _grads_of(base, loss_fn, x, y, m, weight):
    """The gradients that accumulating over x.tensor_split(m) leaves, each micro-batch's mean
    loss multiplied by weight(rows in it), starting from zero."""
    model = copy.deepcopy(base)
    model.zero_grad(set_to_none=True)
    for xb, yb in zip(x.tensor_split(m), y.tensor_split(m)):
        (loss_fn(model(xb), yb) * weight(xb.shape[0])).backward()
    return {k: p.grad for k, p in model.named_parameters()}


def _diagnose(ctx, grads, expected, leftover, base, loss_fn, x, y, m):
    """Name the classic accumulation mistakes when the gradients are exactly what they leave."""
    n = x.shape[0]
    sizes = [int(xb.shape[0]) for xb in x.tensor_split(m)]
    if _same(grads, {k: expected[k] + leftover[k] for k in expected}):
        ctx.fail(ctx.t("the gradients after accumulated_step are the full-batch gradients plus what .grad held "
                       "before the call: gradients from an earlier step leaked into this one. Clear .grad once, "
                       "before the first micro-batch"))
    if _same(grads, _grads_of(base, loss_fn, x, y, m, lambda rows: 1.0)):
        ctx.fail(ctx.t("the gradients are the sum of the {m} micro-batches' mean-loss gradients, about {m} times "
                       "the full-batch gradient: each micro-batch's mean loss counted as if it were the whole "
                       "batch. Weight each micro-batch's loss by its share of the batch before backward", m=m))
    if len(set(sizes)) > 1 and _same(grads, _grads_of(base, loss_fn, x, y, m, lambda rows: 1.0 / m)):
        ctx.fail(ctx.t("each micro-batch's loss was weighted 1/{m}, which is right only when the pieces are equal; "
                       "here they hold {sizes} of the {n} rows, so a row of a shorter piece counts for more. "
                       "Weight each micro-batch by its share of the rows", m=m, sizes=sizes, n=n))


class _TwoHeads(nn.Module):
    """A model with a second task's head that this loss never reaches."""

    def __init__(self, d_in, classes):
        super().__init__()
        self.body = _model(d_in, classes)
        self.spare = nn.Linear(d_in, 2)

    def forward(self, x):
        return self.body(x)


def _check_unreached_parameter(ctx, mine):
    """A parameter the loss does not reach: after one ordinary step its .grad is None (zero_grad
    sets it so, and backward never writes it), which tells every optimizer to leave it alone. A
    zero tensor there instead is a gradient of zero, which Adam or momentum still steps with."""
    torch.manual_seed(ctx.seed + 17)
    model = _TwoHeads(7, 3).to(ctx.device)
    for p in model.parameters():
        p.grad = ctx.randn(*p.shape)  # leftovers from an earlier step, the spare head's too
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    mine.accumulated_step(model, opt, F.cross_entropy, ctx.randn(12, 7), ctx.randint(0, 3, (12,)), 4)
    kept = [name for name, p in model.spare.named_parameters() if p.grad is not None]
    zero = all(p.grad is not None and not p.grad.any() for p in model.spare.parameters())
    ctx.expect(not kept,
               ctx.t("after accumulated_step, the {what} of `spare`, a head that the loss never reaches, "
                     "is not None: one ordinary step (optimizer.zero_grad(), backward) leaves no gradient "
                     "there, and an optimizer skips a parameter whose .grad is None but still steps one "
                     "whose .grad is zero (Adam and momentum keep moving it). Clear the gradients with "
                     "optimizer.zero_grad(set_to_none=True)",
                     what=ctx.t("gradient (all zeros)") if zero else ctx.t("gradient")))


def check(ctx):
    mine = ctx.learner
    # (batch, micro_batches, loss): 30/4 and 45/7 do not divide evenly; 9/4 is what torch.chunk
    # splits into only 3 pieces (3, 3, 3); None calls with the default micro_batches (4).
    cases = [(64, 4, F.cross_entropy), (30, 4, _smoothed), (9, 4, F.cross_entropy),
             (45, 7, _smoothed), (22, None, F.cross_entropy)]
    for trial in ctx.trials(len(cases)):
        n, m, loss_fn = cases[trial]
        d_in, classes = ctx.choice([(12, 5), (7, 3)])
        torch.manual_seed(ctx.seed + trial)
        model = _model(d_in, classes).to(ctx.device)
        if trial == 2:
            model.eval()  # a caller's model in eval mode: the step must leave it so (and twin is a copy)
        twin = copy.deepcopy(model)
        x = ctx.randn(n, d_in)
        y = ctx.randint(0, classes, (n,))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
        which = "" if loss_fn is F.cross_entropy else " with the loss_fn given (label-smoothed cross-entropy)"

        # The expected result: one step on the whole batch.
        twin_opt.zero_grad()
        full_loss = loss_fn(twin(x), y)
        full_loss.backward()
        twin_opt.step()

        # Gradients left over from an earlier step: they must not leak into this one.
        base = copy.deepcopy(model)  # the model before the step, for diagnosing wrong gradients
        # (The last case is a fresh model whose .grad are still None: the first step of a training run.)
        fresh = trial == len(cases) - 1
        for p in model.parameters():
            p.grad = None if fresh else ctx.randn(*p.shape)
        leftover = {k: torch.zeros_like(p) if p.grad is None else p.grad.clone() for k, p in model.named_parameters()}
        sizes = []
        steps = []
        hook = model.register_forward_pre_hook(lambda mod, args: sizes.append(args[0].shape[0]))
        step_hook = opt.register_step_post_hook(lambda *args: steps.append(len(sizes)))
        x_before, y_before = x.clone(), y.clone()
        try:
            if m is None:
                loss = mine.accumulated_step(model, opt, loss_fn, x, y)
                m = 4
            else:
                loss = mine.accumulated_step(model, opt, loss_fn, x, y, m)
        except (AttributeError, TypeError) as exc:
            if not fresh or "NoneType" not in str(exc):
                raise
            ctx.fail(ctx.t("accumulated_step raised {error} on a fresh model whose .grad are still None (the first "
                           "step of a training run): {message}. Clear the gradients with "
                           "optimizer.zero_grad(set_to_none=True), which works whether or not .grad exists",
                           error=type(exc).__name__, message=str(exc)))
        hook.remove()
        step_hook.remove()
        ctx.expect(torch.equal(x, x_before) and torch.equal(y, y_before),
                   ctx.t("accumulated_step changed the inputs or targets it was given"))

        largest = math.ceil(n / m)
        ctx.expect(len(sizes) > 0, ctx.t("accumulated_step never called the model"))
        ctx.expect(sum(sizes) == n,
                   ctx.t("the model saw {seen} rows in total (micro-batches of {sizes}) but the batch has "
                         "{n}: every row must be used exactly once; when {n} does not divide by {m}, keep "
                         "the remainder (torch.tensor_split does)", seen=sum(sizes), sizes=sizes, n=n, m=m))
        ctx.expect(len(sizes) == m and max(sizes) <= largest,
                   ctx.t("with micro_batches={m} and a batch of {n}, the model should run {m} times on at "
                         "most {largest} rows each; it ran on micro-batches of {sizes}",
                         m=m, n=n, largest=largest, sizes=sizes))
        when = ctx.t(" (after forward pass {passes} of {total})", passes=", ".join(map(str, steps)),
                     total=len(sizes)) if steps else ""
        ctx.expect(len(steps) == 1 and steps[0] == len(sizes),
                   ctx.t("optimizer.step() should be called once, after the last micro-batch; it was "
                         "called {count} time(s){when}", count=len(steps), when=when))
        if isinstance(loss, torch.Tensor):
            if loss.grad_fn is not None:
                ctx.fail(ctx.t("accumulated_step returned a tensor that still holds the autograd graph: "
                               "return the full-batch loss as a Python float (loss.item()), so no tensor "
                               "(or graph) outlives the step"))
            ctx.fail(ctx.t("accumulated_step returned a tensor: return the full-batch loss as a Python "
                           "float (loss.item()), so no tensor (or graph) outlives the step"))
        ctx.expect(isinstance(loss, float),
                   ctx.t("accumulated_step returned a {kind}; return the full-batch loss as a Python float",
                         kind=type(loss).__name__))
        grads = {k: p.grad for k, p in model.named_parameters()}
        missing = [k for k, g in grads.items() if g is None]
        ctx.expect(not missing, ctx.t("after accumulated_step, `{name}` has no gradient: was .grad cleared "
                                      "after the last backward?", name=missing[0] if missing else ""))
        expected = {k: p.grad for k, p in twin.named_parameters()}
        if not _same(grads, expected):
            _diagnose(ctx, grads, expected, leftover, base, loss_fn, x, y, m)
        ctx.expect_grads_close(grads, expected)
        ctx.expect_close(f"parameters after optimizer.step(){which}", dict(model.named_parameters()),
                         dict(twin.named_parameters()))
        ctx.expect_close(f"returned loss (the full-batch mean){which}", float(loss), full_loss.item(),
                         rtol=1e-5, atol=1e-6)

    _check_unreached_parameter(ctx, mine)

    # What accumulation buys: the activations of one micro-batch at a time.
    ctx.phase(ctx.t("measuring peak memory: accumulated vs full-batch step"))
    torch.manual_seed(ctx.seed)
    model = nn.Sequential(nn.Linear(64, 512), nn.Tanh(), nn.Linear(512, 10)).to(ctx.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = ctx.randn(1024, 64), ctx.randint(0, 10, (1024,))

    def full_step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    ctx.peak_memory(full_step)  # warm-up (the profiler's first run pays its start-up)
    full = ctx.peak_memory(full_step)
    mem = ctx.memory(lambda: mine.accumulated_step(model, opt, F.cross_entropy, x, y, 4),
                     lambda: ctx.reference.accumulated_step(model, opt, F.cross_entropy, x, y, 4),
                     compares=ctx.t("a step of 4 micro-batches: your accumulated_step vs the reference's"))
    ctx.figure("full_batch_peak_MiB", round(full / 2**20, 3),
               label=ctx.t("peak memory of one full-batch step, MiB"))
    share = {"yours": round(100 * mem.learner_bytes / full, 1), "reference": round(100 * mem.reference_bytes / full, 1)}
    ctx.figure("peak_vs_full_batch_pct", share,
               label=ctx.t("peak memory against the full-batch step: yours {yours:.1f}%, the reference's "
                           "{reference:.1f}%", **share))
    # Measured (bytes are deterministic): full batch 5.87 MiB, the reference 1.50 MiB (one
    # micro-batch's activations at a time); keeping every micro-batch's graph alive until the step
    # ends (backward(retain_graph=True), a running total of loss tensors) 3.04 MiB, 2x the reference.
    ctx.expect(mem.learner_bytes <= MAX_OVER_REFERENCE * mem.reference_bytes,
               ctx.t("the peak memory of your 4-micro-batch step on {n} rows is {mine:.2f} MiB ({pct:.0f}% of a "
                     "full-batch step's {full:.2f} MiB), where accumulating one micro-batch at a time reaches "
                     "{ref:.2f} MiB (yours may be at most {over:.0f}% above it): the micro-batches' graphs and "
                     "activations stay alive until the step ends. Let each backward() free its graph (no "
                     "retain_graph=True) and add up the loss as a float (loss.item()), not as a tensor",
                     n=x.shape[0], mine=mem.learner_bytes / 2**20, pct=100 * mem.learner_bytes / full,
                     full=full / 2**20, ref=mem.reference_bytes / 2**20, over=100 * (MAX_OVER_REFERENCE - 1)))
