"""Chapter 12 (tensor parallelism and FSDP): checks run through the runner's torchrun path with
2 CPU processes (gloo). Solutions pass; realistic mistakes fail with a reason naming them."""

import pytest

from .conftest import assert_fails, assert_passes

pytestmark = pytest.mark.slow


# -- tp-mlp ------------------------------------------------------------------------------------

REORDER = "            w.copy_(w.view(3, tp, -1, w.shape[1]).transpose(0, 1).reshape_as(w))  # key\n"
QKV = '            "attn.qkv": ColwiseParallel(),  # key\n'
SPLIT_QKV = (
    "class _SplitQKV(nn.Module):\n"
    "    def __init__(self, fused):\n"
    "        super().__init__()\n"
    "        d = fused.in_features\n"
    "        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))\n"
    "        with torch.no_grad():\n"
    "            for part, rows in zip((self.q, self.k, self.v), fused.weight.chunk(3)):\n"
    "                part.weight.copy_(rows)\n\n"
    "    def forward(self, x):\n"
    "        return torch.cat([self.q(x), self.k(x), self.v(x)], dim=-1)\n\n\n"
    "def parallelize_blocks("
)


def test_tp_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("tp-mlp"))
    p = v.figures["parameters"]
    assert p["this_rank"] < p["whole_model"]
    comm = v.figures["all_reduces_per_forward"]
    assert comm["yours"] == comm["budget"]


def test_tp_split_qkv_reduced_once_passes(variant):
    # correct but different: q, k, v as three layers behind one replicated DTensor input, so
    # their input gradients are summed before one all-reduce
    variant(
        "tp-mlp",
        ("def parallelize_blocks(", SPLIT_QKV),
        ("        w = attn.qkv.weight\n", "        attn.qkv = _SplitQKV(attn.qkv)\n"),
        ("        with torch.no_grad():\n" + REORDER, ""),
        (
            QKV,
            '            "attn.qkv": PrepareModuleInput(input_layouts=Replicate(), desired_input_layouts=Replicate(),\n'
            "                                           use_local_output=False),\n"
            '            "attn.qkv.q": ColwiseParallel(),\n'
            '            "attn.qkv.k": ColwiseParallel(),\n'
            '            "attn.qkv.v": ColwiseParallel(),\n',
        ),
        (
            "from torch.distributed.tensor.parallel import ColwiseParallel,",
            "from torch.distributed.tensor import Replicate\n"
            "from torch.distributed.tensor.parallel import PrepareModuleInput, ColwiseParallel,",
        ),
    )


def test_tp_one_plan_and_index_reorder_passes(variant):
    # correct but different: the rows reordered with an index, the heads counted from the
    # weight, one wildcard plan for the whole model
    variant(
        "tp-mlp",
        (
            REORDER,
            "            d = w.shape[1]\n"
            "            idx = torch.arange(3 * d).view(3, tp, d // tp).transpose(0, 1).reshape(-1)\n"
            "            attn.qkv.weight = nn.Parameter(w[idx].clone())\n",
        ),
        (
            "        attn.n_heads //= tp  # key: the heads of this rank's slice\n",
            "        attn.n_heads = attn.n_heads * (w.shape[1] // tp) // w.shape[1]\n",
        ),
        ("        parallelize_module(block, mesh, plan)\n", ""),
        (
            "    return model",
            '    parallelize_module(model, mesh, {f"layers.*.{k}": v for k, v in plan.items()})\n    return model',
        ),
    )


def test_tp_stub_like_colwise_everywhere_fails(mutant):
    # every projection column-wise: proj and fc2 then gather their outputs
    v = mutant(
        "tp-mlp",
        ('"attn.proj": RowwiseParallel()', '"attn.proj": ColwiseParallel()'),
        ('"mlp.fc2": RowwiseParallel()', '"mlp.fc2": ColwiseParallel()'),
    )
    assert_fails(v)


def test_tp_heads_from_the_job_size_fail(mutant):
    # the local head count from the job's size: right on the job's mesh, wrong on the 1-rank one
    v = mutant(
        "tp-mlp",
        (
            "        attn.n_heads //= tp  # key: the heads of this rank's slice\n",
            "        attn.n_heads //= torch.distributed.get_world_size()\n",
        ),
    )
    assert_fails(v, "on a mesh of one rank", "not from the job")


