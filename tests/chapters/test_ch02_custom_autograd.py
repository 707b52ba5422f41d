"""Chapter 2 (custom autograd Functions): every solution passes, and realistic learner mistakes
fail with a reason that says what is wrong."""

import pytest

from .conftest import assert_fails, assert_passes, describe

pytestmark = pytest.mark.slow


EXERCISES = ["sigmoid", "leaky-relu", "stable-logsumexp", "straight-through", "vmap-log-cosh"]


@pytest.mark.parametrize("exercise", EXERCISES)
def test_solution_passes(solution_verdict, exercise):
    assert_passes(solution_verdict(exercise, seeds=2))


def test_passing_checks_show_what_the_function_keeps_and_what_it_avoids(solution_verdict, check_code, course):
    """Each pass teaches with a figure: the memory kept for backward (sigmoid against autograd's
    graph of its formula; leaky ReLU against a bool mask), and log-sum-exp on a row of 1000s."""
    quarter_mib = 256 * 256 * 4
    v = assert_passes(solution_verdict("sigmoid"))
    assert v.figures["kept_for_backward_bytes"] == quarter_mib  # s alone
    assert v.figures["formula_kept_for_backward_bytes"] == 2 * quarter_mib  # exp(-x) and 1 + exp(-x)
    v = assert_passes(solution_verdict("leaky-relu"))
    assert v.figures["kept_for_backward_bytes"] == quarter_mib and v.figures["mask_bytes"] == quarter_mib // 4
    masked = (
        course.exercise("leaky-relu")
        .solution.read_text()
        .replace("ctx.save_for_backward(x)", "ctx.save_for_backward(x > 0)")
        .replace("(x,) = ctx.saved_tensors", "(positive,) = ctx.saved_tensors")
        .replace("torch.where(x > 0, grad_out,", "torch.where(positive, grad_out,")
    )
    v = assert_passes(check_code("leaky-relu", masked))
    assert v.figures["kept_for_backward_bytes"] == v.figures["mask_bytes"]  # the figure follows the code
    v = assert_passes(solution_verdict("stable-logsumexp"))
    assert v.figures["yours_at_1000_minus_1000"] == pytest.approx(1.3863, abs=1e-3)
    assert "gives inf" in v.figures["_labels"]["yours_at_1000_minus_1000"]


@pytest.mark.parametrize("exercise", EXERCISES)
def test_stub_fails(check_code, course, exercise):
    v = check_code(exercise, course.exercise(exercise).stub)
    assert v.status in ("failed", "error") and "TODO" in v.reason, describe(v)


# -- sigmoid ---------------------------------------------------------------------------------


def test_sigmoid_wrong_derivative(mutant):
    assert_fails(mutant("sigmoid", "grad_out * s * (1 - s)", "grad_out * s"), "gradient of x", "max abs error")


def test_sigmoid_ignoring_the_incoming_gradient(mutant):
    assert_fails(mutant("sigmoid", "return grad_out * s * (1 - s)", "return s * (1 - s)"), "gradient of x")


def test_sigmoid_computing_in_float32_whatever_the_input(mutant):
    v = mutant("sigmoid", "s = torch.sigmoid(x)", "s = torch.sigmoid(x.float())")
    assert_fails(v, "float64")


def test_sigmoid_from_the_exp_formula_passes(variant):
    variant(
        "sigmoid",
        ("s = torch.sigmoid(x)", "s = 1 / (1 + torch.exp(-x))"),
        ("return grad_out * s * (1 - s)", "return grad_out * (s - s * s)"),
    )


# -- leaky ReLU ------------------------------------------------------------------------------


def test_leaky_relu_slope_on_the_wrong_side(mutant):
    v = mutant(
        "leaky-relu",
        "torch.where(x > 0, grad_out, grad_out * ctx.negative_slope)",
        "torch.where(x > 0, grad_out * ctx.negative_slope, grad_out)",
    )
    assert_fails(v, "gradient of x", "negative_slope=")


def test_leaky_relu_modifying_x_in_place(mutant):
    v = mutant(
        "leaky-relu",
        "return torch.where(x > 0, x, x * negative_slope)",
        "return x.mul_(torch.where(x > 0, 1.0, negative_slope))",
    )
    assert_fails(v, "in place")


def test_leaky_relu_default_slope_hard_coded_in_backward(mutant):
    v = mutant("leaky-relu", "grad_out * ctx.negative_slope)", "grad_out * 0.01)")
    assert_fails(v, "gradient of x with negative_slope=")


def test_leaky_relu_forward_ignores_the_slope_argument(mutant):
    v = mutant("leaky-relu", "x * negative_slope)", "x * 0.01)")
    assert_fails(v, "output with negative_slope=")


