"""Chapter 5 (torch.func): every solution passes; realistic learner mistakes fail with a reason
that names the problem in the learner's terms."""

import pytest

from .conftest import assert_fails, assert_passes

pytestmark = pytest.mark.slow


# -- func-vmap-linear ---------------------------------------------------------------------------


def test_vmap_linear_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("func-vmap-linear", seeds=2))
    assert {"time", "reference_vs_loop"} <= set(v.figures)
    # Both figures compare with the Python loop, not with the reference: they say so.
    assert "Python loop" in v.figures["time"]["compares"]
    assert "loop" in v.figures["reference_vs_loop"]["compares"]


def test_vmap_linear_moving_the_dim_afterwards_passes(variant):
    """Correct but different: vmap with the default out_dims, then move the layer dim."""
    variant("func-vmap-linear", ", out_dims=1)(x, weight, bias)", ")(x, weight, bias).movedim(0, 1)")


def test_vmap_linear_dropping_the_bias_fails(mutant):
    v = mutant(
        "func-vmap-linear",
        "vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)",
        "vmap(lambda x, w, b: x @ w.T, in_dims=(None, 0, 0), out_dims=1)",
    )
    assert_fails(v, "batched_linear output", "max abs error")


def test_vmap_linear_without_vmap_fails(mutant):
    v = mutant(
        "func-vmap-linear",
        "    return vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)(x, weight, bias)",
        "    return torch.einsum('bi,noi->bno', x, weight) + bias",
    )
    assert_fails(v, "never calls torch.func.vmap")


def test_vmap_linear_one_layer_at_a_time_fails(mutant):
    v = mutant("func-vmap-linear", "out_dims=1)(x, weight, bias)", "out_dims=1, chunk_size=1)(x, weight, bias)")
    assert_fails(v, "one per layer", "chunk_size=1")


def test_vmap_linear_under_no_grad_fails(mutant):
    v = mutant(
        "func-vmap-linear",
        "    return vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)(x, weight, bias)",
        "    with torch.no_grad():\n        return vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)(x, weight, bias)",
    )
    assert_fails(v, "does not require grad", "torch.no_grad()")


# -- func-per-sample-grads ----------------------------------------------------------------------

PER_SAMPLE_VMAP = "    return vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)"


def test_per_sample_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("func-per-sample-grads", seeds=2))
    assert {"time", "reference_vs_loop"} <= set(v.figures)
    assert "backward() calls" in v.figures["time"]["compares"]


def test_per_sample_one_dict_for_params_and_buffers_passes(variant):
    """Correct but different: params and buffers merged into one dict, mapped with three in_dims."""
    variant(
        "func-per-sample-grads",
        ("    def sample_loss(params, buffers, xi, yi):", "    def sample_loss(state, xi, yi):"),
        (
            "functional_call(model, (params, buffers), (xi.unsqueeze(0),))",
            "functional_call(model, state, (xi.unsqueeze(0),))",
        ),
        (
            PER_SAMPLE_VMAP,
            "    grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))({**params, **buffers}, x, y)\n"
            "    return {k: grads[k] for k in params}",
        ),
    )


def test_per_sample_nll_loss_on_raw_logits(mutant):
    v = mutant(
        "func-per-sample-grads",
        "return F.cross_entropy(logits, yi.unsqueeze(0))",
        "return F.nll_loss(logits, yi.unsqueeze(0))",
    )
    assert_fails(v, "per-sample gradients", "max abs error")


def test_per_sample_batch_gradient_has_the_wrong_shape(mutant):
    v = mutant(
        "func-per-sample-grads",
        PER_SAMPLE_VMAP,
        "    def batch_loss(params, buffers, x, y):\n"
        "        return F.cross_entropy(functional_call(model, (params, buffers), (x,)), y)\n"
        "    return grad(batch_loss)(params, buffers, x, y)",
    )
    assert_fails(v, "should have shape (batch, *param.shape)")


def test_per_sample_loop_of_backward_calls_fails(mutant):
    v = mutant(
        "func-per-sample-grads",
        PER_SAMPLE_VMAP,
        "    return {k: torch.stack([grad(sample_loss)(params, buffers, xi, yi)[k]\n"
        "                            for xi, yi in zip(x, y)]) for k in params}",
    )
    assert_fails(v, "never calls torch.func.vmap")


def test_per_sample_assuming_image_examples_fails_on_an_mlp(mutant):
    v = mutant("func-per-sample-grads", "(xi.unsqueeze(0),)", "(xi.view(1, 3, xi.shape[-2], xi.shape[-1]),)")
    assert_fails(v, "raised on an MLP", "any model")


