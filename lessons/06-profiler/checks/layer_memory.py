"""Check: layer_memory reports, for each top-level layer, the bytes its forward leaves allocated with
autograd on (the checker measures the same with its own profile), and hungriest_layer names the
largest. Models are random stacks whose largest layer changes from trial to trial."""

import math
from collections import OrderedDict

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function


class MLP(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.up, self.act, self.down = nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class Pairwise(nn.Module):
    """Squared differences between the first k features: a (batch, k, k) tensor saved for backward."""

    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = k

    def forward(self, x):
        z = x[:, : self.k]
        spread = (z[:, :, None] - z[:, None, :]).pow(2).mean(-1)
        return x * spread.mean(-1, keepdim=True)


class TokenMix(nn.Module):
    """Every row attends to every other row: a (batch, batch) attention matrix."""

    def forward(self, x):
        attn = torch.softmax(x @ x.T / math.sqrt(x.shape[-1]), dim=-1)
        return attn @ x


def _measure(model, x):
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        h = x
        for name, layer in model.named_children():
            with record_function(name):
                out = layer(h)
            h = out
    by_key = {e.key: e for e in prof.key_averages()}
    return {name: int(by_key[name].cpu_memory_usage) for name, _ in model.named_children()}


def _make(ctx):
    batch, d = ctx.choice([24, 40, 64, 96]), ctx.choice([48, 80, 128])
    layers = [("norm", nn.LayerNorm(d)),
              ("mlp", MLP(d, ctx.choice([256, 768, 1536]))),
              ("pairwise", Pairwise(ctx.choice([16, 32, 48]))),
              ("mix", TokenMix()),
              ("proj", nn.Linear(d, d))]
    order = torch.randperm(len(layers), generator=ctx.generator).tolist()
    model = nn.Sequential(OrderedDict(layers[i] for i in order))
    return model, ctx.randn(batch, d), f"batch {batch}, width {d}"


def _kb(n):
    return f"{n / 1024:.1f} KB"


def check(ctx):
    mine = ctx.learner
    winners = []
    for trial in ctx.trials(3):
        for _ in range(20):  # draw until the largest layer is clearly the largest
            model, x, desc = _make(ctx)
            expected = _measure(model, x)
            ranked = sorted(expected.values(), reverse=True)
            if ranked[0] >= 1.3 * ranked[1]:
                break
        top = max(expected, key=expected.get)
        winners.append(top)
        layout = " -> ".join(name for name, _ in model.named_children())
        where = f"trial {trial + 1} ({layout}; {desc})"

        got = mine.layer_memory(model, x)
        ctx.expect(isinstance(got, dict), f"layer_memory returned {type(got).__name__}, expected a dict "
                                          f"of layer name -> bytes")
        missing = [n for n in expected if n not in got]
        extra = [n for n in got if n not in expected]
        ctx.expect(not missing and not extra,
                   f"{where}: layer_memory has keys {sorted(got)}, expected the names of "
                   f"model.named_children(): {sorted(expected)}")
        ctx.expect(any(float(v) != 0 for v in got.values()),
                   f"{where}: every layer reports 0 bytes: profile with profile_memory=True, and read "
                   f"cpu_memory_usage (a label's self_cpu_memory_usage stays near 0: the ops inside it "
                   f"do the allocating)")
        with torch.no_grad():
            no_grad = _measure(model, x)
        for name in expected:
            value = got[name]
            ctx.expect(isinstance(value, (int, float)) and not isinstance(value, bool),
                       f"{where}: layer_memory[{name!r}] is a {type(value).__name__}, expected a number of bytes")
            if abs(value - expected[name]) <= 0.05 * abs(expected[name]) + 64:
                continue
            if abs(value - no_grad[name]) <= 0.05 * abs(no_grad[name]) + 64 and no_grad[name] != expected[name]:
                ctx.fail(f"{where}: layer {name!r} reports {_kb(value)}, the value measured under "
                         f"torch.no_grad(); with autograd on (as in training) it keeps {_kb(expected[name])}, "
                         f"including what it saves for backward. Profile without no_grad")
            if abs(value - 2 * expected[name]) <= 0.1 * abs(expected[name]) + 64:
                ctx.fail(f"{where}: layer {name!r} reports {_kb(value)}, twice the {_kb(expected[name])} "
                         f"of one forward pass: profile exactly one forward")
            ctx.fail(f"{where}: layer {name!r} reports {_kb(value)}, the checker measured "
                     f"{_kb(expected[name])} (the label's cpu_memory_usage, the table's \"CPU Mem\" "
                     f"column, which includes the ops inside the label)")

        name = mine.hungriest_layer(model, x)
        ctx.expect(name == top, f"{where}: hungriest_layer returned {name!r}, but {top!r} keeps the most "
                                f"memory ({_kb(expected[top])})")
        ctx.figure(f"layer_kb_trial{trial + 1}", {k: v / 1024 for k, v in expected.items()})
