"""Chapter 4 (memory): every solution passes; realistic learner mistakes fail with a reason
that names the problem in the learner's terms."""

import pytest

from .conftest import assert_fails, assert_passes, describe

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "exercise",
    [
        "memory-checkpoint",
        "memory-selective-checkpoint",
        "memory-grad-accum",
        "memory-mixed-precision",
        "memory-adam8bit",
    ],
)
def test_stub_fails(check_code, course, exercise):
    v = check_code(exercise, course.exercise(exercise).stub)
    assert v.status in ("failed", "error"), describe(v)


# -- memory-checkpoint --------------------------------------------------------------------------


def test_checkpoint_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("memory-checkpoint"))
    assert v.figures["memory_saved_pct"]["yours"] >= 70
    assert {"memory", "time", "reference_time_vs_plain", "time_overhead_pct"} <= set(v.figures)


def test_checkpoint_segments_of_two_blocks_keep_too_much(mutant):
    v = mutant(
        "memory-checkpoint",
        "    h = x\n    for block in stack:",
        "    from torch.utils.checkpoint import checkpoint_sequential\n"
        "    return checkpoint_sequential(stack, len(stack) // 2, x, use_reentrant=False)\n"
        "    h = x\n    for block in stack:",
    )
    assert_fails(v, "at most 25% above")


def test_checkpoint_detaching_between_blocks_cuts_the_graph(mutant):
    v = mutant(
        "memory-checkpoint",
        "h = checkpoint(block, h, use_reentrant=False)",
        "h = checkpoint(block, h.detach(), use_reentrant=False)",
    )
    assert_fails(v, "got no gradient", "detached")


def test_checkpoint_sequential_one_segment_per_block_passes(variant):
    variant(
        "memory-checkpoint",
        "    h = x\n    for block in stack:",
        "    from torch.utils.checkpoint import checkpoint_sequential\n"
        "    return checkpoint_sequential(stack, len(stack), x, use_reentrant=False)\n"
        "    h = x\n    for block in stack:",
    )


def test_checkpoint_under_no_grad_fails(mutant):
    v = mutant(
        "memory-checkpoint",
        "        h = checkpoint(block, h, use_reentrant=False)",
        "        with torch.no_grad():\n            h = checkpoint(block, h, use_reentrant=False)",
    )
    assert_fails(v, "does not require grad")


def test_checkpoint_layer_norm_outside_the_checkpoints_keeps_too_much(mutant):
    # Each block's normalised input and LayerNorm's statistics live until backward: hidden by the
    # gradients in the plain peak, plain once every .grad is allocated (+32%).
    v = mutant(
        "memory-checkpoint",
        "h = checkpoint(block, h, use_reentrant=False)",
        "h = h + checkpoint(lambda t, b=block: b.fc2(nn.functional.gelu(b.fc1(t))), block.norm(h), use_reentrant=False)",
    )
    assert_fails(v, "with every .grad already allocated", "at most 15% above", "LayerNorm")


def test_checkpoint_forcing_train_mode_fails(mutant):
    v = mutant("memory-checkpoint", "    h = x\n", "    stack.train()\n    h = x\n")
    assert_fails(v, "switched to train mode")


def test_checkpoint_turning_grad_mode_on_fails(mutant):
    v = mutant("memory-checkpoint", "    h = x\n", "    torch.set_grad_enabled(True)\n    h = x\n")
    assert_fails(v, "torch.is_grad_enabled() from False to True")


# -- memory-selective-checkpoint ----------------------------------------------------------------

SAC_SAVE = "return CheckpointPolicy.MUST_SAVE  # key"
SAC_RECOMPUTE = "return CheckpointPolicy.PREFER_RECOMPUTE  # key"
SAC_CALL = "h = checkpoint(block, h, use_reentrant=False, context_fn=context_fn)"


def test_selective_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("memory-selective-checkpoint"))
    assert v.figures["matmuls_rerun_in_backward"] == {"yours": 0, "reference": 0, "full_checkpointing": 4}
    assert v.figures["cheap_ops_rerun_in_backward"]["yours"] == 8
    peak = v.figures["peak_MiB"]
    # Between the two extremes, and well clear of both.
    assert peak["full_checkpointing"] < 0.8 * peak["yours"] and peak["yours"] < 0.8 * peak["no_checkpointing"]
    assert {"memory", "time"} <= set(v.figures)


