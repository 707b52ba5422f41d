"""Example of a mutant test: realistic learner mistakes must fail with a helpful reason."""

import pytest

pytestmark = pytest.mark.slow


def test_solution_passes(check_code, solution_text):
    v = check_code("sigmoid", solution_text("sigmoid"))
    assert v.status == "passed", (v.reason, v.details, v.output)


def test_wrong_derivative_fails_with_gradient_reason(check_code, solution_text):
    src = solution_text("sigmoid").replace("grad_out * s * (1 - s)", "grad_out * s")
    v = check_code("sigmoid", src)
    assert v.status == "failed"
    assert "gradient of x" in v.reason and "max abs error" in v.reason
