"""Chapter 4 (memory): every solution passes; realistic learner mistakes fail with a reason
that names the problem in the learner's terms."""

import pytest

pytestmark = pytest.mark.slow


def _replace(src, old, new):
    assert old in src, f"mutation target not found: {old!r}"
    return src.replace(old, new)


def _fails(v, *words):
    assert v.status == "failed", (v.status, v.reason, v.details, v.output[-2000:])
    for w in words:
        assert w in v.reason, (w, v.reason)


# -- memory-checkpoint --------------------------------------------------------------------------

def test_checkpoint_solution_passes(check_code, solution_text):
    v = check_code("memory-checkpoint", solution_text("memory-checkpoint"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert v.figures["memory_saved_pct"]["yours"] >= 40
    assert {"memory", "time", "reference_time_vs_plain", "time_overhead_pct"} <= set(v.figures)


def test_checkpoint_reentrant_loses_parameter_gradients(check_code, solution_text):
    src = _replace(solution_text("memory-checkpoint"), "use_reentrant=False)", "use_reentrant=True)")
    _fails(check_code("memory-checkpoint", src), "does not require grad", "use_reentrant=False")


def test_checkpoint_whole_stack_saves_too_little(check_code, solution_text):
    src = _replace(solution_text("memory-checkpoint"),
                   "    h = x\n    for block in stack:",
                   "    return checkpoint(stack, x, use_reentrant=False)\n    h = x\n    for block in stack:")
    _fails(check_code("memory-checkpoint", src), "peak memory", "at least 40% lower")


def test_checkpoint_without_checkpointing_saves_nothing(check_code, solution_text):
    src = _replace(solution_text("memory-checkpoint"),
                   "h = checkpoint(block, h, use_reentrant=False)", "h = block(h)")
    _fails(check_code("memory-checkpoint", src), "only 0% lower")


def test_checkpoint_under_no_grad_fails(check_code, solution_text):
    src = _replace(solution_text("memory-checkpoint"),
                   "        h = checkpoint(block, h, use_reentrant=False)",
                   "        with torch.no_grad():\n            h = checkpoint(block, h, use_reentrant=False)")
    _fails(check_code("memory-checkpoint", src), "does not require grad")


# -- memory-grad-accum --------------------------------------------------------------------------

def test_accumulation_solution_passes(check_code, solution_text):
    v = check_code("memory-grad-accum", solution_text("memory-grad-accum"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


def test_accumulation_forgetting_to_scale_the_loss_fails(check_code, solution_text):
    src = _replace(solution_text("memory-grad-accum"), " * (xb.shape[0] / n)", "")
    _fails(check_code("memory-grad-accum", src), "gradient of", "max abs error")


def test_accumulation_dividing_by_count_fails_on_uneven_batches(check_code, solution_text):
    src = _replace(solution_text("memory-grad-accum"), " * (xb.shape[0] / n)", " / micro_batches")
    _fails(check_code("memory-grad-accum", src), "gradient of")


def test_accumulation_dropping_the_remainder_fails(check_code, solution_text):
    src = _replace(solution_text("memory-grad-accum"),
                   "    for xb, yb in zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches)):",
                   "    size = n // micro_batches\n"
                   "    for i in range(micro_batches):\n"
                   "        xb, yb = inputs[i * size:(i + 1) * size], targets[i * size:(i + 1) * size]")
    src = _replace(src, "* (xb.shape[0] / n)", "/ micro_batches")
    _fails(check_code("memory-grad-accum", src), "every row must be used exactly once")


def test_accumulation_forgetting_zero_grad_fails(check_code, solution_text):
    src = _replace(solution_text("memory-grad-accum"), "    optimizer.zero_grad(set_to_none=True)\n", "")
    _fails(check_code("memory-grad-accum", src), "gradient of")


def test_accumulation_stepping_every_micro_batch_fails(check_code, solution_text):
    src = _replace(solution_text("memory-grad-accum"), "        total += loss.item()\n",
                   "        total += loss.item()\n        optimizer.step()\n")
    _fails(check_code("memory-grad-accum", src), "optimizer.step() should be called once", "5 time(s)")


# -- memory-mixed-precision (CPU here: bf16, no scaler) -----------------------------------------

def test_mixed_precision_solution_passes(check_code, solution_text):
    v = check_code("memory-mixed-precision", solution_text("memory-mixed-precision"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert v.figures["loss"]["last_5_mean"] < v.figures["loss"]["first"]


def test_mixed_precision_without_autocast_fails(check_code, solution_text):
    src = _replace(solution_text("memory-mixed-precision"),
                   "    with torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device)):\n",
                   "    if True:\n")
    _fails(check_code("memory-mixed-precision", src), "produced float32 output", "bfloat16")


def test_mixed_precision_deprecated_cuda_autocast_does_nothing_on_cpu(check_code, solution_text):
    src = _replace(solution_text("memory-mixed-precision"),
                   "torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device))",
                   "torch.cuda.amp.autocast(dtype=autocast_dtype(x.device))")
    _fails(check_code("memory-mixed-precision", src), "produced float32 output", "deprecated")


def test_mixed_precision_scaler_enabled_for_bf16_fails(check_code, solution_text):
    src = _replace(solution_text("memory-mixed-precision"),
                   "enabled=autocast_dtype(device) == torch.float16", "enabled=True")
    _fails(check_code("memory-mixed-precision", src), "enabled GradScaler for bfloat16")


def test_mixed_precision_casting_the_model_fails(check_code, solution_text):
    src = _replace(solution_text("memory-mixed-precision"),
                   "        logits = model(x)",
                   "        model.to(autocast_dtype(x.device))\n        logits = model(x)")
    _fails(check_code("memory-mixed-precision", src), "parameter `", "keep the model in float32")


def test_mixed_precision_without_optimizer_step_fails(check_code, solution_text):
    src = _replace(solution_text("memory-mixed-precision"), "    scaler.step(optimizer)", "    pass")
    _fails(check_code("memory-mixed-precision", src), "loss did not go down")


# -- memory-adam8bit ----------------------------------------------------------------------------

def test_adam8bit_solution_passes(check_code, solution_text):
    v = check_code("memory-adam8bit", solution_text("memory-adam8bit"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert v.figures["state_vs_adam_pct"]["yours"] <= 30


def test_adam8bit_plain_adam_is_too_big(check_code, solution_text):
    src = _replace(solution_text("memory-adam8bit"), "bnb.optim.Adam8bit(model.parameters(), lr=lr)",
                   "torch.optim.Adam(model.parameters(), lr=lr)")
    _fails(check_code("memory-adam8bit", src), "at most 30%", "Adam8bit")


def test_adam8bit_32bit_state_is_too_big(check_code, solution_text):
    src = _replace(solution_text("memory-adam8bit"), "bnb.optim.Adam8bit(model.parameters(), lr=lr)",
                   "bnb.optim.Adam(model.parameters(), lr=lr, optim_bits=32)")
    _fails(check_code("memory-adam8bit", src), "at most 30%")


def test_adam8bit_counting_only_the_quantized_state_fails(check_code, solution_text):
    src = _replace(solution_text("memory-adam8bit"), "if isinstance(v, torch.Tensor))",
                   "if isinstance(v, torch.Tensor) and v.dtype == torch.uint8)")
    _fails(check_code("memory-adam8bit", src), "state_bytes(your optimizer)")


def test_adam8bit_ignoring_the_learning_rate_fails(check_code, solution_text):
    src = _replace(solution_text("memory-adam8bit"), "bnb.optim.Adam8bit(model.parameters(), lr=lr)",
                   "bnb.optim.Adam8bit(model.parameters())")
    _fails(check_code("memory-adam8bit", src), "learning rate")
