"""Chapter 12 (tensor parallelism and FSDP): checks run through the runner's torchrun path with
2 CPU processes (gloo). Solutions pass; realistic mistakes fail with a reason naming them. The
2-GPU mixed-precision exercise is skipped here, and its checker is exercised on CPU/gloo."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _mutate(source: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in source, f"mutation target not found: {old!r}"
        source = source.replace(old, new)
    return source


def _fails(check_code, solution_text, exercise, *pairs, status="failed"):
    v = check_code(exercise, _mutate(solution_text(exercise), *pairs))
    assert v.status == status, (v.status, v.reason, v.details, v.output[-2000:])
    return v.reason


# -- tp-mlp ------------------------------------------------------------------------------------

def test_tp_solution_passes_on_two_ranks(check_code, solution_text):
    v = check_code("tp-mlp", solution_text("tp-mlp"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    p = v.figures["parameters"]
    assert p["this_rank"] < p["whole_model"]


def test_tp_second_layer_colwise_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "tp-mlp",
                    ('"layers.*.w2": RowwiseParallel()', '"layers.*.w2": ColwiseParallel()'))
    assert "w2.weight" in reason and "RowwiseParallel" in reason and reason.startswith("rank ")


def test_tp_forgetting_w3_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "tp-mlp", ('        "layers.*.w3": ColwiseParallel(),\n', ""))
    assert "w3.weight" in reason and "not sharded" in reason


def test_tp_only_first_layer_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "tp-mlp",
                    ('"layers.*.w1"', '"layers.0.w1"'), ('"layers.*.w3"', '"layers.0.w3"'),
                    ('"layers.*.w2"', '"layers.0.w2"'))
    assert "layers.1." in reason and "not sharded" in reason


def test_tp_dtensor_output_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "tp-mlp",
                    ('RowwiseParallel()', 'RowwiseParallel(use_local_output=False)'))
    assert "use_local_output" in reason


def test_tp_private_import_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "tp-mlp",
                    ("from torch.distributed.device_mesh import DeviceMesh\n",
                     "from torch.distributed.device_mesh import DeviceMesh\n"
                     "from torch.distributed._tensor import Shard\n"))
    assert "torch.distributed._tensor" in reason and "public" in reason


# -- fsdp2-step --------------------------------------------------------------------------------

def test_fsdp2_solution_passes_on_two_ranks(check_code, solution_text):
    v = check_code("fsdp2-step", solution_text("fsdp2-step"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert 0.4 <= v.figures["parameters"]["share"] <= 0.6


def test_fsdp2_optimizer_before_sharding_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "fsdp2-step",
                    ("    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)\n",
                     "    optimizer = torch.optim.SGD(model.parameters(), lr=LR)\n"
                     "    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)\n"),
                    ("    return torch.optim.SGD(model.parameters(), lr=LR)", "    return optimizer"))
    assert "build the optimizer after sharding" in reason


def test_fsdp2_only_root_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "fsdp2-step",
                    ("    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)\n", ""))
    assert "model.layers[0] is not its own FSDP unit" in reason


def test_fsdp2_without_root_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "fsdp2-step", ("    fully_shard(model, mesh=mesh)\n", ""))
    assert "root" in reason


def test_fsdp2_root_first_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "fsdp2-step",
                    ("    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)\n"
                     "    fully_shard(model, mesh=mesh)\n",
                     "    fully_shard(model, mesh=mesh)\n"
                     "    for layer in model.layers:\n        fully_shard(layer, mesh=mesh)\n"))
    assert "setup_fsdp raised" in reason


def test_fsdp2_no_zero_grad_fails_at_step_two(check_code, solution_text):
    reason = _fails(check_code, solution_text, "fsdp2-step", ("    optimizer.zero_grad()\n", ""))
    assert "after step 2" in reason and "gradients cleared" in reason


def test_fsdp2_zero_grad_first_is_fine(check_code, solution_text):
    src = _mutate(solution_text("fsdp2-step"),
                  ("    optimizer.step()\n    optimizer.zero_grad()\n", "    optimizer.step()\n"),
                  ("    loss = F.mse_loss(", "    optimizer.zero_grad()\n    loss = F.mse_loss("))
    v = check_code("fsdp2-step", src)
    assert v.status == "passed", (v.reason, v.details)


def test_fsdp2_dividing_the_loss_by_world_size_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "fsdp2-step",
                    ("    loss.backward()", "    (loss / 2).backward()"))
    assert "after step 1" in reason and "whole batch" in reason


# -- fsdp-bf16 (2 CUDA GPUs) -------------------------------------------------------------------

def test_bf16_exercise_is_skipped_without_two_gpus(check_code, solution_text):
    v = check_code("fsdp-bf16", solution_text("fsdp-bf16"))
    assert v.status == "skipped" and "CUDA GPU" in v.reason


def _run_on_cpu(runner, course, tmp_path: Path, source: str):
    exercise = course.exercise("fsdp-bf16")
    path = tmp_path / "fsdp_bf16.py"
    path.write_text(source, encoding="utf-8")
    return runner.run(runner.request_for(exercise, path, device="cpu"))


def test_bf16_checker_passes_solution_on_cpu_gloo(runner, course, tmp_path, solution_text):
    v = _run_on_cpu(runner, course, tmp_path, solution_text("fsdp-bf16"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])


@pytest.mark.parametrize("old,new,words", [
    ("reduce_dtype=torch.float32", "reduce_dtype=None", "reduce_dtype=torch.float32"),
    ("    fully_shard(model, mesh=mesh, mp_policy=policy)", "    fully_shard(model, mesh=mesh)", "root"),
    ("    for layer in model.layers:\n", "    model.to(torch.bfloat16)\n    for layer in model.layers:\n", "float32"),
])
def test_bf16_checker_catches_mistakes_on_cpu_gloo(runner, course, tmp_path, solution_text, old, new, words):
    v = _run_on_cpu(runner, course, tmp_path, _mutate(solution_text("fsdp-bf16"), (old, new)))
    assert v.status == "failed" and words in v.reason, (v.reason, v.details)
