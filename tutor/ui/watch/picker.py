"""`l` in watch mode: every exercise of the course with its status; Enter jumps to one."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.course import Course, Exercise
from tutor.i18n import _
from tutor.steps import Snapshot, icon, step_status


class ExercisePicker(ModalScreen[str | None]):
    """Dismisses with the chosen exercise's id, or None."""

    BINDINGS = [Binding("escape,q,l", "dismiss(None)", "Close", id="watch-list-close")]

    def __init__(self, course: Course, current: Exercise, snap: Snapshot) -> None:
        super().__init__(classes="dialog-screen")
        self.course = course
        self.current = current
        self.snap = snap

    def compose(self) -> ComposeResult:
        options: list[Option | None] = []
        self._highlight = 0
        for chapter in self.course.chapters:
            if not chapter.exercises:
                continue
            if options:
                options.append(None)  # a separator between chapters
            for ex in chapter.exercises:
                mark = "▶" if ex == self.current else " "
                status = step_status(ex, self.snap)
                prompt = Text.assemble(
                    f"{mark} {icon(status)} ",
                    (f"{chapter.number:>2}", "dim"),
                    "  ",
                    (ex.title, "bold" if ex == self.current else ""),
                    (f"  {ex.id}", "dim"),
                )
                if ex == self.current:
                    self._highlight = sum(1 for o in options if o is not None)
                options.append(Option(prompt, id=ex.id))
        with Vertical(classes="dialog", id="watch-list-dialog"):
            yield Static(
                _("Go to an exercise (Enter go, Esc close)  ✔ passed ◐ started ○ new ⚡ needs a GPU"),
                classes="dialog-title",
            )
            yield OptionList(*options, id="watch-list")

    def on_mount(self) -> None:
        chooser = self.query_one("#watch-list", OptionList)
        chooser.highlighted = self._highlight
        chooser.scroll_to_highlight(top=False)
        chooser.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_id)