def test_selective_reentrant_rejects_context_fn(mutant):
    v = mutant("memory-selective-checkpoint", "use_reentrant=False, context_fn", "use_reentrant=True, context_fn")
    assert_fails(v, "only supported when use_reentrant=False", "non-reentrant", "use_reentrant=False together")


def test_selective_python_functions_never_match(mutant):
    v = mutant("memory-selective-checkpoint", "if op in MATMULS:", "if op in (torch.matmul, nn.functional.linear):")
    assert_fails(v, "never recognises a matmul")


def test_selective_saving_everything_recomputes_nothing(mutant):
    v = mutant("memory-selective-checkpoint", SAC_RECOMPUTE, "return CheckpointPolicy.MUST_SAVE")
    assert_fails(v, "reran none of the blocks' cheap ops", "keeps every op's output")


def test_selective_half_the_blocks_fails(mutant):
    v = mutant(
        "memory-selective-checkpoint",
        ("    for block in stack:", "    for i, block in enumerate(stack):"),
        (SAC_CALL, SAC_CALL + " if i % 2 == 0 else block(h)"),
    )
    assert_fails(v, "cheap op(s)", "where the reference reruns 8")


def test_selective_context_pair_instead_of_factory_fails(mutant):
    v = mutant(
        "memory-selective-checkpoint",
        "functools.partial(create_selective_checkpoint_contexts, policy)  # key",
        "create_selective_checkpoint_contexts(policy)",
    )
    assert_fails(v, "is that pair itself", "functools.partial")


def test_selective_saving_only_addmm_fails_on_mm(mutant):
    # The Block only runs addmm: the policy itself shows that a bias-free Linear would be rerun.
    v = mutant("memory-selective-checkpoint", "if op in MATMULS:", "if op == aten.addmm.default:")
    assert_fails(v, "for torch.ops.aten.mm.default", "what nn.Linear without a bias runs")


def test_selective_saving_the_residual_add_fails(mutant):
    v = mutant("memory-selective-checkpoint", "if op in MATMULS:", "if op in MATMULS or op == aten.add.Tensor:")
    assert_fails(v, "for torch.ops.aten.add.Tensor, a cheap op", "PREFER_RECOMPUTE")


def test_selective_op_list_passes(variant):
    # The list form of create_selective_checkpoint_contexts: MUST_SAVE for the listed ops,
    # PREFER_RECOMPUTE for the rest.
    variant(
        "memory-selective-checkpoint",
        (
            "functools.partial(create_selective_checkpoint_contexts, policy)  # key",
            "functools.partial(create_selective_checkpoint_contexts, [aten.mm.default, aten.addmm.default])",
        ),
    )


def test_selective_overload_packets_and_must_recompute_pass(variant):
    variant(
        "memory-selective-checkpoint",
        ("if op in MATMULS:", "if op.overloadpacket in (aten.mm, aten.addmm, aten.bmm):"),
        (SAC_RECOMPUTE, "return CheckpointPolicy.MUST_RECOMPUTE"),
    )


# -- memory-grad-accum --------------------------------------------------------------------------


def test_accumulation_solution_passes(solution_verdict):
    assert_passes(solution_verdict("memory-grad-accum"))


def test_accumulation_dropping_the_remainder_fails(mutant):
    v = mutant(
        "memory-grad-accum",
        (
            "    for xb, yb in zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches)):",
            "    size = n // micro_batches\n"
            "    for i in range(micro_batches):\n"
            "        xb, yb = inputs[i * size:(i + 1) * size], targets[i * size:(i + 1) * size]",
        ),
        ("* (xb.shape[0] / n)", "/ micro_batches"),
    )
    assert_fails(v, "every row must be used exactly once")


def test_accumulation_stepping_every_micro_batch_fails(mutant):
    v = mutant(
        "memory-grad-accum",
        "        total += loss.item()\n",
        "        total += loss.item()\n        optimizer.step()\n",
    )
    assert_fails(v, "optimizer.step() should be called once", "5 time(s)")


