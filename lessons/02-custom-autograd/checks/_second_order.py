"""Shared by the chapter's checkers: differentiate the learner's gradient once more.

A backward that detaches what it uses, or carries @once_differentiable, still gives the right
first derivative: only a second one (create_graph=True, as Hessians, gradient penalties and
gradgradcheck ask for) shows it. The chapter's stability page says why a backward made of
torch ops on ctx.saved_tensors is differentiable with no extra code."""

import torch


def expect_second_derivative(ctx, fn, truth_fn, x, g, v):
    """d/dx <d/dx <fn(x), g>, v> through the learner's backward, against the same through
    `truth_fn` (torch's own ops), both in x's dtype (use float64)."""
    x1, x2 = x.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    (gx,) = torch.autograd.grad(fn(x1), x1, g, create_graph=True)
    ctx.expect(
        gx.grad_fn is not None,
        ctx.t(
            "the gradient your backward returns is not differentiable (no graph behind it), so "
            "second derivatives are wrong: build it from torch ops on ctx.saved_tensors, without "
            "@once_differentiable, .detach(), torch.no_grad() or values computed in forward"
        ),
    )
    try:
        (hv,) = torch.autograd.grad(gx, x1, v, allow_unused=True)
    except RuntimeError as exc:
        ctx.fail(
            ctx.t(
                "differentiating your backward failed (remove @once_differentiable: this "
                "backward is made of differentiable torch ops)"
            ),
            [str(exc).splitlines()[0]],
        )
    (gx2,) = torch.autograd.grad(truth_fn(x2), x2, g, create_graph=True)
    (hv2,) = torch.autograd.grad(gx2, x2, v)
    ctx.expect_close(
        ctx.t("second derivative (the gradient of your backward's result)"),
        torch.zeros_like(hv2) if hv is None else hv,
        hv2,
    )
