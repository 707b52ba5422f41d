"""Check: per_sample_grads uses vmap and equals one backward() per example, for a small CNN
(whose Flatten expects a batch); report its speed against the loop."""

import torch
from torch import nn
from torch.nn import functional as F

from _common import traced_vmap


def _cnn(channels, size, classes):
    return nn.Sequential(nn.Conv2d(3, channels, 3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(channels * (size - 2) ** 2, classes))


def _mlp(features, hidden, classes):
    return nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, classes))


def _loop(model, x, y):
    grads = {k: [] for k, _ in model.named_parameters()}
    for i in range(x.shape[0]):
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for k, p in model.named_parameters():
            grads[k].append(p.grad.clone())
    model.zero_grad(set_to_none=True)
    return {k: torch.stack(g) for k, g in grads.items()}


def check(ctx):
    used_vmap = False
    mine = ctx.learner
    # batch, channels, image size, classes; the last case is no CNN at all: an MLP on (batch,
    # features), since per_sample_grads is for any model (nothing may assume 3-channel images).
    cases = [(5, 4, 6, 3), (1, 2, 5, 4), (13, 3, 7, 5), (6, None, 11, 4)]
    for trial in ctx.trials(len(cases)):
        batch, channels, size, classes = cases[trial]
        torch.manual_seed(ctx.seed + trial)
        mlp = channels is None
        model = (_mlp(size, 8, classes) if mlp else _cnn(channels, size, classes)).to(ctx.device)
        before = {k: v.detach().clone() for k, v in model.state_dict().items()}
        x = ctx.randn(batch, size) if mlp else ctx.randn(batch, 3, size, size)
        y = ctx.randint(0, classes, (batch,))
        expected = _loop(model, x, y)
        try:
            got, used = traced_vmap(mine.per_sample_grads, model, x, y)
        except (RuntimeError, ValueError, IndexError) as exc:
            if mlp:
                ctx.fail(ctx.t("per_sample_grads raised on an MLP whose inputs are (batch, features) = {shape}: "
                               "{error}. It must work for any model: give one example its batch of one with "
                               "xi.unsqueeze(0), whatever its shape, instead of assuming (3, H, W) images",
                               shape=tuple(x.shape), error=str(exc).strip().splitlines()[0].rstrip(".!")), [])
            if "shapes cannot be multiplied" not in str(exc):
                raise
            ctx.fail(ctx.t("per_sample_grads raised: {error}. Inside vmap each example has lost its batch dim "
                           "({one} instead of {whole}), but the model (Conv2d -> Flatten -> Linear) was built "
                           "for batches: Flatten then flattens the wrong dims. Call the model on "
                           "xi.unsqueeze(0) (and compare with yi.unsqueeze(0))", error=str(exc).rstrip(".!"),
                           one=(3, size, size), whole=(batch, 3, size, size)), [])
        used_vmap = used_vmap or used
        ctx.expect(isinstance(got, dict),
                   ctx.t("per_sample_grads returned a {kind}, expected a dict {{parameter name: per-sample "
                         "gradients}}{why}", kind=type(got).__name__,
                         why=ctx.t(" (a tensor of the images' shape is the gradient with respect to the input: "
                                   "grad differentiates with respect to argument argnums, by default the "
                                   "first, which should be the parameter dict)")
                         if isinstance(got, torch.Tensor) else ""))
        ctx.expect_equal("the keys of the returned dict (one per parameter, as in "
                         "model.named_parameters())", sorted(got), sorted(expected))
        for k, e in expected.items():
            g = got[k]
            ctx.expect(isinstance(g, torch.Tensor) and tuple(g.shape) == tuple(e.shape),
                       ctx.t("per-sample gradient of `{name}` should have shape (batch, *param.shape) = {want}, "
                             "got {got}", name=k, want=tuple(e.shape),
                             got=tuple(g.shape) if isinstance(g, torch.Tensor) else type(g).__name__))
        zero = [k for k, g in got.items() if isinstance(g, torch.Tensor) and not g.any()]
        ctx.expect(len(zero) < len(got),
                   ctx.t("every per-sample gradient is exactly zero: the loss you differentiate does not "
                         "depend on the parameters grad passes in. Call the model through "
                         "functional_call(model, (params, buffers), ...) with those dicts; calling model(...) "
                         "directly uses its own parameters, which grad does not see"))
        ctx.expect_close(f"per-sample gradients (batch {batch}, {size} features)" if mlp else
                         f"per-sample gradients (batch {batch}, {size}x{size} images)", got, expected,
                         atol=1e-5, rtol=1e-4)
        ctx.expect(all(p.grad is None for p in model.parameters()),
                   ctx.t("per_sample_grads left .grad set on the model's parameters: it should not touch "
                         "the caller's model (torch.func.grad returns gradients instead of storing them)"))
        ctx.expect_close("the model's parameters after per_sample_grads (it must not change them)",
                         dict(model.state_dict()), before)
        if trial == 0:
            # The same model after a training step: the gradients are those at its parameters
            # now, not at the ones a first call saw (a cache keyed by the model shows here).
            with torch.no_grad():
                for k, p in model.named_parameters():
                    p.sub_(0.5 * expected[k].mean(0) + 0.1 * ctx.randn(*p.shape))
            expected = _loop(model, x, y)
            got = mine.per_sample_grads(model, x, y)
            ctx.expect_close(f"per-sample gradients after the model's parameters changed (a second call on the "
                             f"same model, batch {batch})", got, expected, atol=1e-5, rtol=1e-4)
    ctx.expect(used_vmap, ctx.t("per_sample_grads gives the right values but never calls torch.func.vmap: "
                                "compute all examples at once with vmap(grad(...))"))

    torch.manual_seed(ctx.seed)
    model = _cnn(8, 8, 10).to(ctx.device)
    x, y = ctx.randn(64, 3, 8, 8), ctx.randint(0, 10, (64,))
    loop = ctx.t("the loop")
    ctx.time(lambda: mine.per_sample_grads(model, x, y), lambda: _loop(model, x, y),
             compares=ctx.t("yours vs a loop of {n} backward() calls", n=len(x)), sides=(ctx.t("yours"), loop))
    ctx.time(lambda: ctx.reference.per_sample_grads(model, x, y), lambda: _loop(model, x, y),
             name="reference_vs_loop", label=ctx.t("the reference against the loop"),
             compares=ctx.t("the reference solution vs the same loop of backward() calls"),
             sides=(ctx.t("the reference"), loop))
