"""Check: DDP with gradient accumulation. The gradients at the optimizer step and the updated
parameters equal one process training on the whole global batch, and DDP communicates once
per optimizer step (counted with a comm hook), not once per micro-batch; every forward runs
on one micro-batch, not on the concatenated batch.

Runs on every torchrun rank; each rank judges its own replica. The manifest runs it with 2
ranks, then 4; with 4, one training step only.
"""

import torch
import torch.nn.functional as F
from _common import call_setup, own_model, process_group
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP


def check(ctx):
    with process_group():
        _check(ctx)


def _check(ctx):
    rank, world = ctx.rank, ctx.world_size
    ref_mod = ctx.reference
    in_features, hidden, out_features = ctx.choice([5, 8]), ctx.choice([7, 12]), ctx.choice([2, 3])
    # never equal to the world size, so dividing by the one is not dividing by the other (3 or 4
    # with 2 ranks, 3 or 5 with 4)
    n_micro = ctx.choice([m for m in (3, 4, 5) if m != world][:2])
    micro_rows = ctx.choice([2, 5])
    torch.manual_seed(ctx.seed)
    single = ref_mod.Net(in_features, hidden, out_features)
    model = own_model(ctx, "Net", single, in_features, hidden, out_features)

    ctx.phase(ctx.t("wrapping your model"))
    ddp = call_setup(ctx, "make_ddp", lambda: ctx.learner.make_ddp(model),
                     ctx.t("on the CPU with gloo, wrap the model without device_ids: DDP(model)"))
    ctx.expect(isinstance(ddp, DDP),
               ctx.t("make_ddp must return a DistributedDataParallel, it returned {kind}", kind=type(ddp).__name__))
    ctx.expect(ddp.module is model,
               ctx.t("make_ddp must wrap the model it was given (ddp.module is that model)"))

    # Count DDP's communication: the hook runs once per gradient bucket when a backward syncs;
    # the last bucket ends one all-reduce round.
    rounds = [0]

    def counting_allreduce(state, bucket):
        if bucket.is_last():
            rounds[0] += 1
        return allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, counting_allreduce)
    # The rows of every forward of the model: accumulation exists so that only one micro-batch's
    # activations are alive at a time, which one forward over the concatenated batch undoes.
    forward_rows = []
    model.register_forward_pre_hook(lambda module, args: forward_rows.append(
        args[0].shape[0] if args and isinstance(args[0], torch.Tensor) and args[0].dim() else 0))
    optimizer = torch.optim.SGD(ddp.parameters(), lr=ref_mod.LR)
    at_step = []                          # gradients as the optimizer saw them, one entry per step()
    optimizer.register_step_pre_hook(
        lambda opt, args, kwargs: at_step.append(
            [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]))
    single_opt = torch.optim.SGD(single.parameters(), lr=ref_mod.LR)
    names = [name for name, _ in model.named_parameters()]

    figures = []
    # With 2 ranks (the first world size) the whole contract, over two steps; with more, one step,
    # which is where code that assumes two ranks goes wrong: every collective of a 4-rank run on
    # 2 cores waits for the slowest of 8 processes.
    for step in ctx.trials(2 if world == 2 else 1, ctx.t("training step")):
        per_rank = n_micro * micro_rows
        x = ctx.randn(world * per_rank, in_features)      # the global batch, equal on every rank
        y = ctx.randn(world * per_rank, out_features)
        mine = slice(rank * per_rank, (rank + 1) * per_rank)
        micro = [(a.clone(), b.clone()) for a, b in zip(x[mine].split(micro_rows), y[mine].split(micro_rows))]
        with torch.no_grad():
            local_loss = torch.stack([F.mse_loss(single(a), b) for a, b in micro]).mean()
        rounds[0], at_step[:], forward_rows[:] = 0, [], []

        loss = ctx.learner.train_step(ddp, optimizer, micro)

        ctx.expect(len(at_step) == 1,
                   ctx.t("train_step called optimizer.step() {count} times for {n} micro-batches: "
                         "accumulate the gradients of all of them, then step once", count=len(at_step), n=n_micro))
        ctx.expect(isinstance(loss, torch.Tensor) and loss.numel() == 1,
                   ctx.t("train_step must return the mean loss as a one-element tensor"))
        ctx.expect(not loss.requires_grad and loss.grad_fn is None,
                   ctx.t("train_step returned a loss that still holds its autograd graph: return it detached"))
        ctx.expect_close(f"mean micro-batch loss returned by train_step at step {step + 1}",
                         loss.detach().reshape(()).float(), local_loss, atol=1e-5, rtol=1e-4)
        figures.append(rounds[0])
        ctx.expect(rounds[0] != 0,
                   ctx.t("DDP never all-reduced the gradients in step {step}: every backward ran inside "
                         "no_sync() (or bypassed the DDP wrapper), so each rank stepped with its own gradients. "
                         "The last micro-batch's backward must run outside no_sync()", step=step + 1))
        ctx.expect(rounds[0] <= 1,
                   ctx.t("DDP all-reduced the gradients {count} times in step {step}, for {n} "
                         "micro-batches: run the backward of every micro-batch but the last inside "
                         "model.no_sync(), so that only the last one communicates",
                         count=rounds[0], step=step + 1, n=n_micro))
        widest = max(forward_rows, default=0)
        ctx.expect(widest <= micro_rows,
                   ctx.t("train_step ran the model on {rows} rows at once in step {step}, but a micro-batch has "
                         "{micro}: run forward and backward one micro-batch at a time, so that only one "
                         "micro-batch's activations are alive at once (what accumulation is for), instead of "
                         "one pass over the concatenated batch", rows=widest, step=step + 1, micro=micro_rows))

        F.mse_loss(single(x), y).backward()                # one process, the whole global batch
        grads = at_step[0]
        for name, g, q in zip(names, grads, single.parameters()):
            if g is None:
                ctx.fail(ctx.t("`{name}` had no gradient when optimizer.step() ran: call backward before the step",
                               name=name))
            ratio = (g.norm() / q.grad.norm()).item() if q.grad.norm() > 0 else 1.0
            for factor, why in ((n_micro, ctx.t("the loss of each of the {n} micro-batches was not divided "
                                                "by {n}", n=n_micro)),
                                (1 / n_micro, ctx.t("the loss was divided by the number of micro-batches twice"))):
                ctx.expect(abs(ratio - factor) > 0.01 * factor,
                           ctx.t("the gradient of `{name}` at step {step} is {ratio:.3g} times the single-process "
                                 "one: {why}, so the accumulated gradient is not the mean over the batch",
                                 name=name, step=step + 1, ratio=ratio, why=why))
            ctx.expect_close(f"gradient of `{name}` when optimizer.step() ran in step {step + 1} (compared "
                             "with one process on the whole global batch)", g, q.grad, atol=1e-5, rtol=1e-4)
        single_opt.step()
        single_opt.zero_grad()
        for name, p, q in zip(names, model.parameters(), single.parameters()):
            ctx.expect(p.grad is None or not p.grad.any(),
                       ctx.t("`{name}` still has a gradient after train_step: clear the gradients after the step",
                             name=name))
            ctx.expect_close(f"`{name}` after step {step + 1}", p.detach(), q.detach(), atol=1e-5, rtol=1e-4)
    ctx.figure("all_reduce_rounds", {"micro_batches_per_step": n_micro, "per_step": figures},
               label=ctx.t("gradient all-reduces per optimizer step: {rounds} (each step runs {n} micro-batches; the "
                           "goal is 1, in the last micro-batch's backward)", n=n_micro,
                           rounds=", ".join(str(r) for r in figures)))
