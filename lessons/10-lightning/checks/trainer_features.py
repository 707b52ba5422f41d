"""Check: the learner's training plan meets its budget, measured on real fits of a probe model.

For two drawn plans (effective batch, activation-memory budget, MB per sample, clip norm,
epochs, a dataset that does or does not split into whole steps), the checker fits a small
regression model with large gradients using the learner's DataLoader and Trainer, and measures:
the samples and micro-batches behind every optimizer step (every step averages exactly
`effective_batch` samples, as many steps per epoch as the data fills, as few micro-batches per
step as the budget allows), each micro-batch's activation memory from its size and the dtype
its forward produced, the weights' dtype, the gradient at each step against the mean-loss
gradient of the samples the step saw, and the gradient norm after clipping. Nothing is read
from Trainer attributes, so accumulation through a GradientAccumulationScheduler passes too."""

import os
import warnings

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch_lightning.callbacks import ModelSummary
from torch.utils.data import DataLoader, TensorDataset

from _common import quiet_lightning

# (effective batch, MB of activations per sample in float32, budget in MB). In each plan the
# budget fits a micro-batch twice as large under bf16 autocast, and the largest micro-batch
# that fits (budget // half the per-sample MB) does not divide the effective batch.
_PLANS = [(64, 2.5, 45.0), (96, 3.0, 40.0), (48, 2.0, 30.0), (72, 1.5, 20.0)]
_HALF = (torch.bfloat16, torch.float16)


def _best_micro(effective, per_sample, budget):
    """The largest micro-batch that divides `effective` and fits `budget` under bf16 autocast."""
    fits = int(budget // (per_sample / 2))
    return max(b for b in range(1, min(fits, effective) + 1) if effective % b == 0)


class _Probe(pl.LightningModule):
    """A regression model with large gradients (so that clipping matters). Records every
    micro-batch it trains on: inputs, targets, the dtype of its forward output and of its weights."""

    def __init__(self, features):
        super().__init__()
        self.layer = nn.Linear(features, 3)
        self.seen = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self.layer(x)
        self.seen.append((x.detach().float().cpu(), y.detach().float().cpu(), out.dtype, self.layer.weight.dtype,
                          self.current_epoch))
        return 50 * F.mse_loss(out.float(), y.float())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-3)


class _StepProbe(pl.Callback):
    """Per optimizer step: the micro-batches behind it, the gradient before clipping compared with
    the mean-loss gradient of the samples it saw, and the gradient norm after clipping."""

    def __init__(self):
        self.used = 0
        self.epochs = 0
        self.steps = []      # (epoch, micro-batches, samples, relative gradient error, norm before)
        self.after = []
        self.last_step = 0

    def on_train_epoch_start(self, trainer, pl_module):
        self.epochs += 1

    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        window = pl_module.seen[self.used:]
        self.used = len(pl_module.seen)
        params = [pl_module.layer.weight, pl_module.layer.bias]
        if not window or any(p.grad is None for p in params):
            self.steps.append((self.epochs, len(window), 0, float("inf"), 0.0))
            return
        x = torch.cat([w[0] for w in window])
        y = torch.cat([w[1] for w in window])
        weight, bias = (p.detach().float().cpu().requires_grad_() for p in params)
        loss = 50 * F.mse_loss(x @ weight.T + bias, y)    # the mean over every sample of the step
        expected = torch.cat([g.flatten() for g in torch.autograd.grad(loss, [weight, bias])])
        got = torch.cat([p.grad.detach().float().cpu().flatten() for p in params])
        error = (torch.linalg.vector_norm(got - expected) / torch.linalg.vector_norm(expected)).item()
        self.steps.append((self.epochs, len(window), len(x), error, torch.linalg.vector_norm(got).item()))

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step != self.last_step:    # an optimizer step just ran: grads are clipped
            self.last_step = trainer.global_step
            grads = [p.grad.detach().float() for p in pl_module.parameters() if p.grad is not None]
            self.after.append(torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads])).item())