def test_accumulation_returning_the_loss_tensor_fails(mutant):
    v = mutant(
        "memory-grad-accum", ("    total = 0.0\n", "    total = 0\n"), ("total += loss.item()", "total = total + loss")
    )
    assert_fails(v, "returned a tensor that still holds the autograd graph", "loss.item()")


def test_accumulation_hard_coded_cross_entropy_fails(mutant):
    v = mutant(
        "memory-grad-accum", "loss = loss_fn(model(xb), yb)", "loss = torch.nn.functional.cross_entropy(model(xb), yb)"
    )
    assert_fails(v, "gradient of")


def test_accumulation_unweighted_mean_of_micro_losses_fails(mutant):
    v = mutant(
        "memory-grad-accum",
        ("        total += loss.item()\n", "        total += loss.item() / (xb.shape[0] / n) / micro_batches\n"),
    )
    assert_fails(v, "returned loss (the full-batch mean)")


def test_accumulation_zeroing_grads_in_place_fails_on_a_fresh_model(mutant):
    v = mutant(
        "memory-grad-accum",
        "    optimizer.zero_grad(set_to_none=True)\n",
        "    for p in model.parameters():\n        p.grad.zero_()\n",
    )
    assert_fails(v, "on a fresh model whose .grad are still None", "zero_grad(set_to_none=True)")


def test_accumulation_keeping_every_graph_alive_fails_on_memory(mutant):
    v = mutant(
        "memory-grad-accum",
        ("        loss.backward()", "        loss.backward(retain_graph=True)"),
        ("    total = 0.0\n", "    total = torch.zeros(())\n"),
        ("        total += loss.item()", "        total = total + loss"),
        ("    return total\n", "    return total.item()\n"),
    )
    assert_fails(v, "peak memory of your 4-micro-batch step", "at most 50% above", "retain_graph=True")


def test_accumulation_forcing_train_mode_fails(mutant):
    v = mutant("memory-grad-accum", "    n = inputs.shape[0]\n", "    model.train()\n    n = inputs.shape[0]\n")
    assert_fails(v, "switched to train mode")


def test_accumulation_summed_losses_divided_by_n_passes(variant):
    variant(
        "memory-grad-accum",
        ("loss = loss_fn(model(xb), yb) * (xb.shape[0] / n)", "loss = loss_fn(model(xb), yb) * xb.shape[0] / n"),
        ("    optimizer.zero_grad(set_to_none=True)\n", "    for p in model.parameters():\n        p.grad = None\n"),
    )


# -- memory-mixed-precision (CPU here: bf16, no scaler) -----------------------------------------


def test_mixed_precision_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("memory-mixed-precision"))
    assert v.figures["loss"]["last_5_mean"] < v.figures["loss"]["first"]


AUTOCAST = "    with torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device)):"


def test_mixed_precision_deprecated_cuda_autocast_does_nothing_on_cpu(mutant):
    v = mutant(
        "memory-mixed-precision",
        "torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device))",
        "torch.cuda.amp.autocast(dtype=autocast_dtype(x.device))",
    )
    assert_fails(v, "produced float32 output", "deprecated")


def test_mixed_precision_casting_the_model_fails(mutant):
    v = mutant(
        "memory-mixed-precision",
        "        logits = model(x)",
        "        model.to(autocast_dtype(x.device))\n        logits = model(x)",
    )
    assert_fails(v, "parameter `", "keep the model in float32")


def test_mixed_precision_without_optimizer_step_fails(mutant):
    v = mutant("memory-mixed-precision", "    scaler.step(optimizer)", "    pass  # scaler.step(optimizer)")
    assert_fails(v, "loss did not go down")


def test_mixed_precision_dtype_from_the_machine_not_the_device_fails(mutant):
    # Issue 20: the fp16 mapping was only checked on CUDA machines.
    v = mutant(
        "memory-mixed-precision",
        'torch.float16 if device.type == "cuda" else torch.bfloat16',
        "torch.float16 if torch.cuda.is_available() else torch.bfloat16",
    )
    assert_fails(v, "autocast_dtype(torch.device('cuda')) returned torch.bfloat16")


def test_mixed_precision_scaler_never_enabled_fails(mutant):
    v = mutant("memory-mixed-precision", "enabled=autocast_dtype(device) == torch.float16", "enabled=False")
    assert_fails(v, "make_scaler('cuda') returned a disabled GradScaler")


