"""Check: inner_adapt's adapted parameters equal k SGD steps computed here with
torch.autograd.grad(create_graph=True), stay differentiable (second-order), and maml_loss and
its gradient match the reference over a batch of tasks."""

import torch
from torch import nn
from torch.func import functional_call
from torch.nn import functional as F

TOL = dict(atol=1e-5, rtol=1e-4)


def _net(hidden):
    return nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, 1))


def _adapt(model, params, x, y, lr, steps):
    """k steps of SGD, differentiable (autograd with create_graph=True)."""
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {k: v - lr * g for (k, v), g in zip(params.items(), grads)}
    return params


def _sine_tasks(ctx, tasks, shots):
    amp = ctx.rand(tasks, 1, 1) * 4.5 + 0.5
    phase = ctx.rand(tasks, 1, 1) * 3.1416
    sx, qx = ctx.rand(tasks, shots, 1) * 10 - 5, ctx.rand(tasks, shots, 1) * 10 - 5
    return sx, amp * torch.sin(sx + phase), qx, amp * torch.sin(qx + phase)


def _param_grads(model):
    return {k: None if p.grad is None else p.grad.clone() for k, p in model.named_parameters()}


def check(ctx):
    mine = ctx.learner
    for trial in ctx.trials(3):
        steps = (3, 1, 5)[trial]  # 3 first: a loop one step short shows as a wrong value, not as 0 steps
        # Never a round number: a learning rate hard-coded in the solution cannot match it.
        lr = round(0.005 + 0.03 * float(ctx.rand(1)), 5)
        torch.manual_seed(ctx.seed + trial)
        model = _net(ctx.choice([16, 24])).to(ctx.device)
        if trial == 1:
            model.eval()  # the caller's mode, whichever it is, must come back as it was
        sx, sy, qx, qy = (t[0] for t in _sine_tasks(ctx, 1, ctx.choice([5, 10])))
        before = {k: v.detach().clone() for k, v in model.named_parameters()}

        start = dict(model.named_parameters())
        adapted = mine.inner_adapt(model, start, sx, sy, lr, steps)
        expected = _adapt(model, dict(model.named_parameters()), sx, sy, lr, steps)
        ctx.expect(isinstance(adapted, dict), ctx.t("inner_adapt returned a {kind}, expected a dict of parameters",
                                                    kind=type(adapted).__name__))
        ctx.expect_equal("the keys of the adapted parameters", sorted(adapted), sorted(expected))
        for k in expected:
            ctx.expect_close(ctx.t("adapted `{name}` after {steps} step(s) at lr={lr}", name=k, steps=steps, lr=lr),
                             adapted[k], expected[k], **TOL)
        ctx.expect_close("the model's own parameters after inner_adapt (it must not change them)",
                         dict(model.named_parameters()), before)
        ctx.expect(all(v.requires_grad for v in adapted.values()),
                   ctx.t("the adapted parameters do not require grad: they were detached from the starting "
                         "parameters, so the outer (meta) loss cannot be differentiated through the inner "
                         "steps. Build each step out of place from the previous tensors."))

        # The meta-gradient: differentiate a query loss through the inner steps.
        F.mse_loss(functional_call(model, adapted, (qx,)), qy).backward()
        got = _param_grads(model)
        model.zero_grad(set_to_none=True)
        F.mse_loss(functional_call(model, expected, (qx,)), qy).backward()
        for k, e in _param_grads(model).items():
            ctx.expect_close(ctx.t("gradient of a query loss with respect to the starting `{name}`, through your "
                                   "{steps} inner step(s) (second-order MAML: don't detach inside the loop)",
                                   name=k, steps=steps),
                             got[k], e, **TOL)

    # Adapting at test time: under torch.no_grad(), and from tensors that do not require grad
    # (the guide: torch.func.grad needs no requires_grad and still works under no_grad). The
    # caller's grad mode must come back as it was (the call contract watches it).
    ctx.phase(ctx.t("checking inner_adapt at test time (torch.no_grad(), detached parameters)"))
    torch.manual_seed(ctx.seed + 7)
    model = _net(ctx.choice([12, 16])).to(ctx.device)
    sx, sy, _, _ = (t[0] for t in _sine_tasks(ctx, 1, 6))
    lr, steps = round(0.005 + 0.03 * float(ctx.rand(1)), 5), 2
    expected = {k: v.detach() for k, v in _adapt(model, dict(model.named_parameters()), sx, sy, lr, steps).items()}
    for how in ("no_grad", "detached"):
        where = (ctx.t("under torch.no_grad()") if how == "no_grad"
                 else ctx.t("from detached parameters (requires_grad=False)"))
        start = (dict(model.named_parameters()) if how == "no_grad"
                 else {k: v.detach().clone() for k, v in model.named_parameters()})
        try:
            with torch.set_grad_enabled(how != "no_grad"):
                adapted = mine.inner_adapt(model, start, sx, sy, lr, steps)
        except RuntimeError as exc:
            ctx.fail(ctx.t("inner_adapt raised when adapting {where}: {error}. torch.func.grad computes the "
                           "gradient whatever the caller's grad mode, and of tensors that do not require grad; "
                           "torch.autograd.grad needs a graph that reaches tensors requiring grad. Take the "
                           "inner gradients with torch.func.grad", where=where,
                           error=str(exc).strip().splitlines()[0].rstrip(".!") if str(exc).strip() else "?"), [])
        ctx.expect(isinstance(adapted, dict), ctx.t("inner_adapt returned a {kind}, expected a dict of parameters",
                                                    kind=type(adapted).__name__))
        ctx.expect_equal("the keys of the adapted parameters", sorted(adapted), sorted(expected))
        ctx.expect_close(ctx.t("adapted parameters after {steps} step(s) at lr={lr}, {where}",
                               steps=steps, lr=lr, where=where),
                         {k: v.detach() for k, v in adapted.items()}, expected, **TOL)

    ctx.phase(ctx.t("checking maml_loss on a batch of tasks"))
    torch.manual_seed(ctx.seed)
    model = _net(20).to(ctx.device).eval()  # handed over in eval mode: maml_loss must leave it there
    tasks = _sine_tasks(ctx, 6, 8)
    lr, steps = round(0.01 + 0.02 * float(ctx.rand(1)), 5), ctx.choice([2, 3])
    loss = mine.maml_loss(model, *tasks, lr, steps)
    ctx.expect(all(p.grad is None for p in model.parameters()),
               ctx.t("maml_loss already filled the model's .grad: it should only return the loss; the "
                     "caller (the outer optimizer's loop) calls backward()"))
    ctx.expect(isinstance(loss, torch.Tensor) and loss.numel() == 1,
               ctx.t("maml_loss should return a scalar tensor (the mean query loss over tasks)"))
    ctx.expect(loss.requires_grad, ctx.t("maml_loss's result does not require grad: it must be "
                                         "differentiable with respect to the model's parameters"))
    loss.backward()
    got = _param_grads(model)
    model.zero_grad(set_to_none=True)
    expected = torch.stack([F.mse_loss(functional_call(model, _adapt(model, dict(model.named_parameters()),
                                                                     tasks[0][t], tasks[1][t], lr, steps),
                                                       (tasks[2][t],)), tasks[3][t])
                            for t in range(6)]).mean()
    ctx.expect_close(f"maml_loss (mean query loss over 6 tasks, {steps} inner steps at lr={lr})",
                     loss.detach().reshape(()), expected.detach(), **TOL)
    expected.backward()
    for k, e in _param_grads(model).items():
        ctx.expect_close(f"gradient of maml_loss with respect to the model's `{k}`", got[k], e, **TOL)

    def meta_step(fn):
        def run():
            model.zero_grad(set_to_none=True)
            fn(model, *tasks, lr, steps).backward()
        return run
    ctx.time(meta_step(mine.maml_loss), meta_step(ctx.reference.maml_loss))
