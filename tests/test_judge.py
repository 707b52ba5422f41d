"""The judge's comparisons and the messages a learner reads."""

import math

import torch

from tutor.runner.judge import judge


def close(a, e, **opts):
    return judge("close", "output", a, e, opts)


def test_equal_tensors_pass_and_tolerance_is_dtype_aware():
    x = torch.randn(4, 4)
    assert close(x, x.clone()) is None
    assert close(x + 1e-7, x) is None
    h = x.to(torch.bfloat16)
    assert close(h, (x * 1.001).to(torch.bfloat16)) is None  # within bf16 tolerance
    assert close(x * 1.001, x) is not None  # not within fp32's


def test_shape_mismatch_message():
    reason, _ = close(torch.zeros(32, 10), torch.zeros(32, 5))
    assert reason == "output: shape (32, 10) != expected (32, 5)"


def test_dtype_mismatch_message():
    reason, _ = close(torch.zeros(3, dtype=torch.float64), torch.zeros(3))
    assert reason == "output: dtype float64 != expected float32"


def test_value_mismatch_names_worst_index_and_first_values():
    e = torch.zeros(5, 8)
    a = e.clone()
    a[3, 7] = 0.31
    a[1, 2] = 0.01
    reason, details = close(a, e)
    assert "max abs error 0.31 at index (3, 7)" in reason
    assert "2 of 40 values out of tolerance" in reason
    assert details[0] == "at (1, 2): got 0.01, expected 0"


def test_nan_where_number_expected():
    a = torch.tensor([1.0, float("nan")])
    reason, _ = close(a, torch.tensor([1.0, 2.0]))
    assert "NaN at index (1,)" in reason


def test_matching_infinities_pass():
    t = torch.tensor([math.inf, -math.inf, 1.0])
    assert close(t, t.clone()) is None


def test_type_and_structure():
    assert close([torch.ones(2)], (torch.ones(2),))[0] == "output is a list, expected a tuple"
    assert close(3, torch.ones(1))[0] == "output is a int, expected a tensor"
    assert close({"w": torch.ones(1)}, {"w": torch.ones(1), "b": torch.ones(1)})[0] == "output is missing key(s) 'b'"
    assert close((torch.ones(2), torch.ones(3)), (torch.ones(2), torch.zeros(3)))[0].startswith(
        "output[1]: max abs error"
    )


def test_numbers_and_exact():
    assert close(1.0, 1.0 + 1e-9) is None
    assert "is 1.1, expected 1" in close(1.1, 1.0)[0]
    assert judge("equal", "count", 3, 3, {}) is None
    assert judge("equal", "count", 2, 3, {})[0] == "count is 2, expected 3"
    assert judge("equal", "ids", torch.tensor([1, 2]), torch.tensor([1, 3]), {})[0].startswith(
        "ids: 1 of 2 values differ; first at index (1,): 2 != expected 3"
    )


def test_custom_tolerance():
    assert close(torch.ones(3) * 1.05, torch.ones(3), atol=0.1) is None


def test_facts_and_finite():
    assert judge("true", "it should be so", True, True, {}) is None
    assert judge("true", "it should be so", False, True, {}) == ("it should be so", [])
    reason, _ = judge("finite", "loss", torch.tensor([1.0, math.inf]), None, {})
    assert reason == "loss has 1 non-finite value(s): inf at index (1,)"


def test_a_number_where_nan_must_propagate_is_a_failure():
    import torch

    from tutor.runner.judge import judge

    expected = torch.tensor([1.0, float("nan"), 3.0])
    failure = judge("close", "output", torch.tensor([1.0, 0.0, 3.0]), expected, {})
    assert failure is not None and "where NaN was expected" in failure[0] and "(1,)" in failure[0]
    assert judge("close", "output", expected.clone(), expected, {}) is None


def test_no_mutation_does_not_call_a_nan_input_changed(tmp_path):
    import torch

    from tutor.runner.checker_api import Channel, Context

    class Record(Channel):
        def __init__(self) -> None:
            self.seen: list[tuple] = []

        def expect(self, kind, name, actual, expected, options):
            self.seen.append((kind, name, actual))

        def figure(self, name, value):
            pass

        def phase(self, text, **info):
            pass

    channel = Record()
    ctx = Context(learner=None, reference=None, channel=channel, seed=0, device="cpu", tmpdir=tmp_path)
    x = torch.tensor([1.0, float("nan"), -2.0])
    ctx.no_mutation(lambda t: t * 2, x)
    assert channel.seen and all(actual is True for _, _, actual in channel.seen)
    ctx.no_mutation(lambda t: t.mul_(2), x)
    assert channel.seen[-1][2] is False  # a real in-place change is still caught
