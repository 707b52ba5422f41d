"""Check: find_bottleneck profiles exactly `iters` forward passes under torch.no_grad() (after its
warm-up), names the op with the most self CPU time in ITS OWN profile, and reports that op's share
of the self CPU time of all rows exactly as its own profile gives it. The checker's own profiles
of the same model are reported beside it.

Profiles differ from run to run, so the share is compared with the learner's own profile, which
the checker sees by watching the profiler object the learner stops: that comparison is exact, and
a share computed against wall-clock time or total times cannot slip through a loose tolerance."""

from collections import defaultdict

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

from _common import watch_profilers


class WideMLP(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.up, self.act, self.down = nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class RankFeatures(nn.Module):
    """A small Linear followed by a sort: the sort, not the Linear, dominates."""

    def __init__(self, d: int, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d, width)

    def forward(self, x):
        return self.proj(x).sort(dim=-1).values


class ConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.head = nn.Linear(cout, 10)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).mean((2, 3)))


def _make(ctx, kind):
    if kind == "WideMLP":
        d, hidden, batch = ctx.choice([192, 256]), ctx.choice([1536, 2048]), ctx.choice([48, 64])
        desc = ctx.t("WideMLP(d={d}, hidden={hidden}), batch {batch}", d=d, hidden=hidden, batch=batch)
        return WideMLP(d, hidden), ctx.randn(batch, d), desc
    if kind == "RankFeatures":
        width, batch = ctx.choice([768, 1024]), ctx.choice([48, 64])
        desc = ctx.t("RankFeatures(width={width}), batch {batch}", width=width, batch=batch)
        return RankFeatures(64, width), ctx.randn(batch, 64), desc
    cout, size = ctx.choice([24, 32]), ctx.choice([40, 48])
    desc = ctx.t("ConvBlock(8->{cout}), input 6x8x{size}x{size}", cout=cout, size=size)
    return ConvBlock(8, cout), ctx.randn(6, 8, size, size), desc


