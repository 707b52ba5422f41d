"""Chapter 6 (profiler): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

pytestmark = pytest.mark.slow


def _mutate(text: str, old: str, new: str) -> str:
    assert old in text, f"mutation anchor not found: {old!r}"
    return text.replace(old, new)


# -- find the bottleneck ----------------------------------------------------------------------

def test_bottleneck_solution_passes(check_code, solution_text):
    v = check_code("profile-bottleneck", solution_text("profile-bottleneck"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert {"share_WideMLP", "share_RankFeatures", "share_ConvBlock"} <= set(v.figures)


def test_bottleneck_ranked_by_total_time_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-bottleneck"),
                  "top = max(events, key=lambda e: e.self_cpu_time_total)",
                  "top = max(events, key=lambda e: e.cpu_time_total)")
    v = check_code("profile-bottleneck", src)
    assert v.status == "failed"
    assert "*total* CPU time" in v.reason and "self_cpu_time_total" in v.reason


def test_bottleneck_share_as_percentage_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-bottleneck"),
                  "return top.key, top.self_cpu_time_total / total",
                  "return top.key, 100 * top.self_cpu_time_total / total")
    v = check_code("profile-bottleneck", src)
    assert v.status == "failed"
    assert "percentage" in v.reason


def test_bottleneck_share_of_summed_total_times_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-bottleneck"),
                  "total = sum(e.self_cpu_time_total for e in events)",
                  "total = sum(e.cpu_time_total for e in events)")
    v = check_code("profile-bottleneck", src)
    assert v.status == "failed"
    assert "share" in v.reason and "self CPU time of all ops" in v.reason


# -- labelled trace ---------------------------------------------------------------------------

def test_trace_solution_passes(check_code, solution_text):
    v = check_code("profile-trace", solution_text("profile-trace"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


def test_trace_backward_not_labelled_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-trace"),
                  '        with record_function("backward"):\n            loss.backward()',
                  "        loss.backward()")
    v = check_code("profile-trace", src)
    assert v.status == "failed"
    assert "no 'backward' range" in v.reason


def test_trace_exported_inside_profile_block_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-trace"),
                  "            optimizer.zero_grad()\n    prof.export_chrome_trace(trace_path)",
                  "            optimizer.zero_grad()\n        prof.export_chrome_trace(trace_path)")
    v = check_code("profile-trace", src)
    assert v.status == "failed"
    assert "still running" in v.reason and "after that block" in v.reason


def test_trace_label_around_nothing_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-trace"),
                  '        with record_function("forward"):\n            loss = loss_fn(model(x), y)',
                  '        with record_function("forward"):\n            pass\n        loss = loss_fn(model(x), y)')
    v = check_code("profile-trace", src)
    assert v.status == "failed"
    assert "'forward' range contains none" in v.reason


def test_trace_without_zero_grad_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-trace"),
                  "            optimizer.zero_grad()\n", "")
    v = check_code("profile-trace", src)
    assert v.status == "failed"
    assert "zero_grad" in v.reason


# -- scheduled profiling ----------------------------------------------------------------------

def test_schedule_solution_passes(check_code, solution_text):
    v = check_code("profile-schedule", solution_text("profile-schedule"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


def test_schedule_without_prof_step_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-schedule"),
                  "            prof.step()  # the schedule advances only here\n", "")
    v = check_code("profile-schedule", src)
    assert v.status == "failed"
    assert "prof.step()" in v.reason and "trace_dir has 0" in v.reason


def test_schedule_same_file_name_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-schedule"),
                  'f"trace_step{prof.step_num}.json"', '"trace.json"')
    v = check_code("profile-schedule", src)
    assert v.status == "failed"
    assert "overwrites" in v.reason


def test_schedule_ignoring_repeat_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-schedule"), "repeat=repeat)", "repeat=0)")
    v = check_code("profile-schedule", src)
    assert v.status == "failed"
    assert "repeat=2 limits" in v.reason


# -- memory per layer -------------------------------------------------------------------------

def test_memory_solution_passes(check_code, solution_text):
    v = check_code("profile-memory", solution_text("profile-memory"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


def test_memory_under_no_grad_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-memory"),
                  "    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:",
                  "    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:")
    v = check_code("profile-memory", src)
    assert v.status == "failed"
    assert "torch.no_grad()" in v.reason and "autograd on" in v.reason


def test_memory_self_column_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-memory"),
                  "by_key[name].cpu_memory_usage", "by_key[name].self_cpu_memory_usage")
    v = check_code("profile-memory", src)
    assert v.status == "failed"
    assert "cpu_memory_usage" in v.reason or "0 bytes" in v.reason


def test_memory_without_profile_memory_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-memory"),
                  "profile(activities=[ProfilerActivity.CPU], profile_memory=True)",
                  "profile(activities=[ProfilerActivity.CPU])")
    v = check_code("profile-memory", src)
    assert v.status == "failed"
    assert "profile_memory=True" in v.reason


def test_memory_hungriest_picks_smallest_fails(check_code, solution_text):
    src = _mutate(solution_text("profile-memory"),
                  "return max(usage, key=usage.get)", "return min(usage, key=usage.get)")
    v = check_code("profile-memory", src)
    assert v.status == "failed"
    assert "hungriest_layer returned" in v.reason
