"""Check: stack_ensemble stacks every parameter and buffer and builds its base on the meta
device; ensemble_forward equals running each model; report its speed against the loop."""

import torch
from torch import nn

from _common import traced_vmap


def _make_models(ctx, n, d_in, hidden, d_out, deep=False, train=False):
    """Models whose BatchNorm running statistics differ: the buffers matter. `deep` adds a second
    hidden block (another architecture, other parameter names); `train` hands the models over in
    training mode with their BatchNorm layers frozen in eval mode (a fine-tuning setup), so code
    that switches the caller's models to eval() shows."""
    models = []
    for _ in range(n):
        layers = [nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU()]
        if deep:
            layers += [nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden), nn.ReLU()]
        m = nn.Sequential(*layers, nn.Linear(hidden, d_out)).to(ctx.device).eval()
        for bn in (layer for layer in m if isinstance(layer, nn.BatchNorm1d)):
            bn.running_mean.copy_(ctx.randn(hidden))
            bn.running_var.copy_(ctx.rand(hidden) + 0.5)
        if train:
            m.train()
            for bn in (layer for layer in m if isinstance(layer, nn.BatchNorm1d)):
                bn.eval()
        models.append(m)
    return models


def _loop_grads(models, x, g):
    """The gradient of sum(out * g) for each model's parameters, stacked like stack_module_state."""
    names = [k for k, _ in models[0].named_parameters()]
    per_model = [torch.autograd.grad((m(x) * g[i]).sum(), [dict(m.named_parameters())[k] for k in names])
                 for i, m in enumerate(models)]
    return {k: torch.stack([grads[j] for grads in per_model]) for j, k in enumerate(names)}


def _architecture(module):
    return [(k, tuple(t.shape)) for k, t in [*module.named_parameters(), *module.named_buffers()]]


def _loop(models, x):
    return torch.stack([m(x) for m in models])


def _short(arch):
    shown = ", ".join(f"{k} {list(shape)}" for k, shape in arch[:4])
    return shown + (", ..." if len(arch) > 4 else "")


def check(ctx):
    used_vmap = False
    mine = ctx.learner
    # N, batch, in, hidden, out, a second hidden block, handed over in training mode. Every trial
    # is a new ensemble of another size (the third of another architecture too): a base kept from
    # an earlier call has the wrong shapes or layers.
    cases = [(4, 7, 5, 16, 3, False, False), (1, 3, 2, 8, 1, False, True), (9, 1, 6, 12, 4, True, True)]
    for trial in ctx.trials(len(cases)):
        n, batch, d_in, hidden, d_out, deep, train = cases[trial]
        torch.manual_seed(ctx.seed + trial)
        models = _make_models(ctx, n, d_in, hidden, d_out, deep=deep, train=train)
        before = [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in models]
        if trial == 0:
            # The first call is judged by the explicit checks below, which say what happened in the
            # learner's terms (a model moved to meta by Module.to()); the later calls also go
            # through the call contract (training flags, hooks, ...).
            with ctx.uncontracted():
                params, buffers, base = mine.stack_ensemble(models)
        else:
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
        ctx.expect(_architecture(base) == _architecture(models[0]),
                   ctx.t("the base returned by stack_ensemble does not have the architecture of the models "
                         "passed in (its parameters and buffers with their shapes: {got}; models[0]: {want}). "
                         "Build it from this call's models[0] every time: a base kept from an earlier call "
                         "belongs to another ensemble", got=_short(_architecture(base)),
                         want=_short(_architecture(models[0]))))
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
        untrainable = [k for k, t in params.items() if not (t.is_leaf and t.requires_grad)]
        ctx.expect(not untrainable,
                   ctx.t("the stacked parameters {names} are not leaf tensors that require grad, so the "
                         "ensemble cannot be trained through them (an optimizer needs leaves). "
                         "stack_module_state returns new leaves that require grad; stacking by hand, stack "
                         "the parameters themselves (state_dict() holds detached copies) and make the result "
                         "a leaf: torch.stack(...).detach().requires_grad_()",
                         names=", ".join(f"`{k}`" for k in untrainable[:3])))
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
        # Trainable: the output must carry the graph back to the stacked parameters.
        ctx.expect(out.requires_grad,
                   ctx.t("ensemble_forward's output does not require grad although the stacked parameters "
                         "do: it was computed under torch.no_grad() (or from detached tensors), so the "
                         "ensemble cannot be trained through it. Leave autograd as the caller set it"))
        g = ctx.randn(*out.shape)
        got = torch.autograd.grad(out, list(params.values()), grad_outputs=g, allow_unused=True)
        got = {k: torch.zeros_like(params[k]) if t is None else t for k, t in zip(params, got)}
        ctx.expect_close(f"gradient of ensemble_forward's output with respect to the stacked params ({n} "
                         f"models)", got, _loop_grads(models, x, g), atol=1e-5, rtol=1e-4)
        # The same call under torch.no_grad() (inference), which must stay off afterwards.
        with torch.no_grad():
            out = mine.ensemble_forward(params, buffers, base, x)
        ctx.expect_close(f"ensemble_forward output under torch.no_grad() ({n} models, batch {batch})", out,
                         expected, atol=1e-5, rtol=1e-5)
    ctx.expect(used_vmap, ctx.t("ensemble_forward gives the right values but never calls torch.func.vmap: "
                                "run all models at once with vmap"))

    torch.manual_seed(ctx.seed)
    models = _make_models(ctx, 32, 32, 64, 8)
    params, buffers, base = mine.stack_ensemble(models)
    ref_params, ref_buffers, ref_base = ctx.reference.stack_ensemble(models)
    x = ctx.randn(16, 32)
    with torch.no_grad():
        loop = ctx.t("the loop")
        ctx.time(lambda: mine.ensemble_forward(params, buffers, base, x), lambda: _loop(models, x),
                 compares=ctx.t("yours vs a Python loop over the {n} models", n=len(models)),
                 sides=(ctx.t("yours"), loop))
        ctx.time(lambda: ctx.reference.ensemble_forward(ref_params, ref_buffers, ref_base, x),
                 lambda: _loop(models, x), name="reference_vs_loop", label=ctx.t("the reference against the loop"),
                 compares=ctx.t("the reference solution vs the same loop over the models"),
                 sides=(ctx.t("the reference"), loop))
