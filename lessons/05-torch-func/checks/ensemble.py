"""Check: stack_ensemble stacks every parameter and buffer and builds its base on the meta
device; ensemble_forward equals running each model; report its speed against the loop."""

import torch
from torch import nn

from _common import traced_vmap


def _make_models(ctx, n, d_in, hidden, d_out):
    """Models in eval mode whose BatchNorm running statistics differ: the buffers matter."""
    models = []
    for _ in range(n):
        m = nn.Sequential(nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                          nn.Linear(hidden, d_out)).to(ctx.device).eval()
        m[1].running_mean.copy_(ctx.randn(hidden))
        m[1].running_var.copy_(ctx.rand(hidden) + 0.5)
        models.append(m)
    return models


def _loop(models, x):
    return torch.stack([m(x) for m in models])


def check(ctx):
    used_vmap = False
    mine = ctx.learner
    cases = [(4, 7, 5, 16, 3), (1, 3, 2, 8, 1), (9, 1, 6, 12, 4)]  # N, batch, in, hidden, out
    for trial in ctx.trials(len(cases)):
        n, batch, d_in, hidden, d_out = cases[trial]
        torch.manual_seed(ctx.seed + trial)
        models = _make_models(ctx, n, d_in, hidden, d_out)
        before = [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in models]
        params, buffers, base = mine.stack_ensemble(models)
        for i, (m, state) in enumerate(zip(models, before)):
            moved = sorted({t.device.type for t in m.state_dict().values()} - {ctx.device.type})
            ctx.expect(not moved, ctx.t("stack_ensemble moved the caller's models[{i}] to the {device} device: "
                                        "Module.to() works in place on the module it is called on, so copy the "
                                        "model first (copy.deepcopy) and move the copy",
                                        i=i, device=moved[0] if moved else ""))
            ctx.expect(base is not m, ctx.t("the base returned by stack_ensemble is the caller's models[{i}] "
                                            "itself: return a separate copy", i=i))
            ctx.expect_close(f"models[{i}]'s parameters and buffers after stack_ensemble (it must not "
                             f"change them)", dict(m.state_dict()), state)
        ctx.expect(isinstance(params, dict) and isinstance(buffers, dict),
                   ctx.t("stack_ensemble should return (params, buffers, base) with params and buffers "
                         "as dicts (what torch.func.stack_module_state returns)"))
        ctx.expect(isinstance(base, nn.Module), ctx.t("the base returned by stack_ensemble is a {kind}, "
                                                      "expected an nn.Module", kind=type(base).__name__))
        real = [f"`{k}` ({t.device.type})" for k, t in list(base.named_parameters()) + list(base.named_buffers())
                if t.device.type != "meta"]
        ctx.expect(not real,
                   ctx.t("the base model holds real tensors: {names}. Its own parameters are never used by "
                         "functional_call, so build it on the meta device (copy.deepcopy(models[0]).to('meta'))",
                         names=", ".join(real[:3])))
        expected_params = {k: torch.stack([dict(m.named_parameters())[k] for m in models])
                           for k, _ in models[0].named_parameters()}
        expected_buffers = {k: torch.stack([dict(m.named_buffers())[k] for m in models])
                            for k, _ in models[0].named_buffers()}
        ctx.expect_close("stacked params", params, expected_params)
        ctx.expect_close("stacked buffers (BatchNorm's running statistics: every model has its own)",
                         buffers, expected_buffers)

        x = ctx.randn(batch, d_in)
        with torch.no_grad():
            expected = _loop(models, x)
        try:
            out, used = traced_vmap(mine.ensemble_forward, params, buffers, base, x)
        except (RuntimeError, ValueError) as exc:
            if "same size in the mapped dimension" in str(exc):
                ctx.fail(ctx.t("ensemble_forward raised: {error}. x {shape} is the same batch for all {n} models, "
                               "so it must not be mapped: in_dims=None for x",
                               error=str(exc).rstrip(".!"), shape=tuple(x.shape), n=n), [])
            if "meta" in str(exc):
                ctx.fail(ctx.t("ensemble_forward raised: {error}. Some tensor came from the meta base model: "
                               "functional_call uses the module's own tensor for every name missing from the "
                               "dicts you pass. Pass both: functional_call(base, (params, buffers), (x,))",
                               error=str(exc).rstrip(".!")), [])
            raise
        used_vmap = used_vmap or used
        ctx.expect(isinstance(out, torch.Tensor),
                   ctx.t("ensemble_forward returned a {kind}, expected a tensor", kind=type(out).__name__))
        ctx.expect(tuple(out.shape) == tuple(expected.shape),
                   ctx.t("ensemble_forward output has shape {got}, expected (N, batch, out) = {want}",
                         got=tuple(out.shape), want=tuple(expected.shape)))
        ctx.expect_close(f"ensemble_forward output ({n} models, batch {batch})", out, expected,
                         atol=1e-5, rtol=1e-5)
    ctx.expect(used_vmap, ctx.t("ensemble_forward gives the right values but never calls torch.func.vmap: "
                                "run all models at once with vmap"))

    torch.manual_seed(ctx.seed)
    models = _make_models(ctx, 32, 32, 64, 8)
    params, buffers, base = mine.stack_ensemble(models)
    ref_params, ref_buffers, ref_base = ctx.reference.stack_ensemble(models)
    x = ctx.randn(16, 32)
    with torch.no_grad():
        ctx.time(lambda: mine.ensemble_forward(params, buffers, base, x), lambda: _loop(models, x),
                 compares="yours vs a Python loop over the 32 models (speedup = times faster than the loop)")
        ctx.time(lambda: ctx.reference.ensemble_forward(ref_params, ref_buffers, ref_base, x),
                 lambda: _loop(models, x), name="reference_vs_loop",
                 compares="the reference solution vs the same loop over the models")
