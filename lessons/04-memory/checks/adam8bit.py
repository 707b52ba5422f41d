"""Check: make_optimizer gives an Adam over all of the model's parameters, with the lr it is
given and Adam's defaults (read from its param groups), whose state is at most 30% of
torch.optim.Adam's and whose loss after N steps is close to Adam's; state_bytes counts
optimizer state correctly (8-bit and 32-bit)."""

import copy

import torch
from torch import nn
from torch.nn import functional as F

STEPS = 25
MAX_RATIO = 0.30


def _state_bytes(optimizer):
    return sum(v.numel() * v.element_size() for state in optimizer.state.values()
               for v in state.values() if isinstance(v, torch.Tensor))


def _check_configuration(ctx, opt, model, lr):
    """What the task names, read from the optimizer itself: every parameter, the lr it was
    given, and Adam's defaults (betas, eps, no weight decay)."""
    held = {id(p) for group in opt.param_groups for p in group["params"]}
    params = dict(model.named_parameters())
    left_out = [name for name, p in params.items() if id(p) not in held]
    ctx.expect(not left_out, ctx.t("the optimizer from make_optimizer leaves out {n} of the model's {total} "
                                   "parameters (the first: `{first}`): pass model.parameters()",
                                   n=len(left_out), total=len(params), first=left_out[0] if left_out else ""))
    for i, group in enumerate(opt.param_groups):
        ctx.expect(group.get("lr") == lr,
                   ctx.t("parameter group {i} has learning rate {got}, but make_optimizer was asked for "
                         "lr={lr:g}: pass the lr it is given", i=i, got=group.get("lr"), lr=lr))
        ctx.expect(tuple(group.get("betas", (0.9, 0.999))) == (0.9, 0.999),
                   ctx.t("parameter group {i} has betas={betas}; the task is Adam with its default betas "
                         "(0.9, 0.999)", i=i, betas=tuple(group.get("betas", ()))))
        ctx.expect(not group.get("weight_decay"),
                   ctx.t("parameter group {i} has weight_decay={wd}: that is AdamW-style decoupled decay "
                         "(AdamW8bit's default is 0.01); the task is plain Adam, without decay",
                         i=i, wd=group.get("weight_decay")))


def _train(model, opt, batches):
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


def check(ctx):
    mine, ref = ctx.learner, ctx.reference
    d_in, hidden, d_out = 96, 256, 16
    lr = ctx.choice([2e-3, 3e-3, 4e-3])
    torch.manual_seed(ctx.seed)
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                          nn.Linear(hidden, d_out)).to(ctx.device)
    adam_model, ref_model = copy.deepcopy(model), copy.deepcopy(model)
    teacher = ctx.randn(d_in, d_out) / d_in ** 0.5
    x_all = ctx.randn(1024, d_in)
    y_all = torch.tanh(x_all @ teacher) * 2
    batches = [(x_all[i], y_all[i]) for i in (ctx.randint(0, 1024, (64,)) for _ in range(STEPS))]
    with torch.no_grad():
        start_loss = F.mse_loss(model(x_all), y_all).item()

    opt = mine.make_optimizer(model, lr)
    ctx.expect(isinstance(opt, torch.optim.Optimizer),
               ctx.t("make_optimizer returned a {kind}, expected an optimizer", kind=type(opt).__name__))
    _check_configuration(ctx, opt, model, lr)
    adam = torch.optim.Adam(adam_model.parameters(), lr=lr)
    ref_opt = ref.make_optimizer(ref_model, lr)
    ctx.phase(ctx.t("training {steps} steps with your optimizer and with torch.optim.Adam", steps=STEPS))
    _train(model, opt, batches)
    _train(adam_model, adam, batches)
    _train(ref_model, ref_opt, batches[:1])  # one step creates all of the reference's state

    # state_bytes, on both optimizers, against this checker's own count.
    mine_bytes, adam_bytes, ref_bytes = _state_bytes(opt), _state_bytes(adam), _state_bytes(ref_opt)
    ctx.expect_equal("state_bytes(your optimizer)", int(mine.state_bytes(opt)), mine_bytes, within_run=True)
    ctx.expect_equal("state_bytes(torch.optim.Adam)", int(mine.state_bytes(adam)), adam_bytes)
    with torch.no_grad():
        losses = {name: F.mse_loss(m(x_all), y_all).item()
                  for name, m in (("yours", model), ("adam", adam_model))}
    ctx.figure("optimizer_state_MiB", {"yours": round(mine_bytes / 2**20, 3),
                                       "reference": round(ref_bytes / 2**20, 3),
                                       "adam_fp32": round(adam_bytes / 2**20, 3)})
    ctx.figure("state_vs_adam_pct", {"yours": round(100 * mine_bytes / adam_bytes, 1),
                                     "reference": round(100 * ref_bytes / adam_bytes, 1)})
    ctx.figure("loss_after_steps", {"start": round(start_loss, 5), **{k: round(v, 5) for k, v in losses.items()}})

    ctx.expect(mine_bytes > 0, ctx.t("your optimizer holds no state after training: did it step at all?"))
    ctx.expect(mine_bytes <= MAX_RATIO * adam_bytes,
               ctx.t("your optimizer's state is {mine:.2f} MiB, {pct:.0f}% of torch.optim.Adam's {adam:.2f} "
                     "MiB; it should be at most {limit:.0f}%: use bitsandbytes' 8-bit Adam (bnb.optim.Adam8bit)",
                     mine=mine_bytes / 2**20, pct=100 * mine_bytes / adam_bytes, adam=adam_bytes / 2**20,
                     limit=100 * MAX_RATIO))
    ctx.expect(losses["yours"] < 0.8 * start_loss,
               ctx.t("the loss did not go down: {before:.4f} before and {after:.4f} after {steps} steps",
                     before=start_loss, after=losses["yours"], steps=STEPS))
    gap = abs(losses["yours"] - losses["adam"])
    ctx.expect(gap <= 0.05 * losses["adam"] + 1e-4,
               ctx.t("after {steps} steps at lr={lr:g} your loss is {mine:.5f} and Adam's {adam:.5f} "
                     "({pct:.1f}% apart; allowed 5%): does make_optimizer use the learning rate it is given "
                     "and Adam's default betas?", steps=STEPS, lr=lr, mine=losses["yours"],
                     adam=losses["adam"], pct=100 * gap / losses["adam"]))
