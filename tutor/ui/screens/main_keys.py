"""The main screen's keys, each declared once: KEYS are those the key bar may show (FOOTER says
on which step kinds it shows each; the key works wherever it makes sense), BINDINGS all of
them. The help screen and the command palette list them from here."""

from __future__ import annotations

from textual.binding import Binding

from tutor.i18n import N_

# Which step kinds show a binding in the footer (the key works everywhere it makes sense; the
# footer lists only what helps on this step, so it fits 80 columns with Help and Quit).
FOOTER: dict[str, tuple[str, ...]] = {
    "run": ("exercise",),
    "run_passage": ("passage",),
    "next_step": ("read", "exercise", "passage"),
    "previous_step": ("read",),
    "toggle_navigator": ("read",),
    "chapters": ("read",),
    "solution": ("exercise",),
    "zoom": ("exercise", "passage"),
    "help": ("read", "exercise", "passage"),
}


# The bindings the key bar may show (FOOTER says on which step kinds), each declared once.
KEYS = [
    # Ctrl+R: Check, and Run on a passage (each disabled where the other is the one).
    Binding(
        "ctrl+r,f5",
        "run",
        N_("Check"),
        id="run",
        tooltip=N_("Check your code (pressing it again cancels the run in flight and restarts)"),
    ),
    Binding(
        "ctrl+r,f5",
        "run_passage",
        N_("Run"),
        id="run-passage",
        tooltip=N_("Run the passage you typed as a program and show its output"),
    ),
    Binding("ctrl+n,alt+right", "next_step", N_("Next"), id="next-step", tooltip=N_("Next step")),
    # Ctrl+P stays Textual's command palette (the way to reach F-key actions on laptops whose
    # F-keys are media keys), so "previous" is Alt+← only.
    Binding("alt+left", "previous_step", N_("Prev"), id="previous-step", tooltip=N_("Previous step")),
    Binding("f2", "toggle_navigator", N_("Steps"), id="steps", tooltip=N_("Show or hide the list of steps")),
    Binding("ctrl+o", "chapters", N_("Chapters"), id="chapters", tooltip=N_("Jump to another chapter")),
    Binding(
        "f9",
        "solution",
        N_("Solution"),
        id="solution",
        tooltip=N_("Show the reference solution beside your code (once passed, or after the last hint)"),
    ),
    Binding(
        "f4",
        "zoom",
        N_("Zoom"),
        id="zoom",
        tooltip=N_("Give the guide, then the work, the full width; again: side by side"),
    ),
    Binding("f1", "help", N_("Help"), id="help", tooltip=N_("Every key, what Tab does, the step icons")),
]

BINDINGS: list[Binding | tuple[str, str] | tuple[str, str, str]] = [
    *KEYS,
    Binding(
        "f8",
        "reset",
        N_("Reset"),
        id="reset",
        show=False,
        tooltip=N_("Reset the exercise to its stub (asks first; your version is backed up)"),
    ),
    Binding(
        "alt+shift+left",
        "split(-1)",
        N_("Split ◀"),
        id="split-left",
        show=False,
        tooltip=N_("Move the split: narrower guide"),
    ),
    Binding(
        "alt+shift+right",
        "split(1)",
        N_("Split ▶"),
        id="split-right",
        show=False,
        tooltip=N_("Move the split: wider guide"),
    ),
    Binding(
        "alt+down,ctrl+down",
        "scroll_panel(1)",
        N_("Scroll panel"),
        id="panel-down",
        show=False,
        tooltip=N_("Scroll the results (or hints) panel down"),
    ),
    Binding(
        "alt+up,ctrl+up",
        "scroll_panel(-1)",
        N_("Scroll panel up"),
        id="panel-up",
        show=False,
        tooltip=N_("Scroll the results (or hints) panel up"),
    ),
    # The editor binds F7 to select-all: priority, so the panels come back from anywhere.
    Binding(
        "f7",
        "toggle_panels",
        N_("Panels"),
        id="panels",
        show=False,
        priority=True,
        tooltip=N_("Show the hint and results panels again (Esc closes the top one)"),
    ),
    Binding(
        "ctrl+s",
        "save",
        N_("Save"),
        id="save",
        show=False,
        tooltip=N_("Save now (your code is also saved automatically as you type)"),
    ),
    # F12: the language, live (the step, the editor and the results stay as they are).
    Binding(
        "f12",
        "switch_language",
        N_("Language"),
        id="language",
        show=False,
        tooltip=N_("Switch between English and 中文 (remembered for next time)"),
    ),
]
