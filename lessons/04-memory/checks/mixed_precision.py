"""Check: train_step runs every Linear in the low-precision dtype (bf16 on CPU, fp16 on CUDA),
keeps float32 parameters with finite float32 gradients, and the loss goes down. On CUDA it
must also go through the GradScaler: a step whose gradients overflow is skipped."""

import copy
import math

import torch
from torch import nn
from torch.nn import functional as F

STEPS = 30


def _name(dtype):
    return str(dtype).replace("torch.", "")


def _data(ctx, n, d_in, classes):
    x = ctx.randn(n, d_in)
    teacher = ctx.randn(d_in, classes)
    return x, (x @ teacher).argmax(dim=1)


def check(ctx):
    mine, ref = ctx.learner, ctx.reference
    dev = ctx.device
    want = torch.float16 if dev.type == "cuda" else torch.bfloat16

    got = mine.autocast_dtype(dev)
    ctx.expect(got == want, f"autocast_dtype({dev.type!r}) returned {got}; use {want} on "
                            f"{'CUDA' if dev.type == 'cuda' else 'the CPU'}")
    scaler = mine.make_scaler(dev)
    ctx.expect(isinstance(scaler, torch.amp.GradScaler),
               f"make_scaler returned a {type(scaler).__name__}, expected a torch.amp.GradScaler "
               f"(torch.cuda.amp.GradScaler is deprecated: use torch.amp.GradScaler(device.type, ...))")
    if want == torch.float16:
        ctx.expect(scaler.is_enabled(), "make_scaler returned a disabled GradScaler for float16: "
                                        "fp16 gradients underflow without loss scaling")
    else:
        ctx.expect(not scaler.is_enabled(),
                   "make_scaler returned an enabled GradScaler for bfloat16: bf16 has float32's "
                   "exponent range, so gradients do not underflow; pass enabled=False")

    d_in, hidden, classes = 24, ctx.choice([48, 64]), 6
    torch.manual_seed(ctx.seed)
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, classes)).to(dev)
    twin = copy.deepcopy(model)
    linears = {name: m for name, m in model.named_modules() if isinstance(m, nn.Linear)}
    seen = []
    for name, m in linears.items():
        m.register_forward_hook(lambda mod, args, out, name=name: seen.append((name, out.dtype)))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    x, y = _data(ctx, 256, d_in, classes)

    losses = []
    for step in ctx.trials(STEPS, label="training step"):
        seen.clear()
        loss = mine.train_step(model, opt, scaler, x, y)
        ctx.expect(len(seen) > 0, "train_step never called the model")
        for name, dtype in seen:
            ctx.expect(dtype == want,
                       f"Linear layer `{name}` produced {_name(dtype)} output inside train_step: its "
                       f"matmul did not run in {_name(want)}. Run the forward pass inside "
                       f"torch.autocast(device_type=x.device.type, dtype={want}) (torch.cuda.amp.autocast "
                       f"is deprecated and does nothing on the CPU)")
        for pname, p in model.named_parameters():
            ctx.expect(p.dtype == torch.float32,
                       f"parameter `{pname}` is {_name(p.dtype)} after train_step: keep the model in "
                       f"float32 (autocast casts on the fly; don't call .half()/.bfloat16() on it)")
            ctx.expect(p.grad is not None, f"parameter `{pname}` has no gradient after train_step")
            if step == STEPS - 1:  # (on CUDA an early step may legitimately overflow and be skipped)
                ctx.expect_finite(f"gradient of `{pname}` after the last step", p.grad)
        ctx.expect(isinstance(loss, (float, int)), f"train_step returned a {type(loss).__name__}; "
                                                   f"return loss.item()")
        ctx.expect(math.isfinite(loss), f"the loss at step {step + 1} is {loss}")
        losses.append(float(loss))

    first, last = losses[0], sum(losses[-5:]) / 5
    ref_opt = torch.optim.Adam(twin.parameters(), lr=3e-3)
    ref_scaler = ref.make_scaler(dev)
    ref_losses = [ref.train_step(twin, ref_opt, ref_scaler, x, y) for _ in range(STEPS)]
    ctx.figure("loss", {"first": round(first, 4), "last_5_mean": round(last, 4),
                        "reference_last_5_mean": round(sum(ref_losses[-5:]) / 5, 4)})
    ctx.expect(last < 0.7 * first,
               f"the loss did not go down: {first:.4f} at the first step, {last:.4f} on average over "
               f"the last 5 of {STEPS} (the reference reaches {sum(ref_losses[-5:]) / 5:.4f}). Does "
               f"train_step call optimizer.step() (through scaler.step(optimizer))?")

    if want == torch.float16:
        # Overflow: fp16 activations become inf, so every gradient is inf/NaN. Through the
        # scaler the step is skipped (parameters unchanged) and the scale shrinks.
        ctx.phase("checking that an overflowing step is skipped")
        before = {k: p.detach().clone() for k, p in model.named_parameters()}
        scale = scaler.get_scale()
        mine.train_step(model, opt, scaler, x * 1e6, y)
        ctx.expect_close("parameters after a step whose fp16 gradients overflowed (it must be "
                         "skipped: use scaler.step(optimizer), not optimizer.step())",
                         dict(model.named_parameters()), before)
        ctx.expect(scaler.get_scale() < scale,
                   "the GradScaler's scale did not shrink after an overflow: call scaler.update() "
                   "after scaler.step(optimizer)")
