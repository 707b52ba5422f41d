"""Shared by this chapter's checkers, which run on every torchrun rank."""

from contextlib import contextmanager

import torch.distributed as dist


@contextmanager
def process_group(backend="gloo", **init):
    """The ranks' process group (torchrun's environment says how to meet) for the duration of
    the check, destroyed afterwards whether the check passes or fails."""
    if not dist.is_initialized():
        dist.init_process_group(backend, **init)
    try:
        yield
    finally:
        dist.destroy_process_group()


def call_setup(ctx, name, setup, hint):
    """setup(), a call into the learner's sharding function `name`: an unfinished stub's
    NotImplementedError goes through, any other exception fails the check with its first line.
    `hint` is shown under the reason, already in the learner's language (pass it through ctx.t)."""
    try:
        return setup()
    except NotImplementedError:
        raise
    except Exception as exc:
        text = str(exc).strip()
        ctx.fail(ctx.t("{name} raised {kind}: {message}", name=name, kind=type(exc).__name__,
                       message=text.splitlines()[0] if text else ""), [hint])