def test_tp_returns_nothing_fails(mutant):
    assert_fails(mutant("tp-mlp", "    return model", "    return None"), "returned None")


def test_tp_own_mesh_instead_of_the_argument_fails(mutant):
    v = mutant(
        "tp-mlp",
        "    tp = mesh.size()\n",
        "    from torch.distributed.device_mesh import init_device_mesh\n"
        "    import torch.distributed as dist\n"
        '    mesh = init_device_mesh("cpu", (dist.get_world_size(),))\n'
        "    tp = mesh.size()\n",
    )
    assert_fails(v, "not over the mesh it was given")


def test_tp_private_import_fails(mutant):
    v = mutant(
        "tp-mlp",
        "from torch.distributed.device_mesh import DeviceMesh\n",
        "from torch.distributed.device_mesh import DeviceMesh\nfrom torch.distributed._tensor import Shard\n",
    )
    assert_fails(v, "torch.distributed._tensor", "public")


def test_tp_heads_reorder_into_the_wrong_order_fails(mutant):
    # the rows reordered (tp, 3) -> (3, tp): a permutation, but not the one that gives rank r its q, k, v
    v = mutant(
        "tp-mlp", (REORDER, "            w.copy_(w.view(tp, 3, -1, w.shape[1]).transpose(0, 1).reshape_as(w))\n")
    )
    assert_fails(v, "differs from the unsharded")


# -- fsdp2-step --------------------------------------------------------------------------------

SHARD_BLOCKS = "    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)  # key\n"
SHARD_ROOT = "    fully_shard(model, mesh=mesh)  # key\n"
MAKE_OPT = "    return torch.optim.SGD(model.parameters(), lr=LR)  # key"


def test_fsdp2_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("fsdp2-step"))
    assert 0.4 <= v.figures["parameters"]["share"] <= 0.6


def test_fsdp2_zeroed_gradients_and_no_reshard_passes(variant):
    # correct but different: clear the gradients to zeros (set_to_none=False) instead of None; keep the
    # root's parameters gathered after forward (a memory/speed trade-off, same numbers). (Clearing
    # before the step instead leaves every step's gradients behind, which the stub's "leaving no
    # gradients behind" rules out: test_fsdp2_gradients_left_until_the_next_step_fail.)
    variant(
        "fsdp2-step",
        ("    optimizer.zero_grad()  # key\n", "    optimizer.zero_grad(set_to_none=False)\n"),
        (SHARD_ROOT, "    fully_shard(model, mesh=mesh, reshard_after_forward=False)\n"),
    )


def test_fsdp2_without_root_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_ROOT, ""), "root")


def test_fsdp2_root_first_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_BLOCKS + SHARD_ROOT, SHARD_ROOT + SHARD_BLOCKS), "setup_fsdp raised")


def test_fsdp2_dividing_the_loss_by_world_size_fails(mutant):
    assert_fails(
        mutant("fsdp2-step", "    loss.backward()", "    (loss / 2).backward()"), "after step 1", "whole batch"
    )


def test_fsdp2_default_mesh_fails(mutant):
    # fully_shard without mesh=: the default mesh of all ranks, wrong on the 1-rank mesh
    v = mutant(
        "fsdp2-step",
        (SHARD_BLOCKS, "    for layer in model.layers:\n        fully_shard(layer)\n"),
        (SHARD_ROOT, "    fully_shard(model)\n"),
    )
    assert_fails(v, "not over the mesh it was given", "mesh=mesh")


def test_fsdp2_momentum_fails(mutant):
    v = mutant("fsdp2-step", MAKE_OPT, "    return torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)")
    assert_fails(v, "momentum=0.9", "plain torch.optim.SGD")


def test_fsdp2_gradients_left_until_the_next_step_fail(mutant):
    # clearing at the start of the step: the updates are right, but every call leaves its gradients behind
    v = mutant(
        "fsdp2-step",
        ("    optimizer.step()\n    optimizer.zero_grad()  # key\n", "    optimizer.step()\n"),
        ("    loss = F.mse_loss(", "    optimizer.zero_grad()\n    loss = F.mse_loss("),
    )
    assert_fails(v, "still has a gradient after train_step", "clear the gradients after the step")


