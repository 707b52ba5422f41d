"""Check: layer_memory reports, for each top-level layer, the bytes its forward leaves allocated with
autograd on (the checker measures the same with its own profile), and hungriest_layer names the
largest. Models are random stacks whose largest layer changes from trial to trial; a Linear is
always followed by a layer that saves nothing for backward, so dropping the previous activation
inside a label (instead of after it) always shows. The learner's layer calls are watched with
forward pre-hooks (grad mode, profiler on), so a reason says what the learner did."""

import math
from collections import OrderedDict

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

from _common import watch_profilers


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


class Shift(nn.Module):
    """Adds a constant: autograd saves nothing for it, so its input is garbage once it has run."""

    def forward(self, x):
        return x + 1.0


class TokenMix(nn.Module):
    """Every row attends to every other row: a (batch, batch) attention matrix."""

    def forward(self, x):
        attn = torch.softmax(x @ x.T / math.sqrt(x.shape[-1]), dim=-1)
        return attn @ x


def _measure(model, x, inside=False, column="cpu_memory_usage"):
    """Bytes per top-level layer, as the task defines them; `inside=True` hands the output on
    inside the label (the mistake), `column` picks the profiler column."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        h = x
        for name, layer in model.named_children():
            with record_function(name):
                out = layer(h)
                if inside:
                    h = out
            h = out
    by_key = {e.key: e for e in prof.key_averages()}
    return {name: int(getattr(by_key[name], column)) for name, _ in model.named_children()}


def _output_bytes(model, x):
    sizes, h = {}, x
    with torch.no_grad():
        for name, layer in model.named_children():
            h = layer(h)
            sizes[name] = h.numel() * h.element_size()
    return sizes


def _make(ctx):
    batch, d = ctx.choice([24, 40, 64, 96]), ctx.choice([48, 80, 128])
    layers = [("norm", nn.LayerNorm(d)),
              ("mlp", MLP(d, ctx.choice([256, 768, 1536]))),
              ("pairwise", Pairwise(ctx.choice([16, 32, 48]))),
              ("mix", TokenMix()),
              ("proj", nn.Linear(d, d))]
    order = torch.randperm(len(layers), generator=ctx.generator).tolist()
    named = [layers[i] for i in order]
    at = [n for n, _ in named].index("proj") + 1
    named.insert(at, ("shift", Shift()))  # proj's output is needed by nothing once shift has run
    model = nn.Sequential(OrderedDict(named))
    return model, ctx.randn(batch, d), ctx.t("batch {batch}, width {d}", batch=batch, d=d)


def _kb(n):
    return f"{n / 1024:.1f} KB"


def _close(a, b, rel=0.05):
    return abs(a - b) <= rel * abs(b) + 64


def check(ctx):
    mine = ctx.learner
    for trial in ctx.trials(3):
        for _ in range(20):  # draw until the largest layer is clearly the largest
            model, x, desc = _make(ctx)
            expected = _measure(model, x)
            ranked = sorted(expected.values(), reverse=True)
            if ranked[0] >= 1.3 * ranked[1]:
                break
        top = max(expected, key=expected.get)
        # The second model is handed over in eval mode (these layers behave the same in both):
        # autograd on is a grad-mode matter, and the caller's module mode must come back as it was.
        model.train(trial != 1)
        layout = " -> ".join(name for name, _ in model.named_children())
        where = ctx.t("trial {n} ({layout}; {desc})", n=trial + 1, layout=layout, desc=desc)

        calls = []
        hooks = [layer.register_forward_pre_hook(
            lambda *_, calls=calls: calls.append((torch._C._autograd._profiler_enabled(), torch.is_grad_enabled())))
            for layer in model.children()]
        try:
            got, profs = watch_profilers(lambda m=model, x=x: mine.layer_memory(m, x))
        finally:
            for hook in hooks:
                hook.remove()
        ctx.expect(isinstance(got, dict), ctx.t("layer_memory returned {type}, expected a dict of layer name -> "
                                                "bytes", type=type(got).__name__))
        missing = [n for n in expected if n not in got]
        extra = [n for n in got if n not in expected]
        ctx.expect(not missing and not extra,
                   ctx.t("{where}: layer_memory has keys {got}, expected the names of model.named_children(): "
                         "{want}", where=where, got=sorted(got), want=sorted(expected)))
        keys = sorted(map(str, got))
        ctx.expect_equal(ctx.t("{where}: the keys of layer_memory's dict, sorted", where=where), keys, keys)
        for name in expected:
            value = got[name]
            ctx.expect(isinstance(value, (int, float)) and not isinstance(value, bool),
                       ctx.t("{where}: layer_memory[{name!r}] is a {type}, expected a number of bytes",
                             where=where, name=name, type=type(value).__name__))
        profiled = [grad for on, grad in calls if on]
        n_layers = len(expected)
        ctx.expect(profiled, ctx.t("{where}: none of the layers ran while a profiler was recording: call them "
                                   "inside `with profile(..., profile_memory=True)`", where=where))
        ctx.expect(any(profiled),
                   ctx.t("{where}: the layers ran under torch.no_grad() (or inference mode): nothing is saved for "
                         "backward then, so the numbers miss what training keeps. Profile with autograd on",
                         where=where))
        ctx.expect(not profs or any(getattr(p, "profile_memory", False) for p in profs),
                   ctx.t("{where}: your profiler ran without profile_memory=True, so its memory columns are "
                         "all 0: pass profile_memory=True to profile(...)", where=where))
        ctx.expect(any(float(v) != 0 for v in got.values()),
                   ctx.t("{where}: every layer reports 0 bytes: read each label's cpu_memory_usage (\"CPU Mem\"); "
                         "its self_cpu_memory_usage stays near 0, because the ops inside the label do the "
                         "allocating", where=where))
        if len(profiled) != n_layers:
            ctx.fail(ctx.t("{where}: the layers ran {runs} times while your profiler was recording, "
                           "{passes:.3g} forward passes of these {n} layers: profile exactly one forward pass (a "
                           "second one adds its own allocations, and frees the first one's graph inside some "
                           "layer's label)", where=where, runs=len(profiled), passes=len(profiled) / n_layers,
                           n=n_layers))
        ctx.expect_equal(ctx.t("{where}: the layer calls your profiler recorded (True where autograd was on)",
                               where=where), profiled, profiled)

        wrong = [n for n in expected if not _close(got[n], expected[n])]
        if wrong:
            name = max(wrong, key=lambda n: abs(got[n] - expected[n]))
            value = got[name]
            inside = _measure(model, x, inside=True)
            own_self = _measure(model, x, column="self_cpu_memory_usage")
            outputs = _output_bytes(model, x)
            said = ctx.t("{where}: layer {name!r} reports {got}, the checker measured {want}",
                         where=where, name=name, got=_kb(value), want=_kb(expected[name]))
            if all(_close(got[n], own_self[n]) for n in expected):
                ctx.fail(ctx.t("{said}. Your numbers are the labels' self_cpu_memory_usage (\"Self CPU Mem\"): a "
                               "label allocates nothing itself, the ops inside it do, and frees count against it. "
                               "Read cpu_memory_usage, which includes the ops inside the label", said=said))
            if all(_close(got[n], inside[n]) for n in expected):
                ctx.fail(ctx.t("{said}. You hand the output on to the next layer inside the label (h = layer(h) "
                               "in the `with record_function` block): the previous activation, which nothing "
                               "else needs, is then freed inside this layer's label and counted against it. "
                               "Keep the output in its own variable and move it on after the block", said=said))
            if _close(value, outputs[name]):
                ctx.fail(ctx.t("{said}: only the size of its output, which is all a layer keeps under "
                               "torch.no_grad(). With autograd on it also keeps what it saves for backward: "
                               "measure with the profiler, with autograd on", said=said))
            if value < 0:
                ctx.fail(ctx.t("{said}: a negative number means more was freed than allocated inside its label; "
                               "something your code drops inside the label is counted against the layer. "
                               "Read the label's cpu_memory_usage, and move tensors on only after the block",
                               said=said))
            ctx.fail(ctx.t("{said} (the label's cpu_memory_usage, the table's \"CPU Mem\" column, which "
                           "includes the ops inside the label, for one forward pass with autograd on)", said=said))

        if trial == 0:
            # A caller measuring from inside torch.no_grad(): what the numbers are then is not
            # judged here, but the caller's grad mode must come back as it was (the call contract
            # compares it with the reference's same call).
            with torch.no_grad():
                mine.layer_memory(model, x)
        name = mine.hungriest_layer(model, x)
        ctx.expect(name == top, ctx.t("{where}: hungriest_layer returned {name!r}, but {top!r} keeps the most "
                                      "memory ({kb})", where=where, name=name, top=top, kb=_kb(expected[top])))
        ctx.expect_equal(ctx.t("{where}: the layer hungriest_layer names", where=where), name, name)
        ctx.figure(f"hungriest_trial{trial + 1}", {
            "learner_bytes": int(got[top]), "reference_bytes": expected[top],
            "compares": ctx.t("your layer_memory[{top!r}] vs the checker's own profile of the same layer", top=top)},
            label=ctx.t("{where}: your layer_memory[{top!r}] is {mine}, the checker's own profile of that layer "
                        "gives {want}", where=where, top=top, mine=_kb(got[top]), want=_kb(expected[top])))
        kb = {k: round(v / 1024, 1) for k, v in expected.items()}
        ctx.figure(f"layer_kb_trial{trial + 1}", {
            **kb, "compares": ctx.t("the checker's own profile: KB each layer keeps, one forward with autograd on")},
            label=ctx.t("{where}: the KB each layer keeps in the checker's own profile (one forward with autograd "
                        "on): {layers}", where=where, layers=", ".join(f"{k} {v}" for k, v in kb.items())))
