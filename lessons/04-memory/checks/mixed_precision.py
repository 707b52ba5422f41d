"""Check: autocast_dtype and make_scaler give the right dtype and scaler for both devices
(asked on any machine); train_step runs every Linear in the low-precision dtype (bf16 on CPU,
fp16 on CUDA) with backward outside autocast, keeps float32 parameters with finite float32
gradients, and the loss goes down; it steps through the scaler it is given, so a step with
inf/NaN gradients is skipped and the scale shrinks (on CPU with an enabled GradScaler("cpu"));
with max_norm it clips the gradients at their true scale (unscaled once, before the clip), with an
enabled scaler and with its own, and still skips a NaN step."""

import copy
import math

import torch
from torch import nn

STEPS = 30


def _name(dtype):
    return str(dtype).replace("torch.", "")


def _data(ctx, n, d_in, classes):
    x = ctx.randn(n, d_in)
    teacher = ctx.randn(d_in, classes)
    return x, (x @ teacher).argmax(dim=1)


def _cuda_scaler(make_scaler):
    """make_scaler(cuda) on any machine: on one without CUDA, GradScaler("cuda") disables itself
    with a warning, so torch.cuda.is_available() says True while it is built (building a scaler
    touches no GPU: its scale tensor is created lazily)."""
    if torch.cuda.is_available():
        return make_scaler(torch.device("cuda"))
    original = torch.cuda.is_available
    torch.cuda.is_available = lambda: True
    try:
        return make_scaler(torch.device("cuda"))
    finally:
        torch.cuda.is_available = original


def _check_configuration(ctx, mine):
    """The dtype and scaler for BOTH devices, whatever this machine has."""
    for device, want in ((torch.device("cpu"), torch.bfloat16), (torch.device("cuda"), torch.float16),
                         (torch.device("cuda", 0), torch.float16)):
        got = mine.autocast_dtype(device)
        if device.type == "cuda":
            reason = ctx.t("autocast_dtype(torch.device({device!r})) returned {got}; use {want} on CUDA, "
                           "whatever this machine has", device=str(device), got=got, want=want)
        else:
            reason = ctx.t("autocast_dtype(torch.device({device!r})) returned {got}; use {want} on the CPU, "
                           "whatever this machine has", device=str(device), got=got, want=want)
        ctx.expect(got == want, reason)
        ctx.expect_equal(ctx.t("what autocast_dtype(torch.device({device!r})) returned", device=str(device)),
                         str(got), str(got))
    for device in (torch.device("cpu"), torch.device("cuda")):
        scaler = mine.make_scaler(device) if device.type == "cpu" else _cuda_scaler(mine.make_scaler)
        ctx.expect(type(scaler) is torch.amp.GradScaler,
                   ctx.t("make_scaler({device!r}) returned a {kind}, expected a torch.amp.GradScaler "
                         "(torch.cuda.amp.GradScaler is deprecated: use torch.amp.GradScaler(device.type, ...))",
                         device=device.type, kind=f"{type(scaler).__module__}.{type(scaler).__name__}"))
        ctx.expect(getattr(scaler, "_device", device.type) == device.type,
                   ctx.t("make_scaler({device!r}) built a GradScaler for {built!r}: pass device.type",
                         device=device.type, built=getattr(scaler, "_device", "?")))
        if device.type == "cuda":
            ctx.expect(scaler.is_enabled(), ctx.t("make_scaler('cuda') returned a disabled GradScaler: "
                                                  "float16 gradients underflow without loss scaling"))
        else:
            ctx.expect(not scaler.is_enabled(),
                       ctx.t("make_scaler('cpu') returned an enabled GradScaler for bfloat16: bf16 has "
                             "float32's exponent range, so gradients do not underflow; enable it only for float16"))
        enabled = getattr(scaler, "is_enabled", None)
        built = [f"{type(scaler).__module__}.{type(scaler).__name__}", str(getattr(scaler, "_device", "?")),
                 bool(enabled()) if callable(enabled) else None]
        ctx.expect_equal(ctx.t("make_scaler({device!r}): the scaler's class, device and whether it is enabled",
                               device=device.type), built, built)


