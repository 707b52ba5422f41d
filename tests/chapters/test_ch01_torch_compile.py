"""Chapter 1 (torch.compile): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

pytestmark = pytest.mark.slow


def _mutate(text: str, old: str, new: str) -> str:
    assert old in text, f"mutation anchor not found: {old!r}"
    return text.replace(old, new)


# -- compile a transformer block ----------------------------------------------------------------

def test_compile_block_solution_passes(check_code, solution_text):
    v = check_code("compile-block", solution_text("compile-block"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert v.figures["compile_s"] > 0
    assert "speedup" in v.figures["compiled vs eager"]
    assert "speedup" in v.figures["compiled vs reference"]


def test_compile_block_timing_the_first_call_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-block"),
                  "    for _ in range(warmup):  # the first call compiles; later ones may still autotune or warm caches\n"
                  "        fn(*args)\n", "")
    v = check_code("compile-block", src)
    assert v.status == "failed"
    assert "first (compiling) call was timed" in v.reason


def test_compile_block_total_instead_of_per_call_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-block"),
                  "return (time.perf_counter() - start) / iters", "return time.perf_counter() - start")
    v = check_code("compile-block", src)
    assert v.status == "failed"
    assert "divide the total by iters" in v.reason


def test_compile_block_not_compiled_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-block"), "return torch.compile(block, fullgraph=True)", "return block")
    v = check_code("compile-block", src)
    assert v.status == "failed"
    assert "compiled nothing" in v.reason


def test_compile_block_debug_backend_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-block"), "return torch.compile(block, fullgraph=True)",
                  "return torch.compile(block, fullgraph=True, backend=\"aot_eager\")")
    v = check_code("compile-block", src)
    assert v.status == "failed"
    assert "not compiled by Inductor" in v.reason


def test_compile_block_without_fullgraph_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-block"), "return torch.compile(block, fullgraph=True)",
                  "return torch.compile(block)")
    v = check_code("compile-block", src)
    assert v.status == "failed"
    assert "graph break" in v.reason and "fullgraph=True" in v.reason


# -- remove graph breaks ----------------------------------------------------------------------

def test_graph_breaks_solution_passes(check_code, solution_text):
    v = check_code("compile-graph-breaks", solution_text("compile-graph-breaks"))
    assert v.status == "passed", (v.reason, v.details, v.output)


def test_graph_breaks_stub_names_the_breaks(check_code, course):
    v = check_code("compile-graph-breaks", course.exercise("compile-graph-breaks").stub)
    assert v.status == "failed"
    assert "graph break" in v.reason and ".item()" in v.reason and "Python `if`" in v.reason


def test_graph_breaks_leftover_item_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-graph-breaks"), "h = h / h.abs().amax()", "h = h / h.abs().amax().item()")
    v = check_code("compile-graph-breaks", src)
    assert v.status == "failed"
    assert "1 graph break" in v.reason and ".item()" in v.reason


def test_graph_breaks_leftover_print_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-graph-breaks"), "        return self.fc2(h)",
                  "        print(\"hidden mean\", h.mean())\n        return self.fc2(h)")
    v = check_code("compile-graph-breaks", src)
    assert v.status == "failed"
    assert "print()" in v.reason


def test_graph_breaks_elementwise_where_fails(check_code, solution_text):
    # torch.where on the elementwise sign is a different model: relu where h > 0, tanh elsewhere
    src = _mutate(solution_text("compile-graph-breaks"), "torch.where(h.mean() > 0,", "torch.where(h > 0,")
    v = check_code("compile-graph-breaks", src)
    assert v.status == "failed"
    assert "output when the mean of the hidden features is" in v.reason


def test_graph_breaks_swapped_branches_fail(check_code, solution_text):
    src = _mutate(solution_text("compile-graph-breaks"), "torch.where(h.mean() > 0, torch.relu(h), torch.tanh(h))",
                  "torch.where(h.mean() > 0, torch.tanh(h), torch.relu(h))")
    v = check_code("compile-graph-breaks", src)
    assert v.status == "failed"
    assert "relu branch" in v.reason


# -- dynamic shapes ---------------------------------------------------------------------------

def test_dynamic_shapes_solution_passes(check_code, solution_text):
    v = check_code("compile-dynamic-shapes", solution_text("compile-dynamic-shapes"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert v.figures["graphs"] == 1


def test_dynamic_shapes_automatic_dynamic_recompiles_twice(check_code, solution_text):
    src = _mutate(solution_text("compile-dynamic-shapes"),
                  "torch.compile(model, backend=backend, dynamic=True)", "torch.compile(model, backend=backend)")
    v = check_code("compile-dynamic-shapes", src)
    assert v.status == "failed"
    assert "compiled 3 graphs" in v.reason and "size mismatch" in v.reason


_PYTHON_COUNTER = ('        self.register_buffer("calls", torch.zeros((), dtype=torch.long))', "        self.calls = 0")
_PYTHON_TEMPERATURE = ("temperature = (1.0 - 0.1 * self.calls).clamp(min=0.5)",
                       "temperature = max(0.5, 1.0 - 0.1 * self.calls)")


def test_dynamic_shapes_python_int_counter_recompiles_every_call(check_code, solution_text):
    src = _mutate(_mutate(solution_text("compile-dynamic-shapes"), *_PYTHON_COUNTER), *_PYTHON_TEMPERATURE)
    v = check_code("compile-dynamic-shapes", src)
    assert v.status == "failed"
    assert "compiled 8 graphs" in v.reason and "self.calls ==" in v.reason


def test_dynamic_shapes_recompile_limit_fallback_fails(check_code, solution_text):
    src = _mutate(_mutate(solution_text("compile-dynamic-shapes"), *_PYTHON_COUNTER), *_PYTHON_TEMPERATURE)
    src = _mutate(src, "dynamic=True)", "dynamic=True, recompile_limit=1)")
    v = check_code("compile-dynamic-shapes", src)
    assert v.status == "failed"
    assert "fell back" in v.reason and "eager" in v.reason


def test_dynamic_shapes_dropping_the_schedule_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-dynamic-shapes"), "temperature = (1.0 - 0.1 * self.calls).clamp(min=0.5)",
                  "temperature = 0.9")
    v = check_code("compile-dynamic-shapes", src)
    assert v.status == "failed"
    assert "output of call 2" in v.reason


def test_dynamic_shapes_ignoring_the_backend_fails(check_code, solution_text):
    src = _mutate(solution_text("compile-dynamic-shapes"), "backend=backend, dynamic=True", "backend=\"eager\", dynamic=True")
    v = check_code("compile-dynamic-shapes", src)
    assert v.status == "failed"
    assert "backend" in v.reason and "no graph reached" in v.reason
