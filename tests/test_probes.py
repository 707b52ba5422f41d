"""ctx.probe through the real runner: the reference passes every probe, and a learner function
that breaks one promise fails with a reason naming that probe (issue 24, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.runner.client import _SOURCES, Runner
from tutor.runner.protocol import RunRequest, Verdict

FIX = Path(__file__).parent / "runner_fixtures"
SOLUTION = (FIX / "probe_solution.py").read_text(encoding="utf-8")
FORWARD = "        return F.softplus(x)\n"
BACKWARD = "        return grad_out * torch.sigmoid(x)\n"


def run(runner: Runner, tmp_path: Path, source: str) -> Verdict:
    path = tmp_path / "learner.py"
    path.write_text(source, encoding="utf-8")
    req = RunRequest(
        exercise="test/probe",
        code=str(path),
        solution=str(FIX / "probe_solution.py"),
        checker=str(FIX / "probe_check.py"),
        timeout=60,
        seed=11,
        sources={**_SOURCES.for_paths(FIX / "probe_check.py", FIX / "probe_solution.py"), "allows": []},
    )
    return runner.run(req)


def edit(old: str, new: str) -> str:
    assert old in SOLUTION, old
    return SOLUTION.replace(old, new)


CASES = [
    # (what the learner got wrong, their file, words the reason must hold)
    (
        "computes in float32 and returns float32",
        edit(FORWARD, "        return F.softplus(x.float())\n"),
        "for a float64 input: dtype float32",
    ),
    ("assumes a 2-D input", edit(FORWARD, "        return F.softplus(x) + 0 * x[:, :1]\n"), "of shape (1,)"),
    (
        "flattens with view",
        edit(FORWARD, "        return F.softplus(x.view(-1)).view(x.shape)\n"),
        "for a non-contiguous input",
    ),
    (
        "the textbook formula",
        edit(FORWARD, "        return torch.log1p(torch.exp(x))\n"),
        "for inputs holding inf, -inf, NaN",
    ),
    (
        "a wrong derivative",
        edit(BACKWARD, "        return grad_out * torch.sigmoid(x) * (x > -1)\n"),
        "gradient of input #1",
    ),
    (
        "flattens the incoming gradient with view",
        edit(BACKWARD, "        return (grad_out.view(-1) * torch.sigmoid(x).view(-1)).view(x.shape)\n"),
        "expanded incoming gradient",
    ),
    (
        "a backward with no graph",
        edit(BACKWARD, "        return grad_out * torch.sigmoid(x).detach()\n"),
        "second derivative",
    ),
    ("a Python branch on a value", edit(FORWARD, "        x.tolist()\n        return F.softplus(x)\n"), "vmap"),
    (
        "keeps the saved input in a global",
        edit(
            "        ctx.save_for_backward(inputs[0])\n",
            "        global LAST\n        LAST = inputs[0]\n        ctx.save_for_backward(inputs[0])\n",
        ).replace("        (x,) = ctx.saved_tensors\n", "        x = LAST\n"),
        "two calls before one backward",
    ),
]


def test_the_reference_passes_every_probe(runner, tmp_path):
    v = run(runner, tmp_path, SOLUTION)
    assert v.status == "passed", (v.reason, v.details)


@pytest.mark.parametrize(("what", "source", "words"), CASES, ids=[c[0] for c in CASES])
def test_a_broken_promise_fails_naming_its_probe(runner, tmp_path, what, source, words):
    v = run(runner, tmp_path, source)
    assert v.status == "failed" and words in v.reason, (v.status, v.reason, v.details)


def test_a_correct_but_different_function_passes(runner, tmp_path):
    # torch's own formula, written out: other ops, the same values on every probe.
    source = edit(FORWARD, "        return torch.where(x > 20, x, torch.log1p(torch.exp(x.clamp(max=20))))\n")
    v = run(runner, tmp_path, source)
    assert v.status == "passed", (v.reason, v.details)