# -- func-ensemble ------------------------------------------------------------------------------


def test_ensemble_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("func-ensemble", seeds=2))
    assert {"time", "reference_vs_loop"} <= set(v.figures)
    assert "loop over the 32 models" in v.figures["time"]["compares"]


def test_ensemble_stacked_by_hand_passes(variant):
    """Correct but different: stack the parameters and buffers by hand instead of
    stack_module_state (the parameters as new leaves that require grad, as it gives them)."""
    variant(
        "func-ensemble",
        "    params, buffers = stack_module_state(models)\n",
        "    params = {k: torch.stack([dict(m.named_parameters())[k].detach() for m in models]).requires_grad_()\n"
        "              for k, _ in models[0].named_parameters()}\n"
        "    buffers = {k: torch.stack([dict(m.named_buffers())[k] for m in models])\n"
        "               for k, _ in models[0].named_buffers()}\n",
    )


def test_ensemble_mapping_the_shared_batch_errors(mutant):
    assert_fails(mutant("func-ensemble", "in_dims=(0, 0, None)", "in_dims=(0, 0, 0)"), "in_dims=None for x")


def test_ensemble_python_loop_fails(mutant):
    v = mutant(
        "func-ensemble",
        "    return vmap(one_model, in_dims=(0, 0, None))(params, buffers, x)",
        "    n = next(iter(params.values())).shape[0]\n"
        "    return torch.stack([one_model({k: v[i] for k, v in params.items()},\n"
        "                                  {k: v[i] for k, v in buffers.items()}, x) for i in range(n)])",
    )
    assert_fails(v, "never calls torch.func.vmap")


def test_ensemble_forward_under_no_grad_fails(mutant):
    v = mutant("func-ensemble", "def ensemble_forward(", "@torch.no_grad()\ndef ensemble_forward(")
    assert_fails(v, "does not require grad", "torch.no_grad()")


def test_ensemble_stacking_the_state_dicts_fails(mutant):
    v = mutant(
        "func-ensemble",
        "    params, buffers = stack_module_state(models)\n",
        "    states = [m.state_dict() for m in models]\n"
        "    params = {k: torch.stack([s[k] for s in states]) for k, _ in models[0].named_parameters()}\n"
        "    buffers = {k: torch.stack([s[k] for s in states]) for k, _ in models[0].named_buffers()}\n",
    )
    assert_fails(v, "not leaf tensors that require grad", "state_dict()")


def test_ensemble_switching_the_callers_models_to_eval_fails(mutant):
    v = mutant(
        "func-ensemble",
        "    params, buffers = stack_module_state(models)\n",
        "    for m in models:\n        m.eval()\n    params, buffers = stack_module_state(models)\n",
    )
    assert_fails(v, "switched to eval mode")


def test_ensemble_base_cached_across_calls_fails(mutant):
    v = mutant(
        "func-ensemble",
        ("import copy\n", "import copy\n\n_BASE = {}\n"),
        (
            '    base = copy.deepcopy(models[0]).to("meta")  # key',
            '    base = _BASE.setdefault(type(models[0]), copy.deepcopy(models[0]).to("meta"))',
        ),
    )
    assert_fails(v, "does not have the architecture", "earlier call")


# -- func-maml ----------------------------------------------------------------------------------


def test_maml_solution_passes(solution_verdict):
    assert_passes(solution_verdict("func-maml", seeds=2))


def test_maml_grad_and_value_and_a_task_loop_passes(variant):
    """Correct but different: torch.func.grad_and_value and a Python loop over tasks."""
    variant(
        "func-maml",
        (
            "        g = grad(loss)(params)",
            "        g, _value = torch.func.grad_and_value(loss)(params)",
        ),
        (
            "    return vmap(task_loss)(support_x, support_y, query_x, query_y).mean()",
            "    losses = [task_loss(support_x[t], support_y[t], query_x[t], query_y[t])\n"
            "              for t in range(support_x.shape[0])]\n"
            "    return torch.stack(losses).mean()",
        ),
    )


def test_maml_query_loss_of_the_unadapted_model_fails(mutant):
    v = mutant("func-maml", "functional_call(model, adapted, (qx,))", "functional_call(model, params, (qx,))")
    assert_fails(v, "maml_loss (mean query loss over 6 tasks")


def test_maml_sum_over_tasks_fails(mutant):
    v = mutant(
        "func-maml", "(support_x, support_y, query_x, query_y).mean()", "(support_x, support_y, query_x, query_y).sum()"
    )
    assert_fails(v, "maml_loss (mean query loss")


def test_maml_one_step_too_few_fails(mutant):
    v = mutant("func-maml", "for _ in range(steps):", "for _ in range(steps - 1):")
    assert_fails(v, "adapted `", "step(s) at lr=")


