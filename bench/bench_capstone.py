"""Which techniques make the capstone's step faster and lighter, at which sizes (on demand).

For each size (the checker's draws by default) and each technique combination, one training
step of the capstone's TinyTransformer is measured exactly as the check measures it: peak tensor
memory of one step from the profiler, time per step on one thread interleaved with the baseline
(tutor.runner.timing). Prints a table per size and, per size, the combinations that meet both
targets (>= 40% lighter, >= 1.3x faster).

    python bench/bench_capstone.py                       # the checker's draws, every pool seed
    python bench/bench_capstone.py --sizes 256x64 32x256  # seq x width, the other sizes as drawn
    python bench/bench_capstone.py --json out.json
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lessons" / "13-capstone" / "checks"))

import types  # noqa: E402

from _baseline import Sizes, build, draw_sizes, markov_batches  # noqa: E402
from torch.nn import functional as F  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

from tutor.runner import memory, timing  # noqa: E402


COMBOS = (
    "fused",
    "sdpa",
    "bf16",
    "ckpt",
    "micro2",
    "sdpa+fused",
    "bf16+fused",
    "sdpa+bf16",
    "sdpa+bf16+fused",
    "sdpa+ckpt+fused",
    "ckpt+fused",
    "bf16+ckpt+fused",
    "sdpa+micro2+fused",
    "bf16+micro2+fused",
    "sdpa+bf16+ckpt+fused",
)


def _sdpa_forward(self, x: torch.Tensor) -> torch.Tensor:
    batch, seq, width = x.shape
    q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return self.out(y.transpose(1, 2).reshape(batch, seq, width))


def _ckpt_forward(self, tokens: torch.Tensor) -> torch.Tensor:
    seq = tokens.shape[1]
    x = self.tokens(tokens) + self.positions(torch.arange(seq, device=tokens.device))
    for block in self.blocks:
        x = checkpoint(block, x, use_reentrant=False)
    return self.head(self.norm(x))


def make_variant_step(model, lr: float, combo: str, sizes: Sizes):
    """The baseline step with the techniques named in `combo` ("sdpa+fused", ...)."""
    parts = set(combo.split("+"))
    if "sdpa" in parts:
        for block in model.blocks:
            block.attn.forward = types.MethodType(_sdpa_forward, block.attn)
    if "ckpt" in parts:
        model.forward = types.MethodType(_ckpt_forward, model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused="fused" in parts or None)
    chunks = 2 if "micro2" in parts else 1
    dtype = torch.bfloat16 if "bf16" in parts else None

    def step(tokens: torch.Tensor, targets: torch.Tensor) -> float:
        optimizer.zero_grad()
        total = 0.0
        for xs, ys in zip(tokens.chunk(chunks), targets.chunk(chunks)):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype is not None):
                logits = model(xs)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ys.reshape(-1))
            (loss * len(xs) / len(tokens)).backward()
            total += loss.item() * len(xs) / len(tokens)
        optimizer.step()
        return total

    return step


def measure(sizes: Sizes, combos: list[str], seed: int = 0, budget_s: float = 0.3) -> dict[str, dict]:
    device = torch.device("cpu")
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(seed)
    batches = markov_batches(gen, sizes, 2, device)
    x, y = batches[0]
    base_model = build(sizes, seed, device)
    base = make_variant_step(base_model, 3e-3, "baseline", sizes)
    base(x, y)
    base(x, y)
    memory.peak_bytes(lambda: base(x, y), device)
    base_bytes = memory.peak_bytes(lambda: base(x, y), device)
    out: dict[str, dict] = {}
    for combo in combos:
        model = build(sizes, seed, device)
        step = make_variant_step(model, 3e-3, combo, sizes)
        step(x, y)
        step(x, y)
        one = functools.partial(step, x, y)
        memory.peak_bytes(one, device)
        mine = memory.peak_bytes(one, device)
        t = timing.interleaved(one, lambda: base(x, y), device=device, budget_s=budget_s)
        out[combo] = {
            "peak_MiB": mine / 2**20,
            "base_MiB": base_bytes / 2**20,
            "saved": 1 - mine / base_bytes,
            "ms": 1e3 * t.learner_s,
            "base_ms": 1e3 * t.reference_s,
            "speedup": t.speedup,
            "noisy": t.noisy,
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="*", help="seq x width [x vocab [x batch [x layers]]], e.g. 256x64")
    ap.add_argument("--combos", nargs="*", default=list(COMBOS))
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.sizes:
        template = draw_sizes(0)[0]
        todo = []
        for s in args.sizes:
            vals = [int(v) for v in s.split("x")]  # seq x width [x vocab [x batch [x layers]]]
            keys = ("seq", "width", "vocab", "batch", "layers")
            todo.append(Sizes(**{**template.__dict__, **dict(zip(keys, vals))}))
    else:
        from tutor.seeds import seed_pool

        todo = [s for seed in seed_pool("capstone-step") for s in draw_sizes(seed)]
    results = {}
    for sizes in todo:
        key = f"seq {sizes.seq} width {sizes.width} batch {sizes.batch} layers {sizes.layers}"
        res = measure(sizes, args.combos)
        results[key] = res
        print(f"\n{key}  (baseline {next(iter(res.values()))['base_MiB']:.2f} MiB)")
        for combo, r in res.items():
            ok = "PASS" if r["saved"] >= 0.40 and r["speedup"] >= 1.3 else ""
            print(
                f"  {combo:32s} {r['peak_MiB']:7.2f} MiB {100 * r['saved']:5.1f}% lower  "
                f"{r['ms']:7.2f} ms {r['speedup']:5.2f}x {'noisy' if r['noisy'] else ''} {ok}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