def _own_profile(model, x, iters=10):
    """Self CPU time (us) and total CPU time per op key, over `iters` forward passes."""
    with torch.no_grad():
        for _ in range(2):
            model(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                model(x)
    self_t, total_t = defaultdict(float), defaultdict(float)
    for e in prof.key_averages():
        self_t[e.key] += e.self_cpu_time_total
        total_t[e.key] += e.cpu_time_total
    return self_t, total_t


def _per_key(prof):
    self_t, total_t = defaultdict(float), defaultdict(float)
    for e in prof.key_averages():
        self_t[e.key] += e.self_cpu_time_total
        total_t[e.key] += e.cpu_time_total
    return self_t, total_t


def _op_counts(prof):
    """How often each aten op ran in a profile (its rows of key_averages(), times left out)."""
    counts = defaultdict(int)
    for e in prof.key_averages():
        if e.key.startswith("aten::"):
            counts[e.key] += int(e.count)
    return dict(counts)


def _top(self_t, n=4):
    grand = sum(self_t.values()) or 1.0
    ranked = sorted(self_t, key=self_t.get, reverse=True)
    return ", ".join(f"{k} {self_t[k] / grand:.0%}" for k in ranked[:n])


def check(ctx):
    mine = ctx.learner
    torch.set_num_threads(1)  # fewer moving parts: profiles of the same model agree better
    kinds = ["WideMLP", "RankFeatures", "ConvBlock"]
    order = torch.randperm(3, generator=ctx.generator).tolist()
    for trial in ctx.trials(3):
        kind = kinds[order[trial]]
        model, x, desc = _make(ctx, kind)
        # The caller's mode, training or eval, must come back as it was: an inference profile is
        # a matter of torch.no_grad(), not of model.eval(). (These models behave the same in both.)
        model.train(trial % 2 == 0)
        iters = ctx.choice([5, 7, 12])  # never the default 10: the argument must be used
        ctx.phase(ctx.t("trial {trial}/3: profiling {desc} (checker)", trial=trial + 1, desc=desc))
        self_a, total_a = _own_profile(model, x)

        ctx.phase(ctx.t("trial {trial}/3: your find_bottleneck on {desc}, iters={iters}",
                        trial=trial + 1, desc=desc, iters=iters))
        calls = []
        hook = model.register_forward_pre_hook(
            lambda *_, calls=calls: calls.append((torch._C._autograd._profiler_enabled(), torch.is_grad_enabled())))
        # The first call runs on two threads, like a caller's program, so code that pins torch to
        # one thread (a global setting the caller would keep) shows as a change the call leaves.
        # Only the first: on a busy 2-core machine two threads are much slower than one.
        torch.set_num_threads(2 if trial == 0 else 1)
        try:
            result, profs = watch_profilers(lambda m=model, x=x, n=iters: mine.find_bottleneck(m, x, iters=n))
        finally:
            hook.remove()
            torch.set_num_threads(1)
        ctx.phase(ctx.t("trial {trial}/3: profiling {desc} again (checker)", trial=trial + 1, desc=desc))
        self_b, total_b = _own_profile(model, x)

        ctx.expect(isinstance(result, (tuple, list)) and len(result) == 2,
                   ctx.t("find_bottleneck returned {type}, expected a tuple (op_name, share)",
                         type=type(result).__name__))
        name, share = result
        ctx.expect(isinstance(name, str), ctx.t("the op name should be a string like 'aten::addmm', got {name!r}",
                                                name=name))
        ctx.expect(isinstance(share, (int, float)) and not isinstance(share, bool),
                   ctx.t("the share should be a float, got {type}", type=type(share).__name__))
        share = float(share)

        # How the profile was taken: exactly `iters` forward passes, all under no_grad.
        profiled = [grad for on, grad in calls if on]
        ctx.expect(profiled, ctx.t("{desc}: none of the model's forward passes ran while a profiler was "
                                   "recording: call model(x) inside the `with profile(...)` block", desc=desc))
        if len(profiled) != iters:
            why = ""
            if len(profiled) > iters and len(calls) == len(profiled):
                why = ctx.t(" and none before it: warm-up passes belong before the `with profile(...)` block, "
                            "not inside it")
            elif len(profiled) == 10:
                why = ctx.t(" (10 is the default: use the iters argument)")
            ctx.fail(ctx.t("{desc}: find_bottleneck(model, x, iters={iters}) profiled {n} forward "
                           "passes, expected {iters}{why}", desc=desc, iters=iters, n=len(profiled), why=why))
        ctx.expect(len(calls) > len(profiled),
                   ctx.t("{desc}: no warm-up: every forward pass was profiled. Run the model a few times "
                         "before entering `profile(...)` so first-call costs stay out of the profile", desc=desc))
        ctx.expect(not any(profiled),
                   ctx.t("{desc}: the profiled forward passes ran with autograd on: this is an inference "
                         "profile, run them under torch.no_grad() (autograd's bookkeeping adds ops and time)",
                         desc=desc))
        ctx.expect_equal(ctx.t("{desc}: the profiled forward passes (True where autograd was on)", desc=desc),
                         profiled, profiled)

        # The learner's own profile: the last profiler it stopped.
        ctx.expect(profs, ctx.t("{desc}: find_bottleneck did not use torch.profiler.profile (as a `with` block "
                                "or with start()/stop())", desc=desc))
        prof = profs[-1]
        ctx.expect(not getattr(prof, "with_stack", False),
                   ctx.t("{desc}: profile without with_stack=True: stacks add rows for Python frames to "
                         "key_averages(), and the share is defined over the ops of the plain table", desc=desc))
        mine_self, mine_total = _per_key(prof)
        mine_grand = sum(mine_self.values())
        ctx.expect(name in mine_self, ctx.t("{desc}: {name!r} does not appear in your own profile; its ops with "
                                            "the most self CPU time are {top}", desc=desc, name=name,
                                            top=_top(mine_self)))
        mine_top = max(mine_self.values())
        if mine_self[name] < mine_top:
            if mine_total[name] >= max(mine_total.values()) * 0.999:
                ctx.fail(ctx.t("{desc}: {name} has the largest *total* CPU time in your profile, but only "
                               "{share:.1%} of the self CPU time: most of its time is spent in the ops it "
                               "calls. Rank ops by self_cpu_time_total; your profile gives {top}",
                               desc=desc, name=name, share=mine_self[name] / mine_grand, top=_top(mine_self)))
            ctx.fail(ctx.t("{desc}: {name} is not the op with the most self CPU time in your own profile, "
                           "which gives {top}", desc=desc, name=name, top=_top(mine_self)))

        # The checker's own profiles are reported beside yours, not judged: on a busy machine one
        # preempted call can reorder a profile, and the learner's own profile is what the task asks
        # about (that it really profiled this model, warmed up and under no_grad, is checked above).
        self_t = {k: self_a.get(k, 0.0) + self_b.get(k, 0.0) for k in set(self_a) | set(self_b)}
        grand = sum(self_t.values())
        ranked = sorted(self_t, key=self_t.get, reverse=True)

        ctx.expect(0.0 < share <= 1.0,
                   ctx.t("{desc}: share {share:g} is not a fraction between 0 and 1 (it looks like a percentage: "
                         "divide by 100)", desc=desc, share=share) if 1.0 < share <= 100.0 else
                   ctx.t("{desc}: share {share:g} is not a fraction between 0 and 1", desc=desc, share=share))
        expected = mine_self[name] / mine_grand
        if abs(share - expected) > 1e-6 + 1e-6 * expected:
            how = ""
            summed_total = sum(mine_total.values())
            if summed_total and abs(share - mine_self[name] / summed_total) <= 1e-6:
                how = ctx.t(" You divided by the sum of *total* times, which counts nested ops once per "
                            "level (aten::linear and the aten::addmm inside it).")
            elif share < expected:
                how = ctx.t(" Yours is smaller: a denominator larger than the profile's self time, such as "
                            "wall-clock time, which also counts Python and profiler overhead.")
            ctx.fail(ctx.t("{desc}: you report a share of {share:.2%} for {name}; your own profile gives "
                           "{expected:.2%} (its self CPU time divided by the self CPU time of every row of "
                           "key_averages(), the table's \"Self CPU %\").{how}",
                           desc=desc, share=share, name=name, expected=expected, how=how))
        # What the profile recorded, apart from its times: every op and how often it ran. Fixed by
        # the model, `iters` and no_grad (not by the profiler's API, its warm-up or the threads),
        # so `iters` passes of model(x) and nothing else inside the profile give the reference's.
        ops = _op_counts(prof)
        ctx.expect_equal(ctx.t("{desc}: the ops in your profile and how often each ran", desc=desc), ops, ops)
        shares = {"learner": share, "checker": self_t.get(name, 0.0) / grand,
                  "checker_top": self_t[ranked[0]] / grand}
        ctx.figure(f"share_{kind}", shares,
                   label=ctx.t("{desc}: your share for {name}, {learner:.1%}; the checker's own profiles give it "
                               "{checker:.1%}, and their top op {top} {checker_top:.1%}",
                               desc=desc, name=name, top=ranked[0], **shares))
