"""Chapter 7 (TorchScript): every solution passes, realistic learner mistakes fail with a reason
that says what is wrong, and the scripting passage runs (from a file, as TorchScript needs)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tutor import i18n
from tutor.course import code_blocks, load_course

from .conftest import assert_fails, assert_passes, mutate

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_script_passage_runs_from_a_file(tmp_path):
    """02-script.md's block scripts a class, which needs its source in a file (not `python -c`)."""
    text = (ROOT / "lessons/07-torchscript/guide/en/02-script.md").read_text(encoding="utf-8")
    block = [b for b in code_blocks(text) if b.language == "python"][0]
    (tmp_path / "saturate.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run([sys.executable, "saturate.py"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "scripted == eager" in done.stdout


@pytest.mark.parametrize("exercise", ["ts-script-flag", "ts-trace-trap", "ts-save-freeze"])
def test_solution_passes(solution_verdict, exercise):
    v = assert_passes(solution_verdict(exercise, seeds=2))
    if exercise == "ts-save-freeze":
        assert "finetune file in eval mode" in v.figures["serve vs finetune"]["compares"]
    if exercise == "ts-script-flag":  # forward, standardise and the exported embed; no training path
        assert v.figures["served_file"]["methods"] == 3, v.figures
        assert "was dropped" in v.figures["_labels"]["served_file"], v.figures


# -- script, ignore, drop or export: a model for a service ------------------------------------

STANDARDISE = (
    "        centred = scores - scores.mean(dim=-1, keepdim=True)  # key\n"
    "        return centred / (scores.std(dim=-1, keepdim=True, correction=0) + 1e-5)  # key"
)
NUMPY_STANDARDISE = (
    "        import numpy as np\n"
    "        a = scores.detach().cpu().numpy()\n"
    "        a = (a - a.mean(axis=-1, keepdims=True)) / (a.std(axis=-1, keepdims=True) + 1e-5)\n"
    "        return torch.from_numpy(a).to(scores.dtype)"
)
NARROWING = (
    "        temperature = self.temperature  # key\n"
    "        if temperature is not None:  # key\n"
    "            scores = scores / temperature  # key"
)


def test_script_flag_compiled_training_path_and_other_spellings_pass(variant):
    """Correct but different: the training path rewritten so that it compiles (no @unused), the
    population std as var(unbiased=False).sqrt(), `Tensor | None`, the attribute unwrapped."""
    variant(
        "ts-script-flag",
        ("    @torch.jit.unused  # key\n", ""),
        (
            "        decay = sum(p.pow(2).sum() for p in self.decoder.parameters())",
            "        decay = self.decoder.weight.pow(2).sum() + self.decoder.bias.pow(2).sum()",
        ),
        (
            "(scores.std(dim=-1, keepdim=True, correction=0) + 1e-5)",
            "(scores.var(dim=-1, keepdim=True, unbiased=False).sqrt() + 1e-5)",
        ),
        ("mask: Optional[Tensor] = None", "mask: Tensor | None = None"),
        (
            NARROWING,
            "        if self.temperature is not None:\n"
            "            scores = scores / torch.jit._unwrap_optional(self.temperature)",
        ),
    )


def test_script_flag_deepcopy_and_unused_describe_pass(variant):
    """Correct but different: the caller's model is copied before scripting (nothing shared), and
    describe marked @unused: a method compiled code never calls stays Python either way."""
    variant(
        "ts-script-flag",
        ("return torch.jit.script(model)  # key", "import copy\n    return torch.jit.script(copy.deepcopy(model))"),
        ("    @torch.jit.ignore  # key\n", "    @torch.jit.unused\n"),
    )


def test_script_flag_numpy_helper_kept_as_python(mutant):
    """The first thing tutorials suggest for unscriptable code: it runs here, the file refuses."""
    v = mutant(
        "ts-script-flag",
        ("    def standardise", "    @torch.jit.ignore\n    def standardise"),
        (STANDARDISE, NUMPY_STANDARDISE),
    )
    assert_fails(v, "torch.jit.save refused", "calls standardise", "@torch.jit.ignore")


def test_script_flag_sample_std_instead_of_population(mutant):
    v = mutant("ts-script-flag", "keepdim=True, correction=0)", "keepdim=True)")
    assert_fails(v, "forward(x) in eval mode of the saved file")


def test_script_flag_temperature_branch_dropped_to_compile(mutant):
    """Deleting the line TorchScript complained about: compiles, and the tempered model is wrong."""
    v = mutant("ts-script-flag", NARROWING, "        pass")
    assert_fails(v, "of the saved file (with a temperature)")


def test_script_flag_describe_exported(mutant):
    v = mutant("ts-script-flag", "    @torch.jit.ignore  # key\n", "    @torch.jit.export\n")
    assert_fails(v, "TorchScript could not compile your Tagger")


def test_script_flag_embed_marked_unused_instead_of_exported(mutant):
    v = mutant("ts-script-flag", "    @torch.jit.export  # key\n", "    @torch.jit.unused\n")
    assert_fails(v, "has no method embed", "@torch.jit.export")


def test_script_flag_switching_the_callers_model_to_eval(mutant):
    v = mutant("ts-script-flag", "return torch.jit.script(model)  # key", "return torch.jit.script(model.eval())")
    assert_fails(v, "switched to eval mode")


def test_script_flag_returning_the_eager_model(mutant):
    v = mutant("ts-script-flag", "return torch.jit.script(model)  # key", "return model")
    assert_fails(v, "Tagger", "ScriptModule")


# -- the tracing trap --------------------------------------------------------------------------


def test_trace_trap_tuple_example_and_amax_pass(variant):
    """Correct but different: the example as a tuple of inputs, the gap via float(amax)."""
    variant(
        "ts-trace-trap",
        ("return torch.jit.trace(model, example)", "return torch.jit.trace(model, (example,))"),
        (
            "return (traced(other) - model(other)).abs().max().item()",
            "return float((traced(other) - model(other)).abs().amax())",
        ),
    )


def test_trace_trap_traced_again_in_chinese_names_it_and_offers_its_hint(check_code, solution_text):
    """In Chinese, the reason and the targeted hint for tracing again are Chinese too."""
    source = mutate(
        solution_text("ts-trace-trap"),
        ("return torch.jit.script(model)  #", "return torch.jit.trace(model, torch.randn(4, 16) + 1.0)  #"),
    )
    i18n.set_language("zh")
    try:
        v = check_code("ts-trace-trap", source, seed=1)
    finally:
        i18n.set_language("en")
    reason = assert_fails(v, "fix_gate 返回的是追踪 Gate 得到的模块", "torch.jit.script")
    mistake = load_course(lang="zh").exercise("ts-trace-trap").mistake_for(reason)
    assert mistake is not None and "脚本化（scripting）会编译 Python 控制流本身" in mistake.hint, reason


def test_trace_trap_fix_returns_eager_model(mutant):
    v = mutant("ts-trace-trap", "return torch.jit.script(model)  #", "return model  #")
    assert_fails(v, "fix_gate returned a Gate", "ScriptModule")


def test_trace_trap_scripting_in_trace_gate(mutant):
    v = mutant("ts-trace-trap", "return torch.jit.trace(model, example)", "return torch.jit.script(model)")
    assert_fails(v, "torch.jit.trace(model, example)")


# -- to freeze or not: serve and finetune files ----------------------------------------------

SERVE_FREEZE = '    frozen = torch.jit.freeze(scripted, preserved_attrs=["labels"])  # key'
SERVE_SAVE = "    torch.jit.save(frozen, path)"


def test_save_freeze_reports_sizes_and_meets_the_target(solution_verdict):
    v = assert_passes(solution_verdict("ts-save-freeze", seeds=2))
    sizes = v.figures["file_kb"]
    assert sizes["serve/finetune"] < 0.2
    assert sizes["finetune"] > 1


def test_save_freeze_deepcopy_method_save_and_implicit_freeze_pass(variant):
    """Correct but different: a deep copy switched to eval before scripting, ScriptModule.save,
    and optimize_for_inference freezing nothing more (the file is already frozen)."""
    variant(
        "ts-save-freeze",
        (
            "    scripted = torch.jit.script(model)  #",
            "    import copy\n    scripted = torch.jit.script(copy.deepcopy(model).train(purpose == 'finetune'))  #",
        ),
        ("        torch.jit.save(scripted, path)  # key", "        scripted.save(path)"),
        (SERVE_SAVE, "    frozen.save(path)"),
    )


def test_save_freeze_switching_the_callers_model_to_eval(mutant):
    v = mutant(
        "ts-save-freeze", "    scripted.eval()  # key", "    model.eval()\n    scripted = torch.jit.script(model)"
    )
    assert_fails(v, "in `model` switched to eval mode")  # the call contract sees it first


def test_save_freeze_pickled_with_torch_save(mutant):
    v = mutant("ts-save-freeze", "        torch.jit.save(scripted, path)  # key", "        torch.save(model, path)")
    assert_fails(v, "torch.jit.load cannot read", "torch.jit.save")


def test_save_freeze_unknown_purpose_served(mutant):
    check_purpose = (
        '    if purpose not in ("serve", "finetune"):\n'
        "        raise ValueError(f\"purpose must be 'serve' or 'finetune', not {purpose!r}\")\n"
    )
    v = mutant("ts-save-freeze", check_purpose, "")
    assert_fails(v, "save_for(model, path, 'mobile') saved a file", "any other purpose raises ValueError")


def test_save_freeze_not_optimized_at_load(mutant):
    import torch

    if not torch.backends.mkldnn.is_available():
        pytest.skip("optimize_for_inference is only detectable through oneDNN ops")
    v = mutant("ts-save-freeze", "    return torch.jit.optimize_for_inference(loaded)  # key", "    return loaded")
    assert_fails(v, "optimize_for_inference after loading")


# -- process-wide settings and other mistakes found by blind mutants --------------------------


def test_script_flag_leaving_a_jit_fuser_flag_on(mutant):
    v = mutant(
        "ts-script-flag",
        "return torch.jit.script(model)  # key",
        "torch._C._jit_override_can_fuse_on_cpu(True)\n    return torch.jit.script(model)",
    )
    assert_fails(v, "TorchScript setting", "_jit_can_fuse_on_cpu")


def test_trace_trap_silencing_warnings_for_good(mutant):
    v = mutant(
        "ts-trace-trap",
        "return torch.jit.trace(model, example)",
        "__import__('warnings').simplefilter('ignore')\n    return torch.jit.trace(model, example)",
    )
    assert_fails(v, "warnings filters", "TracerWarning")


def test_trace_trap_gap_without_abs(mutant):
    v = mutant(
        "ts-trace-trap",
        "return (traced(other) - model(other)).abs().max().item()",
        "return (traced(other) - model(other)).max().item()",
    )
    assert_fails(v, "trap_gap")


def test_save_freeze_model_train_afterwards_resets_frozen_batchnorm(mutant):
    v = mutant(
        "ts-save-freeze",
        "    scripted.eval()  # key",
        "    model.eval()\n    scripted = torch.jit.script(model)\n    model.train()",
    )
    assert_fails(v, "block1.1, block2.1 in `model` switched to train mode")


def test_save_freeze_load_without_map_location(mutant):
    v = mutant("ts-save-freeze", 'torch.jit.load(path, map_location="cpu")', "torch.jit.load(path)")
    assert_fails(v, "saved from a GPU", 'map_location="cpu"')


def test_save_freeze_flush_denormal_left_on(mutant):
    import torch

    if not torch.set_flush_denormal(False):
        pytest.skip("this CPU has no denormal flushing")
    v = mutant(
        "ts-save-freeze",
        '    loaded = torch.jit.load(path, map_location="cpu")  # key',
        '    torch.set_flush_denormal(True)\n    loaded = torch.jit.load(path, map_location="cpu")',
    )
    assert_fails(v, "torch.set_flush_denormal(True)")
