"""The call contract through the real runner: a learner call that leaves behind what the
reference's same call does not (every state class of tutor.runner.contract) fails with a reason
naming it, and passes once the exercise declares that its task allows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.runner.client import _SOURCES, Runner
from tutor.runner.protocol import CONTRACT_CATEGORIES, RunRequest, Verdict

FIX = Path(__file__).parent / "runner_fixtures"
SOLUTION = (FIX / "contract_solution.py").read_text(encoding="utf-8")
SCORE = "    with torch.no_grad():\n        return model(x).sum(dim=1)\n"
STEP_END = "    opt.step()\n    return loss.detach()\n"
BACKWARD = "        return grad_out * 2 * x\n"


def run(runner: Runner, tmp_path: Path, source: str, allows: tuple[str, ...] = ()) -> Verdict:
    path = tmp_path / "learner.py"
    path.write_text(source, encoding="utf-8")
    sources = _SOURCES.for_paths(FIX / "contract_check.py", FIX / "contract_solution.py")
    req = RunRequest(
        exercise="test/contract",
        code=str(path),
        solution=str(FIX / "contract_solution.py"),
        checker=str(FIX / "contract_check.py"),
        timeout=30,
        seed=7,
        sources={**sources, "allows": list(allows)},
    )
    return runner.run(req)


def edit(old: str, new: str, source: str = SOLUTION) -> str:
    assert old in source, old
    return source.replace(old, new)


def in_score(line: str) -> str:
    """The solution with `line` run in `score` after its result is computed."""
    return edit(SCORE, f"    with torch.no_grad():\n        out = model(x).sum(dim=1)\n    {line}\n    return out\n")


# (category, the learner's file, words the reason must hold, passes once allowed: False where
# the change also changes what later calls compute, which the values then catch)
CASES = [
    ("inputs", in_score("x.mul_(2)"), ["`x` was changed in place"], False),
    ("inputs", in_score("x.data.mul_(2)"), ["`x` was changed in place"], False),  # .data: no version bump
    ("inputs", in_score("x.as_strided_((5, 4), (1, 5))"), ["shape or strides of `x`"], False),
    (
        "inputs",
        edit("    return torch.stack(parts)", "    parts[0] = parts[0].clone()\n    return torch.stack(parts)"),
        ["the contents of `parts` were changed"],
        True,
    ),
    (
        "returns-input",
        edit("def square(x):\n    return Square.apply(x)", "def square(x):\n    Square.apply(x)\n    return x"),
        ["returned `x` itself"],
        False,
    ),
    ("training", in_score("model.eval()"), ["switched to eval mode"], True),
    ("requires-grad", in_score("model.requires_grad_(False)"), ["requires_grad of", "`model`"], False),
    ("parameters", in_score("model[0].weight.data.zero_()"), ["parameters or buffers 0.weight"], False),
    ("grads", in_score("model(x).sum().backward()"), [".grad of 0.bias"], True),
    ("hooks", in_score("model.register_forward_hook(lambda m, i, o: None)"), ["hooks were added"], True),
    ("structure", in_score("model[1] = torch.nn.GELU()"), ["submodules of `model`"], False),
    ("optimizer", edit(STEP_END, "    opt.param_groups[0]['lr'] = 0.5\n" + STEP_END), ["settings of `opt`"], True),
    ("grad-output", edit(BACKWARD, "        return grad_out.mul_(2 * x)\n"), ["grad_output"], True),
    ("rng", in_score("torch.manual_seed(0)"), ["reseeded", "torch.manual_seed"], True),
    ("rng", in_score("import random; random.seed(0)"), ["reseeded", "random.seed"], True),
    ("grad-mode", in_score("torch.set_grad_enabled(False)"), ["torch.is_grad_enabled()"], False),
    ("autocast", in_score("torch.set_autocast_enabled('cpu', True)"), ["autocast(cpu)"], False),
    ("default-dtype", in_score("torch.set_default_dtype(torch.float64)"), ["torch.get_default_dtype()"], True),
    ("threads", in_score("torch.set_num_threads(1)"), ["torch.get_num_threads()"], True),
    ("flags", in_score("torch.use_deterministic_algorithms(True)"), ["deterministic"], True),
    ("flags", in_score("torch.set_float32_matmul_precision('medium')"), ["matmul"], True),
    (
        "compile-config",
        in_score("import torch._dynamo.config as dynamo_config; dynamo_config.capture_scalar_outputs = True"),
        ["capture_scalar_outputs"],
        True,
    ),
    ("env", in_score("import os; os.environ['OMP_NUM_THREADS'] = '1'"), ["OMP_NUM_THREADS"], True),
    ("cwd", in_score("import os; os.chdir('/')"), ["os.getcwd()"], True),
    ("files", in_score("import os; os.remove('data.txt')"), ["removed data.txt"], True),
]
IDS = [f"{c}-{i}" for i, (c, *_rest) in enumerate(CASES)]


def test_every_category_has_a_case():
    assert {c for c, *_rest in CASES} == set(CONTRACT_CATEGORIES)


def test_the_reference_keeps_the_contract(runner, tmp_path):
    v = run(runner, tmp_path, SOLUTION)
    assert v.status == "passed", (v.reason, v.details, v.output[-1500:])


@pytest.mark.parametrize(("category", "source", "words", "passes"), CASES, ids=IDS)
def test_a_change_left_behind_fails_naming_it(runner, tmp_path, category, source, words, passes):
    v = run(runner, tmp_path, source)
    assert v.status == "failed", (v.status, v.reason, v.output[-1500:])
    assert "left a change behind" in v.reason, v.reason
    for w in words:
        assert w in v.reason, (w, v.reason)


@pytest.mark.parametrize(("category", "source", "words", "passes"), CASES, ids=IDS)
def test_an_exercise_that_allows_it_no_longer_fails_the_contract(runner, tmp_path, category, source, words, passes):
    v = run(runner, tmp_path, source, allows=(category,))
    assert "left a change behind" not in v.reason, (category, v.reason)
    if passes:
        assert v.status == "passed", (category, v.reason, v.output[-1500:])
    else:  # what the change did to later results is caught by the values
        assert v.status in ("failed", "error"), (category, v.status)


def test_a_flag_set_at_import_fails_at_the_end_of_the_check(runner, tmp_path):
    source = edit(
        "import torch\n", "import torch\nimport torch._inductor.config\ntorch._inductor.config.freezing = True\n"
    )
    v = run(runner, tmp_path, source)
    assert v.status == "failed" and "by the end of the check" in v.reason and "freezing" in v.reason, v.reason


def test_a_cached_function_is_held_to_the_contract_too(runner, tmp_path):
    # functools.lru_cache returns a wrapper object, not a function: it is wrapped all the same.
    source = in_score("model.eval()") + "\n\nimport functools\n\nscore = functools.lru_cache(maxsize=None)(score)\n"
    v = run(runner, tmp_path, source)
    assert v.status == "failed" and "switched to eval mode" in v.reason, v.reason


def test_a_call_that_raises_is_observed_too(runner, tmp_path):
    # The learner's `total` raises where the reference's returns: the verdict is the error
    # itself, not "the check took a different path".
    source = edit(
        "    return torch.stack(parts)", "    raise ValueError('no parts today')\n    return torch.stack(parts)"
    )
    v = run(runner, tmp_path, source)
    assert v.status == "error" and "no parts today" in v.reason, v.reason


def test_a_call_only_the_learners_run_makes_is_no_different_path(runner, tmp_path):
    # The checker calls `total` once more to diagnose a wrong sum: the verdict is the wrong
    # value, not "the check took a different path".
    source = edit("    return torch.stack(parts).sum(dim=0)", "    return torch.stack(parts).sum(dim=0) + 1")
    v = run(runner, tmp_path, source)
    assert v.status == "failed" and v.reason.startswith("total"), v.reason


def test_a_call_only_the_learners_run_makes_is_held_to_the_contract(runner, tmp_path):
    # ... and what that extra call leaves behind is judged all the same.
    source = edit(
        "    return torch.stack(parts).sum(dim=0)",
        "    if len(parts) == 1:\n        torch.manual_seed(0)\n    return torch.stack(parts).sum(dim=0) + 1",
    )
    v = run(runner, tmp_path, source)
    assert v.status == "failed" and "`total(...)` left a change behind" in v.reason, v.reason


def test_a_model_cast_to_another_dtype_is_named_a_cast(runner, tmp_path):
    source = in_score("model.to(torch.float64)")
    v = run(runner, tmp_path, source)
    assert v.status == "failed" and "were cast to float64" in v.reason, v.reason
