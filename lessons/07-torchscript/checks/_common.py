"""Shared by this chapter's checkers."""

import warnings

import torch


def first_lines(exc, n):
    """An exception's first non-blank line (its type's name when it has none) and the next n - 1
    lines, such as where a TorchScript compile error points."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__), lines[1:n]


# -- process-wide modes the call contract does not watch ---------------------------------------
# TorchScript's executor and fuser switches, the CPU's denormal mode and the warnings filters
# belong to the whole process: a call that sets one changes every later computation of its
# caller. Each is read without changing it for good (the setters that return the old value are
# set back at once).

FLUSH_DENORMAL = "torch.set_flush_denormal"
WARNINGS = "warnings filters"

_JIT_GETTERS = (
    "_jit_can_fuse_on_cpu",
    "_jit_can_fuse_on_gpu",
    "_jit_texpr_fuser_enabled",
    "_jit_texpr_reductions_enabled",
    "_jit_texpr_dynamic_shape_enabled",
    "_jit_texpr_fallback_allowed",
    "_get_graph_executor_optimize",
    "_jit_get_inline_everything_mode",
    "_jit_get_num_profiled_runs",
    "_jit_get_te_must_use_llvm_cpu",
    "_jit_get_tracer_state_warn",
)
_JIT_SETTERS = {  # setter that returns the old value -> a harmless value to set while reading
    "_jit_set_fusion_strategy": [("STATIC", 1)],
    "_jit_set_profiling_executor": True,
    "_jit_set_profiling_mode": True,
}


def _read_by_setting(name, probe):
    setter = getattr(torch._C, name)
    old = setter(probe)
    setter(old)
    return tuple(tuple(x) for x in old) if isinstance(old, list) else old


def _denormals_flushed():
    return (torch.tensor([1e-39], dtype=torch.float32) * 1.0).item() == 0.0


def _warnings_shown():
    """Whether a TracerWarning raised now would reach the caller (a fresh one, from nowhere that
    torch's own filters name)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.warn_explicit("tutor probe", torch.jit.TracerWarning, "tutor_probe.py", 1, module="tutor_probe",
                               registry={})
    return bool(caught)


def process_modes():
    """The process-wide modes above, by the name a learner would set them with."""
    modes = {}
    for name in _JIT_GETTERS:
        getter = getattr(torch._C, name, None)
        if getter is None:
            continue
        try:
            modes[f"torch._C.{name}()"] = getter()
        except Exception:  # noqa: BLE001  (a getter this build lacks the backend of)
            continue
    for name, probe in _JIT_SETTERS.items():
        if hasattr(torch._C, name):
            try:
                shown = "torch.jit.set_fusion_strategy" if name == "_jit_set_fusion_strategy" else f"torch._C.{name}"
                modes[shown] = _read_by_setting(name, probe)
            except Exception:  # noqa: BLE001
                continue
    modes[FLUSH_DENORMAL] = _denormals_flushed()
    modes[WARNINGS] = _warnings_shown()
    return modes


def expect_modes_kept(ctx, before, call):
    """Fails when the learner's `call` left one of the process-wide modes changed."""
    after = process_modes()
    changed = [key for key in before if after.get(key) != before[key]]
    if not changed:
        ctx.expect(True, ctx.t("{call} left the process-wide settings as they were", call=call))
        return
    key = changed[0]
    if key == FLUSH_DENORMAL:
        reason = ctx.t("{call} left torch.set_flush_denormal(True) on for the whole process: every later CPU "
                       "computation of the caller silently turns denormal numbers into 0. Leave the process's "
                       "floating-point mode as it was", call=call)
    elif key == WARNINGS:
        reason = ctx.t("{call} left the warnings filters changed for the whole process: warnings such as the "
                       "TracerWarning no longer reach the caller. Leave the filters alone (or silence a warning "
                       "only inside `with warnings.catch_warnings():`)", call=call)
    else:
        reason = ctx.t("{call} left the TorchScript setting {what} changed for the whole process, from {before} "
                       "to {after}: compiling or loading a model must not reconfigure the JIT for every later "
                       "call of the caller", call=call, what=key, before=repr(before[key]), after=repr(after[key]))
    ctx.expect(False, reason)
