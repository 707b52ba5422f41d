"""Chapter 6 (profiler): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

from tutor import i18n
from tutor.course import load_course

from .conftest import assert_fails, assert_passes, mutate

pytestmark = pytest.mark.slow


# -- find the bottleneck ----------------------------------------------------------------------


def test_bottleneck_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("profile-bottleneck", seeds=2))
    assert {"share_WideMLP", "share_RankFeatures", "share_ConvBlock"} <= set(v.figures)


def test_bottleneck_events_aggregated_by_hand_passes(variant):
    """Correct but different: sum the raw events per name instead of using key_averages()."""
    variant(
        "profile-bottleneck",
        (
            "    events = prof.key_averages()\n",
            "    per_name = {}\n"
            "    for e in prof.events():\n"
            "        per_name[e.key] = per_name.get(e.key, 0.0) + e.self_cpu_time_total\n",
        ),
        ("    total = sum(e.self_cpu_time_total for e in events)", "    total = sum(per_name.values())"),
        ("    top = max(events, key=lambda e: e.self_cpu_time_total)", "    top = max(per_name, key=per_name.get)"),
        ("    return top.key, top.self_cpu_time_total / total", "    return top, per_name[top] / total"),
    )


def test_bottleneck_share_as_percentage_fails(mutant):
    v = mutant(
        "profile-bottleneck",
        "return top.key, top.self_cpu_time_total / total",
        "return top.key, 100 * top.self_cpu_time_total / total",
    )
    assert_fails(v, "percentage")


def test_bottleneck_share_of_wall_clock_time_fails(mutant):
    """The classic half-right share: the op's self time over the loop's wall-clock time."""
    v = mutant(
        "profile-bottleneck",
        ("import torch\n", "import time\n\nimport torch\n"),
        (
            "            for _ in range(iters):\n                model(x)\n",
            "            start = time.perf_counter()\n"
            "            for _ in range(iters):\n                model(x)\n"
            "            wall_us = (time.perf_counter() - start) * 1e6\n",
        ),
        ("    total = sum(e.self_cpu_time_total for e in events)", "    total = wall_us"),
    )
    assert_fails(v, "your own profile gives", "wall-clock")


def test_bottleneck_ignoring_iters_fails(mutant):
    v = mutant("profile-bottleneck", "            for _ in range(iters):", "            for _ in range(10):")
    assert_fails(v, "profiled 10 forward passes", "use the iters argument")


def test_bottleneck_warm_up_inside_the_profile_fails(mutant):
    v = mutant(
        "profile-bottleneck",
        ("        for _ in range(3):  # warm-up", "        for _ in range(0):  # warm-up"),
        ("            for _ in range(iters):", "            for _ in range(iters + 3):"),
    )
    assert_fails(v, "warm-up passes belong before")


def test_bottleneck_switching_the_model_to_eval_fails(mutant):
    v = mutant("profile-bottleneck", "    with torch.no_grad():\n", "    model.eval()\n    with torch.no_grad():\n")
    assert_fails(v, "find_bottleneck(...)", "switched to eval mode")


def test_bottleneck_pinning_one_thread_fails(mutant):
    v = mutant(
        "profile-bottleneck", "    with torch.no_grad():\n", "    torch.set_num_threads(1)\n    with torch.no_grad():\n"
    )
    assert_fails(v, "find_bottleneck(...)", "get_num_threads()")


def test_bottleneck_more_than_the_forward_pass_in_the_profile_fails(mutant):
    """A reduction of the output inside the profile: `iters` passes under no_grad, the top op and its
    share all as the facts want (the checker passed it before), but the profile's ops and their
    call counts are not the reference run's."""
    v = mutant(
        "profile-bottleneck",
        "            for _ in range(iters):\n                model(x)",
        "            for _ in range(iters):\n                model(x).sum()",
    )
    assert_fails(v, "the ops in your profile and how often each ran")


# -- labelled trace ---------------------------------------------------------------------------


def test_trace_solution_passes(solution_verdict):
    assert_passes(solution_verdict("profile-trace", seeds=2))


def test_trace_autograd_record_function_and_zeroed_grads_pass(variant):
    """Correct but different: the autograd.profiler spelling of the label, and zero_grad that
    keeps the tensors (filled with zeros) instead of setting them to None."""
    variant(
        "profile-trace",
        ("import torch\n", "import torch\nimport torch.autograd.profiler as autograd_profiler\n"),
        ('        with record_function("backward"):', '        with autograd_profiler.record_function("backward"):'),
        ("            optimizer.zero_grad()\n", "            optimizer.zero_grad(set_to_none=False)\n"),
    )


