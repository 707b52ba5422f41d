"""Chapter 13 (capstone): the reference step passes; realistic ways of making the step "faster"
or "lighter" that change the training, or that miss a target, fail with a reason that names
the problem in the learner's terms; a different mix of techniques passes."""

from pathlib import Path

import pytest

from .conftest import assert_fails, assert_passes

EX = "capstone-step"
CHAPTER = Path(__file__).resolve().parents[2] / "lessons" / "13-capstone"

SDPA = "        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # key\n"
MANUAL_ATTENTION = (
    "        scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)\n"
    "        future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)\n"
    '        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)\n'
    "        y = weights @ v\n"
)
IMPORTS = "import torch\nfrom torch import nn\n"
FUSED_ADAMW = "torch.optim.AdamW(model.parameters(), lr=lr, fused=True)"


def _model_code(text: str) -> str:
    return text[text.index("class CausalSelfAttention") : text.index("def make")]


def _step_body(text: str) -> str:
    start = text.index("    optimizer = torch.optim.AdamW")
    return text[start : text.index("    return step", start)]


def test_stub_starts_from_the_checkers_baseline():
    # The learner reads the baseline in the stub; the checker runs its own copy: they must agree.
    stub = (CHAPTER / "exercises" / "fast_step.py").read_text()
    baseline = (CHAPTER / "checks" / "_baseline.py").read_text()
    assert _model_code(stub) == _model_code(baseline)
    assert _step_body(stub) == _step_body(baseline)


slow = pytest.mark.slow


@slow
def test_stub_fails_on_memory_with_both_figures(check_code, course):
    v = check_code(EX, course.exercise(EX).stub)
    assert_fails(v, "peak memory of one step: yours", "the baseline's", "(no lower)", "at least 40% lower")


@slow
def test_solution_passes_with_figures_beside_the_baseline(solution_verdict):
    v = assert_passes(solution_verdict(EX))
    assert v.figures["memory_saved_pct"]["yours"] >= 50
    assert v.figures["memory"]["compares"] == "yours vs the baseline step"
    assert v.figures["time"]["compares"] == "yours vs the baseline step"
    assert v.figures["time"]["speedup"] >= 1.3
    assert v.figures["loss_curve"]["max_difference"] <= 1e-4


@slow
def test_checkpoint_around_the_whole_model_misses_the_memory_target(mutant):
    v = mutant(
        EX,
        (SDPA, MANUAL_ATTENTION),
        (IMPORTS, "import math\n\n" + IMPORTS),
        (
            "        logits = model(tokens)\n",
            (
                "        from torch.utils.checkpoint import checkpoint\n"
                "        logits = checkpoint(model, tokens, use_reentrant=False)\n"
            ),
        ),
    )
    assert_fails(v, "peak memory of one step", "at least 40% lower", "whole model saves nothing")


@slow
def test_training_on_half_the_batch_fails(mutant):
    v = mutant(
        EX,
        "        logits = model(tokens)\n",
        "        tokens, targets = tokens[: len(tokens) // 2], targets[: len(targets) // 2]\n"
        "        logits = model(tokens)\n",
    )
    assert_fails(v, "loss curve", "whole batch")


@slow
def test_skipping_every_other_optimizer_step_fails(mutant):
    v = mutant(
        EX,
        ("    def step(", "    calls = [0]\n\n    def step("),
        (
            "        optimizer.step()\n",
            "        calls[0] += 1\n        if calls[0] % 2:\n            optimizer.step()\n",
        ),
    )
    # The first call updates; the second does not, so the third loss is the first to differ.
    assert_fails(v, "at step 3 of", "first loss matches", "exactly one optimizer step")


@slow
def test_ignoring_the_learning_rate_fails(mutant):
    v = mutant(EX, FUSED_ADAMW, "torch.optim.AdamW(model.parameters(), fused=True)")
    assert_fails(v, "first loss matches", "learning rate it was given")


@slow
def test_adam_without_decoupled_weight_decay_fails(mutant):
    # Adam(fused=True) stays within 0.0005 of the baseline's curve: only the optimizer shows it
    v = mutant(EX, FUSED_ADAMW, "torch.optim.Adam(model.parameters(), lr=lr, fused=True)")
    assert_fails(v, "the optimizer that updates your model", "AdamW", "'Adam'")


@slow
def test_setting_the_callers_thread_count_fails(mutant):
    v = mutant(EX, FUSED_ADAMW, "torch.set_num_threads(1)\n    optimizer = " + FUSED_ADAMW)
    assert_fails(v, "make_step", "torch.get_num_threads()")


@slow
def test_checkpointing_every_block_is_light_but_too_slow(mutant):
    # Fused attention + checkpointing each block: 72% lighter, but ~1.05x as fast.
    v = mutant(
        EX,
        (IMPORTS, "from torch.utils.checkpoint import checkpoint\n" + IMPORTS),
        ("            x = block(x)\n", "            x = checkpoint(block, x, use_reentrant=False)\n"),
    )
    assert_fails(v, "one step of yours takes", "the target is 1.3x", "recompute")


@slow
def test_bf16_autocast_with_fused_adamw_passes(variant):
    # A different mix: the baseline's attention under bf16 autocast (cross_entropy stays float32
    # inside autocast) plus the fused optimizer: measured 48% lighter and 1.5x as fast here.
    v = variant(
        EX,
        (SDPA, MANUAL_ATTENTION),
        (IMPORTS, "import math\n\n" + IMPORTS),
        (
            "        logits = model(tokens)\n        loss = F.cross_entropy(",
            (
                "        with torch.autocast(device_type=tokens.device.type, dtype=torch.bfloat16):\n"
                "            logits = model(tokens)\n"
                "            loss = F.cross_entropy("
            ),
        ),
    )
    assert v.figures["loss_curve"]["max_difference"] <= 1e-3


@slow
def test_loss_computed_in_bf16_outside_autocast_drifts(mutant):
    # Autocast around the model only, then cross_entropy on the bf16 logits outside it: the loss
    # itself is a bf16 number (0.013-0.036 from the baseline's curve).
    v = mutant(
        EX,
        (SDPA, MANUAL_ATTENTION),
        (IMPORTS, "import math\n\n" + IMPORTS),
        (
            "        logits = model(tokens)\n",
            (
                "        with torch.autocast(device_type=tokens.device.type, dtype=torch.bfloat16):\n"
                "            logits = model(tokens)\n"
            ),
        ),
    )
    assert_fails(v, "loss curve", "bfloat16")
