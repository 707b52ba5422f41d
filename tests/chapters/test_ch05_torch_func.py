"""Chapter 5 (torch.func): every solution passes; realistic learner mistakes fail with a reason
that names the problem in the learner's terms."""

import pytest

pytestmark = pytest.mark.slow


def _replace(src, old, new):
    assert old in src, f"mutation target not found: {old!r}"
    return src.replace(old, new)


def _fails(v, *words, status="failed"):
    assert v.status == status, (v.status, v.reason, v.details, v.output[-2000:])
    for w in words:
        assert w in v.reason, (w, v.reason)


# -- func-vmap-linear ---------------------------------------------------------------------------

def test_vmap_linear_solution_passes(check_code, solution_text):
    v = check_code("func-vmap-linear", solution_text("func-vmap-linear"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert {"time", "reference_vs_loop"} <= set(v.figures)


def test_vmap_linear_default_out_dims_puts_layers_first(check_code, solution_text):
    src = _replace(solution_text("func-vmap-linear"), ", out_dims=1)(x, weight, bias)", ")(x, weight, bias)")
    _fails(check_code("func-vmap-linear", src), "shape", "out_dims=1")


def test_vmap_linear_mapping_the_shared_input_errors(check_code, solution_text):
    src = _replace(solution_text("func-vmap-linear"), "in_dims=(None, 0, 0)", "in_dims=(0, 0, 0)")
    _fails(check_code("func-vmap-linear", src), "same size in the mapped dimension", "in_dims=None for x")


def test_vmap_linear_dropping_the_bias_fails(check_code, solution_text):
    src = _replace(solution_text("func-vmap-linear"), "vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)",
                   "vmap(lambda x, w, b: x @ w.T, in_dims=(None, 0, 0), out_dims=1)")
    _fails(check_code("func-vmap-linear", src), "batched_linear output", "max abs error")


def test_vmap_linear_without_vmap_fails(check_code, solution_text):
    src = _replace(solution_text("func-vmap-linear"),
                   "    return vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)(x, weight, bias)",
                   "    return torch.einsum('bi,noi->bno', x, weight) + bias")
    _fails(check_code("func-vmap-linear", src), "never calls torch.func.vmap")


# -- func-per-sample-grads ----------------------------------------------------------------------

def test_per_sample_solution_passes(check_code, solution_text):
    v = check_code("func-per-sample-grads", solution_text("func-per-sample-grads"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert {"time", "reference_vs_loop"} <= set(v.figures)


def test_per_sample_without_batch_of_one_hits_the_flatten_shape_error(check_code, solution_text):
    src = _replace(solution_text("func-per-sample-grads"), "(xi.unsqueeze(0),)", "(xi,)")
    src = _replace(src, "yi.unsqueeze(0))", "yi)")
    _fails(check_code("func-per-sample-grads", src), "shapes cannot be multiplied", "xi.unsqueeze(0)")


def test_per_sample_batch_gradient_has_the_wrong_shape(check_code, solution_text):
    src = _replace(solution_text("func-per-sample-grads"),
                   "    return vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)",
                   "    def batch_loss(params, buffers, x, y):\n"
                   "        return F.cross_entropy(functional_call(model, (params, buffers), (x,)), y)\n"
                   "    return grad(batch_loss)(params, buffers, x, y)")
    _fails(check_code("func-per-sample-grads", src), "should have shape (batch, *param.shape)")


def test_per_sample_loop_of_backward_calls_fails(check_code, solution_text):
    src = _replace(solution_text("func-per-sample-grads"),
                   "    return vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)",
                   "    return {k: torch.stack([grad(sample_loss)(params, buffers, xi, yi)[k]\n"
                   "                            for xi, yi in zip(x, y)]) for k in params}")
    _fails(check_code("func-per-sample-grads", src), "never calls torch.func.vmap")


# -- func-ensemble ------------------------------------------------------------------------------

def test_ensemble_solution_passes(check_code, solution_text):
    v = check_code("func-ensemble", solution_text("func-ensemble"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert {"time", "reference_vs_loop"} <= set(v.figures)


def test_ensemble_real_base_model_fails(check_code, solution_text):
    src = _replace(solution_text("func-ensemble"), "copy.deepcopy(models[0]).to(\"meta\")",
                   "copy.deepcopy(models[0])")
    _fails(check_code("func-ensemble", src), "holds real tensors", "meta device")


def test_ensemble_forgetting_buffers_fails_loudly_with_a_meta_base(check_code, solution_text):
    src = _replace(solution_text("func-ensemble"), "functional_call(base, (p, b), (x,))",
                   "functional_call(base, p, (x,))")
    _fails(check_code("func-ensemble", src), "meta", "(params, buffers)")


def test_ensemble_mapping_the_shared_batch_errors(check_code, solution_text):
    src = _replace(solution_text("func-ensemble"), "in_dims=(0, 0, None)", "in_dims=(0, 0, 0)")
    _fails(check_code("func-ensemble", src), "in_dims=None for x")


def test_ensemble_python_loop_fails(check_code, solution_text):
    src = _replace(solution_text("func-ensemble"),
                   "    return vmap(one_model, in_dims=(0, 0, None))(params, buffers, x)",
                   "    n = next(iter(params.values())).shape[0]\n"
                   "    return torch.stack([one_model({k: v[i] for k, v in params.items()},\n"
                   "                                  {k: v[i] for k, v in buffers.items()}, x) for i in range(n)])")
    _fails(check_code("func-ensemble", src), "never calls torch.func.vmap")


# -- func-maml ----------------------------------------------------------------------------------

def test_maml_solution_passes(check_code, solution_text):
    v = check_code("func-maml", solution_text("func-maml"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


def test_maml_first_order_fails_on_the_meta_gradient(check_code, solution_text):
    src = _replace(solution_text("func-maml"), "params[k] - lr * g[k]", "params[k] - lr * g[k].detach()")
    _fails(check_code("func-maml", src), "second-order MAML")


def test_maml_one_step_too_few_fails(check_code, solution_text):
    src = _replace(solution_text("func-maml"), "for _ in range(steps):", "for _ in range(steps - 1):")
    _fails(check_code("func-maml", src), "adapted `", "step(s) at lr=")


def test_maml_gradient_ascent_fails(check_code, solution_text):
    src = _replace(solution_text("func-maml"), "params[k] - lr * g[k]", "params[k] + lr * g[k]")
    _fails(check_code("func-maml", src), "adapted `", "max abs error")


def test_maml_detached_initial_parameters_fail(check_code, solution_text):
    src = _replace(solution_text("func-maml"), "    params = dict(model.named_parameters())\n\n",
                   "    params = {k: v.detach() for k, v in model.named_parameters()}\n\n")
    _fails(check_code("func-maml", src), "does not require grad")
