"""Chapter 12 (tensor parallelism and FSDP): checks run through the runner's torchrun path with
2 CPU processes (gloo). Solutions pass; realistic mistakes fail with a reason naming them."""

import pytest

from .conftest import assert_fails, assert_passes

pytestmark = pytest.mark.slow


# -- tp-mlp ------------------------------------------------------------------------------------


def test_tp_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("tp-mlp"))
    p = v.figures["parameters"]
    assert p["this_rank"] < p["whole_model"]


def test_tp_plan_per_block_passes(variant):
    # correct but different: one parallelize_module call per block, with names inside the block
    variant(
        "tp-mlp",
        "    return parallelize_module(model, mesh, plan)",
        "    for block in model.layers:\n"
        '        parallelize_module(block, mesh, {"w1": ColwiseParallel(), "w3": ColwiseParallel(),\n'
        '                                         "w2": RowwiseParallel()})\n'
        "    return model",
    )


def test_tp_styles_swapped_fails(mutant):
    v = mutant(
        "tp-mlp",
        ('"layers.*.w1": ColwiseParallel()', '"layers.*.w1": RowwiseParallel()'),
        ('"layers.*.w3": ColwiseParallel()', '"layers.*.w3": RowwiseParallel()'),
        ('"layers.*.w2": RowwiseParallel()', '"layers.*.w2": ColwiseParallel()'),
    )
    assert_fails(v, "w1.weight", "ColwiseParallel")


def test_tp_names_without_the_block_prefix_fail(mutant):
    v = mutant("tp-mlp", ('"layers.*.w1"', '"w1"'), ('"layers.*.w3"', '"w3"'), ('"layers.*.w2"', '"w2"'))
    assert_fails(v, "layers.0.w1.weight", "not sharded")


def test_tp_returning_none_fails(mutant):
    v = mutant(
        "tp-mlp", "    return parallelize_module(model, mesh, plan)", "    parallelize_module(model, mesh, plan)"
    )
    assert_fails(v, "returned None", "return it")


def test_tp_second_layer_colwise_fails(mutant):
    reason = assert_fails(
        mutant("tp-mlp", '"layers.*.w2": RowwiseParallel()', '"layers.*.w2": ColwiseParallel()'),
        "w2.weight",
        "RowwiseParallel",
    )
    assert reason.startswith("rank ")


def test_tp_forgetting_w3_fails(mutant):
    assert_fails(mutant("tp-mlp", '        "layers.*.w3": ColwiseParallel(),  # key\n', ""), "w3.weight", "not sharded")


def test_tp_only_first_layer_fails(mutant):
    v = mutant(
        "tp-mlp",
        ('"layers.*.w1"', '"layers.0.w1"'),
        ('"layers.*.w3"', '"layers.0.w3"'),
        ('"layers.*.w2"', '"layers.0.w2"'),
    )
    assert_fails(v, "layers.1.", "not sharded")


def test_tp_dtensor_output_fails(mutant):
    assert_fails(mutant("tp-mlp", "RowwiseParallel()", "RowwiseParallel(use_local_output=False)"), "use_local_output")


def test_tp_private_import_fails(mutant):
    v = mutant(
        "tp-mlp",
        "from torch.distributed.device_mesh import DeviceMesh\n",
        "from torch.distributed.device_mesh import DeviceMesh\nfrom torch.distributed._tensor import Shard\n",
    )
    assert_fails(v, "torch.distributed._tensor", "public")


# -- fsdp2-step --------------------------------------------------------------------------------

SHARD_BLOCKS = "    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)  # key\n"
SHARD_ROOT = "    fully_shard(model, mesh=mesh)  # key\n"
MAKE_OPT = "    return torch.optim.SGD(model.parameters(), lr=LR)  # key"


def test_fsdp2_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("fsdp2-step"))
    assert 0.4 <= v.figures["parameters"]["share"] <= 0.6