def _expect_float32_loss(ctx, loss, logits, y, when):
    """The loss train_step returned is cross_entropy of the logits its forward produced, in float32
    (what autocast computes): neither rounded to bfloat16/float16 nor multiplied by the scale."""
    if not logits or not isinstance(loss, (float, int)):
        return
    want = torch.nn.functional.cross_entropy(logits[-1].float(), y).item()
    ctx.expect(math.isclose(float(loss), want, rel_tol=1e-5, abs_tol=1e-6),
               ctx.t("train_step returned the loss {got:.6g} {when}, but cross_entropy of your model's logits, "
                     "computed in float32 as autocast does, is {want:.6g}. Compute the loss inside the autocast "
                     "block (autocast runs cross_entropy in float32; outside it the 16-bit logits give a 16-bit "
                     "loss) and return loss.item(), not the scaled loss that goes into backward",
                     got=float(loss), when=when, want=want))


class _AtAutocast(Exception):
    """Raised by the spy on torch.autocast's constructor: the probe has seen what it came for."""


def _autocast_device_on_cuda(ctx, mine, d_in, hidden, classes):
    """The device_type that train_step gives torch.autocast for a model and batch on CUDA, asked on
    any machine: the model and batch are fake CUDA tensors (shapes, no data, no GPU needed), and
    the step is stopped as autocast is entered. None when it never got that far."""
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    autocast = torch.amp.autocast_mode.autocast
    original = autocast.__init__
    seen = []

    def spy(self, device_type, *args, **kwargs):
        seen.append(str(device_type))
        raise _AtAutocast

    try:
        mode, cuda = FakeTensorMode(), torch.device("cuda")
        model = nn.Sequential(nn.Linear(d_in, hidden, device="meta"), nn.ReLU(),
                              nn.Linear(hidden, classes, device="meta"))
        for module in model.modules():  # fake CUDA parameters (initialising them would need a GPU)
            for name, p in list(module.named_parameters(recurse=False)):
                setattr(module, name, nn.Parameter(FakeTensor(mode, p.detach(), cuda)))
        with mode, ctx.uncontracted():
            opt = torch.optim.Adam(model.parameters(), lr=3e-3)
            scaler = torch.amp.GradScaler("cpu", enabled=False)
            x = torch.empty(8, d_in, device="cuda")
            y = torch.zeros(8, dtype=torch.long, device="cuda")
            autocast.__init__ = spy
            try:
                mine.train_step(model, opt, scaler, x, y)
            except Exception:  # noqa: BLE001 - _AtAutocast, or anything fake tensors cannot do
                pass
            finally:
                autocast.__init__ = original
    except Exception:  # noqa: BLE001 - no fake CUDA tensors on this build: nothing to learn
        return None
    return seen[0] if seen else None


def _fresh_mlp(ctx, dev, sizes):
    """The same small MLP in both runs (seeded here, not trained by either side)."""
    d_in, hidden, classes = sizes
    torch.manual_seed(ctx.seed + 1)
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, classes)).to(dev)


def _true_grad_norm(model, x, y, dtype):
    """The total gradient norm of one autocast step's loss, with no scaler in the way."""
    probe = copy.deepcopy(model)
    with torch.autocast(device_type=x.device.type, dtype=dtype):
        loss = torch.nn.functional.cross_entropy(probe(x), y)
    loss.backward()
    return torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in probe.parameters()])).item()


