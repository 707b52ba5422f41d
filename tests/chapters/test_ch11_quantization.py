"""Chapter 11 (quantization): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

pytestmark = pytest.mark.slow


def _mutate(text: str, old: str, new: str) -> str:
    assert old in text, f"mutation anchor not found: {old!r}"
    return text.replace(old, new)


# -- dynamic quantization ---------------------------------------------------------------------

def test_dynamic_solution_passes(check_code, solution_text):
    v = check_code("quant-dynamic", solution_text("quant-dynamic"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert v.figures["state_dict_bytes"]["ratio"] >= 3.5
    assert "int8_vs_fp32_time" in v.figures
    assert "deprecated" not in v.output  # the expected deprecation notices are filtered


def test_dynamic_linear_only_leaves_lstm_fp32(check_code, solution_text):
    src = _mutate(solution_text("quant-dynamic"), "{nn.Linear, nn.LSTM}", "{nn.Linear}")
    v = check_code("quant-dynamic", src)
    assert v.status == "failed"
    assert "`lstm` is still a float LSTM" in v.reason


def test_dynamic_float16_is_not_int8(check_code, solution_text):
    src = _mutate(solution_text("quant-dynamic"), "dtype=torch.qint8", "dtype=torch.float16")
    v = check_code("quant-dynamic", src)
    assert v.status == "failed"
    assert "torch.qint8" in v.reason


def test_dynamic_inplace_destroys_the_baseline(check_code, solution_text):
    src = _mutate(solution_text("quant-dynamic"), "dtype=torch.qint8)", "dtype=torch.qint8, inplace=True)")
    v = check_code("quant-dynamic", src)
    assert v.status == "failed"
    assert "changed the fp32 model" in v.reason


def test_dynamic_size_from_parameter_count_fails(check_code, solution_text):
    src = _mutate(solution_text("quant-dynamic"),
                  "    return os.path.getsize(path)",
                  "    return sum(p.numel() * p.element_size() for p in model.parameters())")
    v = check_code("quant-dynamic", src)
    assert v.status == "failed"
    assert "the file it wrote has" in v.reason


# -- static quantization ----------------------------------------------------------------------

def test_static_solution_passes(check_code, solution_text):
    v = check_code("quant-static", solution_text("quant-static"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    acc = v.figures["accuracy"]
    assert acc["int8"] >= acc["fp32"] - 0.02


def test_static_without_calibration_fails(check_code, solution_text):
    src = _mutate(solution_text("quant-static"),
                  "        for x, _ in calibration_loader:\n            prepared(x)",
                  "        pass")
    v = check_code("quant-static", src)
    assert v.status == "failed"
    assert "scale is 1.0" in v.reason and "calibration" in v.reason


def test_static_without_convert_fails(check_code, solution_text):
    src = _mutate(solution_text("quant-static"), "    return convert(prepared)", "    return prepared")
    v = check_code("quant-static", src)
    assert v.status == "failed"
    assert "not an int8 module" in v.reason and "convert" in v.reason


def test_static_dynamic_instead_fails(check_code, solution_text):
    src = _mutate(solution_text("quant-static"),
                  "def quantize_static_int8(model: QuantMLP, calibration_loader) -> nn.Module:\n",
                  "def quantize_static_int8(model: QuantMLP, calibration_loader) -> nn.Module:\n"
                  "    from torch.ao.quantization import quantize_dynamic\n"
                  "    return quantize_dynamic(model.eval(), {nn.Linear}, dtype=torch.qint8)\n")
    v = check_code("quant-static", src)
    assert v.status == "failed"
    assert "dynamic quantization" in v.reason


# -- quantization-aware training --------------------------------------------------------------

def test_qat_solution_passes(check_code, solution_text):
    v = check_code("quant-qat", solution_text("quant-qat"))
    assert v.status == "passed", (v.reason, v.details, v.output[-2000:])
    assert {"fp32", "qat_int8", "ptq_int8"} <= set(v.figures["accuracy"])


def test_qat_with_ptq_qconfig_has_no_fake_quant(check_code, solution_text):
    src = _mutate(solution_text("quant-qat"), 'get_default_qat_qconfig("x86")',
                  '__import__("torch").ao.quantization.get_default_qconfig("x86")')
    v = check_code("quant-qat", src)
    assert v.status == "failed"
    assert "no FakeQuantize" in v.reason


def test_qat_without_training_fails(check_code, solution_text):
    src = _mutate(solution_text("quant-qat"),
                  "    for _ in range(epochs):\n        train_epoch(prepared, loader, optimizer)\n",
                  "    with torch.no_grad():\n        for x, _ in loader:\n            prepared(x)\n")
    v = check_code("quant-qat", src)
    assert v.status == "failed"
    assert "not trained" in v.reason


def test_qat_convert_in_training_mode_fails(check_code, solution_text):
    src = _mutate(solution_text("quant-qat"), "    prepared.eval()\n", "")
    v = check_code("quant-qat", src)
    assert v.status == "failed"
    assert "training mode" in v.reason and ".eval()" in v.reason


def test_qat_without_fusion_fails(check_code, solution_text):
    src = _mutate(solution_text("quant-qat"), "    model = fuse_modules_qat(model, FUSE)\n", "")
    v = check_code("quant-qat", src)
    assert v.status == "failed"
    assert "fuse_modules_qat" in v.reason
