"""Chapter 2 (custom autograd Functions): every solution passes, and realistic learner mistakes
fail with a reason that says what is wrong."""

import pytest

pytestmark = pytest.mark.slow


def mutate(source: str, old: str, new: str) -> str:
    assert old in source, f"mutation target not found: {old!r}"
    return source.replace(old, new)


def failed(v, *words):
    assert v.status == "failed", (v.status, v.reason, v.details, v.output[-2000:])
    for w in words:
        assert w in v.reason, (w, v.reason)


@pytest.mark.parametrize("exercise", ["sigmoid", "leaky-relu", "stable-logsumexp", "straight-through"])
def test_solution_passes(check_code, solution_text, exercise):
    v = check_code(exercise, solution_text(exercise))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


# -- sigmoid ---------------------------------------------------------------------------------


def test_sigmoid_wrong_derivative(check_code, solution_text):
    src = mutate(solution_text("sigmoid"), "grad_out * s * (1 - s)", "grad_out * s")
    failed(check_code("sigmoid", src), "gradient of x", "max abs error")


def test_sigmoid_saving_the_input_instead_of_the_output(check_code, solution_text):
    src = mutate(solution_text("sigmoid"), "ctx.save_for_backward(s)", "ctx.save_for_backward(x)")
    src = mutate(src, "(s,) = ctx.saved_tensors", "(x,) = ctx.saved_tensors\n        s = torch.sigmoid(x)")
    failed(check_code("sigmoid", src), "save s = sigmoid(x)")


# -- leaky ReLU ------------------------------------------------------------------------------


def test_leaky_relu_missing_none_for_the_slope(check_code, solution_text):
    src = mutate(solution_text("leaky-relu"), "return grad_x, None", "return grad_x")
    failed(check_code("leaky-relu", src), "one value per input", "None")


def test_leaky_relu_gradient_for_the_float(check_code, solution_text):
    src = mutate(solution_text("leaky-relu"), "return grad_x, None",
                 "return grad_x, torch.zeros(())")
    failed(check_code("leaky-relu", src), "negative_slope", "None")


def test_leaky_relu_slope_on_the_wrong_side(check_code, solution_text):
    src = mutate(solution_text("leaky-relu"),
                 "torch.where(x > 0, grad_out, grad_out * ctx.negative_slope)",
                 "torch.where(x > 0, grad_out * ctx.negative_slope, grad_out)")
    failed(check_code("leaky-relu", src), "gradient of x", "negative_slope=")


def test_leaky_relu_modifying_x_in_place(check_code, solution_text):
    src = mutate(solution_text("leaky-relu"), "return torch.where(x > 0, x, x * negative_slope)",
                 "return x.mul_(torch.where(x > 0, 1.0, negative_slope))")
    failed(check_code("leaky-relu", src), "in place")


# -- stable log-sum-exp ----------------------------------------------------------------------


def test_logsumexp_naive_formula_overflows(check_code, solution_text):
    src = mutate(solution_text("stable-logsumexp"),
                 "out = (m + (x - m).exp().sum(dim=-1, keepdim=True).log()).squeeze(-1)",
                 "out = x.exp().sum(dim=-1).log()")
    failed(check_code("stable-logsumexp", src), "non-finite", "around +1000")


def test_logsumexp_once_differentiable_breaks_double_backward(check_code, solution_text):
    src = mutate(solution_text("stable-logsumexp"), "    @staticmethod\n    def backward",
                 "    @staticmethod\n    @torch.autograd.function.once_differentiable\n    def backward")
    failed(check_code("stable-logsumexp", src), "not differentiable", "once_differentiable")


def test_logsumexp_softmax_computed_in_forward(check_code, solution_text):
    src = mutate(solution_text("stable-logsumexp"), "ctx.save_for_backward(x, out)",
                 "ctx.p = (x - out.unsqueeze(-1)).exp()")
    src = mutate(src, "x, out = ctx.saved_tensors", "")
    src = mutate(src, "return grad_out.unsqueeze(-1) * (x - out.unsqueeze(-1)).exp()",
                 "return grad_out.unsqueeze(-1) * ctx.p")
    failed(check_code("stable-logsumexp", src), "not differentiable")


def test_logsumexp_calling_torch_logsumexp(check_code, solution_text):
    src = mutate(solution_text("stable-logsumexp"),
                 "out = (m + (x - m).exp().sum(dim=-1, keepdim=True).log()).squeeze(-1)",
                 "out = torch.logsumexp(x, dim=-1)")
    failed(check_code("stable-logsumexp", src), "logsumexp", "max-subtraction")


# -- straight-through estimator --------------------------------------------------------------


def test_ste_true_derivative_of_round_is_zero(check_code, solution_text):
    src = mutate(solution_text("straight-through"), "return grad_out  #",
                 "return torch.zeros_like(grad_out)  #")
    failed(check_code("straight-through", src), "gradient of x", "straight-through")


def test_ste_rounding_halves_up(check_code, solution_text):
    src = mutate(solution_text("straight-through"), "return torch.round(x)",
                 "return torch.floor(x + 0.5)")
    failed(check_code("straight-through", src), "exact halves")


def test_ste_clipped_gradient_is_not_the_identity(check_code, solution_text):
    src = mutate(solution_text("straight-through"), "return torch.round(x)",
                 "ctx.save_for_backward(x)\n        return torch.round(x)")
    src = mutate(src, "return grad_out  #",
                 "(x,) = ctx.saved_tensors\n        return grad_out * (x.abs() <= 1)  #")
    failed(check_code("straight-through", src), "gradient of x")