def _check_clipping(ctx, mine, dev, want, sizes, x, y, lr=0.1):
    """train_step(..., max_norm) clips the gradients at their true scale, through the scaler it is
    given: with an enabled scaler the .grad tensors hold loss x scale until unscale_ divides it out,
    so a clip before that clips a gradient `scale` times too large. Judged by the size of the SGD
    update the step made (lr x the clipped norm), then parameter by parameter against the
    reference's same step."""
    ctx.phase(ctx.t("a clipped step with an enabled GradScaler"))
    base = _fresh_mlp(ctx, dev, sizes)
    true_norm = _true_grad_norm(base, x, y, want)
    max_norm = true_norm / 4  # well below the gradient's norm: the clip must act
    scalers = [(ctx.t("an enabled GradScaler"), lambda: torch.amp.GradScaler(dev.type, enabled=True)),
               (ctx.t("the scaler make_scaler({device!r}) returns", device=dev.type), lambda: mine.make_scaler(dev))]
    for which, build in scalers:
        model = copy.deepcopy(base)
        scaler = build()
        scale = scaler.get_scale() if scaler.is_enabled() else 1.0
        before = [p.detach().clone() for p in model.parameters()]
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        mine.train_step(model, opt, scaler, x, y, max_norm)
        deltas = [(b - p.detach()).flatten() for b, p in zip(before, model.parameters())]
        moved = torch.linalg.vector_norm(torch.cat(deltas)).item() / lr
        ratio = moved / max_norm
        when = ctx.t("train_step(..., max_norm={max_norm:.3g}) with {which}", max_norm=max_norm, which=which)
        ctx.expect(moved > 0, ctx.t("{when} left the parameters unchanged: a clipped step is still a step "
                                    "(are the gradients finite after clipping?)", when=when))
        ctx.expect(not (scale > 1 and abs(ratio * scale - 1) < 0.05),
                   ctx.t("{when} moved the parameters by {moved:.3g} / lr, {scale:g} times less than a clip to "
                         "max_norm allows: the clip saw gradients at loss x scale ({scale:g}), or they were divided "
                         "by the scale twice. Unscale them once, with scaler.unscale_(optimizer), before "
                         "clip_grad_norm_; scaler.step then does not divide again",
                         when=when, moved=moved, scale=scale))
        ctx.expect(not abs(moved / true_norm - 1) < 0.05,
                   ctx.t("{when} was not clipped: the update's norm / lr is {moved:.3g}, the gradient's own norm, "
                         "where a clip to max_norm gives {max_norm:.3g}. Clip before the optimizer step (the "
                         "scaler's step is the optimizer step)", when=when, moved=moved, max_norm=max_norm))
        ctx.expect(abs(ratio - 1) < 0.05,
                   ctx.t("{when} moved the parameters by {moved:.3g} / lr, where clipping the gradients' total norm "
                         "at their true scale gives {max_norm:.3g} (the gradient's own norm is {norm:.3g}). Clip "
                         "the total norm over all parameters, once, after unscaling",
                         when=when, moved=moved, max_norm=max_norm, norm=true_norm))
        params = [p.detach() for p in model.parameters()]
        ctx.expect_close(ctx.t("the parameters after {when}", when=when), params, params, rtol=1e-3, atol=1e-6)

    # An overflowing step is still skipped when it is clipped: clip_grad_norm_ turns inf into NaN,
    # and only the scaler's own check (in unscale_ or step) keeps them out of the parameters.
    model = copy.deepcopy(base)
    scaler = torch.amp.GradScaler(dev.type, enabled=True)
    bad_x = x.clone()
    bad_x[0, 0] = float("nan")
    before = [p.detach().clone() for p in model.parameters()]
    with ctx.uncontracted():
        mine.train_step(model, torch.optim.SGD(model.parameters(), lr=lr), scaler, bad_x, y, max_norm)
    ctx.expect(all(torch.equal(b, p.detach()) for b, p in zip(before, model.parameters())),
               ctx.t("a clipped step with NaN gradients (an enabled GradScaler passed in) changed the parameters: "
                     "it must be skipped. Clip between scaler.unscale_(optimizer) and scaler.step(optimizer), "
                     "which skips the step when unscale_ found inf/NaN"))


