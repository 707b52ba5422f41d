"""Chapter 10 (PyTorch Lightning): solutions pass; realistic learner mistakes fail with a
reason that points at the mistake. Every check trains a small model with a real Trainer."""

import pytest

from .conftest import assert_fails, assert_passes

pytestmark = pytest.mark.slow


# -- lightning-module --------------------------------------------------------------------------

RETURN_LOSS = "        return loss  # Lightning runs backward and the optimizer step\n"
LOG_VAL_LOSS = 'self.log("val_loss", F.cross_entropy(logits, y))'


def test_module_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("lightning-module"))
    assert v.figures["test_acc"] >= 0.9
    assert v.figures["lr"]["last"] < 0.02 * v.figures["lr"]["first"]


def test_module_hand_written_cosine_passes(variant):
    # correct but different: the cosine written out with LambdaLR, explicit logging options
    variant(
        "lightning-module",
        (
            "            optimizer, T_max=self.trainer.estimated_stepping_batches)  # key",
            "            optimizer, T_max=self.trainer.estimated_stepping_batches)\n"
            "        total = self.trainer.estimated_stepping_batches\n"
            "        scheduler = torch.optim.lr_scheduler.LambdaLR(\n"
            "            optimizer, lambda t: 0.5 * (1 + __import__('math').cos(__import__('math').pi * t / total)))",
        ),
        (LOG_VAL_LOSS, 'self.log("val_loss", F.cross_entropy(logits, y), on_step=False, on_epoch=True)'),
        ("(logits.argmax(dim=-1) == y).float().mean()", "(logits.argmax(dim=1) == y).sum() / len(y)"),
    )


def test_module_short_cosine_fails(mutant):
    v = mutant("lightning-module", "T_max=self.trainer.estimated_stepping_batches", "T_max=10")
    assert_fails(v, "estimated_stepping_batches")


def test_module_without_save_hyperparameters_fails(mutant):
    v = mutant(
        "lightning-module",
        ("        self.save_hyperparameters()  # key", "        self.lr = lr"),
        ("lr=self.hparams.lr", "lr=self.lr"),
    )
    assert_fails(v, "save_hyperparameters")


def test_module_adam_instead_of_adamw_fails(mutant):
    v = mutant("lightning-module", "torch.optim.AdamW(", "torch.optim.Adam(")
    assert_fails(v, "the optimizer is Adam", "AdamW")


def test_module_accuracy_as_count_fails(mutant):
    v = mutant(
        "lightning-module", "(logits.argmax(dim=-1) == y).float().mean()", "(logits.argmax(dim=-1) == y).float().sum()"
    )
    assert_fails(v, "the logged val_acc is", "mean over that batch")


def test_module_train_loss_not_logged_fails(mutant):
    v = mutant("lightning-module", '        self.log("train_loss", loss)\n', "")
    assert_fails(v, "`train_loss` was not logged")


def test_module_gradient_ascent_fails_on_accuracy(mutant):
    v = mutant("lightning-module", RETURN_LOSS, "        return -loss\n")
    # the returned loss is read off every step now, before the accuracy
    assert_fails(v, "training_step returned a loss of", "F.cross_entropy(logits, y)")


# -- lightning-data-callbacks ------------------------------------------------------------------


def test_data_callbacks_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("lightning-data-callbacks"))
    assert v.figures["epochs"]["ran"] == v.figures["epochs"]["expected"]


def test_data_callbacks_randperm_split_passes(variant):
    # correct but different: a seeded permutation and Subsets; default checkpoint file names
    variant(
        "lightning-data-callbacks",
        (
            "        self.train_set, self.val_set = random_split(TensorDataset(x, y), [h.n - n_val, n_val],  # key\n"
            "                                                    generator=split)",
            "        order = torch.randperm(h.n, generator=split).tolist()\n"
            "        data = TensorDataset(x, y)\n"
            "        self.val_set = torch.utils.data.Subset(data, order[:n_val])\n"
            "        self.train_set = torch.utils.data.Subset(data, order[n_val:])",
        ),
        (',  # key\n                        filename="{epoch}-{val_loss:.4f}")', ")"),
    )


