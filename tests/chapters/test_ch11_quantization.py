"""Chapter 11 (quantization on torchao): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

from .conftest import assert_fails, assert_passes, describe

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


# -- quant-pt2e: which layers stay in float, under an accuracy budget and an int8 share ----------

SEARCH = "    for _ in linears:  # at most every layer back to float"
KEEP = "    keep: list[str] = []"


def test_pt2e_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("quant-pt2e"))
    plan = v.figures["plan"]
    assert list(plan.values()).count("float") == 1 and plan["fc1"].startswith("int8")
    acc = v.figures["accuracy"]
    assert acc["int8"] >= acc["fp32"] - acc["budget_points"] / 100
    assert v.figures["bytes_used"]["ratio"] > 1.3


def test_pt2e_weight_only_on_the_broken_layer_passes(variant):
    # correct but different (and better): the broken layer keeps an int8 weight, only its input float
    variant(
        "quant-pt2e",
        (
            "        quantizer.set_module_name_qconfig(name, None)  # key",
            "        from torchao.quantization.pt2e.quantizer import QuantizationConfig\n"
            "        w = get_default_x86_inductor_quantization_config().weight\n"
            "        quantizer.set_module_name_qconfig(name, QuantizationConfig(None, None, w, None))",
        ),
    )


def test_pt2e_one_layer_at_a_time_passes(variant):
    # correct but different: quantize each layer alone, keep in float those that alone cost too much;
    # calibration in one batch
    variant(
        "quant-pt2e",
        (
            SEARCH,
            "    for n in linears:\n"
            "        solo = X86InductorQuantizer()\n"
            "        solo.set_module_name_qconfig(n, get_default_x86_inductor_quantization_config())\n"
            "        p = prepare_pt2e(copy.deepcopy(graph), solo)\n"
            "        with torch.no_grad():\n"
            "            p(torch.cat(calibration))\n"
            "        if base - accuracy(convert_pt2e(p), *val) > max_drop / 2:\n"
            "            keep.append(n)\n"
            "    q = pt2e_int8(graph, calibration, keep)\n"
            "    for _ in []:",
        ),
    )


def test_pt2e_first_and_last_layers_in_float_fails(mutant):
    # the rule of thumb instead of a measurement: the broken layer is drawn per run
    v = mutant("quant-pt2e", (KEEP, '    keep: list[str] = ["fc1", "head"]'), (SEARCH, "    for _ in []:"), seeds=3)
    assert "still gets an int8 input" in v.reason or "of the Linear weights are stored in int8" in v.reason, v.reason


def test_pt2e_largest_layer_in_float_fails(mutant):
    v = mutant(
        "quant-pt2e",
        (KEEP, "    keep: list[str] = [max(linears, key=lambda n: model.get_submodule(n).weight.numel())]"),
        (SEARCH, "    for _ in []:"),
    )
    assert_fails(v, "still gets an int8 input")


def test_pt2e_dynamic_int8_everywhere_fails(mutant):
    # dynamic quantization picks the scale per batch, but still one per tensor: no rescue
    v = mutant(
        "quant-pt2e",
        (
            "    quantizer.set_global(get_default_x86_inductor_quantization_config())",
            "    quantizer.set_global(get_default_x86_inductor_quantization_config(is_dynamic=True))",
        ),
        (SEARCH, "    for _ in []:"),
    )
    assert_fails(v, "still gets an int8 input", "per-tensor scale")


def test_pt2e_calibrating_on_the_export_example_fails(mutant):
    v = mutant(
        "quant-pt2e",
        (
            "    q = pt2e_int8(graph, calibration, keep)",
            "    calibration = [example]\n    q = pt2e_int8(graph, calibration, keep)",
        ),
    )
    # the input range shows it, or (the search then keeps too much in float) the share reason says it
    assert_fails(v, "calibration batches you were given")


def test_pt2e_static_batch_fails(mutant):
    # without a dynamic batch the learner's own measurement on `val` trips export's guard
    v = mutant("quant-pt2e", ("dynamic_shapes=(batch,)", "dynamic_shapes=None"))
    assert v.status == "error" and "Guard failed" in (v.reason + v.output), describe(v)


def test_pt2e_graph_sharing_the_callers_tensors_fails(mutant):
    # the plan searched on copies, the final graph prepared on one exported from the caller's own
    # model (its mode restored): the float biases are the caller's tensors
    v = mutant(
        "quant-pt2e",
        ("    model = copy.deepcopy(model).eval()  # key", "    was = model.training\n    model = model.eval()"),
        (
            "    return q\n",
            "    final = X86InductorQuantizer()\n"
            "    final.set_global(get_default_x86_inductor_quantization_config())\n"
            "    for name in keep:\n"
            "        final.set_module_name_qconfig(name, None)\n"
            "    prepared = prepare_pt2e(graph, final)\n"
            "    with torch.no_grad():\n"
            "        for x in calibration:\n"
            "            prepared(x)\n"
            "    model.train(was)\n"
            "    return convert_pt2e(prepared)\n",
        ),
    )
    assert_fails(v, "changed when the caller's model was trained further", "copy.deepcopy")


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


def test_pt2e_every_linear_float_fails(mutant):
    v = mutant(
        "quant-pt2e",
        (
            "        quantizer.set_module_name_qconfig(name, None)  # key",
            "        quantizer.set_module_type_qconfig(nn.Linear, None)",
        ),
    )
    assert_fails(v, "every Linear stays in float", "either nothing was quantized")