def test_fsdp2_zero_grad_first_and_no_reshard_passes(variant):
    # correct but different: clear the gradients before the step; keep the root's parameters
    # gathered after forward (a memory/speed trade-off, same numbers)
    variant(
        "fsdp2-step",
        ("    optimizer.step()\n    optimizer.zero_grad()  # key\n", "    optimizer.step()\n"),
        ("    loss = F.mse_loss(", "    optimizer.zero_grad(set_to_none=True)\n    loss = F.mse_loss("),
        (SHARD_ROOT, "    fully_shard(model, mesh=mesh, reshard_after_forward=False)\n"),
    )


def test_fsdp2_optimizer_before_sharding_fails(mutant):
    v = mutant(
        "fsdp2-step",
        (SHARD_BLOCKS, "    optimizer = torch.optim.SGD(model.parameters(), lr=LR)\n" + SHARD_BLOCKS),
        (MAKE_OPT, "    return optimizer"),
    )
    assert_fails(v, "build the optimizer after sharding")


def test_fsdp2_only_root_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_BLOCKS, ""), "model.layers[0] is not its own FSDP unit")


def test_fsdp2_without_root_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_ROOT, ""), "root")


def test_fsdp2_root_first_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_BLOCKS + SHARD_ROOT, SHARD_ROOT + SHARD_BLOCKS), "setup_fsdp raised")


def test_fsdp2_no_zero_grad_fails_at_step_two(mutant):
    assert_fails(mutant("fsdp2-step", "    optimizer.zero_grad()  # key\n", ""), "after step 2", "gradients cleared")


def test_fsdp2_dividing_the_loss_by_world_size_fails(mutant):
    assert_fails(
        mutant("fsdp2-step", "    loss.backward()", "    (loss / 2).backward()"), "after step 1", "whole batch"
    )


def test_fsdp2_returning_the_loss_with_its_graph_fails(mutant):
    assert_fails(
        mutant("fsdp2-step", "    return loss.detach()  # key", "    return loss"),
        "still holds its autograd graph",
        "loss.detach()",
    )


# -- fsdp-bf16 (2 CPU processes, gloo) ---------------------------------------------------------

POLICY = "    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)  # key"


def test_bf16_solution_passes_on_two_cpu_ranks(solution_verdict):
    v = assert_passes(solution_verdict("fsdp-bf16"))
    assert 0 < v.figures["max_param_difference_vs_fp32"] < 5e-3


def test_bf16_one_policy_object_per_call_passes(variant):
    # correct but different: an equal policy built for each call, float32 output on the root
    variant(
        "fsdp-bf16",
        (
            "        fully_shard(layer, mesh=mesh, mp_policy=policy)  # key",
            "        fully_shard(layer, mesh=mesh, mp_policy=MixedPrecisionPolicy(torch.bfloat16, torch.float32))",
        ),
        (
            "    fully_shard(model, mesh=mesh, mp_policy=policy)  # key",
            "    fully_shard(model, mesh=mesh, mp_policy=MixedPrecisionPolicy(\n"
            "        param_dtype=torch.bfloat16, reduce_dtype=torch.float32, output_dtype=torch.float32))",
        ),
    )


def test_bf16_reduce_dtype_left_unset_fails(mutant):
    v = mutant("fsdp-bf16", "reduce_dtype=torch.float32)", "reduce_dtype=None)")
    assert_fails(v, "reduce_dtype=torch.float32")


def test_bf16_root_without_policy_fails(mutant):
    v = mutant(
        "fsdp-bf16", "    fully_shard(model, mesh=mesh, mp_policy=policy)  # key", "    fully_shard(model, mesh=mesh)"
    )
    assert_fails(v, "root")


def test_bf16_blocks_without_policy_fail(mutant):
    v = mutant(
        "fsdp-bf16",
        "        fully_shard(layer, mesh=mesh, mp_policy=policy)  # key",
        "        fully_shard(layer, mesh=mesh)",
    )
    assert_fails(v, "model.layers[0]", "mp_policy=")


