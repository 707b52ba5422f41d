"""A tiny distributed checker for the runner's tests of several world sizes: every rank checks
its own piece of a tensor and an all-reduce, and reports the world size it ran at."""

import torch.distributed as dist


def check(ctx):
    dist.init_process_group("gloo")
    try:
        rank, world = ctx.rank, ctx.world_size
        ctx.phase("splitting the rows")
        x = ctx.randn(12, 3)
        ctx.expect_close("this rank's rows", ctx.learner.part(x, rank, world), x.chunk(world)[rank])
        y = ctx.randn(4) + rank
        want = sum(y - rank + r for r in range(world))
        ctx.expect_close("the sum over the ranks", ctx.learner.total(y), want)
        ctx.figure("world_size", world, label="world size")
    finally:
        dist.destroy_process_group()
