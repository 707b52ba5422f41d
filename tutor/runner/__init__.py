"""The runner: executes the learner's code in isolated processes and judges it.

`tutor.runner.client` is what the app and CLI import (no torch). Everything else in this
package runs in runner processes that have imported torch.
"""
