"""Chapter 8 (torch.export): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

pytestmark = pytest.mark.slow


def _mutate(text: str, old: str, new: str) -> str:
    assert old in text, f"mutation anchor not found: {old!r}"
    return text.replace(old, new)


# -- dynamic batch ----------------------------------------------------------------------------

_SHAPES = '{"tokens": {0: batch}, "mask": {0: batch}}'


def test_dynamic_batch_solution_passes(check_code, solution_text):
    v = check_code("export-dynamic-batch", solution_text("export-dynamic-batch"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert v.figures["batch_range"] == {"min": 1, "max": 100}


def test_dynamic_batch_static_export_rejects_other_batches(check_code, solution_text):
    src = _mutate(solution_text("export-dynamic-batch"), "(tokens, mask), dynamic_shapes=dynamic_shapes)",
                  "(tokens, mask))")
    v = check_code("export-dynamic-batch", src)
    assert v.status == "failed"
    assert "rejected batch 1" in v.reason and "dynamic" in v.reason


def test_dynamic_batch_unbounded_auto_accepts_101(check_code, solution_text):
    src = _mutate(solution_text("export-dynamic-batch"), 'Dim("batch", min=1, max=100)', "Dim.AUTO")
    v = check_code("export-dynamic-batch", src)
    assert v.status == "failed"
    assert "accepted batch 101" in v.reason and "max=100" in v.reason


def test_dynamic_batch_off_by_one_max_accepts_101(check_code, solution_text):
    src = _mutate(solution_text("export-dynamic-batch"), "max=100", "max=101")
    v = check_code("export-dynamic-batch", src)
    assert v.status == "failed"
    assert "accepted batch 101" in v.reason


def test_dynamic_batch_separate_dims_must_be_equal(check_code, solution_text):
    src = _mutate(solution_text("export-dynamic-batch"), _SHAPES,
                  '{"tokens": {0: batch}, "mask": {0: Dim("mask_batch", min=1, max=100)}}')
    v = check_code("export-dynamic-batch", src)
    assert v.status == "failed"
    assert "torch.export failed" in v.reason and "must always be equal" in v.reason


def test_dynamic_batch_only_one_input_marked(check_code, solution_text):
    src = _mutate(solution_text("export-dynamic-batch"), _SHAPES, '{"tokens": {0: batch}, "mask": None}')
    v = check_code("export-dynamic-batch", src)
    assert v.status == "failed"
    assert "torch.export failed" in v.reason and "specialized it to be a constant" in v.reason


def test_dynamic_batch_wrong_argument_name(check_code, solution_text):
    src = _mutate(solution_text("export-dynamic-batch"), _SHAPES, '{"x": {0: batch}, "mask": {0: batch}}')
    v = check_code("export-dynamic-batch", src)
    assert v.status == "failed"
    assert "arg names" in v.reason


# -- torch.cond -------------------------------------------------------------------------------

_COND = "torch.cond(strong, self.deep, self.cheap, (x,))"


def test_cond_solution_passes(check_code, solution_text):
    v = check_code("export-cond-branch", solution_text("export-cond-branch"))
    assert v.status == "passed", (v.reason, v.details, v.output)


def test_cond_stub_python_if_cannot_export(check_code, course):
    v = check_code("export-cond-branch", course.exercise("export-cond-branch").stub)
    assert v.status == "failed"
    assert "Python `if`" in v.reason and "torch.cond" in v.reason


def test_cond_swapped_branches_fail(check_code, solution_text):
    src = _mutate(solution_text("export-cond-branch"), _COND, "torch.cond(strong, self.cheap, self.deep, (x,))")
    v = check_code("export-cond-branch", src)
    assert v.status == "failed"
    assert "strong input" in v.reason and "deep path" in v.reason


def test_cond_where_computes_both_and_has_no_cond(check_code, solution_text):
    src = _mutate(solution_text("export-cond-branch"), _COND, "torch.where(strong, self.deep(x), self.cheap(x))")
    v = check_code("export-cond-branch", src)
    assert v.status == "failed"
    assert "no torch.cond" in v.reason


def test_cond_wrong_predicate_fails(check_code, solution_text):
    src = _mutate(solution_text("export-cond-branch"), "x.abs().mean() > 1.0", "x.abs().max() > 1.0")
    v = check_code("export-cond-branch", src)
    assert v.status == "failed"
    assert "weak input" in v.reason and "cheap path" in v.reason


def test_cond_operands_not_a_tuple_fails(check_code, solution_text):
    src = _mutate(solution_text("export-cond-branch"), _COND, "torch.cond(strong, self.deep, self.cheap, x)")
    v = check_code("export-cond-branch", src)
    assert v.status == "failed"
    assert "export" in v.reason and "tuple" in v.reason


# -- save and load ----------------------------------------------------------------------------

_SAVE = 'torch.export.save(ep, path, extra_files={"labels.json": json.dumps(labels)})'


def test_save_load_solution_passes(check_code, solution_text):
    v = check_code("export-save-load", solution_text("export-save-load"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert v.figures["file_kb"] > 0


def test_save_load_torch_save_is_not_a_pt2(check_code, solution_text):
    src = _mutate(solution_text("export-save-load"), _SAVE, "torch.save(ep, path)")
    v = check_code("export-save-load", src)
    assert v.status == "failed"
    assert "torch.export.load cannot read" in v.reason and "torch.export.save" in v.reason


def test_save_load_missing_labels(check_code, solution_text):
    src = _mutate(solution_text("export-save-load"), _SAVE, "torch.export.save(ep, path)")
    v = check_code("export-save-load", src)
    assert v.status == "failed"
    assert "no labels.json" in v.reason


def test_save_load_returning_the_program_itself(check_code, solution_text):
    src = _mutate(solution_text("export-save-load"), "return ep.module(), ", "return ep, ")
    v = check_code("export-save-load", src)
    assert v.status == "failed"
    assert "ep.module()" in v.reason


def test_save_load_static_batch(check_code, solution_text):
    src = _mutate(solution_text("export-save-load"), 'dynamic_shapes={"x": {0: batch}}', "dynamic_shapes=None")
    v = check_code("export-save-load", src)
    assert v.status == "failed"
    assert "rejected batch 1" in v.reason


def test_save_load_labels_not_json(check_code, solution_text):
    src = _mutate(solution_text("export-save-load"), "json.dumps(labels)", "str(labels)")
    v = check_code("export-save-load", src)
    assert v.status == "failed"
    assert "not JSON" in v.reason