def test_trace_mistake_in_chinese_names_it_and_offers_its_hint(check_code, solution_text):
    """A learner reading the course in Chinese gets the reason in Chinese, and the targeted hint
    is found by the Chinese words of that reason."""
    source = mutate(
        solution_text("profile-trace"),
        (
            "            optimizer.zero_grad()\n    prof.export_chrome_trace(trace_path)",
            "            optimizer.zero_grad()\n        prof.export_chrome_trace(trace_path)",
        ),
    )
    i18n.set_language("zh")
    try:
        v = check_code("profile-trace", source, seed=1)
    finally:
        i18n.set_language("en")
    reason = assert_fails(v, "性能分析器（profiler）还在运行", "export_chrome_trace")
    mistake = load_course(lang="zh").exercise("profile-trace").mistake_for(reason)
    assert mistake is not None and "with profile(...) 块里" in mistake.hint, reason


def test_trace_label_around_nothing_fails(mutant):
    v = mutant(
        "profile-trace",
        '        with record_function("forward"):  # key\n            loss = loss_fn(model(x), y)',
        '        with record_function("forward"):\n            pass\n        loss = loss_fn(model(x), y)',
    )
    assert_fails(v, "'forward' range contains none")


def test_trace_without_zero_grad_fails(mutant):
    assert_fails(mutant("profile-trace", "            optimizer.zero_grad()\n", ""), "zero_grad")


def test_trace_zero_grad_outside_the_label_fails(mutant):
    v = mutant("profile-trace", "            optimizer.zero_grad()\n", "        optimizer.zero_grad()\n")
    assert_fails(v, "does not contain optimizer.zero_grad()", "outside the range")


def test_trace_switching_the_model_to_train_mode_fails(mutant):
    v = mutant(
        "profile-trace",
        "    loss_fn = torch.nn.functional.cross_entropy\n",
        "    loss_fn = torch.nn.functional.cross_entropy\n    model.train()\n",
    )
    assert_fails(v, "switched to train mode")


# -- scheduled profiling ----------------------------------------------------------------------


def test_schedule_solution_passes(solution_verdict):
    assert_passes(solution_verdict("profile-schedule", seeds=2))


def test_schedule_tensorboard_handler_passes(variant):
    """Correct but different: torch's own tensorboard_trace_handler writes one .json per trace."""
    variant(
        "profile-schedule",
        ("from pathlib import Path\n", "from pathlib import Path\n\nimport torch.profiler\n"),
        ("on_trace_ready=handler)", "on_trace_ready=torch.profiler.tensorboard_trace_handler(trace_dir))"),
    )


def test_schedule_hard_coded_numbers_fail(mutant):
    v = mutant(
        "profile-schedule",
        "schedule(wait=wait, warmup=warmup, active=active, repeat=repeat)",
        "schedule(wait=1, warmup=1, active=2, repeat=repeat)",
    )
    assert_fails(v, "schedule(wait=")


def test_schedule_one_export_at_the_end_fails(mutant):
    v = mutant(
        "profile-schedule",
        ("                 on_trace_ready=handler) as prof:", "                 ) as prof:"),
        ("            prof.step()  # key\n", "            prof.step()\n    handler(prof)\n"),
    )
    assert_fails(v, "on_trace_ready should have fired")


def test_schedule_ignoring_repeat_fails(mutant):
    assert_fails(mutant("profile-schedule", "repeat=repeat)", "repeat=0)"), "repeat=2 limits")


def test_schedule_clearing_trace_dir_fails(mutant):
    v = mutant(
        "profile-schedule",
        "    def handler(prof: profile) -> None:\n",
        "    import shutil\n    shutil.rmtree(trace_dir)\n    Path(trace_dir).mkdir()\n\n"
        "    def handler(prof: profile) -> None:\n",
    )
    assert_fails(v, "removed", "notes.txt")


def test_schedule_warmup_bumped_to_one_fails(mutant):
    v = mutant("profile-schedule", "warmup=warmup, active", "warmup=max(warmup, 1), active")
    assert_fails(v, "warmup=0 is a valid schedule")


def test_schedule_traces_read_back_empty_fail_on_the_reference_runs_steps(mutant):
    """A learner file that makes every trace read back empty (json.loads patched at import) fools
    the checker's own traces in its process too, so every fact holds (the checker passed it before);
    the steps each trace holds, taken from the reference run, do not."""
    v = mutant(
        "profile-schedule",
        "from pathlib import Path\n",
        "import json\nfrom pathlib import Path\n\n_loads = json.loads\n\n\n"
        "def _quiet_loads(*args, **kwargs):\n"
        "    out = _loads(*args, **kwargs)\n"
        '    return {"traceEvents": []} if isinstance(out, dict) and "traceEvents" in out else out\n\n\n'
        "json.loads = _quiet_loads\n",
    )
    assert_fails(v, "the profiler steps in each trace[0] has 0 items")


# -- memory per layer -------------------------------------------------------------------------


def test_memory_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("profile-memory", seeds=2))
    assert "checker's own profile" in v.figures["hungriest_trial1"]["compares"]


