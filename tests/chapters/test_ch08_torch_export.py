"""Chapter 8 (torch.export): the solutions pass; realistic mistakes fail with a helpful reason."""

import subprocess
import sys
from pathlib import Path

import pytest

from tutor import i18n
from tutor.course import code_blocks, load_course

from .conftest import assert_fails, assert_passes, mutate

pytestmark = pytest.mark.slow


# -- dynamic batch ----------------------------------------------------------------------------

_SHAPES = '{"tokens": {0: batch}, "mask": {0: batch}}'


def test_dynamic_batch_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("export-dynamic-batch", seeds=2))
    assert v.figures["batch_range"] == {"min": 1, "max": 100}


def test_dynamic_batch_positional_dynamic_shapes_pass(variant):
    """Correct but different: dynamic_shapes as a tuple in the order of forward's arguments."""
    variant("export-dynamic-batch", _SHAPES, "({0: batch}, {0: batch})")


def test_dynamic_batch_static_export_rejects_other_batches(mutant):
    v = mutant("export-dynamic-batch", "(tokens, mask), dynamic_shapes=dynamic_shapes)", "(tokens, mask))")
    assert_fails(v, "rejected batch 1", "dynamic")


def test_dynamic_batch_unbounded_auto_accepts_101(mutant):
    v = mutant("export-dynamic-batch", 'Dim("batch", min=1, max=100)', "Dim.AUTO")
    assert_fails(v, "accepted batch 101", "max=100")


def test_dynamic_batch_wrong_argument_name(mutant):
    assert_fails(mutant("export-dynamic-batch", _SHAPES, '{"x": {0: batch}, "mask": {0: batch}}'), "arg names")


# -- torch.cond -------------------------------------------------------------------------------

_COND = "torch.cond(strong, self.deep, self.cheap, (x,))"


def test_cond_solution_passes(solution_verdict):
    assert_passes(solution_verdict("export-cond-branch", seeds=2))


def test_cond_with_local_branch_functions_passes(variant):
    """Correct but different: branches as local functions that use self through a closure."""
    variant(
        "export-cond-branch",
        "        return " + _COND,
        "        def strong_path(t):\n            return self.deep(t)\n\n"
        "        def weak_path(t):\n            return self.cheap(t)\n\n"
        "        return torch.cond(strong, strong_path, weak_path, [x])",
    )


def test_cond_predicate_without_abs_fails(mutant):
    v = mutant("export-cond-branch", "x.abs().mean() > 1.0", "x.mean() > 1.0")
    assert_fails(v, "strong input", "deep path")


def test_cond_stub_python_if_cannot_export(check_code, course):
    v = check_code("export-cond-branch", course.exercise("export-cond-branch").stub)
    assert_fails(v, "Python `if`", "torch.cond")


def test_cond_swapped_branches_in_chinese_names_it_and_offers_its_hint(check_code, solution_text):
    """In Chinese, the reason and the targeted hint for swapped branches are Chinese too."""
    source = mutate(solution_text("export-cond-branch"), (_COND, "torch.cond(strong, self.cheap, self.deep, (x,))"))
    i18n.set_language("zh")
    try:
        v = check_code("export-cond-branch", source, seed=1)
    finally:
        i18n.set_language("en")
    reason = assert_fails(v, "强输入（mean |x| = 1.6）走了 cheap 路径", "true_fn")
    mistake = load_course(lang="zh").exercise("export-cond-branch").mistake_for(reason)
    assert mistake is not None and "必须走 deep 路径" in mistake.hint, reason


def test_cond_wrong_predicate_fails(mutant):
    v = mutant("export-cond-branch", "x.abs().mean() > 1.0", "x.abs().max() > 1.0")
    assert_fails(v, "weak input", "cheap path")


# -- ship it: a program or a package ----------------------------------------------------------

_SAVE_SHAPES = 'shapes = {"x": {0: 2 * batch}, "mask": {0: batch}}  # key'
_PYTHON = '    if target["runtime"] == "python":  # key'
_NOWHERE = '    if target["runtime"] == "c++" and target["machine"] == "other":  # key'
_CAPACITY = '        torch._check(n <= self.capacity, lambda: f"more than {self.capacity} items selected")  # key\n'


def test_save_load_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("export-save-load", seeds=1))
    sizes = v.figures["file_kb"]
    assert sizes["package"] > 10 * sizes["program"], sizes  # the package carries machine code


def test_save_load_inferred_capacity_and_other_spellings_pass(variant):
    """Correct but different: the capacity bound left to export (the zero padding's size must be
    >= 0, so export asserts n <= capacity itself), n > 0 for n >= 1, the shapes as a tuple in
    forward's order with the relation written batch * 2."""
    variant(
        "export-save-load",
        (_CAPACITY, ""),
        ("torch._check(n >= 1,", "torch._check(n > 0,"),
        (_SAVE_SHAPES, "shapes = ({0: batch * 2}, {0: batch})"),
    )