def _trial(ctx, trial, plans):
    effective, per_sample, budget = ctx.choice(plans)
    micro = _best_micro(effective, per_sample, budget)
    accumulate = effective // micro
    fp32_micro = max(b for b in range(1, effective + 1) if effective % b == 0 and b * per_sample <= budget)
    steps = int(ctx.choice([2, 3]))
    # the second plan leaves a short last window of at least one whole micro-batch (so dropping
    # only a partial micro-batch, drop_last=True, does not hide it)
    leftover = 0 if trial == 0 else int(ctx.randint(micro, effective, (1,)))
    n = steps * effective + leftover
    clip = float(ctx.choice([0.5, 1.0, 2.0]))
    max_epochs = int(ctx.choice([2, 3]))
    features = 6
    plan = ctx.t("effective_batch={effective}, budget_mb={budget:g}, mb_per_sample={per:g}, {n} samples, "
                 "max_epochs={epochs}", effective=effective, budget=budget, per=per_sample, n=n, epochs=max_epochs)
    root = ctx.tmpdir / f"run{trial}"
    root.mkdir()
    x = ctx.randn(n, features) * 4
    y = ctx.randn(n, 3) * 4

    probe = _StepProbe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = ctx.learner.plan_run(TensorDataset(x, y), str(root), effective_batch=effective, budget_mb=budget,
                                    mb_per_sample=per_sample, max_grad_norm=clip, max_epochs=max_epochs,
                                    callbacks=[probe])
    ctx.expect(not any("fp16 is not supported on CPU" in str(w.message) for w in caught),
               ctx.t("you asked for precision='16-mixed' on a CPU: Lightning's float16 AMP (with its "
                     "GradScaler) is for GPUs, so it fell back to 'bf16-mixed' with a warning. Ask "
                     "for 'bf16-mixed' yourself"))
    if not (isinstance(made, tuple) and len(made) == 2):
        ctx.fail(ctx.t("plan_run returned {type}, expected a tuple (loader, trainer)", type=type(made).__name__))
    loader, trainer = made
    if not isinstance(loader, DataLoader) or not isinstance(trainer, pl.Trainer):
        ctx.fail(ctx.t("plan_run returned ({loader}, {trainer}), expected (a DataLoader, a pl.Trainer)",
                       loader=type(loader).__name__, trainer=type(trainer).__name__))
    ctx.expect(os.path.realpath(trainer.default_root_dir) == os.path.realpath(root),
               ctx.t("default_root_dir is {got}, expected root_dir ({root}): checkpoints and logs must stay "
                     "under it", got=trainer.default_root_dir, root=root))
    where = os.path.relpath(os.path.realpath(trainer.default_root_dir), os.path.realpath(root))
    ctx.expect_equal(ctx.t("default_root_dir, relative to root_dir"), where, where)
    ctx.expect(trainer.progress_bar_callback is None and not any(isinstance(c, ModelSummary) for c in trainer.callbacks),
               ctx.t("the progress bar or the model summary is on: enable_progress_bar=False and "
                     "enable_model_summary=False keep scripts and this checker quiet"))
    shown = {"progress bar": trainer.progress_bar_callback is not None,
             "model summary": any(isinstance(c, ModelSummary) for c in trainer.callbacks)}
    ctx.expect_equal(ctx.t("the Trainer's progress bar and model summary (on = True)"), shown, shown)

    torch.manual_seed(ctx.seed)
    model = _Probe(features)
    ctx.phase(ctx.t("trial {trial}/2: fitting with your plan ({plan})", trial=trial + 1, plan=plan))
    trainer.fit(model, loader)

    if not probe.steps:
        ctx.fail(ctx.t("the callback passed to plan_run never saw an optimizer step: pass callbacks=callbacks "
                       "to the Trainer"))
    ctx.expect(all(w[3] == torch.float32 for w in model.seen),
               ctx.t("{plan}: the weights were {dtype} during training_step: a '-true' precision stores the weights "
                     "themselves in half precision and loses small updates; keep float32 weights and autocast "
                     "only the computation (a '-mixed' precision)", plan=plan,
                     dtype=next((w[3] for w in model.seen if w[3] != torch.float32), torch.float32)))
    need = [(len(w[0]) * per_sample * (0.5 if w[2] in _HALF else 1.0), len(w[0]), w[2]) for w in model.seen]
    worst = max(need, key=lambda t: t[0], default=(0.0, 0, torch.float32))
    plan_figure = {"effective_batch": effective, "micro_batch": worst[1], "activation_mb": worst[0],
                   "budget_mb": budget}
    ctx.figure(f"plan_{trial + 1}", plan_figure,
               label=ctx.t("trial {trial}: micro-batches of {micro_batch} samples for an effective batch of "
                           "{effective_batch}, {activation_mb:g} MB of activations against a budget of "
                           "{budget_mb:g} MB", trial=trial + 1, **plan_figure))
    ctx.expect(worst[0] <= budget,
               ctx.t("{plan}: a micro-batch of {size} samples whose forward ran in {dtype} needs {mb:g} MB of "
                     "activations, over the {budget:g} MB budget ({per:g} MB per sample in float32, half that "
                     "under bfloat16 autocast)", plan=plan, size=worst[1], dtype=worst[2], mb=worst[0],
                     budget=budget, per=per_sample))

    per_epoch = {}
    for epoch, _, _, _, _ in probe.steps:
        per_epoch[epoch] = per_epoch.get(epoch, 0) + 1
    short = [(i, s) for i, s in enumerate(probe.steps) if s[2] != effective]
    if short:
        i, (epoch, windows, samples, _, _) = short[0]
        last_of_epoch = i + 1 == len(probe.steps) or probe.steps[i + 1][0] != epoch
        if last_of_epoch and samples < effective and len(short) <= probe.epochs:
            ctx.fail(ctx.t("{plan}: the last optimizer step of epoch {epoch} averaged only {samples} samples "
                           "({windows} micro-batches), expected effective_batch={effective}: Lightning divides "
                           "every loss by accumulate_grad_batches, so this short window's gradient is scaled "
                           "down and its samples count for less. Run only the batches that fill whole steps",
                           plan=plan, epoch=epoch, samples=samples, windows=windows, effective=effective))
        ctx.fail(ctx.t("{plan}: optimizer step {step} averaged {samples} samples ({windows} micro-batches), "
                       "expected effective_batch={effective}: the micro-batch size times the micro-batches per "
                       "step must be the effective batch, so pick a micro-batch size that divides it",
                       plan=plan, step=i + 1, samples=samples, windows=windows, effective=effective))
    counts = [per_epoch.get(e, 0) for e in range(1, max_epochs + 1)]
    ctx.figure(f"optimizer_steps_{trial + 1}", {"made": len(probe.steps), "expected": steps * max_epochs},
               label=ctx.t("trial {trial}: {made} optimizer steps, {expected} expected", trial=trial + 1,
                           made=len(probe.steps), expected=steps * max_epochs))
    ctx.expect(probe.epochs == max_epochs and counts == [steps] * max_epochs,
               ctx.t("{plan}: the run made {counts} optimizer steps per epoch over {epochs} epochs, expected "
                     "{steps} in each of {max_epochs}: {n} samples fill {steps} whole steps of {effective}; "
                     "drop only what does not fill a step", plan=plan, counts=counts, epochs=probe.epochs,
                     steps=steps, max_epochs=max_epochs, n=n, effective=effective))
    windows = probe.steps[0][1]
    ctx.expect(windows == accumulate,
               ctx.t("{plan}: each optimizer step ran {windows} micro-batches of {size} samples, but micro-batches "
                     "of {best} fit the budget under bfloat16 autocast (half the activations of float32; "
                     "float32 allows only {fp32}), so {accumulate} per step would do: fewer, larger "
                     "micro-batches make the same step faster", plan=plan, windows=windows,
                     size=effective // max(windows, 1), best=micro, fp32=fp32_micro, accumulate=accumulate))
    # a shuffling loader: each epoch sees the samples in another order (and, with the epoch cut
    # to whole steps, another leftover left out)
    orders = {}
    for w in model.seen:
        orders.setdefault(w[4], []).append(w[0])
    orders = [torch.cat(v) for _, v in sorted(orders.items())]
    repeated = len(orders) > 1 and all(torch.equal(orders[0], o) for o in orders[1:])
    ctx.expect(not repeated,
               ctx.t("{plan}: every epoch trained on the same samples in the same order: plan_run must return "
                     "a shuffling DataLoader (shuffle=True), or the samples cut off to fill whole steps are "
                     "never trained on", plan=plan))
    error = max(s[3] for s in probe.steps)
    # bf16 autocast moves a correct step's gradient by ~1% from the float32 mean-loss gradient;
    # a window whose losses are weighted wrongly is off by 25% or more
    ctx.expect(error <= 0.05,
               ctx.t("{plan}: an optimizer step's gradient is {error:.0%} away from the gradient of the mean loss "
                     "over the samples it saw: every sample of a step must count once, with the same weight",
                     plan=plan, error=error))
    before = [s[4] for s in probe.steps]
    norms = {"max_before_clipping": max(before), "max_after": max(probe.after or [0.0]), "max_grad_norm": clip,
             "max_error_vs_mean_loss": round(error, 4)}
    ctx.figure(f"grad_norm_{trial + 1}", norms,
               label=ctx.t("trial {trial}: gradient norm at most {max_before_clipping:.3g} before clipping and "
                           "{max_after:.3g} after (max_grad_norm={max_grad_norm:g}); a step's gradient at most "
                           "{max_error_vs_mean_loss:.1%} from the mean loss's", trial=trial + 1, **norms))
    off = [(i, a, min(b, clip)) for i, (a, b) in enumerate(zip(probe.after, before))
           if abs(a - min(b, clip)) > 1e-4 + 1e-3 * min(b, clip)]
    if len(probe.after) != len(before) or off:
        i, a, e = off[0] if off else (0, 0.0, 0.0)
        ctx.fail(ctx.t("at optimizer step {step} the gradient norm after clipping was {after:.4g}, expected "
                       "min(norm before clipping = {before:.4g}, max_grad_norm = {clip}) = {want:.4g}: rescale the "
                       "whole gradient so its norm is at most max_grad_norm (the 'norm' algorithm keeps its "
                       "direction; 'value' clamps each entry)", step=i + 1, after=a, before=before[i],
                       clip=clip, want=e))

    # the values behind the facts above, read off the run: the reference run supplies the expected side
    dtypes = {"weights": sorted({str(w[3]) for w in model.seen}), "forward": sorted({str(w[2]) for w in model.seen})}
    ctx.expect_equal(ctx.t("{plan}: the dtypes of the weights and of the forward's output in training_step",
                           plan=plan), dtypes, dtypes)
    ctx.expect_close(ctx.t("{plan}: the activation MB of the largest micro-batch", plan=plan),
                     float(worst[0]), float(worst[0]), rtol=1e-9, atol=0.0)
    ctx.expect_equal(ctx.t("{plan}: the epochs run and the optimizer steps in each", plan=plan),
                     [probe.epochs, counts], [probe.epochs, counts])
    layout = [[s[1], s[2]] for s in probe.steps]
    ctx.expect_equal(ctx.t("{plan}: the micro-batches and samples behind each optimizer step", plan=plan),
                     layout, layout)
    sizes = sorted({len(w[0]) for w in model.seen})
    ctx.expect_equal(ctx.t("{plan}: the micro-batch sizes trained on", plan=plan), sizes, sizes)


def check(ctx):
    quiet_lightning(".*limit_train_batches.*", ".*fp16 is not supported.*")
    first = ctx.choice(_PLANS)
    for trial in ctx.trials(2):
        # two different plans: the second from the plans the first did not use
        _trial(ctx, trial, [first] if trial == 0 else [p for p in _PLANS if p != first])
