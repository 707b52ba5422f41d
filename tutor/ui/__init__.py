"""The Textual app of `tutor start`.

Import `tutor.ui.app` lazily: this package must never import torch (the runner does that in
its own process), so the app starts in well under half a second.
"""
