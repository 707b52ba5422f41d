"""Chapter 11 (quantization): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

from .conftest import assert_fails, assert_passes

pytestmark = pytest.mark.slow


# -- dynamic quantization ---------------------------------------------------------------------

QUANTIZE = "    return quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=torch.qint8)  # key"


def test_dynamic_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("quant-dynamic"))
    assert v.figures["state_dict_bytes"]["ratio"] >= 3.5
    assert v.figures["int8_vs_fp32_time"]["compares"] == "your int8 model vs the fp32 model"
    assert "deprecated" not in v.output  # the expected deprecation notices are filtered


def test_dynamic_copy_then_in_place_passes(variant):
    # correct but different: quantize a deep copy in place
    variant(
        "quant-dynamic",
        QUANTIZE,
        "    import copy\n"
        "    q = copy.deepcopy(model)\n"
        "    quantize_dynamic(q, {nn.LSTM: torch.ao.quantization.default_dynamic_qconfig,\n"
        "                         nn.Linear: torch.ao.quantization.default_dynamic_qconfig},\n"
        "                     dtype=torch.qint8, inplace=True)\n"
        "    return q",
    )


def test_dynamic_linear_only_leaves_lstm_fp32(mutant):
    assert_fails(mutant("quant-dynamic", "{nn.Linear, nn.LSTM}", "{nn.Linear}"), "`lstm` is still a float LSTM")


def test_dynamic_lstm_only_leaves_linears_fp32(mutant):
    assert_fails(mutant("quant-dynamic", "{nn.Linear, nn.LSTM}", "{nn.LSTM}"), "is still a float Linear", "nn.Linear")


def test_dynamic_float16_is_not_int8(mutant):
    assert_fails(mutant("quant-dynamic", "dtype=torch.qint8", "dtype=torch.float16"), "torch.qint8")


def test_dynamic_inplace_destroys_the_baseline(mutant):
    v = mutant("quant-dynamic", "dtype=torch.qint8)", "dtype=torch.qint8, inplace=True)")
    assert_fails(v, "in place", "fp32 baseline")


def test_dynamic_result_discarded_returns_the_fp32_model(mutant):
    v = mutant(
        "quant-dynamic",
        QUANTIZE,
        "    quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=torch.qint8)\n    return model",
    )
    assert_fails(v, "returned the fp32 model it was given, unquantized")


def test_dynamic_size_from_parameter_count_fails(mutant):
    v = mutant(
        "quant-dynamic",
        "    return os.path.getsize(path)",
        "    return sum(p.numel() * p.element_size() for p in model.parameters())",
    )
    assert_fails(v, "the file it wrote has")


def test_dynamic_saving_the_whole_model_fails(mutant):
    v = mutant("quant-dynamic", "    torch.save(model.state_dict(), path)  # key", "    torch.save(model, path)")
    assert_fails(v, "not the model's state_dict", "model.state_dict()")


# -- static quantization ----------------------------------------------------------------------


def test_static_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("quant-static"))
    acc = v.figures["accuracy"]
    assert acc["int8"] >= acc["fp32"] - 0.02


def test_static_with_quantize_helper_passes(variant):
    # correct but different: torch.ao.quantization.quantize runs prepare, calibration and convert
    variant(
        "quant-static",
        ("    prepared = prepare(model)  # key\n", ""),
        (
            "    with torch.no_grad():\n        for x, _ in calibration_loader:\n            prepared(x)  # key\n"
            "    return convert(prepared)",
            "    def calibrate(m, loader):\n"
            "        with torch.no_grad():\n"
            "            for x, _ in loader:\n"
            "                m(x)\n"
            "    return torch.ao.quantization.quantize(model, calibrate, [calibration_loader])",
        ),
    )


def test_static_without_calibration_fails(mutant):
    v = mutant("quant-static", "        for x, _ in calibration_loader:\n            prepared(x)", "        pass")
    assert_fails(v, "scale is 1.0", "calibration")


def test_static_calibrating_the_unprepared_model_fails(mutant):
    # prepare returns a copy with observers: running the original model teaches them nothing
    v = mutant("quant-static", "            prepared(x)  # key", "            model(x)")
    assert_fails(v, "scale is 1.0", "calibration")


def test_static_without_eval_fails(mutant):
    # the model arrives in training mode, as it would from a training loop
    assert_fails(mutant("quant-static", "    model.eval()  # key\n", ""), "training mode", "eval mode")


def test_static_fusion_result_discarded_fails(mutant):
    v = mutant("quant-static", "    model = fuse_modules(model, FUSE)  # key", "    fuse_modules(model, FUSE)")
    assert_fails(v, "not a fused LinearReLU", "returns the fused model")


def test_static_without_convert_fails(mutant):
    v = mutant("quant-static", "    return convert(prepared)", "    return prepared")
    assert_fails(v, "not an int8 module", "convert")


def test_static_dynamic_instead_fails(mutant):
    signature = "def quantize_static_int8(model: QuantMLP, calibration_loader) -> nn.Module:\n"
    v = mutant(
        "quant-static",
        signature,
        signature + "    from torch.ao.quantization import quantize_dynamic\n"
        "    return quantize_dynamic(model.eval(), {nn.Linear}, dtype=torch.qint8)\n",
    )
    assert_fails(v, "dynamic quantization")


# -- quantization-aware training --------------------------------------------------------------

TRAIN_LOOP = "    for _ in range(epochs):\n        train_epoch(prepared, loader, optimizer)\n"


def test_qat_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("quant-qat"))
    assert {"fp32", "qat_int8", "ptq_int8"} <= set(v.figures["accuracy"])


def test_qat_prepared_in_place_passes(variant):
    # correct but different: fuse and prepare in place, convert a model switched to eval inline
    variant(
        "quant-qat",
        ("    model = fuse_modules_qat(model, FUSE)  # key\n", "    fuse_modules_qat(model, FUSE, inplace=True)\n"),
        ("    return prepare_qat(model)", "    prepare_qat(model, inplace=True)\n    return model"),
        ("    prepared.eval()  # key\n    return convert(prepared)", "    return convert(prepared.eval())"),
    )


def test_qat_with_ptq_qconfig_has_no_fake_quant(mutant):
    v = mutant(
        "quant-qat", 'get_default_qat_qconfig("x86")', '__import__("torch").ao.quantization.get_default_qconfig("x86")'
    )
    assert_fails(v, "no FakeQuantize")


def test_qat_without_training_fails(mutant):
    v = mutant(
        "quant-qat", TRAIN_LOOP, "    with torch.no_grad():\n        for x, _ in loader:\n            prepared(x)\n"
    )
    assert_fails(v, "never called train_epoch")


def test_qat_hard_coded_learning_rate_fails(mutant):
    v = mutant("quant-qat", "lr=lr)  # key", "lr=1e-3)")
    assert_fails(v, "learning rate is 0.001", "use the lr argument")


def test_qat_fixed_number_of_epochs_fails(mutant):
    v = mutant("quant-qat", "    for _ in range(epochs):", "    for _ in range(2):")
    assert_fails(v, "train_epoch ran 2 times for epochs=3")


def test_qat_optimizer_over_the_unprepared_model_fails(mutant):
    # the optimizer is built before preparing: it holds the fp32 model's parameters
    v = mutant(
        "quant-qat",
        (
            "    prepared = prepare_for_qat(model)\n    optimizer = torch.optim.Adam(prepared.parameters(), lr=lr)  # key\n",
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n    prepared = prepare_for_qat(model)\n",
        ),
    )
    assert_fails(v, "optimizer holds parameters", "prepared model's parameters")


def test_qat_training_the_fp32_model_fails(mutant):
    # the learner trains the original model, then prepares and converts it: no fake quantization seen
    v = mutant(
        "quant-qat",
        (
            "    prepared = prepare_for_qat(model)\n    optimizer = torch.optim.Adam(prepared.parameters(), lr=lr)  # key\n",
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n",
        ),
        (
            TRAIN_LOOP,
            "    for _ in range(epochs):\n        train_epoch(model, loader, optimizer)\n"
            "    prepared = prepare_for_qat(model)\n",
        ),
    )
    assert_fails(v, "no FakeQuantize modules", "prepare_for_qat returns")


def test_qat_convert_in_training_mode_fails(mutant):
    assert_fails(mutant("quant-qat", "    prepared.eval()  # key\n", ""), "training mode", ".eval()")


def test_qat_without_fusion_fails(mutant):
    assert_fails(mutant("quant-qat", "    model = fuse_modules_qat(model, FUSE)  # key\n", ""), "fuse_modules_qat")