def test_save_load_decision_table_and_file_object_pass(variant):
    """Correct but different: the formats from a table keyed by (runtime, machine), the program
    written through an open file object."""
    variant(
        "export-save-load",
        (
            _NOWHERE,
            '    formats = {("python", "other"): "program", ("python", "this"): "program", ("c++", "this"): "package"}\n'
            '    if (target["runtime"], target["machine"]) not in formats:',
        ),
        (_PYTHON, '    if formats[(target["runtime"], target["machine"])] == "program":'),
        (
            "        torch.export.save(program, path)  # key",
            '        with open(path, "wb") as f:\n            torch.export.save(program, f)',
        ),
    )


def test_save_load_python_branch_kept(mutant):
    v = mutant(
        "export-save-load",
        (
            '        torch._check(n >= 1, lambda: "no item selected")  # key',
            '        if n == 0:\n            raise ValueError("no item selected")',
        ),
    )
    assert_fails(v, "data-dependent", "torch._check")


def test_save_load_unbounded_batch(mutant):
    """Without a max, the derived size 2 * batch is unbounded (seen in torch 2.13: the program's
    range then holds sympy's infinity, which fails as the program is read back); either way the
    reason names the missing max."""
    v = mutant("export-save-load", 'Dim("batch", min=1, max=target["max_batch"])', 'Dim("batch", min=1)')
    assert_fails(v, "max=")


def test_save_load_pickled_program(mutant):
    v = mutant(
        "export-save-load", "        torch.export.save(program, path)  # key", "        torch.save(program, path)"
    )
    assert_fails(v, "does not load with torch.export.load")


def test_save_load_package_of_sources(mutant):
    """package_cpp_only ships C++ sources: building them needs the compiler the server lacks."""
    v = mutant(
        "export-save-load",
        "aoti_compile_and_package(program, package_path=path)",
        'aoti_compile_and_package(program, package_path=path, inductor_configs={"aot_inductor.package_cpp_only": True})',
    )
    assert_fails(v, "C++ sources", "compiler at load time")


def test_save_load_refusal_after_writing(mutant):
    """Deciding after the export and save: the error comes, and the file is left behind."""
    v = mutant(
        "export-save-load",
        (_NOWHERE + "\n        raise ValueError(", "    if False:\n        raise ValueError("),
        (
            "        torch.export.save(program, path)  # key",
            "        torch.export.save(program, path)\n"
            '        if target["machine"] == "other" and target["runtime"] == "c++":\n'
            '            raise ValueError("no file fits")',
        ),
        (_PYTHON, '    if target["runtime"] == "python" or target["machine"] == "other":'),
    )
    assert_fails(v, "left a file behind")


# -- AOTInductor passage ----------------------------------------------------------------------


# -- mistakes the first checks missed (found by blind mutants) ---------------------------------


def test_dynamic_batch_declared_from_two(mutant):
    v = mutant("export-dynamic-batch", 'Dim("batch", min=1, max=100)', 'Dim("batch", min=2, max=100)')
    assert_fails(v, "batch range [2, 100]", "min=1")


def test_dynamic_batch_sequence_also_dynamic(mutant):
    v = mutant(
        "export-dynamic-batch",
        'dynamic_shapes = {"tokens": {0: batch}, "mask": {0: batch}}',
        'seq = Dim("seq", max=512)\n    dynamic_shapes = {"tokens": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}}',
    )
    assert_fails(v, "accepted sequences of 11 positions")


def test_cond_both_paths_computed_before_the_cond(mutant):
    v = mutant(
        "export-cond-branch",
        _COND,
        "torch.cond(strong, lambda d, c: d.clone(), lambda d, c: c.clone(), (self.deep(x), self.cheap(x)))",
    )
    assert_fails(v, "both paths are computed")


def test_cond_detached_operand(mutant):
    v = mutant("export-cond-branch", _COND, "torch.cond(strong, self.deep, self.cheap, (x.detach(),))")
    assert_fails(v, "detached x")


# -- mistakes found by operator mutants (`tutor dev mutate`) ----------------------------------


def test_save_load_declared_from_two(mutant):
    v = mutant("export-save-load", 'Dim("batch", min=1,', 'Dim("batch", min=2,')
    assert_fails(v, "batch", "1")


def test_cond_mean_of_exactly_one_takes_the_cheap_path(mutant):
    v = mutant("export-cond-branch", "x.abs().mean() > 1.0", "x.abs().mean() >= 1.0")
    assert_fails(v, "exactly 1.0 took the deep path", "not >= 1.0")


def test_aoti_passage_builds_loads_and_matches_eager(tmp_path):
    """09-aoti.md's block is not a `python run` block (the C++ build takes 15-25 s on an idle
    2-core CPU, minutes on a busy one), so it runs here: build, load, same outputs as eager."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "lessons/08-torch-export/guide/en/09-aoti.md").read_text(encoding="utf-8")
    block = next(b for b in code_blocks(text) if b.language == "python")
    assert not block.runnable, "a runnable block would be executed by the quick guide tests"
    (tmp_path / "aoti.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "aoti.py"], cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "same outputs as eager for batches 1, 8 and 37" in done.stdout
    assert "built " in done.stdout and "loaded in" in done.stdout