def test_bf16_model_cast_to_bfloat16_fails(mutant):
    v = mutant(
        "fsdp-bf16",
        "    for layer in model.layers:\n",
        "    model.to(torch.bfloat16)\n    for layer in model.layers:\n",
    )
    assert_fails(v, "float32")


def test_bf16_float16_compute_fails(mutant):
    v = mutant(
        "fsdp-bf16", POLICY, "    policy = MixedPrecisionPolicy(param_dtype=torch.float16, reduce_dtype=torch.float32)"
    )
    assert_fails(v, "float16", "expected torch.bfloat16")


# -- ddp-accum ---------------------------------------------------------------------------------

DDP_NO_SYNC = "    with model.no_sync():  # key\n"
DDP_LOOP_BACKWARD = "            (loss / n).backward()  # key"
DDP_LAST_BACKWARD = "    (loss / n).backward()\n"


def test_ddp_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("ddp-accum"))
    assert v.figures["all_reduce_rounds"]["per_step"] == [1, 1]


def test_ddp_stub_fails(check_code, course):
    v = check_code("ddp-accum", course.exercise("ddp-accum").stub)
    assert v.status in ("failed", "error"), v.reason
    assert "TODO" in v.reason or "make_ddp" in v.reason


def test_ddp_nullcontext_per_micro_batch_passes(variant):
    # correct but different: one loop choosing the context per micro-batch, a summed loss
    # divided by the element count of the whole local batch
    variant(
        "ddp-accum",
        "    n = len(micro_batches)\n",
        "    import contextlib\n    n = len(micro_batches)\n"
        "    values = sum(y.numel() for _, y in micro_batches)\n"
        "    losses = []\n"
        "    for i, (x, y) in enumerate(micro_batches):\n"
        "        with model.no_sync() if i < n - 1 else contextlib.nullcontext():\n"
        "            loss = F.mse_loss(model(x), y, reduction='sum')\n"
        "            (loss / values).backward()\n"
        "        losses.append(loss.detach() / y.numel())\n"
        "    optimizer.step()\n    optimizer.zero_grad(set_to_none=False)\n"
        "    return torch.stack(losses).mean()\n",
    )


def test_ddp_without_no_sync_fails(mutant):
    assert_fails(mutant("ddp-accum", DDP_NO_SYNC, "    if True:\n"), "all-reduced the gradients", "no_sync()")


def test_ddp_loss_not_divided_fails(mutant):
    v = mutant(
        "ddp-accum", (DDP_LOOP_BACKWARD, "            loss.backward()"), (DDP_LAST_BACKWARD, "    loss.backward()\n")
    )
    assert_fails(v, "was not divided", "gradient of `fc")


def test_ddp_step_per_micro_batch_fails(mutant):
    v = mutant(
        "ddp-accum",
        "            total += loss.detach()\n",
        "            total += loss.detach()\n            optimizer.step()\n",
    )
    assert_fails(v, "optimizer.step()", "times for", "step once")


def test_ddp_bypassing_the_wrapper_fails(mutant):
    assert_fails(
        mutant("ddp-accum", ("model(x)", "model.module(x)"), ("model(x_last)", "model.module(x_last)")),
        "never all-reduced",
    )


def test_ddp_gpu_device_ids_on_cpu_fails(mutant):
    v = mutant(
        "ddp-accum",
        "    return DDP(model)  # key",
        "    import torch.distributed as dist\n    return DDP(model, device_ids=[dist.get_rank()])",
    )
    assert_fails(v, "make_ddp raised")


def test_ddp_gradients_not_cleared_fails(mutant):
    assert_fails(
        mutant("ddp-accum", "    optimizer.zero_grad()\n    return total", "    return total"),
        "still has a gradient",
        "clear the gradients",
    )


# -- pipeline ----------------------------------------------------------------------------------

