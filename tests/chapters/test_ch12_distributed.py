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
    variant("tp-mlp", "    return parallelize_module(model, mesh, plan)",
            "    for block in model.layers:\n"
            "        parallelize_module(block, mesh, {\"w1\": ColwiseParallel(), \"w3\": ColwiseParallel(),\n"
            "                                         \"w2\": RowwiseParallel()})\n"
            "    return model")


def test_tp_styles_swapped_fails(mutant):
    v = mutant("tp-mlp", ('"layers.*.w1": ColwiseParallel()', '"layers.*.w1": RowwiseParallel()'),
               ('"layers.*.w3": ColwiseParallel()', '"layers.*.w3": RowwiseParallel()'),
               ('"layers.*.w2": RowwiseParallel()', '"layers.*.w2": ColwiseParallel()'))
    assert_fails(v, "w1.weight", "ColwiseParallel")


def test_tp_names_without_the_block_prefix_fail(mutant):
    v = mutant("tp-mlp", ('"layers.*.w1"', '"w1"'), ('"layers.*.w3"', '"w3"'), ('"layers.*.w2"', '"w2"'))
    assert_fails(v, "layers.0.w1.weight", "not sharded")


def test_tp_returning_none_fails(mutant):
    v = mutant("tp-mlp", "    return parallelize_module(model, mesh, plan)", "    parallelize_module(model, mesh, plan)")
    assert_fails(v, "returned None", "return it")


def test_tp_second_layer_colwise_fails(mutant):
    reason = assert_fails(mutant("tp-mlp", '"layers.*.w2": RowwiseParallel()', '"layers.*.w2": ColwiseParallel()'),
                          "w2.weight", "RowwiseParallel")
    assert reason.startswith("rank ")


def test_tp_forgetting_w3_fails(mutant):
    assert_fails(mutant("tp-mlp", '        "layers.*.w3": ColwiseParallel(),  # key\n', ""), "w3.weight", "not sharded")


def test_tp_only_first_layer_fails(mutant):
    v = mutant("tp-mlp", ('"layers.*.w1"', '"layers.0.w1"'), ('"layers.*.w3"', '"layers.0.w3"'),
               ('"layers.*.w2"', '"layers.0.w2"'))
    assert_fails(v, "layers.1.", "not sharded")


def test_tp_dtensor_output_fails(mutant):
    assert_fails(mutant("tp-mlp", 'RowwiseParallel()', 'RowwiseParallel(use_local_output=False)'), "use_local_output")


def test_tp_private_import_fails(mutant):
    v = mutant("tp-mlp", "from torch.distributed.device_mesh import DeviceMesh\n",
               "from torch.distributed.device_mesh import DeviceMesh\n"
               "from torch.distributed._tensor import Shard\n")
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
    variant("fsdp2-step",
            ("    optimizer.step()\n    optimizer.zero_grad()  # key\n", "    optimizer.step()\n"),
            ("    loss = F.mse_loss(", "    optimizer.zero_grad(set_to_none=True)\n    loss = F.mse_loss("),
            (SHARD_ROOT, "    fully_shard(model, mesh=mesh, reshard_after_forward=False)\n"))


def test_fsdp2_optimizer_before_sharding_fails(mutant):
    v = mutant("fsdp2-step",
               (SHARD_BLOCKS, "    optimizer = torch.optim.SGD(model.parameters(), lr=LR)\n" + SHARD_BLOCKS),
               (MAKE_OPT, "    return optimizer"))
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
    assert_fails(mutant("fsdp2-step", "    loss.backward()", "    (loss / 2).backward()"), "after step 1", "whole batch")


def test_fsdp2_returning_the_loss_with_its_graph_fails(mutant):
    assert_fails(mutant("fsdp2-step", "    return loss.detach()  # key", "    return loss"),
                 "still holds its autograd graph", "loss.detach()")


# -- fsdp-bf16 (2 CPU processes, gloo) ---------------------------------------------------------

POLICY = "    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)  # key"


def test_bf16_solution_passes_on_two_cpu_ranks(solution_verdict):
    v = assert_passes(solution_verdict("fsdp-bf16"))
    assert 0 < v.figures["max_param_difference_vs_fp32"] < 5e-3


def test_bf16_one_policy_object_per_call_passes(variant):
    # correct but different: an equal policy built for each call, float32 output on the root
    variant("fsdp-bf16",
            ("        fully_shard(layer, mesh=mesh, mp_policy=policy)  # key",
             "        fully_shard(layer, mesh=mesh, mp_policy=MixedPrecisionPolicy(torch.bfloat16, torch.float32))"),
            ("    fully_shard(model, mesh=mesh, mp_policy=policy)  # key",
             "    fully_shard(model, mesh=mesh, mp_policy=MixedPrecisionPolicy(\n"
             "        param_dtype=torch.bfloat16, reduce_dtype=torch.float32, output_dtype=torch.float32))"))


def test_bf16_reduce_dtype_left_unset_fails(mutant):
    v = mutant("fsdp-bf16", "reduce_dtype=torch.float32)", "reduce_dtype=None)")
    assert_fails(v, "reduce_dtype=torch.float32")


def test_bf16_root_without_policy_fails(mutant):
    v = mutant("fsdp-bf16", "    fully_shard(model, mesh=mesh, mp_policy=policy)  # key", "    fully_shard(model, mesh=mesh)")
    assert_fails(v, "root")


def test_bf16_blocks_without_policy_fail(mutant):
    v = mutant("fsdp-bf16", "        fully_shard(layer, mesh=mesh, mp_policy=policy)  # key",
               "        fully_shard(layer, mesh=mesh)")
    assert_fails(v, "model.layers[0]", "mp_policy=")


def test_bf16_model_cast_to_bfloat16_fails(mutant):
    v = mutant("fsdp-bf16", "    for layer in model.layers:\n", "    model.to(torch.bfloat16)\n    for layer in model.layers:\n")
    assert_fails(v, "float32")


def test_bf16_float16_compute_fails(mutant):
    v = mutant("fsdp-bf16", POLICY,
               "    policy = MixedPrecisionPolicy(param_dtype=torch.float16, reduce_dtype=torch.float32)")
    assert_fails(v, "float16", "expected torch.bfloat16")
