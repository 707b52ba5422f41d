"""Check: prepare_for_qat inserts fake quantization into a fused model in training mode;
quantization_aware_training trains it and converts it to int8 that keeps the fp32 accuracy (within
2 points) on a synthetic task generated from the run's seed. Reports fp32, QAT int8 and (for
comparison) post-training int8 accuracy."""

import copy

import torch
from torch import nn
from torch.ao.quantization import FakeQuantizeBase, convert, fuse_modules, get_default_qconfig, prepare
from torch.utils.data import DataLoader, TensorDataset

from _common import MAX_DROP, accuracy, quiet_quantization_warnings, trained_fp32_model


def ptq(model, x):
    model = fuse_modules(copy.deepcopy(model).eval(), [["fc1", "relu1"], ["fc2", "relu2"]])
    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)
    with torch.no_grad():
        prepared(x)
    return convert(prepared)


def check(ctx):
    quiet_quantization_warnings()
    mine = ctx.learner
    nnq, nniq = torch.ao.nn.quantized, torch.ao.nn.intrinsic.quantized
    model, acc32, (xtr, ytr), (xte, yte) = trained_fp32_model(ctx)

    ctx.phase("your prepare_for_qat")
    prepared = mine.prepare_for_qat(copy.deepcopy(model))
    ctx.expect(isinstance(prepared, nn.Module), f"prepare_for_qat returned {type(prepared).__name__}, "
                                                f"expected the prepared model")
    ctx.expect(prepared.training, "prepare_for_qat returned a model in eval mode: QAT trains it, so "
                                  "leave it in training mode")
    fake = [n for n, m in prepared.named_modules() if isinstance(m, FakeQuantizeBase)]
    ctx.expect(fake, "the prepared model has no FakeQuantize modules, so training would not see int8 "
                     "rounding: use get_default_qat_qconfig(\"x86\") and prepare_qat (a post-training "
                     "qconfig only inserts observers)")
    fc1 = prepared.get_submodule("fc1")
    ctx.expect(isinstance(fc1, torch.ao.nn.intrinsic.qat.LinearReLU),
               f"`fc1` of the prepared model is a {type(fc1).__name__}, expected a fused QAT LinearReLU: "
               f"fuse the FUSE pairs with fuse_modules_qat before prepare_qat")

    ctx.phase("your quantization_aware_training")
    loader = DataLoader(TensorDataset(xtr, ytr), batch_size=128, shuffle=True,
                        generator=torch.Generator().manual_seed(ctx.seed))
    # neither the default epochs (2) nor the default lr (1e-3): both arguments must be used
    epochs, lr = 3, ctx.choice([5e-4, 2e-3])
    calls = []
    given_train_epoch = mine.train_epoch

    def recording_train_epoch(m, data, optimizer):
        # what the learner's code hands to the given train_epoch, once per epoch
        calls.append((m, optimizer, [g["lr"] for g in optimizer.param_groups],
                      {id(p) for g in optimizer.param_groups for p in g["params"]}))
        return given_train_epoch(m, data, optimizer)

    mine.train_epoch = recording_train_epoch
    try:
        q = mine.quantization_aware_training(copy.deepcopy(model), loader, epochs=epochs, lr=lr)
    finally:
        mine.train_epoch = given_train_epoch
    ctx.expect(bool(calls), "quantization_aware_training never called train_epoch: fine-tune the "
                            "prepared model with the given train_epoch, once per epoch")
    ctx.expect(len(calls) == epochs,
               f"train_epoch ran {len(calls)} times for epochs={epochs}: train for the number of "
               f"epochs you are given")
    trained, optimizer, lrs, in_opt = calls[0]
    ctx.expect(any(isinstance(m, FakeQuantizeBase) for m in trained.modules()),
               "the model passed to train_epoch has no FakeQuantize modules: train the model that "
               "prepare_for_qat returns, so the weights adapt to the int8 rounding")
    ctx.expect(isinstance(optimizer, torch.optim.Adam),
               f"the optimizer is {type(optimizer).__name__}, expected torch.optim.Adam")
    ctx.expect(all(abs(x - lr) <= 1e-12 for x in lrs),
               f"the optimizer's learning rate is {lrs[0]:g}, but quantization_aware_training was "
               f"called with lr={lr:g}: use the lr argument")
    ctx.expect(in_opt == {id(p) for p in trained.parameters()},
               "the optimizer holds parameters that the model being trained does not use: "
               "prepare_for_qat returns a new model (fusing and preparing copy it), so build the "
               "optimizer from the prepared model's parameters, after preparing")
    ctx.expect(isinstance(q, nn.Module), f"quantization_aware_training returned {type(q).__name__}, "
                                         f"expected the int8 model")
    ctx.expect(not q.training, "the returned model is in training mode: call .eval() before convert")
    for name in ("fc1", "fc2", "fc3"):
        sub = q.get_submodule(name)
        ctx.expect(isinstance(sub, (nnq.Linear, nniq.LinearReLU)),
                   f"`{name}` of the returned model is a {type(sub).__module__}.{type(sub).__name__}, not "
                   f"an int8 module: convert the trained model with convert(...)")

    moved, total = 0, 0
    for name in ("fc1", "fc2", "fc3"):
        w8 = q.get_submodule(name).weight()
        step = w8.q_per_channel_scales().float()[:, None] if w8.qscheme() in (
            torch.per_channel_affine, torch.per_channel_symmetric) else float(w8.q_scale())
        w32 = model.get_submodule(name).weight.detach()
        moved += int(((w8.dequantize() - w32).abs() > 1.5 * step).sum())
        total += w32.numel()
    ctx.expect(moved >= 0.05 * total,
               f"only {moved} of {total} int8 weights differ from the fp32 weights by more than a "
               f"rounding step: the model was not trained after prepare_qat (train the prepared model "
               f"for the given number of epochs)")

    acc8 = accuracy(q, xte, yte)
    acc_ptq = accuracy(ptq(model, xtr[:512]), xte, yte)
    ctx.figure("accuracy", {"fp32": acc32, "qat_int8": acc8, "ptq_int8": acc_ptq})
    ctx.expect(acc8 >= acc32 - MAX_DROP,
               f"after QAT the int8 model reaches {acc8:.1%}, {100 * (acc32 - acc8):.1f} points below the "
               f"fp32 model ({acc32:.1%}); at most {100 * MAX_DROP:.0f} points are allowed")
