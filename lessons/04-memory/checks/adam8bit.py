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


def _deep_state_bytes(optimizer):
    """The same count with tensors inside lists and tuples too (LBFGS keeps its history in lists):
    "all tensors in the state" read either way is right."""
    def size(v):
        if isinstance(v, torch.Tensor):
            return v.numel() * v.element_size()
        if isinstance(v, (list, tuple)):
            return sum(size(item) for item in v)
        return 0
    return sum(size(v) for state in optimizer.state.values() for v in state.values())


def _check_state_bytes_anywhere(ctx, mine):
    """state_bytes "for any optimizer": SGD's momentum_buffer, RMSprop's square_avg and step, LBFGS
    (whose state also holds numbers and lists); before the first step, and with a frozen parameter
    that never gets state. Measuring must not change the optimizer: optimizer.state is a
    defaultdict, and reading optimizer.state[p] for a parameter without state inserts one."""
    torch.manual_seed(ctx.seed + 1)
    probe = nn.Sequential(nn.Linear(7, 5), nn.Tanh(), nn.Linear(5, 3)).to(ctx.device)
    probe[0].bias.requires_grad_(False)  # frozen: no gradient, so no state
    xs, ys = ctx.randn(16, 7), ctx.randn(16, 3)
    makers = (("torch.optim.SGD(momentum=0.9)", lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9)),
              ("torch.optim.RMSprop", lambda ps: torch.optim.RMSprop(ps, lr=0.01)),
              ("torch.optim.LBFGS", lambda ps: torch.optim.LBFGS(ps, lr=0.1, max_iter=3)))
    for name, make in makers:
        opt = make(probe.parameters())
        for stepped in (False, True):
            when = ctx.t("after a step") if stepped else ctx.t("before its first step")
            if stepped:
                def closure(opt=opt):
                    opt.zero_grad(set_to_none=True)
                    loss = F.mse_loss(probe(xs), ys)
                    loss.backward()
                    return loss
                opt.step(closure)
            entries = len(opt.state)
            try:
                got = mine.state_bytes(opt)
            except Exception as exc:  # noqa: BLE001 - reported to the learner
                ctx.fail(ctx.t("state_bytes raised {error} for {name} {when}: {message}. Count only the values that "
                               "are tensors and skip everything else (numbers, lists)", error=type(exc).__name__,
                               name=name, when=when, message=str(exc).strip().splitlines()[0] if str(exc).strip()
                               else type(exc).__name__))
            ctx.expect(len(opt.state) == entries,
                       ctx.t("state_bytes changed the optimizer it measured: {name} {when} had state for {before} "
                             "parameter(s) and has it for {after} afterwards. optimizer.state is a defaultdict: "
                             "reading optimizer.state[p] for a parameter without state adds an empty entry; iterate "
                             "over optimizer.state.values() instead", name=name, when=when, before=entries,
                             after=len(opt.state)))
            counts = {_state_bytes(opt), _deep_state_bytes(opt)}
            try:
                value = None if isinstance(got, bool) else float(got)
            except (TypeError, ValueError, RuntimeError):
                value = None
            ok = value in counts
            ctx.expect(ok, ctx.t("state_bytes({name}) {when} returned {got}, but its state holds {want} bytes of "
                                 "tensors: count numel() * element_size() of every tensor in optimizer.state, "
                                 "whatever its key, in bytes", name=name, when=when, got=got,
                                 want=min(counts)))


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
    _check_state_bytes_anywhere(ctx, mine)
    with torch.no_grad():
        losses = {name: F.mse_loss(m(x_all), y_all).item()
                  for name, m in (("yours", model), ("adam", adam_model))}
    state = {"yours": round(mine_bytes / 2**20, 3), "reference": round(ref_bytes / 2**20, 3),
             "adam_fp32": round(adam_bytes / 2**20, 3)}
    ctx.figure("optimizer_state_MiB", state,
               label=ctx.t("optimizer state: yours {yours:.3f} MiB, the reference's {reference:.3f} MiB, "
                           "torch.optim.Adam's (float32) {adam_fp32:.3f} MiB", **state))
    share = {"yours": round(100 * mine_bytes / adam_bytes, 1), "reference": round(100 * ref_bytes / adam_bytes, 1)}
    ctx.figure("state_vs_adam_pct", share,
               label=ctx.t("optimizer state against torch.optim.Adam's: yours {yours:.1f}%, the reference's "
                           "{reference:.1f}%", **share))
    loss = {"start": round(start_loss, 5), **{k: round(v, 5) for k, v in losses.items()}}
    ctx.figure("loss_after_steps", loss,
               label=ctx.t("loss after {steps} steps: {yours:.5g} with your optimizer, {adam:.5g} with "
                           "torch.optim.Adam (from {start:.5g})", steps=STEPS, **loss))

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
