"""Chapter 10 (PyTorch Lightning): solutions pass; realistic learner mistakes fail with a
reason that points at the mistake. Every check trains a small model with a real Trainer."""

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


# -- lightning-module --------------------------------------------------------------------------

def test_module_solution_passes(check_code, solution_text):
    v = check_code("lightning-module", solution_text("lightning-module"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert v.figures["test_acc"] >= 0.9
    assert v.figures["lr"]["last"] < 0.02 * v.figures["lr"]["first"]


def test_module_training_step_without_return_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-module",
                    ("        return loss                          # Lightning runs backward and the optimizer step\n", ""))
    assert "weights did not change" in reason and "return the loss" in reason


def test_module_scheduler_stepped_per_epoch_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-module",
                    ('"interval": "step"', '"interval": "epoch"'))
    assert "interval" in reason and "'step'" in reason


def test_module_short_cosine_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-module",
                    ("T_max=self.trainer.estimated_stepping_batches", "T_max=10"))
    assert "estimated_stepping_batches" in reason


def test_module_without_save_hyperparameters_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-module",
                    ("        self.save_hyperparameters()", "        self.lr = lr"),
                    ("lr=self.hparams.lr", "lr=self.lr"))
    assert "save_hyperparameters" in reason


def test_module_accuracy_as_count_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-module",
                    ("(logits.argmax(dim=-1) == y).float().mean()", "(logits.argmax(dim=-1) == y).float().sum()"))
    assert "val_acc" in reason


def test_module_gradient_ascent_fails_on_accuracy(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-module",
                    ("        return loss                          #", "        return -loss  #"))
    assert "accuracy on fresh test data" in reason


# -- lightning-data-callbacks ------------------------------------------------------------------

def test_data_callbacks_solution_passes(check_code, solution_text):
    v = check_code("lightning-data-callbacks", solution_text("lightning-data-callbacks"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert v.figures["epochs"]["ran"] == v.figures["epochs"]["expected"]


def test_early_stopping_mode_max_on_a_loss_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-data-callbacks",
                    ('EarlyStopping(monitor="val_loss", mode="min"', 'EarlyStopping(monitor="val_loss", mode="max"'))
    assert "the run stopped after" in reason and "patience=" in reason


def test_early_stopping_patience_off_by_one_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-data-callbacks",
                    ("patience=patience)", "patience=patience + 1)"))
    assert "the run stopped after" in reason


def test_checkpoint_keeps_only_one_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-data-callbacks",
                    ("save_top_k=top_k", "save_top_k=1"))
    assert "checkpoint files" in reason


def test_checkpoint_mode_max_keeps_the_worst(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-data-callbacks",
                    ('ModelCheckpoint(dirpath=dirpath, monitor="val_loss", mode="min"',
                     'ModelCheckpoint(dirpath=dirpath, monitor="val_loss", mode="max"'))
    assert "kept checkpoints" in reason


def test_shuffled_validation_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-data-callbacks",
                    ("DataLoader(self.val_set, batch_size=self.hparams.batch_size)",
                     "DataLoader(self.val_set, batch_size=self.hparams.batch_size, shuffle=True)"))
    assert "do not shuffle validation" in reason


def test_unseeded_split_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-data-callbacks",
                    (",\n                                                    generator=split)", ")"))
    assert "same seed" in reason and "Generator" in reason


def test_off_by_one_validation_size_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-data-callbacks",
                    ("n_val = round(h.n * h.val_fraction)", "n_val = round(h.n * h.val_fraction) - 1"))
    assert "validation loader yields" in reason


# -- lightning-trainer-features ----------------------------------------------------------------

def test_trainer_solution_passes(check_code, solution_text):
    v = check_code("lightning-trainer-features", solution_text("lightning-trainer-features"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert v.figures["grad_norm"]["max_after"] <= v.figures["grad_norm"]["clip_norm"] * 1.001
    assert "GPU available" not in v.output   # quiet: no banner, no progress bar


def test_value_clipping_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-trainer-features",
                    ('gradient_clip_algorithm="norm"', 'gradient_clip_algorithm="value"'))
    assert "gradient_clip_algorithm" in reason


def test_fp16_mixed_on_cpu_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-trainer-features",
                    ('precision="bf16-mixed"', 'precision="16-mixed"'))
    assert "16-mixed" in reason and "bf16-mixed" in reason


def test_full_precision_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-trainer-features",
                    ('precision="bf16-mixed"', 'precision="32-true"'))
    assert "bf16-mixed" in reason


def test_fixed_accumulation_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-trainer-features",
                    ("accumulate_grad_batches=accumulate", "accumulate_grad_batches=5"))
    assert "accumulate_grad_batches" in reason


def test_callbacks_not_passed_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-trainer-features",
                    ("        callbacks=callbacks,\n", ""))
    assert "callbacks=callbacks" in reason


def test_progress_bar_left_on_fails(check_code, solution_text):
    reason = _fails(check_code, solution_text, "lightning-trainer-features",
                    ("        enable_progress_bar=False,\n", ""))
    assert "progress bar" in reason
