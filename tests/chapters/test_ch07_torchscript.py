"""Chapter 7 (TorchScript): every solution passes, realistic learner mistakes fail with a reason
that says what is wrong, and the scripting passage runs (from a file, as TorchScript needs)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tutor.course import code_blocks

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def mutate(source: str, old: str, new: str) -> str:
    assert old in source, f"mutation target not found: {old!r}"
    return source.replace(old, new)


def failed(v, *words):
    assert v.status == "failed", (v.status, v.reason, v.details, v.output[-2000:])
    for w in words:
        assert w in v.reason, (w, v.reason)


def test_script_passage_runs_from_a_file(tmp_path):
    """02-script.md's block scripts a class, which needs its source in a file (not `python -c`)."""
    text = (ROOT / "lessons/07-torchscript/guide/en/02-script.md").read_text(encoding="utf-8")
    block = [b for b in code_blocks(text) if b.language == "python"][0]
    (tmp_path / "saturate.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run([sys.executable, "saturate.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "scripted == eager" in done.stdout


@pytest.mark.parametrize("exercise", ["ts-script-flag", "ts-trace-trap", "ts-save-freeze"])
def test_solution_passes(check_code, solution_text, exercise):
    v = check_code(exercise, solution_text(exercise))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


# -- script a model with a bool flag -----------------------------------------------------------

SIGNATURE = "def forward(self, x: torch.Tensor, flag: bool, temperature: Optional[float] = None) -> torch.Tensor:"


def test_script_flag_without_annotations(check_code, solution_text):
    src = mutate(solution_text("ts-script-flag"), SIGNATURE, "def forward(self, x, flag, temperature=None):")
    failed(check_code("ts-script-flag", src), "`flag` as Tensor", "flag: bool")


def test_script_flag_temperature_left_unannotated(check_code, solution_text):
    src = mutate(solution_text("ts-script-flag"), SIGNATURE,
                 "def forward(self, x: torch.Tensor, flag: bool, temperature=None) -> torch.Tensor:")
    failed(check_code("ts-script-flag", src), "`temperature` as Tensor", "Optional[float]")


def test_script_flag_float_annotation_with_none_default(check_code, solution_text):
    src = mutate(solution_text("ts-script-flag"), SIGNATURE,
                 "def forward(self, x: torch.Tensor, flag: bool, temperature: float = None) -> torch.Tensor:")
    failed(check_code("ts-script-flag", src), "script_model failed", "default value of type float")


def test_script_flag_returning_the_eager_model(check_code, solution_text):
    src = mutate(solution_text("ts-script-flag"), "return torch.jit.script(model)", "return model")
    failed(check_code("ts-script-flag", src), "TwoHeads", "ScriptModule")


# -- the tracing trap --------------------------------------------------------------------------


def test_trace_trap_fixed_by_tracing_again(check_code, solution_text):
    src = mutate(solution_text("ts-trace-trap"), "return torch.jit.script(model)  #",
                 "return torch.jit.trace(model, torch.randn(4, 16) + 1.0)  #")
    failed(check_code("ts-trace-trap", src), "fixed module", "mean < 0")


def test_trace_trap_fix_returns_eager_model(check_code, solution_text):
    src = mutate(solution_text("ts-trace-trap"), "return torch.jit.script(model)  #", "return model  #")
    failed(check_code("ts-trace-trap", src), "fix_gate returned a Gate", "ScriptModule")


def test_trace_trap_gap_measured_on_the_example_branch(check_code, solution_text):
    src = mutate(solution_text("ts-trace-trap"), "return (traced(other) - model(other)).abs().max().item()",
                 "return (traced(other) - traced(other)).abs().max().item()")
    failed(check_code("ts-trace-trap", src), "trap_gap")


def test_trace_trap_gap_as_a_tensor(check_code, solution_text):
    src = mutate(solution_text("ts-trace-trap"), "(traced(other) - model(other)).abs().max().item()",
                 "(traced(other) - model(other)).abs().max()")
    failed(check_code("ts-trace-trap", src), "Python float", ".item()")


def test_trace_trap_scripting_in_trace_gate(check_code, solution_text):
    src = mutate(solution_text("ts-trace-trap"), "return torch.jit.trace(model, example)",
                 "return torch.jit.script(model)")
    failed(check_code("ts-trace-trap", src), "torch.jit.trace(model, example)")


# -- save, load, freeze, optimize ---------------------------------------------------------------


def test_save_freeze_pickled_with_torch_save(check_code, solution_text):
    src = mutate(solution_text("ts-save-freeze"), "torch.jit.save(torch.jit.script(model), path)",
                 "torch.save(model, path)")
    failed(check_code("ts-save-freeze", src), "torch.jit.load cannot read", "torch.jit.save")


def test_save_freeze_forgetting_eval(check_code, solution_text):
    src = mutate(solution_text("ts-save-freeze"), "    loaded.eval()  ", "    pass  ")
    failed(check_code("ts-save-freeze", src), "training mode", ".eval()")


def test_save_freeze_not_frozen(check_code, solution_text):
    src = mutate(solution_text("ts-save-freeze"), "return torch.jit.optimize_for_inference(frozen)",
                 "return loaded")
    failed(check_code("ts-save-freeze", src), "not frozen")


def test_save_freeze_frozen_but_not_optimized(check_code, solution_text):
    import torch

    if not torch.backends.mkldnn.is_available():
        pytest.skip("optimize_for_inference is only detectable through oneDNN ops")
    src = mutate(solution_text("ts-save-freeze"), "return torch.jit.optimize_for_inference(frozen)",
                 "return frozen")
    failed(check_code("ts-save-freeze", src), "optimize_for_inference")
