"""Chapter 11 (quantization on torchao): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

from .conftest import assert_fails, assert_passes

pytestmark = pytest.mark.slow


# -- quant-layers: dynamic int8 or weight-only int8, layer by layer ----------------------------

DECIDE = "        if base - accuracy(quantize_with(model, trial), x, y) <= max_drop:  # key"


def test_layers_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("quant-layers"))
    assert v.figures["parameter_bytes"]["ratio"] >= 3.5
    acc = v.figures["accuracy"]
    assert acc["quantized"] >= acc["fp32"] - acc["budget_points"] / 100
    assert list(v.figures["plan"].values()).count("weight-only") == 1
    assert v.figures["quantized_vs_fp32_time"]["compares"].startswith("your quantized model vs the fp32 model")
    assert "Failed to load" not in v.output and "Enum subclass" not in v.output  # torchao's notices are quiet


def test_layers_activation_statistics_variant_passes(variant):
    # correct but different: find the layer with a huge input channel from activation statistics
    variant(
        "quant-layers",
        (
            "    base = accuracy(model, x, y)\n",
            "    peaks = {}\n"
            "    hooks = [m.register_forward_hook(lambda m, i, o, n=n: peaks.__setitem__(n, i[0].abs().amax(0)))\n"
            "             for n, m in model.named_modules() if isinstance(m, nn.Linear)]\n"
            "    with torch.no_grad():\n"
            "        model(x)\n"
            "    for h in hooks:\n"
            "        h.remove()\n",
        ),
        (DECIDE, "        if peaks[name].max() <= 50 * peaks[name].median():"),
    )


def test_layers_sensitive_layer_left_float_fails(mutant):
    v = mutant(
        "quant-layers",
        (
            '    quantize_(q, Int8WeightOnlyConfig(), filter_fn=lambda m, fqn: plan.get(fqn) == "weight-only")  # key\n',
            "",
        ),
    )
    assert_fails(v, "still has float weights", "weight-only int8")


def test_layers_bytes_without_zero_points_fails(mutant):
    v = mutant("quant-layers", ("(t.qdata, t.scale, t.zero_point)", "(t.qdata, t.scale)"))
    assert_fails(v, "model_bytes says")


# -- quant-pt2e: export, prepare, calibrate, convert --------------------------------------------

CALIBRATE = "            prepared(x)  # key"


def test_pt2e_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("quant-pt2e"))
    assert v.figures["graph_ops"]["quantize"] >= 3
    assert v.figures["input_range"]["calibration_covered"] >= 0.97
    acc = v.figures["accuracy"]
    assert acc["int8"] >= acc["fp32"] - 0.02
    assert v.figures["bytes_used"]["ratio"] > 3


def test_pt2e_calibrated_in_one_batch_passes(variant):
    # correct but different: one calibration pass over all batches at once, the eval copy made by train(False)
    variant(
        "quant-pt2e",
        ("    model = copy.deepcopy(model).eval()  # key", "    model = copy.deepcopy(model).train(False)"),
        ("        for x in calibration:\n            prepared(x)  # key", "        prepared(torch.cat(calibration))"),
    )


def test_pt2e_without_calibration_fails(mutant):
    v = mutant("quant-pt2e", ("        for x in calibration:\n" + CALIBRATE, "        pass"))
    assert_fails(v, "converted without calibration", "prepare_pt2e returned")


def test_pt2e_calibrating_on_random_data_fails(mutant):
    v = mutant("quant-pt2e", (CALIBRATE, "            prepared(torch.randn_like(x))"))
    assert_fails(v, "covers only", "calibration batches you were given")


def test_pt2e_eval_on_the_callers_model_fails(mutant):
    v = mutant("quant-pt2e", ("    model = copy.deepcopy(model).eval()  # key", "    model = model.eval()"))
    # the call contract sees it first: the caller's model left in eval mode
    assert_fails(v, "quantize_pt2e_int8(...)` left a change behind", "switched to eval mode")


# -- quant-qat-2bit: QAT where PTQ loses ----------------------------------------------------------

PREPARE = '    quantize_(model, QATConfig(base, step="prepare"))  # key\n'
CONVERT = '    quantize_(model, QATConfig(base, step="convert"))  # key\n'


def test_qat_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("quant-qat-2bit"))
    acc = v.figures["accuracy"]
    assert acc["qat_int2"] >= acc["ptq_int2"] + 0.10
    assert acc["ptq_int2"] <= acc["fp32"] - 0.10  # PTQ really loses here: QAT earns its cost


def test_qat_fake_quant_config_by_hand_passes(variant):
    # correct but different: the fake quantization spelled out (symmetric int2, one scale per row)
    # instead of inferred from the base config; the convert step is the same
    variant(
        "quant-qat-2bit",
        (
            PREPARE,
            "    from torchao.quantization.qat import IntxFakeQuantizeConfig\n"
            '    weights = IntxFakeQuantizeConfig(torch.int2, "per_channel", is_symmetric=True)\n'
            '    quantize_(model, QATConfig(weight_config=weights, step="prepare"))\n',
        ),
    )


def test_qat_prepare_with_int8_fails(mutant):
    v = mutant(
        "quant-qat-2bit",
        (
            PREPARE,
            "    quantize_(model, QATConfig(IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0)),"
            ' step="prepare"))\n',
        ),
    )
    assert_fails(v, "training simulates torch.int8 rounding", "same base config")


def test_qat_fixed_epochs_fails(mutant):
    v = mutant("quant-qat-2bit", ("    for _ in range(epochs):", "    for _ in range(2):"))
    assert_fails(v, "train_epoch ran 2 times for epochs=3")


def test_qat_in_place_fails(mutant):
    v = mutant("quant-qat-2bit", ("    model = copy.deepcopy(model)\n", ""))
    # the call contract sees it first: quantize_ swapped the caller's own weights
    assert_fails(v, "quantize_qat(...)` left a change behind", "in `model`")


def test_qat_converting_a_float_finetune_fails(mutant):
    # fine-tune in float, then quantize: PTQ with extra steps; caught by the spy before accuracy
    v = mutant("quant-qat-2bit", (PREPARE, ""), (CONVERT, "    quantize_(model, base)\n"))
    assert_fails(v, "has no fake quantization")


def test_qat_new_optimizer_every_epoch_fails(mutant):
    # a fresh Adam per epoch restarts its moments and bias correction: read off the calls
    v = mutant(
        "quant-qat-2bit",
        (
            "        train_epoch(model, loader, optimizer)",
            "        train_epoch(model, loader, torch.optim.Adam(model.parameters(), lr=lr))",
        ),
    )
    assert_fails(v, "different optimizers over 3 epochs", "the same one to every call")


def test_pt2e_calibrating_on_the_export_example_fails(mutant):
    v = mutant("quant-pt2e", ("        for x in calibration:\n" + CALIBRATE, "        prepared(example)"))
    assert_fails(v, "covers only", "calibration batches you were given")


def test_pt2e_no_copy_with_the_mode_restored_fails(mutant):
    v = mutant(
        "quant-pt2e",
        ("    model = copy.deepcopy(model).eval()  # key", "    was = model.training\n    model = model.eval()"),
        ("    return convert_pt2e(prepared)  # key", "    model.train(was)\n    return convert_pt2e(prepared)"),
    )
    assert_fails(v, "changed when the caller's model was trained further", "copy.deepcopy")