def test_mixed_precision_forgetting_update_fails(mutant):
    v = mutant("memory-mixed-precision", "    scaler.update()", "    pass  # scaler.update()")
    assert_fails(v, "scale did not shrink", "scaler.update()")


def test_mixed_precision_backward_inside_autocast_fails(mutant):
    v = mutant("memory-mixed-precision", "    scaler.scale(loss).backward()", "        scaler.scale(loss).backward()")
    assert_fails(v, "backward ran inside the autocast block")


def test_mixed_precision_loss_outside_autocast_fails(mutant):
    # Cross-entropy of the bf16 logits outside autocast: a bf16 loss, where autocast gives float32.
    v = mutant(
        "memory-mixed-precision",
        "        loss = F.cross_entropy(logits, y)  # autocast runs the loss in float32",
        "    loss = F.cross_entropy(logits, y)",
    )
    assert_fails(v, "computed in float32 as autocast does", "inside the autocast block")


def test_mixed_precision_returning_the_scaled_loss_fails(mutant):
    v = mutant(
        "memory-mixed-precision",
        ("    scaler.scale(loss).backward()", "    scaled = scaler.scale(loss)\n    scaled.backward()"),
        ("    return loss.item()", "    return scaled.item()"),
    )
    assert_fails(v, "with an enabled GradScaler (scale 65536)", "not the scaled loss")


def test_mixed_precision_cpu_autocast_hard_coded_fails(mutant):
    # Right on this CPU; fake CUDA tensors show that a GPU batch would not be autocast.
    v = mutant(
        "memory-mixed-precision",
        "torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device))",
        'torch.autocast(device_type="cpu", dtype=torch.bfloat16)',
    )
    assert_fails(v, "fake CUDA tensors stand in for a GPU", "device_type='cpu'")


def test_mixed_precision_amp_autocast_and_device_check_pass(variant):
    variant(
        "memory-mixed-precision",
        (
            'torch.float16 if device.type == "cuda" else torch.bfloat16',
            '{"cuda": torch.float16}.get(torch.device(device).type, torch.bfloat16)',
        ),
        (
            "torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device))",
            "torch.amp.autocast(x.device.type, dtype=autocast_dtype(x.device))",
        ),
    )


def test_mixed_precision_gradients_left_to_accumulate_fail_on_the_losses(mutant):
    """Without zero_grad every fact still holds (the loss goes down, a step with NaN gradients is
    skipped, the checker passed it before the losses were observed): the losses themselves,
    compared step by step with the reference run's, show the gradients piling up."""
    v = mutant("memory-mixed-precision", "    optimizer.zero_grad(set_to_none=True)\n", "")
    assert_fails(v, "the losses train_step returned at steps 1 to 30[", "expected")


UNSCALE = "        scaler.unscale_(optimizer)         # key: .grad holds loss * scale until this divides it out\n"
CLIP = "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # reads the true-scale .grad\n"


def test_mixed_precision_clipping_each_parameter_alone_fails(mutant):
    v = mutant(
        "memory-mixed-precision",
        CLIP,
        "        for p in model.parameters():\n            torch.nn.utils.clip_grad_norm_([p], max_norm)\n",
    )
    assert_fails(v, "Clip the total norm over all parameters")


def test_mixed_precision_dividing_by_the_scale_by_hand_fails(mutant):
    """Dividing .grad by the scale, then letting scaler.step divide again."""
    v = mutant(
        "memory-mixed-precision",
        UNSCALE,
        "        for p in model.parameters():\n            p.grad /= scaler.get_scale()\n",
    )
    assert_fails(v, "times less than a clip to", "divided by the scale twice")


def test_mixed_precision_clipped_step_bypassing_the_scaler_fails(mutant):
    """unscale_, clip, then optimizer.step(): every fact of a clean step holds; a NaN step is not skipped."""
    v = mutant(
        "memory-mixed-precision",
        "    scaler.step(optimizer)                 #",
        "    (optimizer.step() if max_norm is not None else scaler.step(optimizer))  #",
    )
    assert_fails(v, "a clipped step with NaN gradients", "it must be skipped")