def test_leaky_relu_saving_a_mask_passes(variant):
    variant(
        "leaky-relu",
        ("ctx.save_for_backward(x)", "ctx.save_for_backward(x > 0)"),
        (
            "return torch.where(x > 0, x, x * negative_slope)",
            "return torch.nn.functional.leaky_relu(x, negative_slope)",
        ),
        ("(x,) = ctx.saved_tensors", "(positive,) = ctx.saved_tensors"),
        ("torch.where(x > 0, grad_out,", "torch.where(positive, grad_out,"),
    )


# -- stable log-sum-exp ----------------------------------------------------------------------


def test_logsumexp_naive_formula_overflows(mutant):
    v = mutant(
        "stable-logsumexp",
        "out = (m + (x - m).exp().sum(dim=-1, keepdim=True).log()).squeeze(-1)",
        "out = x.exp().sum(dim=-1).log()",
    )
    assert_fails(v, "non-finite", "around +1000")


def test_logsumexp_softmax_computed_in_forward(mutant):
    v = mutant(
        "stable-logsumexp",
        ("ctx.save_for_backward(x, out)", "ctx.p = (x - out.unsqueeze(-1)).exp()"),
        ("x, out = ctx.saved_tensors", ""),
        ("return grad_out.unsqueeze(-1) * (x - out.unsqueeze(-1)).exp()", "return grad_out.unsqueeze(-1) * ctx.p"),
    )
    assert_fails(v, "not differentiable")


def test_logsumexp_backward_ignores_the_incoming_gradient(mutant):
    v = mutant(
        "stable-logsumexp",
        "return grad_out.unsqueeze(-1) * (x - out.unsqueeze(-1)).exp()",
        "return (x - out.unsqueeze(-1)).exp()",
    )
    assert_fails(v, "gradient of x")


def test_logsumexp_computing_in_float32_whatever_the_input(mutant):
    v = mutant(
        "stable-logsumexp",
        "m = x.amax(dim=-1, keepdim=True)",
        "x = x.float()\n        m = x.amax(dim=-1, keepdim=True)",
    )
    assert_fails(v, "float64")


def test_logsumexp_softmax_recomputed_with_its_own_max_passes(variant):
    # Issue 20: more accurate than torch.logsumexp's own float32 gradient; it used to fail.
    variant(
        "stable-logsumexp",
        ("m = x.amax(dim=-1, keepdim=True)", "m = torch.max(x, dim=-1, keepdim=True).values"),
        (
            "return grad_out.unsqueeze(-1) * (x - out.unsqueeze(-1)).exp()",
            "e = (x - x.amax(dim=-1, keepdim=True)).exp()\n"
            "        return grad_out.unsqueeze(-1) * e / e.sum(dim=-1, keepdim=True)",
        ),
    )


# -- fake quantizer with a clipped straight-through gradient ---------------------------------


def test_ste_clipped_with_the_ends_excluded(mutant):
    v = mutant("straight-through", "inside = (q >= qmin) & (q <= qmax)", "inside = (q > qmin) & (q < qmax)")
    assert_fails(v, "is qmin or qmax")


def test_ste_clipped_in_units_of_x_not_of_scale(mutant):
    v = mutant("straight-through", "inside = (q >= qmin) & (q <= qmax)", "inside = (x >= qmin) & (x <= qmax)")
    assert_fails(v, "gradient of x where")


def test_ste_gradient_divided_by_the_scale(mutant):
    v = mutant(
        "straight-through",
        ("ctx.save_for_backward(inside)", "ctx.save_for_backward(inside)\n        ctx.scale = scale"),
        ("return grad_out * inside, None, None, None", "return grad_out * inside / ctx.scale, None, None, None"),
    )
    assert_fails(v, "lies inside the range")


def test_ste_rounding_halves_up(mutant):
    v = mutant("straight-through", "q = torch.round(x / scale)", "q = torch.floor(x / scale + 0.5)")
    assert_fails(v, "fake-quantized output", "values at and around the ends")


def test_ste_forgetting_the_clamp(mutant):
    v = mutant("straight-through", "return q.clamp(qmin, qmax) * scale", "return q * scale")
    assert_fails(v, "fake-quantized output")


def test_ste_quantizing_in_float32_whatever_the_input(mutant):
    v = mutant("straight-through", "q = torch.round(x / scale)", "q = torch.round(x.float() / scale)")
    assert_fails(v, "float64")


def test_ste_calling_torch_fake_quantize(mutant):
    v = mutant(
        "straight-through",
        "return q.clamp(qmin, qmax) * scale",
        "return torch.fake_quantize_per_tensor_affine(x, scale, 0, qmin, qmax)",
    )
    assert_fails(v, "fake_quantize_per_tensor_affine", "yourself")