PP_SCHEDULE = "    schedule = ScheduleGPipe(stage, n_microbatches=n_microbatches, loss_fn=F.mse_loss)  # key"


def test_pp_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("pipeline"))
    s = v.figures["stage"]
    assert 0 < s["parameters_here"] < s["whole_model"]


def test_pp_one_f_one_b_passes(variant):
    # correct but different: the 1F1B schedule, and the stage built from an explicit index range
    variant(
        "pipeline",
        (
            PP_SCHEDULE,
            (
                "    from torch.distributed.pipelining import Schedule1F1B\n"
                "    schedule = Schedule1F1B(stage, n_microbatches, loss_fn=F.mse_loss)"
            ),
        ),
        (
            "    blocks = list(model.layers[rank * per_stage:(rank + 1) * per_stage])  # key",
            "    blocks = [model.layers[i] for i in range(rank * per_stage, (rank + 1) * per_stage)]",
        ),
    )


def test_pp_summed_micro_batch_gradients_fail(mutant):
    assert_fails(
        mutant("pipeline", "loss_fn=F.mse_loss)  # key", "loss_fn=F.mse_loss, scale_grads=False)"),
        "were summed, not averaged",
    )


def test_pp_head_forgotten_fails(mutant):
    assert_fails(
        mutant("pipeline", "        blocks.append(model.head)  # key\n", "        pass\n"),
        "`head.weight` is in no rank's stage",
    )


def test_pp_whole_model_on_every_rank_fails(mutant):
    v = mutant(
        "pipeline",
        "    stage_module = nn.Sequential(*blocks)",
        "    stage_module = nn.Sequential(*model.layers, model.head) if rank == world - 1 else nn.Sequential(*model.layers)",
    )
    assert_fails(v, "is in the stages of 2 ranks")


def test_pp_copied_layers_fail(mutant):
    v = mutant(
        "pipeline",
        "    stage_module = nn.Sequential(*blocks)",
        "    import copy\n    stage_module = copy.deepcopy(nn.Sequential(*blocks))",
    )
    assert_fails(v, "not the model's own")


def test_pp_one_micro_batch_fails(mutant):
    assert_fails(
        mutant("pipeline", PP_SCHEDULE, PP_SCHEDULE.replace("n_microbatches=n_microbatches", "n_microbatches=1")),
        "micro-batches, expected n_microbatches=",
    )


def test_pp_sum_loss_fails(mutant):
    v = mutant("pipeline", "loss_fn=F.mse_loss)  # key", "loss_fn=lambda out, y: F.mse_loss(out, y, reduction='sum'))")
    reason = assert_fails(v)
    assert "micro-batch losses" in reason or "gradient of `" in reason, reason


# -- dcp-reshard -------------------------------------------------------------------------------

DCP_SAVE = "    dcp.save(model.state_dict(), checkpoint_id=path)  # key"
DCP_LOAD = "    dcp.load(state, checkpoint_id=path)  # key"


def test_dcp_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("dcp-reshard"))
    c = v.figures["checkpoint"]
    assert c["data_files"] == 2 and c["stored_in_one_piece"] == 0


def test_dcp_nested_state_and_local_load_passes(variant):
    # correct but different: the model's state under a "model" key, loaded by each process alone
    variant(
        "dcp-reshard",
        (DCP_SAVE, '    dcp.save({"model": model.state_dict()}, checkpoint_id=path)'),
        (
            "    state = model.state_dict()  # key\n" + DCP_LOAD + "\n    model.load_state_dict(state)",
            '    state = {"model": model.state_dict()}\n'
            "    dcp.load(state, checkpoint_id=path, no_dist=True)\n"
            '    model.load_state_dict(state["model"])',
        ),
    )


def test_dcp_full_tensors_saved_fails(mutant):
    v = mutant(
        "dcp-reshard",
        DCP_SAVE,
        "    dcp.save({k: v.full_tensor() for k, v in model.state_dict().items()}, checkpoint_id=path)",
    )
    assert_fails(v, "is stored as one full tensor", "not sharded")