def test_train_loader_drop_last_fails(mutant):
    v = mutant(
        "lightning-data-callbacks",
        "batch_size=self.hparams.batch_size, shuffle=True)",
        "batch_size=self.hparams.batch_size, shuffle=True, drop_last=True)",
    )
    assert_fails(v, "training loader yields", "drop_last")


def test_early_stopping_mode_max_on_a_loss_fails(mutant):
    v = mutant(
        "lightning-data-callbacks",
        'EarlyStopping(monitor="val_loss", mode="min"',
        'EarlyStopping(monitor="val_loss", mode="max"',
    )
    assert_fails(v, "the run stopped after", "patience=")


def test_early_stopping_patience_off_by_one_fails(mutant):
    v = mutant("lightning-data-callbacks", "patience=patience)", "patience=patience + 1)")
    assert_fails(v, "the run stopped after")


def test_checkpoint_keeps_only_one_fails(mutant):
    assert_fails(mutant("lightning-data-callbacks", "save_top_k=top_k", "save_top_k=1"), "checkpoint files")


def test_checkpoint_mode_max_keeps_the_worst(mutant):
    v = mutant(
        "lightning-data-callbacks",
        'ModelCheckpoint(dirpath=dirpath, monitor="val_loss", mode="min"',
        'ModelCheckpoint(dirpath=dirpath, monitor="val_loss", mode="max"',
    )
    assert_fails(v, "kept checkpoints")


def test_shuffled_validation_fails(mutant):
    v = mutant(
        "lightning-data-callbacks",
        "DataLoader(self.val_set, batch_size=self.hparams.batch_size)",
        "DataLoader(self.val_set, batch_size=self.hparams.batch_size, shuffle=True)",
    )
    assert_fails(v, "do not shuffle validation")


def test_off_by_one_validation_size_fails(mutant):
    v = mutant(
        "lightning-data-callbacks", "n_val = round(h.n * h.val_fraction)", "n_val = round(h.n * h.val_fraction) - 1"
    )
    assert_fails(v, "validation loader yields")


# -- lightning-trainer-features ----------------------------------------------------------------

PRECISION = 'precision="bf16-mixed",  # key'
MICRO = "micro = max(b for b in range(1, min(fits, effective_batch) + 1) if effective_batch % b == 0)  # key"
LIMIT = "        limit_train_batches=steps_per_epoch * accumulate,  # key\n"


def test_trainer_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("lightning-trainer-features"))
    for trial in (1, 2):
        plan = v.figures[f"plan_{trial}"]
        assert plan["activation_mb"] <= plan["budget_mb"]
        grads = v.figures[f"grad_norm_{trial}"]
        assert grads["max_after"] <= grads["max_grad_norm"] * 1.001 < grads["max_before_clipping"]
    assert "GPU available" not in v.output  # quiet: no banner, no progress bar


def test_trainer_accumulation_scheduler_callback_passes(variant):
    # correct but different (issue 20): accumulation through the GradientAccumulationScheduler
    # callback, which sets trainer.accumulate_grad_batches only once fit starts
    variant(
        "lightning-trainer-features",
        ("        accumulate_grad_batches=accumulate,\n", ""),
        (
            "        callbacks=callbacks,\n",
            "        callbacks=[*callbacks, __import__('pytorch_lightning').callbacks."
            "GradientAccumulationScheduler(scheduling={0: accumulate})],\n",
        ),
    )


def test_trainer_subset_of_whole_steps_passes(variant):
    # correct but different: the loader only holds the samples that fill whole steps
    variant(
        "lightning-trainer-features",
        (LIMIT, ""),
        (
            "    loader = DataLoader(train_set, batch_size=micro, shuffle=True)",
            "    keep = Subset(train_set, range(steps_per_epoch * effective_batch))\n"
            "    loader = DataLoader(keep, batch_size=micro, shuffle=True)",
        ),
        (
            "from torch.utils.data import DataLoader, Dataset",
            "from torch.utils.data import DataLoader, Dataset, Subset",
        ),
    )