def test_maml_gradient_ascent_fails(mutant):
    assert_fails(mutant("func-maml", "params[k] - lr * g[k]", "params[k] + lr * g[k]"), "adapted `", "max abs error")


def test_maml_autograd_grad_fails_at_test_time(mutant):
    v = mutant(
        "func-maml",
        "        g = grad(loss)(params)",
        "        g = dict(zip(params, torch.autograd.grad(loss(params), list(params.values()), create_graph=True)))",
    )
    assert_fails(v, "raised when adapting under torch.no_grad()", "torch.func.grad")


def test_maml_grad_mode_left_on_fails(mutant):
    v = mutant("func-maml", "    def loss(p):", "    torch.set_grad_enabled(True)\n\n    def loss(p):")
    assert_fails(v, "inner_adapt(...)", "is_grad_enabled()")


def test_maml_switching_the_model_to_train_mode_fails(mutant):
    v = mutant(
        "func-maml",
        "    params = dict(model.named_parameters())\n\n",
        "    model.train()\n    params = dict(model.named_parameters())\n\n",
    )
    assert_fails(v, "maml_loss(...)", "switched to train mode")


# -- func-hvp -----------------------------------------------------------------------------------

HVP_ONE = "        return jvp(grad(f), (x,), (direction,))[1]  # key"


def test_hvp_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("func-hvp", seeds=2))
    assert {"time", "memory"} <= set(v.figures)
    assert "forming the Hessian" in v.figures["memory"]["compares"]
    assert "forming the Hessian" in v.figures["time"]["compares"]
    # Why the HVP wins at size: the formed Hessian holds at least the 4 MB matrix.
    assert v.figures["memory"]["learner_bytes"] * 20 < v.figures["memory"]["reference_bytes"]


def test_hvp_reverse_over_reverse_and_a_loop_pass(variant):
    """Correct but different: the gradient of <grad f, d> (reverse over reverse), and a Python
    loop over the directions instead of vmap."""
    variant(
        "func-hvp",
        (HVP_ONE, "        return grad(lambda y: torch.dot(grad(f)(y), direction))(x)"),
        ("    return vmap(one)(v)  # key", "    return torch.stack([one(d) for d in v])"),
    )


def test_hvp_gradient_times_v_fails(mutant):
    v = mutant("func-hvp", HVP_ONE, "        return grad(f)(x) * direction")
    assert_fails(v, "against the float64 Hessian")


def test_hvp_jvp_of_f_itself_is_a_scalar(mutant):
    v = mutant("func-hvp", HVP_ONE, "        return jvp(f, (x,), (direction,))[1]")
    assert_fails(v, "has shape ()", "derivative of f's GRADIENT")


def test_hvp_autograd_on_the_callers_x_fails(mutant):
    v = mutant(
        "func-hvp",
        (
            HVP_ONE,
            (
                "        x.requires_grad_(True)\n"
                "        g = torch.autograd.grad(f(x), x, create_graph=True)[0]\n"
                "        return torch.autograd.grad(g, x, direction)[0]"
            ),
        ),
        ("    return vmap(one)(v)  # key", "    return torch.stack([one(d) for d in v])"),
    )
    # The call contract sees the flag change on return, before the checker's own question.
    assert_fails(v, "hvp(...)", "`x`.requires_grad went from False to True")


def test_hvp_forming_the_hessian_for_small_n_fails(mutant):
    v = mutant(
        "func-hvp",
        ("from torch.func import grad, jvp, vmap", "from torch.func import grad, hessian, jvp, vmap"),
        ("    if v.dim() == 1:", "    if x.shape[0] <= 64:\n        return v @ hessian(f)(x).T\n    if v.dim() == 1:"),
    )
    assert_fails(v, "made a tensor of shape", "builds the n x n matrix", "even when n is small")


def test_hvp_clearing_requires_grad_on_the_callers_x_fails(mutant):
    v = mutant("func-hvp", "    if v.dim() == 1:", "    x.requires_grad_(False)\n    if v.dim() == 1:")
    assert_fails(v, "requires_grad went from True to False")


def test_hvp_forming_the_hessian_only_at_size_fails_on_memory(mutant):
    v = mutant(
        "func-hvp",
        ("from torch.func import grad, jvp, vmap", "from torch.func import grad, hessian, jvp, vmap"),
        ("    if v.dim() == 1:", "    if x.shape[0] > 512:\n        return v @ hessian(f)(x)\n    if v.dim() == 1:"),
    )
    assert_fails(v, "peaked at", "builds the n x n matrix")