def test_fsdp2_blocks_found_by_their_class_passes(variant):
    # correct but different: the blocks found with isinstance on the file's own Block class
    variant(
        "fsdp2-step",
        SHARD_BLOCKS,
        SHARD_BLOCKS.replace("model.layers:", "[m for m in model.modules() if isinstance(m, Block)]:"),
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


def test_bf16_blocks_without_policy_fail(mutant):
    v = mutant(
        "fsdp-bf16",
        "        fully_shard(layer, mesh=mesh, mp_policy=policy)  # key",
        "        fully_shard(layer, mesh=mesh)",
    )
    assert_fails(v, "model.layers[0]", "mp_policy=")


def test_bf16_float16_compute_fails(mutant):
    v = mutant(
        "fsdp-bf16", POLICY, "    policy = MixedPrecisionPolicy(param_dtype=torch.float16, reduce_dtype=torch.float32)"
    )
    assert_fails(v, "float16", "expected torch.bfloat16")


def test_bf16_default_mesh_fails(mutant):
    v = mutant(
        "fsdp-bf16",
        ("        fully_shard(layer, mesh=mesh, mp_policy=policy)", "        fully_shard(layer, mp_policy=policy)"),
        ("    fully_shard(model, mesh=mesh, mp_policy=policy)", "    fully_shard(model, mp_policy=policy)"),
    )
    assert_fails(v, "not over the mesh it was given")


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


def test_ddp_one_pass_over_the_concatenated_batch_fails(mutant):
    # one forward and backward over all micro-batches: the numbers and the single all-reduce are
    # right, the activation memory accumulation saves is spent anyway
    v = mutant(
        "ddp-accum",
        "    n = len(micro_batches)\n",
        "    x = torch.cat([a for a, _ in micro_batches])\n"
        "    y = torch.cat([b for _, b in micro_batches])\n"
        "    loss = F.mse_loss(model(x), y)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n"
        "    return loss.detach()\n"
        "    n = len(micro_batches)\n",
    )
    assert_fails(v, "rows at once", "one micro-batch at a time")


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


def test_pp_whole_model_on_every_rank_fails(mutant):
    v = mutant(
        "pipeline",
        "    stage_module = nn.Sequential(*blocks)",
        "    stage_module = nn.Sequential(*model.layers, model.head) if rank == world - 1 else nn.Sequential(*model.layers)",
    )
    assert_fails(v, "is in the stages of 2 ranks")


def test_pp_one_micro_batch_fails(mutant):
    assert_fails(
        mutant("pipeline", PP_SCHEDULE, PP_SCHEDULE.replace("n_microbatches=n_microbatches", "n_microbatches=1")),
        "micro-batches, expected n_microbatches=",
    )


def test_pp_sum_loss_fails(mutant):
    v = mutant("pipeline", "loss_fn=F.mse_loss)  # key", "loss_fn=lambda out, y: F.mse_loss(out, y, reduction='sum'))")
    reason = assert_fails(v)
    assert "micro-batch losses" in reason or "gradient of `" in reason, reason


def test_pp_split_fixed_for_two_ranks_fails(mutant):
    # first half on rank 0, the rest and the head elsewhere: right for two stages only
    v = mutant(
        "pipeline",
        (
            "    blocks = list(model.layers[rank * per_stage:(rank + 1) * per_stage])  # key",
            "    half = len(model.layers) // 2\n"
            "    blocks = list(model.layers[:half] if rank == 0 else model.layers[half:])",
        ),
    )
    assert_fails(v, "for a pipeline of", "stages")


def test_pp_blocks_dealt_round_robin_fails(mutant):
    v = mutant(
        "pipeline",
        "    blocks = list(model.layers[rank * per_stage:(rank + 1) * per_stage])  # key",
        "    blocks = list(model.layers[rank::world])",
    )
    assert_fails(v, "evenly in order")


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


def test_dcp_loading_into_copies_fails(mutant):
    v = mutant("dcp-reshard", DCP_LOAD, "    dcp.load({k: v.clone() for k, v in state.items()}, checkpoint_id=path)")
    assert_fails(v, "in the unsharded model after load_full")


def test_dcp_torch_load_of_the_directory_fails(mutant):
    v = mutant(
        "dcp-reshard", DCP_LOAD + "\n    model.load_state_dict(state)", "    model.load_state_dict(torch.load(path))"
    )
    assert_fails(v, "load_full raised")


def test_dcp_load_that_swaps_in_new_parameters_fails(mutant):
    v = mutant(
        "dcp-reshard",
        "    state = model.state_dict()  # key\n" + DCP_LOAD + "\n    model.load_state_dict(state)",
        "    state = {k: torch.empty_like(v) for k, v in model.state_dict().items()}\n"
        "    dcp.load(state, checkpoint_id=path)\n"
        "    model.load_state_dict(state, assign=True)",
    )
    assert_fails(v, "replaced the unsharded model's", "in place")


def test_dcp_save_that_clears_the_directory_fails(mutant):
    v = mutant(
        "dcp-reshard",
        DCP_SAVE,
        "    import os, shutil\n"
        "    if torch.distributed.get_rank() == 0 and os.path.isdir(path):\n"
        "        shutil.rmtree(path)\n"
        "    torch.distributed.barrier()\n" + DCP_SAVE,
    )
    assert_fails(v, "run_notes.txt")


# -- tp-fsdp-2d --------------------------------------------------------------------------------

TP2D = "        parallelize_module(block, tp_mesh, plan)  # key\n"
FS2D_BLOCK = "        fully_shard(block, mesh=dp_mesh)  # key\n"
QKV2D = '            "attn.qkv": ColwiseParallel(),\n'
REORDER2D = "            w.copy_(w.view(3, tp, -1, w.shape[1]).transpose(0, 1).reshape_as(w))  # key\n"
SPLIT_QKV2D = SPLIT_QKV.replace("def parallelize_blocks(", "def parallelize_2d(")


def test_2d_solution_passes_on_both_mesh_shapes(solution_verdict):
    v = assert_passes(solution_verdict("tp-fsdp-2d", seeds=2))
    assert v.figures["parameters"]["this_rank"] < v.figures["parameters"]["whole_model"]
    shapes = {tuple(v.figures[k]["mesh_dp_x_tp"]) for k in ("parameters", "parameters_other_mesh")}
    assert shapes == {(1, 2), (2, 1)}


def test_2d_one_plan_for_the_whole_model_passes(variant):
    # correct but different: the rows reordered in the loop, then one wildcard plan for the
    # whole model, then FSDP block by block
    variant(
        "tp-fsdp-2d",
        (TP2D + FS2D_BLOCK, ""),
        (
            "    fully_shard(model, mesh=dp_mesh)  # key\n",
            '    parallelize_module(model, tp_mesh, {f"layers.*.{k}": v for k, v in plan.items()})\n'
            "    for block in model.layers:\n"
            "        fully_shard(block, mesh=dp_mesh)\n"
            "    fully_shard(model, mesh=dp_mesh)\n",
        ),
    )


def test_2d_split_qkv_reduced_once_passes(variant):
    # correct but different: q, k, v as three layers behind one replicated DTensor input
    variant(
        "tp-fsdp-2d",
        ("def parallelize_2d(", SPLIT_QKV2D),
        ("        w = block.attn.qkv.weight\n", "        block.attn.qkv = _SplitQKV(block.attn.qkv)\n"),
        ("        with torch.no_grad():  # rank r's Shard(0) rows become its own q, k and v slices\n" + REORDER2D, ""),
        (
            QKV2D,
            '            "attn.qkv": PrepareModuleInput(input_layouts=Replicate(), desired_input_layouts=Replicate(),\n'
            "                                           use_local_output=False),\n"
            '            "attn.qkv.q": ColwiseParallel(),\n'
            '            "attn.qkv.k": ColwiseParallel(),\n'
            '            "attn.qkv.v": ColwiseParallel(),\n',
        ),
        (
            "from torch.distributed.tensor.parallel import ColwiseParallel,",
            "from torch.distributed.tensor import Replicate\n"
            "from torch.distributed.tensor.parallel import PrepareModuleInput, ColwiseParallel,",
        ),
    )


def test_2d_split_qkv_three_reductions_fails(mutant):
    v = mutant(
        "tp-fsdp-2d",
        ("def parallelize_2d(", SPLIT_QKV2D),
        ("        w = block.attn.qkv.weight\n", "        block.attn.qkv = _SplitQKV(block.attn.qkv)\n"),
        ("        with torch.no_grad():  # rank r's Shard(0) rows become its own q, k and v slices\n" + REORDER2D, ""),
        (
            QKV2D,
            '            "attn.qkv.q": ColwiseParallel(),\n            "attn.qkv.k": ColwiseParallel(),\n'
            '            "attn.qkv.v": ColwiseParallel(),\n',
        ),
    )
    assert_fails(v, "one backward pass", "over the budget")


def test_2d_replicated_hidden_fails(mutant):
    v = mutant(
        "tp-fsdp-2d",
        ('"mlp.fc1": ColwiseParallel()', '"mlp.fc1": ColwiseParallel(output_layouts=Replicate())'),
        ('"mlp.fc2": RowwiseParallel()', '"mlp.fc2": RowwiseParallel(input_layouts=Replicate())'),
        ("import torch.nn as nn\n", "import torch.nn as nn\nfrom torch.distributed.tensor import Replicate\n"),
    )
    assert_fails(v, "one forward pass", "all_gather_into_tensor")


def test_2d_fsdp_before_tp_fails(mutant):
    reason = assert_fails(mutant("tp-fsdp-2d", TP2D + FS2D_BLOCK, FS2D_BLOCK + TP2D))
    assert "parallelize_2d raised" in reason or "mesh dimensions" in reason, reason


def test_2d_fixed_mesh_of_its_own_fails(mutant):
    # a 1 x world mesh built inside: right on the 1x2 mesh only (the check runs both shapes)
    v = mutant(
        "tp-fsdp-2d",
        '    tp_mesh, dp_mesh = mesh["tp"], mesh["dp"]\n',
        "    from torch.distributed.device_mesh import init_device_mesh\n"
        "    import torch.distributed as dist\n"
        '    mesh = init_device_mesh("cpu", (1, dist.get_world_size()), mesh_dim_names=("dp", "tp"))\n'
        '    tp_mesh, dp_mesh = mesh["tp"], mesh["dp"]\n',
    )
    assert_fails(v, "not a mesh of your own")


# -- code that assumes two ranks (these four checks run with 2 processes, then with 4) ---------
# Each mutant is right with 2 ranks and wrong with any other number: before the checks ran a
# second world size these passed. The reason must name the size it failed at.

FOUR = "with 4 processes: "


def test_ddp_group_of_the_first_two_ranks_fails_with_4_processes(mutant):
    # "the two ranks" spelled out as a process group: with 4 ranks, ranks 2 and 3 are outside it
    v = mutant(
        "ddp-accum",
        "    return DDP(model)  # key",
        "    import torch.distributed as dist\n    return DDP(model, process_group=dist.new_group([0, 1]))",
    )
    assert_fails(v, FOUR, "make_ddp")


def test_ddp_loss_scaled_for_two_ranks_fails_with_4_processes(mutant):
    # divides by the global number of micro-batches, then "corrects" by the 2 that made it pass
    v = mutant(
        "ddp-accum",
        (DDP_LOOP_BACKWARD, "            (loss * 2 / (n * torch.distributed.get_world_size())).backward()"),
        (DDP_LAST_BACKWARD, "    (loss * 2 / (n * torch.distributed.get_world_size())).backward()\n"),
    )
    assert_fails(v, FOUR, "gradient of `", "whole global batch")


def test_pp_stage_group_of_the_first_two_ranks_fails_with_4_processes(mutant):
    # (a split fixed for two ranks fails with 2 already: test_pp_split_fixed_for_two_ranks_fails
    # builds the stages of a longer pipeline)
    v = mutant(
        "pipeline",
        'num_stages=world, device=torch.device("cpu"))',
        'num_stages=world, device=torch.device("cpu"),\n'
        "                         group=torch.distributed.new_group([0, 1]))",
    )
    # rejected (an error: ranks 2 and 3 step a stage whose group they are not in), naming the size
    assert v.reason.startswith(FOUR) and "process group" in v.reason, v.reason


def test_fsdp2_learning_rate_scaled_from_two_ranks_fails_with_4_processes(mutant):
    # the linear scaling rule applied against a 2-rank baseline: LR only where world == 2
    v = mutant(
        "fsdp2-step",
        MAKE_OPT,
        "    import torch.distributed as dist\n"
        "    return torch.optim.SGD(model.parameters(), lr=LR * dist.get_world_size() / 2)",
    )
    assert_fails(v, FOUR, "learning rate")


def test_dcp_save_over_the_first_two_ranks_fails_with_4_processes(mutant):
    v = mutant(
        "dcp-reshard",
        DCP_SAVE,
        "    import torch.distributed as dist\n"
        "    group = dist.new_group([0, 1])\n"
        "    if dist.get_rank() < 2:\n"
        "        dcp.save(model.state_dict(), checkpoint_id=path, process_group=group)",
    )
    assert v.reason.startswith(FOUR), v.reason
