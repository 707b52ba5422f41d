"""Shared by this chapter's checkers."""

import logging
import warnings


def quiet_lightning(*messages):
    """Keep Lightning's info logs and its expected warnings (plus any `messages`, regexes) out of
    the check's output, so they are not mistaken for a problem with your code."""
    logging.getLogger("pytorch_lightning").setLevel(logging.WARNING)
    logging.getLogger("lightning_fabric").setLevel(logging.WARNING)
    for text in (".*LeafSpec.*", ".*does not have many workers.*", ".*logging interval.*", *messages):
        warnings.filterwarnings("ignore", message=text)