def check(ctx):
    mine, ref = ctx.learner, ctx.reference
    dev = ctx.device
    want = torch.float16 if dev.type == "cuda" else torch.bfloat16

    _check_configuration(ctx, mine)
    scaler = mine.make_scaler(dev)

    d_in, hidden, classes = 24, ctx.choice([48, 64]), 6
    torch.manual_seed(ctx.seed)
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, classes)).to(dev)
    twin = copy.deepcopy(model)
    linears = {name: m for name, m in model.named_modules() if isinstance(m, nn.Linear)}
    seen = []
    for name, m in linears.items():
        m.register_forward_hook(lambda mod, args, out, name=name: seen.append((name, out.dtype)))
    # The logits of every forward (the last Linear's output), to recompute the loss the step should
    # report: autocast runs cross_entropy in float32 on the low-precision logits.
    logits = []
    last_linear = list(linears.values())[-1]
    last_linear.register_forward_hook(lambda mod, args, out: logits.append(out.detach()))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    x, y = _data(ctx, 256, d_in, classes)
    # Is autocast on while backward runs? (CPU backward runs on this thread, where autocast's
    # state lives; CUDA backward runs on the device's own thread and cannot tell.)
    in_autocast = []
    first_linear = next(iter(linears.values()))
    first_linear.weight.register_hook(lambda g: in_autocast.append(torch.is_autocast_enabled("cpu")))

    losses = []
    for step in ctx.trials(STEPS, label="training step"):
        seen.clear()
        loss = mine.train_step(model, opt, scaler, x, y)
        ctx.expect(len(seen) > 0, ctx.t("train_step never called the model"))
        ctx.expect(not torch.is_autocast_enabled(dev.type),
                   ctx.t("autocast is still on after train_step returned: enter it with a `with` block, "
                         "so it ends when the forward pass does"))
        ctx.expect(dev.type != "cpu" or not any(in_autocast),
                   ctx.t("backward ran inside the autocast block: keep only the forward pass and the loss "
                         "under torch.autocast, and call backward (and the optimizer step) after the block"))
        for name, dtype in seen:
            ctx.expect(dtype == want,
                       ctx.t("Linear layer `{name}` produced {got} output inside train_step: its matmul did "
                             "not run in {want}. Run the forward pass inside torch.autocast(device_type="
                             "x.device.type, dtype={dtype}) (torch.cuda.amp.autocast is deprecated and does "
                             "nothing on the CPU)", name=name, got=_name(dtype), want=_name(want), dtype=want))
        outputs = [[name, _name(dtype)] for name, dtype in seen]
        ctx.expect_equal(ctx.t("the output dtype of each Linear layer at step {step}", step=step + 1),
                         outputs, outputs)
        for pname, p in model.named_parameters():
            ctx.expect(p.dtype == torch.float32,
                       ctx.t("parameter `{name}` is {dtype} after train_step: keep the model in float32 "
                             "(autocast casts on the fly; don't call .half()/.bfloat16() on it)",
                             name=pname, dtype=_name(p.dtype)))
            ctx.expect(p.grad is not None, ctx.t("parameter `{name}` has no gradient after train_step", name=pname))
            if step == STEPS - 1:  # (on CUDA an early step may legitimately overflow and be skipped)
                ctx.expect_finite(f"gradient of `{pname}` after the last step", p.grad)
        params = {pname: [_name(p.dtype), p.grad is not None] for pname, p in model.named_parameters()}
        ctx.expect_equal(ctx.t("each parameter's dtype and whether it has a gradient after step {step}",
                               step=step + 1), params, params)
        ctx.expect(isinstance(loss, (float, int)),
                   ctx.t("train_step returned a {kind}; return loss.item()", kind=type(loss).__name__))
        ctx.expect(math.isfinite(loss), ctx.t("the loss at step {step} is {loss}", step=step + 1, loss=loss))
        _expect_float32_loss(ctx, loss, logits, y, ctx.t("at step {step}", step=step + 1))
        losses.append(float(loss))

    first, last = losses[0], sum(losses[-5:]) / 5
    ref_opt = torch.optim.Adam(twin.parameters(), lr=3e-3)
    ref_scaler = ref.make_scaler(dev)
    ref_losses = [ref.train_step(twin, ref_opt, ref_scaler, x, y) for _ in range(STEPS)]
    loss_figure = {"first": round(first, 4), "last_5_mean": round(last, 4),
                   "reference_last_5_mean": round(sum(ref_losses[-5:]) / 5, 4)}
    ctx.figure("loss", loss_figure,
               label=ctx.t("the loss: {first:.4f} at the first step, {last_5_mean:.4f} on average over the last 5 "
                           "(the reference: {reference_last_5_mean:.4f})", **loss_figure))
    ctx.expect(last < 0.7 * first,
               ctx.t("the loss did not go down: {first:.4f} at the first step, {last:.4f} on average over "
                     "the last 5 of {steps} (the reference reaches {ref:.4f}). Does train_step call "
                     "optimizer.step() (through scaler.step(optimizer))?",
                     first=first, last=last, steps=STEPS, ref=sum(ref_losses[-5:]) / 5))
    # The losses themselves: the same model, batch and optimizer give the reference's losses step
    # by step (a step taken twice, or gradients left to accumulate, still make the loss go down).
    ctx.expect_close(ctx.t("the losses train_step returned at steps 1 to {steps}", steps=STEPS), losses, losses,
                     rtol=1e-3, atol=1e-5)

    # With an enabled scaler (float16 on CUDA; on the CPU an enabled GradScaler("cpu") stands in),
    # the step still reports the loss itself, not the scaled loss that went into backward.
    ctx.phase(ctx.t("a step with an enabled GradScaler"))
    probe = copy.deepcopy(model)
    probe_scaler = torch.amp.GradScaler(dev.type, enabled=True) if want != torch.float16 else scaler
    probe_opt = torch.optim.Adam(probe.parameters(), lr=3e-3)
    logits.clear()
    probe_logits = []
    list(m for m in probe.modules() if isinstance(m, nn.Linear))[-1].register_forward_hook(
        lambda mod, args, out: probe_logits.append(out.detach()))
    loss = mine.train_step(probe, probe_opt, probe_scaler, x, y)
    _expect_float32_loss(ctx, loss, probe_logits, y,
                         ctx.t("with an enabled GradScaler (scale {scale:g})", scale=probe_scaler.get_scale()))
    ctx.expect_close(ctx.t("the loss train_step returned with an enabled GradScaler"),
                     float(loss) if isinstance(loss, (float, int)) else loss,
                     float(loss) if isinstance(loss, (float, int)) else loss, rtol=1e-3, atol=1e-5)

    # A step whose gradients are inf/NaN must be skipped and the scale must shrink. On CUDA the
    # learner's own fp16 scaler sees a real overflow; on CPU an enabled GradScaler("cpu") stands
    # in for it, with a NaN in the batch (bf16 does not overflow at these magnitudes).
    ctx.phase(ctx.t("checking that a step with inf/NaN gradients is skipped"))
    if want == torch.float16:
        probe, probe_scaler, bad_x = model, scaler, x * 1e6
        how = ctx.t("whose fp16 gradients overflowed")
    else:
        probe = copy.deepcopy(model)
        probe_scaler = torch.amp.GradScaler("cpu", enabled=True)
        bad_x = x.clone()
        bad_x[0, 0] = float("nan")
        how = ctx.t("with NaN gradients (an enabled GradScaler('cpu') passed in, standing in for fp16 on CUDA)")
    probe_opt = torch.optim.Adam(probe.parameters(), lr=3e-3) if probe is not model else opt
    before = {k: p.detach().clone() for k, p in probe.named_parameters()}
    scale = probe_scaler.get_scale()
    # Outside the call contract, which would only say "the parameters were changed": the two
    # expectations below say why a skipped step matters and how to get one.
    with ctx.uncontracted():
        mine.train_step(probe, probe_opt, probe_scaler, bad_x, y)
    changed = [k for k, p in probe.named_parameters() if not torch.equal(p.detach(), before[k])]
    ctx.expect(not changed,
               ctx.t("a step {how} changed the parameters (`{name}`): it must be skipped. Step through the "
                     "scaler you are given: scaler.scale(loss).backward(), then scaler.step(optimizer) "
                     "instead of optimizer.step()", how=how, name=changed[0] if changed else ""))
    ctx.expect_equal(ctx.t("the parameters that a step {how} changed", how=how), changed, changed)
    ctx.expect(probe_scaler.get_scale() < scale,
               ctx.t("the GradScaler's scale did not shrink after a step {how}: call scaler.update() after "
                     "scaler.step(optimizer)", how=how))
    scales = [float(scale), float(probe_scaler.get_scale())]
    ctx.expect_equal(ctx.t("the GradScaler's scale before and after a step {how}", how=how), scales, scales)

    _check_clipping(ctx, mine, dev, want, (d_in, hidden, classes), x, y)

    # "On either device": autocast must be entered for the batch's own device type, whatever this
    # machine has (CPU autocast leaves CUDA ops in float32). Fake CUDA tensors stand in for a GPU;
    # last, because real ops on them (a forward outside autocast) need one.
    entered = _autocast_device_on_cuda(ctx, mine, d_in, hidden, classes)
    ctx.expect(entered in (None, "cuda"),
               ctx.t("for a model and batch on CUDA (fake CUDA tensors stand in for a GPU here), train_step "
                     "entered torch.autocast(device_type={got!r}): autocast only changes the ops of its own device "
                     "type, so on a GPU the forward pass would stay float32. Take the device type from the batch: "
                     "torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device))", got=entered))