def test_memory_legacy_autograd_profiler_passes(variant):
    """Correct but different: the older torch.autograd.profiler.profile has the same columns."""
    variant(
        "profile-memory",
        ("import torch\n", "import torch\nimport torch.autograd.profiler\n"),
        (
            "    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:",
            "    with torch.autograd.profiler.profile(profile_memory=True) as prof:",
        ),
    )


def test_memory_two_forward_passes_fail(mutant):
    v = mutant(
        "profile-memory",
        (
            "        for name, layer in model.named_children():",
            "        for name, layer in [*model.named_children()] * 2:",
        ),
        (
            "            with record_function(name):  # key\n",
            "            h = x if name == names[0] else h\n            with record_function(name):\n",
        ),
    )
    assert_fails(v, "2 forward passes", "exactly one forward pass")


def test_memory_under_no_grad_fails(mutant):
    v = mutant(
        "profile-memory",
        "    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:",
        "    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:",
    )
    assert_fails(v, "torch.no_grad()", "autograd on")


def test_memory_hungriest_picks_smallest_fails(mutant):
    v = mutant("profile-memory", "return max(usage, key=usage.get)", "return min(usage, key=usage.get)")
    assert_fails(v, "hungriest_layer returned")


def test_memory_grad_mode_left_on_fails(mutant):
    v = mutant(
        "profile-memory",
        "    names = [name for name, _ in model.named_children()]\n",
        "    torch.set_grad_enabled(True)\n    names = [name for name, _ in model.named_children()]\n",
    )
    assert_fails(v, "layer_memory(...)", "is_grad_enabled()")


def test_memory_switching_the_model_to_train_mode_fails(mutant):
    v = mutant(
        "profile-memory",
        "    names = [name for name, _ in model.named_children()]\n",
        "    model.train()\n    names = [name for name, _ in model.named_children()]\n",
    )
    assert_fails(v, "switched to train mode")


def test_memory_a_layer_that_saves_nothing_run_without_autograd_fails(mutant):
    """Autograd off for `shift`, which saves nothing for backward: its bytes and every other layer's
    come out as measured with autograd on (the checker passed it before), but the layer calls the
    profiler recorded are not one forward pass with autograd on, as in the reference run."""
    v = mutant(
        "profile-memory",
        "            with record_function(name):  # key\n",
        '            with record_function(name), torch.set_grad_enabled(name != "shift"):\n',
    )
    assert_fails(v, "the layer calls your profiler recorded (True where autograd was on)[", "is False")


# -- find, fix, measure again -----------------------------------------------------------------

FIX_BUFFER = '        self.register_buffer("w", self.whitener())  # key'


def test_fix_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("profile-fix", seeds=2))
    share = v.figures["hot_op_share"]
    assert share["slow"] > 0.3 and share["yours"] == 0.0  # measured 0.55-0.72 on 2 cores
    assert "given Whitened step" in v.figures["step time"]["compares"]


def test_fix_eigh_in_init_non_persistent_buffer_passes(variant):
    """Correct but different: the eigendecomposition written out in __init__ (scaled columns
    instead of a diag matmul), kept as a non-persistent buffer."""
    variant(
        "profile-fix",
        FIX_BUFFER,
        "        evals, evecs = torch.linalg.eigh(self.cov)\n"
        "        w = (evecs * evals.clamp_min(1e-5).rsqrt()) @ evecs.T\n"
        '        self.register_buffer("w", w, persistent=False)',
    )


def test_fix_hot_op_guessed_from_the_code(mutant):
    v = mutant("profile-fix", 'HOT_OP = "aten::_linalg_eigh"', 'HOT_OP = "aten::mm"')
    assert_fails(v, "HOT_OP is 'aten::mm'", "not the largest share")


def test_fix_cholesky_whitening_rotates_the_inputs(mutant):
    v = mutant(
        "profile-fix",
        FIX_BUFFER,
        '        self.register_buffer("w", torch.linalg.inv(torch.linalg.cholesky(self.cov)).T)',
    )
    assert_fails(v, "FastWhitened's output vs Whitened's")


def test_fix_without_the_clamp_fails_on_a_singular_covariance(mutant):
    v = mutant(
        "profile-fix",
        FIX_BUFFER,
        "        evals, evecs = torch.linalg.eigh(self.cov)\n"
        '        self.register_buffer("w", (evecs * evals.rsqrt()) @ evecs.T)',
    )
    assert_fails(v, "singular covariance", "clamp_min(1e-5)")


def test_fix_whitener_computed_on_first_use_fails(mutant):
    v = mutant(
        "profile-fix",
        (FIX_BUFFER, '        self.register_buffer("w", None)'),
        (
            "        return self.net(x @ self.w)  # key",
            "        if self.w is None:\n            self.w = self.whitener()\n        return self.net(x @ self.w)",
        ),
    )
    assert_fails(v, "still runs aten::_linalg_eigh", "first 3 steps")