def test_mixed_precision_clipping_by_value_fails(mutant):
    v = mutant(
        "memory-mixed-precision",
        CLIP,
        "        torch.nn.utils.clip_grad_value_(model.parameters(), max_norm)\n",
    )
    assert_fails(v, "was not clipped")


def test_mixed_precision_clipping_only_with_an_enabled_scaler_fails(mutant):
    v = mutant(
        "memory-mixed-precision",
        "    if max_norm is not None:\n        scaler.unscale_",
        "    if max_norm is not None and scaler.is_enabled():\n        scaler.unscale_",
    )
    assert_fails(v, "with the scaler make_scaler('cpu') returns was not clipped")


def test_mixed_precision_clipping_after_the_step_fails(mutant):
    v = mutant(
        "memory-mixed-precision",
        ("    if max_norm is not None:\n" + UNSCALE + CLIP, ""),
        ("    scaler.update()", "    if max_norm is not None:\n" + CLIP + "    scaler.update()"),
    )
    assert_fails(v, "was not clipped")


def test_mixed_precision_clipping_by_hand_passes(variant):
    """The total norm computed and applied by hand, after unscale_."""
    variant(
        "memory-mixed-precision",
        CLIP,
        "        ps = [p for p in model.parameters() if p.grad is not None]\n"
        "        n = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in ps]))\n"
        "        for p in ps:\n"
        "            p.grad.mul_(torch.clamp(max_norm / (n + 1e-6), max=1.0))\n",
    )


def test_mixed_precision_foreach_clip_passes(variant):
    variant(
        "memory-mixed-precision",
        CLIP,
        "        torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_norm, foreach=True)\n",
    )


# -- memory-adam8bit ----------------------------------------------------------------------------

ADAM8BIT = "bnb.optim.Adam8bit(model.parameters(), lr=lr)"


def test_adam8bit_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("memory-adam8bit"))
    assert v.figures["state_vs_adam_pct"]["yours"] <= 30


def test_adam8bit_32bit_state_is_too_big(mutant):
    v = mutant("memory-adam8bit", ADAM8BIT, "bnb.optim.Adam(model.parameters(), lr=lr, optim_bits=32)")
    assert_fails(v, "at most 30%")


def test_adam8bit_counting_only_the_quantized_state_fails(mutant):
    v = mutant(
        "memory-adam8bit",
        "if isinstance(v, torch.Tensor))",
        "if isinstance(v, torch.Tensor) and v.dtype == torch.uint8)",
    )
    assert_fails(v, "state_bytes(your optimizer)")


def test_adam8bit_only_some_parameters(mutant):
    v = mutant("memory-adam8bit", ADAM8BIT, "bnb.optim.Adam8bit([p for p in model.parameters() if p.dim() > 1], lr=lr)")
    assert_fails(v, "leaves out 3 of the model's 6 parameters", "model.parameters()")


def test_adam8bit_counting_elements_not_bytes_fails(mutant):
    v = mutant("memory-adam8bit", "v.numel() * v.element_size()", "v.numel()")
    assert_fails(v, "state_bytes(")


def test_adam8bit_reading_state_of_every_parameter_fails(mutant):
    # optimizer.state is a defaultdict: optimizer.state[p] adds an entry for a parameter without state.
    v = mutant(
        "memory-adam8bit",
        "for state in optimizer.state.values()",
        "for state in [optimizer.state[p] for g in optimizer.param_groups for p in g['params']]",
    )
    assert_fails(v, "state_bytes changed the optimizer it measured", "optimizer.state.values()")


def test_adam8bit_treating_every_non_number_as_a_tensor_fails(mutant):
    v = mutant(
        "memory-adam8bit",
        "for v in state.values() if isinstance(v, torch.Tensor))",
        "for v in state.values() if not isinstance(v, (int, float)))",
    )
    assert_fails(v, "state_bytes raised AttributeError for torch.optim.LBFGS", "skip everything else")


def test_adam8bit_optim_bits_8_and_nbytes_pass(variant):
    variant(
        "memory-adam8bit",
        (ADAM8BIT, "bnb.optim.Adam(model.parameters(), lr=lr, optim_bits=8)"),
        ("v.numel() * v.element_size()", "v.nbytes"),
    )
