"""Chapter 12 (tensor parallelism and FSDP): checks run through the runner's torchrun path with
2 CPU processes (gloo). Solutions pass; realistic mistakes fail with a reason naming them. The
2-GPU mixed-precision exercise is skipped here, and its checker is exercised on CPU/gloo."""

from pathlib import Path

import pytest

from .conftest import assert_fails, assert_passes, describe, mutate

pytestmark = pytest.mark.slow


# -- tp-mlp ------------------------------------------------------------------------------------

def test_tp_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("tp-mlp"))
    p = v.figures["parameters"]
    assert p["this_rank"] < p["whole_model"]


def test_tp_second_layer_colwise_fails(mutant):
    reason = assert_fails(mutant("tp-mlp", '"layers.*.w2": RowwiseParallel()', '"layers.*.w2": ColwiseParallel()'),
                          "w2.weight", "RowwiseParallel")
    assert reason.startswith("rank ")


def test_tp_forgetting_w3_fails(mutant):
    assert_fails(mutant("tp-mlp", '        "layers.*.w3": ColwiseParallel(),\n', ""), "w3.weight", "not sharded")


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

SHARD_BLOCKS = "    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)\n"
SHARD_ROOT = "    fully_shard(model, mesh=mesh)\n"


def test_fsdp2_solution_passes_on_two_ranks(solution_verdict):
    v = assert_passes(solution_verdict("fsdp2-step"))
    assert 0.4 <= v.figures["parameters"]["share"] <= 0.6


def test_fsdp2_optimizer_before_sharding_fails(mutant):
    v = mutant("fsdp2-step",
               (SHARD_BLOCKS, "    optimizer = torch.optim.SGD(model.parameters(), lr=LR)\n" + SHARD_BLOCKS),
               ("    return torch.optim.SGD(model.parameters(), lr=LR)", "    return optimizer"))
    assert_fails(v, "build the optimizer after sharding")


def test_fsdp2_only_root_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_BLOCKS, ""), "model.layers[0] is not its own FSDP unit")


def test_fsdp2_without_root_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_ROOT, ""), "root")


def test_fsdp2_root_first_fails(mutant):
    assert_fails(mutant("fsdp2-step", SHARD_BLOCKS + SHARD_ROOT, SHARD_ROOT + SHARD_BLOCKS), "setup_fsdp raised")


def test_fsdp2_no_zero_grad_fails_at_step_two(mutant):
    assert_fails(mutant("fsdp2-step", "    optimizer.zero_grad()\n", ""), "after step 2", "gradients cleared")


def test_fsdp2_zero_grad_first_is_fine(mutant):
    assert_passes(mutant("fsdp2-step",
                         ("    optimizer.step()\n    optimizer.zero_grad()\n", "    optimizer.step()\n"),
                         ("    loss = F.mse_loss(", "    optimizer.zero_grad()\n    loss = F.mse_loss(")))


def test_fsdp2_dividing_the_loss_by_world_size_fails(mutant):
    assert_fails(mutant("fsdp2-step", "    loss.backward()", "    (loss / 2).backward()"), "after step 1", "whole batch")


# -- fsdp-bf16 (2 CUDA GPUs) -------------------------------------------------------------------

def test_bf16_exercise_is_skipped_without_two_gpus(solution_verdict):
    v = solution_verdict("fsdp-bf16")
    assert v.status == "skipped" and "CUDA GPU" in v.reason, describe(v)


def _run_on_cpu(runner, course, tmp_path: Path, source: str):
    exercise = course.exercise("fsdp-bf16")
    path = tmp_path / "fsdp_bf16.py"
    path.write_text(source, encoding="utf-8")
    return runner.run(runner.request_for(exercise, path, device="cpu"))


def test_bf16_checker_passes_solution_on_cpu_gloo(runner, course, tmp_path, solution_text):
    assert_passes(_run_on_cpu(runner, course, tmp_path, solution_text("fsdp-bf16")))


@pytest.mark.parametrize("old,new,words", [
    ("reduce_dtype=torch.float32", "reduce_dtype=None", "reduce_dtype=torch.float32"),
    ("    fully_shard(model, mesh=mesh, mp_policy=policy)", "    fully_shard(model, mesh=mesh)", "root"),
    ("    for layer in model.layers:\n", "    model.to(torch.bfloat16)\n    for layer in model.layers:\n", "float32"),
])
def test_bf16_checker_catches_mistakes_on_cpu_gloo(runner, course, tmp_path, solution_text, old, new, words):
    assert_fails(_run_on_cpu(runner, course, tmp_path, mutate(solution_text("fsdp-bf16"), (old, new))), words)
