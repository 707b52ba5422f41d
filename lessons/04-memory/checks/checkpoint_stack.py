"""Check: checkpointed_forward matches the plain stack (output and every parameter's gradient)
and its forward+backward peak memory is at least 40% below the plain stack's, measured here."""

import torch

MIN_SAVING = 0.40


def _grads(stack):
    return {name: (None if p.grad is None else p.grad.detach().clone())
            for name, p in stack.named_parameters()}


def check(ctx):
    mine, ref = ctx.learner, ctx.reference

    # 1. Same output and same gradients as the plain stack, on awkward shapes. The input does
    #    not require grad, as in training (data never does): reentrant checkpointing breaks here.
    for trial in ctx.trials(3):
        depth = (3, 5, 4)[trial]
        width = ctx.choice([24, 40, 17])
        lead = ((37,), (5, 9), (1,))[trial]
        torch.manual_seed(ctx.seed + trial)
        stack = ref.build_stack(depth, width).to(ctx.device)
        x = ctx.randn(*lead, width)
        g = ctx.randn(*lead, width)

        expected = stack(x)
        expected.backward(g)
        plain = _grads(stack)
        stack.zero_grad(set_to_none=True)

        out = mine.checkpointed_forward(stack, x)
        ctx.expect(isinstance(out, torch.Tensor),
                   f"checkpointed_forward returned a {type(out).__name__}, expected a tensor")
        ctx.expect_close("output of checkpointed_forward", out, expected.detach())
        ctx.expect(out.requires_grad,
                   "the output of checkpointed_forward does not require grad, so no gradient can "
                   "reach the blocks' parameters. Was it computed under torch.no_grad(), detached, "
                   "or checkpointed with use_reentrant=True while the input does not require grad? "
                   "Use checkpoint(block, h, use_reentrant=False).")
        out.backward(g)
        ctx.expect_grads_close(_grads(stack), plain)

    # 2. Peak memory of a whole training step (forward + backward), plain vs checkpointed.
    ctx.phase("measuring peak memory of forward + backward")
    torch.manual_seed(ctx.seed)
    stack = ref.build_stack(8, 64).to(ctx.device)
    x = ctx.randn(256, 64)
    g = ctx.randn(256, 64)

    def step(forward):
        def run():
            stack.zero_grad(set_to_none=True)
            forward(stack, x).backward(g)
        return run

    plain_step = step(lambda s, inp: s(inp))
    mine_step, ref_step = step(mine.checkpointed_forward), step(ref.checkpointed_forward)
    ctx.peak_memory(plain_step)  # the profiler's first run pays its own start-up: warm it
    plain_bytes = ctx.peak_memory(plain_step)
    mem = ctx.memory(mine_step, ref_step)
    saved = 1 - mem.learner_bytes / plain_bytes
    ref_saved = 1 - mem.reference_bytes / plain_bytes
    ctx.figure("peak_MiB_without_checkpointing", round(plain_bytes / 2**20, 3))
    ctx.figure("memory_saved_pct", {"yours": round(100 * saved, 1), "reference": round(100 * ref_saved, 1)})
    ctx.expect(saved >= MIN_SAVING,
               f"peak memory of forward+backward is {mem.learner_bytes / 2**20:.2f} MiB with your "
               f"checkpointing vs {plain_bytes / 2**20:.2f} MiB without: only {100 * saved:.0f}% lower, "
               f"it should be at least {100 * MIN_SAVING:.0f}% lower (the reference saves "
               f"{100 * ref_saved:.0f}%). Checkpoint each block (or several segments), not the "
               f"whole stack at once: one checkpoint around everything recomputes the whole stack "
               f"in backward and holds all of its activations again.")

    # 3. What the memory costs in time: one extra forward of each checkpointed block.
    # "time": your step vs the plain step (a speedup below 1 is the cost of recomputation).
    mine_t = ctx.time(mine_step, plain_step)
    ref_t = ctx.time(ref_step, plain_step, name="reference_time_vs_plain")
    ctx.figure("time_overhead_pct", {
        "yours": round(100 * (mine_t.learner_s / mine_t.reference_s - 1), 1),
        "reference": round(100 * (ref_t.learner_s / ref_t.reference_s - 1), 1)})