def test_ste_mask_recomputed_in_backward_passes(variant):
    # Saves x and the numbers instead of the mask, recomputes it in backward with torch.where.
    variant(
        "straight-through",
        (
            "ctx.save_for_backward(inside)",
            "ctx.save_for_backward(x)\n        ctx.scale, ctx.qmin, ctx.qmax = scale, qmin, qmax",
        ),
        (
            "(inside,) = ctx.saved_tensors",
            "(x,) = ctx.saved_tensors\n        q = (x / ctx.scale).round()\n"
            "        inside = (q >= ctx.qmin) & (q <= ctx.qmax)",
        ),
        (
            "return grad_out * inside, None, None, None",
            "return torch.where(inside, grad_out, torch.zeros_like(grad_out)), None, None, None",
        ),
    )


# -- log-cosh under vmap(grad(...)) ----------------------------------------------------------

OLD_FORM = ("    def forward(x):", "    def forward(ctx, x):\n        ctx.save_for_backward(x)")
NO_SETUP = (
    "    @staticmethod\n    def setup_context(ctx, inputs, output):\n        (x,) = inputs\n"
    "        ctx.save_for_backward(x)  # key\n",
    "",
)


def test_log_cosh_without_a_vmap_rule(mutant):
    v = mutant("vmap-log-cosh", "    generate_vmap_rule = True", "    pass  #")
    assert_fails(v, "does not know how to batch", "generate_vmap_rule = True")


def test_log_cosh_python_if_on_values(mutant):
    v = mutant(
        "vmap-log-cosh",
        "        return a + torch.log1p(torch.exp(-2 * a)) - LOG2  # key",
        "        if a.max() > 80:\n            return a + torch.log1p(torch.exp(-2 * a)) - LOG2\n"
        "        return torch.log(torch.cosh(x))",
    )
    assert_fails(v, "Python if", "torch.where")


def test_log_cosh_naive_formula_overflows(mutant):
    v = mutant("vmap-log-cosh", "return a + torch.log1p(torch.exp(-2 * a)) - LOG2", "return torch.log(torch.cosh(x))")
    assert_fails(v, "non-finite", "around +-100")


def test_log_cosh_forward_modifies_x_in_place(mutant):
    assert_fails(mutant("vmap-log-cosh", "a = x.abs()", "a = x.abs_()"), "in place")


def test_log_cosh_backward_writes_into_the_saved_input(mutant):
    v = mutant("vmap-log-cosh", "return grad_out * torch.tanh(x)", "return grad_out * x.tanh_()")
    assert_fails(v, "changed the saved input x in place")


def test_log_cosh_derivative_of_tanh_instead_of_tanh(mutant):
    v = mutant("vmap-log-cosh", "return grad_out * torch.tanh(x)", "return grad_out * (1 - torch.tanh(x) ** 2)")
    assert_fails(v, "gradient of x", "max abs error")


def test_log_cosh_saving_the_output_instead_of_the_input(mutant):
    v = mutant(
        "vmap-log-cosh",
        ("        (x,) = inputs\n        ctx.save_for_backward(x)  # key", "        ctx.save_for_backward(output)"),
    )
    assert_fails(v, "gradient of x")


def test_log_cosh_explicit_vmap_staticmethod_passes(variant):
    variant(
        "vmap-log-cosh",
        (
            "    generate_vmap_rule = True  # key: forward and backward are plain torch ops, so vmap can batch them\n",
            "",
        ),
        (
            "def log_cosh(",
            "def _vmap(info, in_dims, x):\n"
            "    # elementwise: the batch dim stays where it is\n"
            "    return LogCosh.apply(x), in_dims[0]\n\n\n"
            "LogCosh.vmap = staticmethod(_vmap)\n\n\n"
            "def log_cosh(",
        ),
    )


def test_log_cosh_softplus_form_and_attribute_storage_passes(variant):
    # log(cosh(x)) = x + softplus(-2x) - log 2; and x kept as a ctx attribute rather than saved.
    variant(
        "vmap-log-cosh",
        (
            "a = x.abs()\n        return a + torch.log1p(torch.exp(-2 * a)) - LOG2",
            "return x + torch.nn.functional.softplus(-2 * x) - LOG2",
        ),
        ("ctx.save_for_backward(x)  # key", "ctx.x = x"),
        ("(x,) = ctx.saved_tensors", "x = ctx.x"),
    )


def test_ste_default_range_off_by_one_fails(mutant):
    # Found by `tutor dev mutate straight-through`: no check called fake_quant with its defaults.
    v = mutant(
        "straight-through",
        "qmin: int = -128, qmax: int = 127",
        "qmin: int = -127, qmax: int = 127",
    )
    assert_fails(v, "with the default qmin and qmax (int8: -128 and 127)")