def test_dcp_torch_save_on_rank_zero_fails(mutant):
    v = mutant(
        "dcp-reshard",
        DCP_SAVE,
        "    if torch.distributed.get_rank() == 0:\n        torch.save(model.state_dict(), path)",
    )
    assert_fails(v, "not a DCP checkpoint", "torch.save")


def test_dcp_only_rank_zero_saves_fails(mutant):
    v = mutant(
        "dcp-reshard",
        DCP_SAVE,
        "    if torch.distributed.get_rank() == 0:\n"
        "        dcp.save(model.state_dict(), checkpoint_id=path, no_dist=True)",
    )
    assert_fails(v, "1 data files, expected one per rank")


def test_dcp_loading_into_copies_fails(mutant):
    v = mutant("dcp-reshard", DCP_LOAD, "    dcp.load({k: v.clone() for k, v in state.items()}, checkpoint_id=path)")
    assert_fails(v, "in the unsharded model after load_full")


def test_dcp_torch_load_of_the_directory_fails(mutant):
    v = mutant(
        "dcp-reshard", DCP_LOAD + "\n    model.load_state_dict(state)", "    model.load_state_dict(torch.load(path))"
    )
    assert_fails(v, "load_full raised")


# -- tp-fsdp-2d --------------------------------------------------------------------------------

TP2D = '        parallelize_module(block, mesh["tp"], {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})  # key\n'
FS2D_BLOCK = '        fully_shard(block, mesh=mesh["dp"])  # key\n'
FS2D_ROOT = '    fully_shard(model, mesh=mesh["dp"])  # key\n'


def test_2d_solution_passes_on_both_mesh_shapes(solution_verdict):
    v = assert_passes(solution_verdict("tp-fsdp-2d", seeds=4))
    assert v.figures["parameters"]["this_rank"] < v.figures["parameters"]["whole_model"]


def test_2d_one_plan_for_the_whole_model_passes(variant):
    # correct but different: one parallelize_module call with wildcard names, then FSDP
    variant(
        "tp-fsdp-2d",
        (TP2D, ""),
        (
            "    for block in model.layers:\n",
            '    parallelize_module(model, mesh["tp"], {"layers.*.fc1": ColwiseParallel(),\n'
            '                                           "layers.*.fc2": RowwiseParallel()})\n'
            "    for block in model.layers:\n",
        ),
    )


def test_2d_meshes_swapped_fail(mutant):
    v = mutant(
        "tp-fsdp-2d",
        ('block, mesh["tp"], {', 'block, mesh["dp"], {'),
        ('fully_shard(block, mesh=mesh["dp"])', 'fully_shard(block, mesh=mesh["tp"])'),
        ('fully_shard(model, mesh=mesh["dp"])', 'fully_shard(model, mesh=mesh["tp"])'),
    )
    assert_fails(v, "expected ('dp',)")


def test_2d_fsdp_before_tp_fails(mutant):
    reason = assert_fails(mutant("tp-fsdp-2d", TP2D + FS2D_BLOCK, FS2D_BLOCK + TP2D))
    assert "parallelize_2d raised" in reason or "mesh dimensions" in reason, reason


def test_2d_without_root_fails(mutant):
    assert_fails(mutant("tp-fsdp-2d", FS2D_ROOT, ""), "root")


def test_2d_fc2_colwise_fails(mutant):
    v = mutant("tp-fsdp-2d", '"fc2": RowwiseParallel()', '"fc2": ColwiseParallel()')
    reason = assert_fails(v)
    assert "fc2.weight" in reason or "parallelize_2d raised" in reason, reason


def test_2d_no_tensor_parallel_fails(mutant):
    assert_fails(mutant("tp-fsdp-2d", TP2D, ""), "fc1.weight", "expected ('dp', 'tp')")
