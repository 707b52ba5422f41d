"""Check: accumulated_step runs the model on micro-batches only, and leaves the full-batch
gradients and parameters (and returns the full-batch loss)."""

import copy
import math

import torch
from torch import nn
from torch.nn import functional as F


def _model(d_in, classes):
    return nn.Sequential(nn.Linear(d_in, 32), nn.Tanh(), nn.Linear(32, classes))


def check(ctx):
    mine = ctx.learner
    # (batch, micro_batches): the last two do not divide evenly.
    cases = [(64, 4), (32, 4), (30, 4), (45, 3)]
    for trial in ctx.trials(len(cases)):
        n, m = cases[trial]
        d_in, classes = ctx.choice([(12, 5), (7, 3)])
        torch.manual_seed(ctx.seed + trial)
        model = _model(d_in, classes).to(ctx.device)
        twin = copy.deepcopy(model)
        x = ctx.randn(n, d_in)
        y = ctx.randint(0, classes, (n,))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)

        # The expected result: one step on the whole batch.
        twin_opt.zero_grad()
        full_loss = F.cross_entropy(twin(x), y)
        full_loss.backward()
        twin_opt.step()

        # Gradients left over from an earlier step: they must not leak into this one.
        for p in model.parameters():
            p.grad = ctx.randn(*p.shape)
        sizes = []
        steps = []
        hook = model.register_forward_pre_hook(lambda mod, args: sizes.append(args[0].shape[0]))
        step_hook = opt.register_step_post_hook(lambda *args: steps.append(len(sizes)))
        loss = mine.accumulated_step(model, opt, F.cross_entropy, x, y, m)
        hook.remove()
        step_hook.remove()

        largest = math.ceil(n / m)
        ctx.expect(len(sizes) > 0, "accumulated_step never called the model")
        ctx.expect(sum(sizes) == n,
                   f"the model saw {sum(sizes)} rows in total (micro-batches of {sizes}) but the "
                   f"batch has {n}: every row must be used exactly once; when {n} does not divide "
                   f"by {m}, keep the remainder (torch.tensor_split does)")
        ctx.expect(len(sizes) == m and max(sizes) <= largest,
                   f"with micro_batches={m} and a batch of {n}, the model should run {m} times on at "
                   f"most {largest} rows each; it ran on micro-batches of {sizes}")
        ctx.expect(len(steps) == 1 and steps[0] == len(sizes),
                   f"optimizer.step() should be called once, after the last micro-batch; it was "
                   f"called {len(steps)} time(s)" + (f" (after forward pass {', '.join(map(str, steps))} "
                                                   f"of {len(sizes)})" if steps else ""))
        ctx.expect(isinstance(loss, (float, int)) or (isinstance(loss, torch.Tensor) and loss.numel() == 1),
                   f"accumulated_step returned a {type(loss).__name__}; return the full-batch loss as "
                   f"a Python float (loss.item())")
        ctx.expect_grads_close({k: p.grad for k, p in model.named_parameters()},
                               {k: p.grad for k, p in twin.named_parameters()})
        ctx.expect_close("parameters after optimizer.step()", dict(model.named_parameters()),
                         dict(twin.named_parameters()))
        ctx.expect_close("returned loss (the full-batch mean)", float(loss), full_loss.item(),
                         rtol=1e-5, atol=1e-6)

    # What accumulation buys: the activations of one micro-batch at a time.
    ctx.phase("measuring peak memory: accumulated vs full-batch step")
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
                     lambda: ctx.reference.accumulated_step(model, opt, F.cross_entropy, x, y, 4))
    ctx.figure("full_batch_peak_MiB", round(full / 2**20, 3))
    ctx.figure("peak_vs_full_batch_pct", {"yours": round(100 * mem.learner_bytes / full, 1),
                                          "reference": round(100 * mem.reference_bytes / full, 1)})