def test_trainer_drop_last_does_not_fill_the_last_window(mutant):
    # drop_last drops a partial micro-batch, not a partial window
    v = mutant("lightning-trainer-features", (LIMIT, ""), ("shuffle=True)", "shuffle=True, drop_last=True)"))
    assert_fails(v, "last optimizer step of epoch 1", "whole steps")


def test_trainer_accumulate_counts_samples_not_batches(mutant):
    v = mutant(
        "lightning-trainer-features",
        ("        accumulate_grad_batches=accumulate,\n", "        accumulate_grad_batches=effective_batch,\n"),
    )
    assert_fails(v, "optimizer step 1 averaged", "expected effective_batch=")


def test_trainer_half_precision_weights_fail(mutant):
    v = mutant("lightning-trainer-features", PRECISION, 'precision="bf16-true",')
    assert_fails(v, "weights were torch.bfloat16", "'-mixed' precision")


def test_trainer_fp16_mixed_on_cpu_fails(mutant):
    v = mutant("lightning-trainer-features", PRECISION, 'precision="16-mixed",')
    assert_fails(v, "16-mixed", "bf16-mixed")


def test_trainer_max_epochs_ignored_fails(mutant):
    v = mutant("lightning-trainer-features", "max_epochs=max_epochs,", "max_epochs=1,")
    assert_fails(v, "optimizer steps per epoch", "max_epochs=")


def test_trainer_callbacks_not_passed_fails(mutant):
    assert_fails(mutant("lightning-trainer-features", "        callbacks=callbacks,\n", ""), "callbacks=callbacks")


def test_trainer_progress_bar_left_on_fails(mutant):
    # the call contract sees it first: Lightning appends its progress bar to the caller's callbacks list
    v = mutant("lightning-trainer-features", "        enable_progress_bar=False,\n", "")
    assert_fails(v, "plan_run(...)` left a change behind", "callbacks")


# -- found by blind solutions -------------------------------------------------------------------


def test_module_cosine_hard_coded_from_the_stubs_sizes_fails(mutant):
    # 4 epochs x 12 batches: the check's fits have 10 or 13 batches per epoch
    v = mutant("lightning-module", "T_max=self.trainer.estimated_stepping_batches", "T_max=4 * 12")
    assert_fails(v, "learning rate", "T_max")


def test_module_label_smoothed_loss_fails(mutant):
    v = mutant(
        "lightning-module",
        "loss = F.cross_entropy(self(x), y)",
        "loss = F.cross_entropy(self(x), y, label_smoothing=0.1)",
    )
    assert_fails(v, "training_step returned a loss of", "cross-entropy under the same weights")


def test_module_seeding_in_init_fails(mutant):
    v = mutant(
        "lightning-module",
        "        self.save_hyperparameters()  # key\n",
        "        self.save_hyperparameters()  # key\n        pl.seed_everything(0)\n",
    )
    assert_fails(v, "reseeded the caller's global random state", "pl.seed_everything")


def test_early_stopping_min_delta_fails(mutant):
    v = mutant("lightning-data-callbacks", "patience=patience)", "patience=patience, min_delta=0.01)")
    assert_fails(v, "the run stopped after", "however small")


def test_split_seeded_through_the_global_generator_fails(mutant):
    v = mutant(
        "lightning-data-callbacks",
        "        n_val = round(h.n * h.val_fraction)\n",
        "        n_val = round(h.n * h.val_fraction)\n        torch.manual_seed(h.seed)\n",
    )
    assert_fails(v, "reseeded or drew from the global random", "torch")


def test_datasets_built_only_for_fit_fail(mutant):
    v = mutant(
        "lightning-data-callbacks",
        "        h = self.hparams\n",
        '        if stage not in (None, "fit"):\n            return\n        h = self.hparams\n',
    )
    assert_fails(v, 'after setup("validate")', "whatever the stage")


def test_loader_without_shuffle_fails(mutant):
    v = mutant("lightning-trainer-features", "batch_size=micro, shuffle=True)", "batch_size=micro)")
    assert_fails(v, "same samples in the same order", "shuffle=True")
