"""The Textual app of `tutor start`.

Import `tutor.ui.app` lazily: this package must never import torch (the runner does that in
its own process), so the app starts in well under half a second.
"""

import os

# Textual batches screen updates at TEXTUAL_FPS (60 by default): a keystroke can wait up to a
# whole 16.7 ms frame before it is painted. 120 halves that wait; the update timer only runs
# while something changed, so an idle app costs nothing more. Set before Textual is imported.
os.environ.setdefault("TEXTUAL_FPS", "120")

# Chinese text breaks between characters, not only at spaces (see tutor/ui/cjk.py).
from tutor.ui.cjk import install  # noqa: E402

install()
