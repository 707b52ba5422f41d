"""A checker whose expected values come from plain torch calls: the target of tricks that bend
torch inside the learner's process."""

import torch


def check(ctx):
    for _ in ctx.trials(2):
        x = ctx.randn(6, 4, scale=3.0)
        ctx.expect_close("output", ctx.learner.sigmoid(x), torch.sigmoid(x))
