"""`tutor start`: the Textual app. It owns the Progress store, the Workspace and a warm Runner.

Never import torch here (directly or through tutor.runner.* other than client/protocol): the
runner imports it in its own process, so the app paints in well under half a second.
"""

from __future__ import annotations

import sys
from functools import partial
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import Notification, SeverityLevel
from textual.screen import Screen

from tutor import i18n, paths
from tutor.course import Chapter, Course, LessonError, load_course
from tutor.i18n import N_, _
from tutor.progress import Progress, ProgressError
from tutor.session import LearnerSession
from tutor.ui.background import background
from tutor.ui.messages import RunnerFailed, RunnerReady, post
from tutor.ui.render_cache import RenderCache
from tutor.ui.screens.main import MainScreen
from tutor.steps import Snapshot, chapter_label, chapter_progress_label
from tutor.ui.widgets.guide import use_render_cache
from tutor.workspace import Workspace

if TYPE_CHECKING:  # the client module is imported on first use, off the first paint
    from tutor.runner.client import Runner

RunnerFactory = Callable[[], "Runner"]
CourseLoader = Callable[[str], Course]  # language -> the course in it


def _default_runner(home: Path, device: str) -> "Runner":
    from tutor.runner.client import Runner

    return Runner(cache_dir=paths.cache_dir(home), device=device)


class TutorApp(App[int]):
    CSS_PATH = "tutor.tcss"
    TITLE = "tutor"
    BINDINGS = [
        Binding(
            "ctrl+q",
            "quit",
            N_("Quit"),
            id="quit",
            priority=True,
            tooltip=N_("Save and quit (run `tutor start` to come back here)"),
        ),
        Binding("ctrl+c", "help_quit", show=False, system=True),
    ]

    def __init__(
        self,
        course: Course,
        home: Path,
        chapter: int,
        step_id: str | None = None,
        device: str = "auto",
        *,
        warm_runner: bool = True,
        runner_factory: RunnerFactory | None = None,
        course_loader: CourseLoader | None = None,
    ) -> None:
        super().__init__()
        self.home = home
        self.device = device
        self.progress = Progress(home)  # raises ProgressError: run_app reports it
        self.session = LearnerSession(course, self.progress, device)
        # Damage found while the app runs is recovered from at once: say so at once too.
        self.progress.on_notice = self._progress_notice
        self.workspace = Workspace(home)
        use_render_cache(RenderCache(paths.cache_dir(home) / "guide"))  # pages drawn before paint at once
        self._start = (chapter, step_id)
        self._warm = warm_runner
        self._runner_factory = runner_factory or (lambda: _default_runner(home, device))
        self._course_loader = course_loader or (lambda lang: load_course(lang=lang))
        self._runner: "Runner | None" = None
        self._runner_lock = threading.Lock()
        self._closed = False
        self.exit_message = ""  # printed by run_app once the terminal is restored
        self.notices: list[Notification] = []  # every notice shown, newest last

    @property
    def course(self) -> Course:
        return self.session.course

    @course.setter
    def course(self, course: Course) -> None:
        self.session.course = course

    @property
    def gpus(self) -> int | None:
        """How many GPUs the runner sees; None until it is up."""
        return self.session.gpus

    @gpus.setter
    def gpus(self, gpus: int | None) -> None:
        self.session.gpus = gpus

    def _progress_notice(self, text: str) -> None:
        """Called by Progress from whichever thread met the damage."""
        if threading.get_ident() == getattr(self, "_thread_id", None):
            self.notify(text, severity="warning", timeout=15)
        else:
            self.call_from_thread(self.notify, text, severity="warning", timeout=15)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """On the main screen a notice goes in its title bar (covering nothing the learner is
        reading); over a dialog it is a toast as usual. Every notice is kept in `notices`."""
        seconds = self.NOTIFICATION_TIMEOUT if timeout is None else timeout
        self.notices.append(Notification(message, title, severity, seconds, markup))
        main = self.screen_stack[0] if len(self.screen_stack) == 1 else None
        if isinstance(main, MainScreen) and main.is_mounted:
            if threading.get_ident() == getattr(self, "_thread_id", None):
                main.show_notice(message, severity, seconds)
            else:
                self.call_from_thread(main.show_notice, message, severity, seconds)
            return
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def get_default_screen(self) -> Screen[Any]:
        chapter, step_id = self._start
        return MainScreen(chapter, step_id)

    @property
    def main(self) -> MainScreen:
        screen = self.screen_stack[0] if self.screen_stack else None
        assert isinstance(screen, MainScreen)
        return screen

    # -- the runner -----------------------------------------------------------------------------

    @property
    def runner(self) -> "Runner":
        """Created on first use (any thread); its process starts on warm-up or the first check."""
        with self._runner_lock:
            if self._runner is None:
                self._runner = self._runner_factory()
            return self._runner

    def warm_up(self) -> None:
        """Start the runner process in the background so the first check is quick."""
        if self._warm:
            background(self._warm_up, "tutor-warm-up")

    def _warm_up(self) -> None:
        from tutor.runner.client import RunnerError

        try:
            info = self.runner.start()
        except (RunnerError, OSError) as exc:
            post(self, RunnerFailed(str(exc)))
            return
        post(self, RunnerReady(info.gpus))

    def on_runner_ready(self, message: RunnerReady) -> None:
        self.gpus = message.gpus
        if self.screen_stack and isinstance(self.screen_stack[0], MainScreen):
            self.main.refresh_status()

    def on_runner_failed(self, message: RunnerFailed) -> None:
        self.notify(_("The runner could not start: {reason}", reason=message.reason), severity="warning", timeout=10)

    def cancel_run(self) -> None:
        if self._runner is not None:
            self._runner.cancel()

    # -- progress -------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        try:
            return self.session.snapshot()
        except Exception as exc:  # sqlite errors: show what we can, say why once
            self.notify(_("cannot read progress: {error}", error=exc), severity="error")
            return Snapshot({}, set(), self.gpus)

    def last_position(self) -> tuple[int, str | None] | None:
        try:
            return self.session.last_position()
        except Exception:
            return None

    def update_header(self, chapter: Chapter, snap: Snapshot) -> None:
        self.title = chapter_label(self.course, chapter)
        self.sub_title = chapter_progress_label(chapter, snap)

    # -- keys and commands ----------------------------------------------------------------------

    def all_bindings(self) -> list[Binding]:
        """Everything the help screen lists, in the order shown."""
        palette = Binding(
            self.COMMAND_PALETTE_BINDING,
            "command_palette",
            N_("Command palette"),
            tooltip=N_("Search every command"),
            id="command-palette",
        )
        from tutor.ui.widgets.editor import CodeEditor  # loads after the first paint

        found = [*CodeEditor.BINDINGS, *MainScreen.BINDINGS, palette, *self.BINDINGS]
        return [b for b in found if isinstance(b, Binding) and b.description]

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The tutor's own commands only: Textual's generic ones (theme, screenshot, maximize,
        keys panel) are not part of the course and crowded the palette."""
        yield SystemCommand(
            _("Quit") + " (ctrl+q)", _("Save and quit (run `tutor start` to come back here)"), self.action_quit
        )
        if isinstance(screen, MainScreen):
            for b in MainScreen.BINDINGS:
                assert isinstance(b, Binding)
                if not b.description:
                    continue
                key = b.key.split(",")[0]
                callback: Callable[[], object] = partial(screen.run_action, b.action)
                if b.action in ("run", "run_passage"):  # disabled by step kind only for their key
                    callback = getattr(screen, f"action_{b.action}")
                yield SystemCommand(f"{_(b.description)} ({key})", _(b.tooltip or b.description), callback)
            yield SystemCommand(_("Hint") + " (tab)", _("Reveal the next hint for this exercise"), screen.action_hint)
            yield SystemCommand(
                _("Wrap long lines") + " (f3)",
                _("Soft-wrap long lines in the editor on/off"),
                lambda: screen.work.editor.action_toggle_wrap(),
            )

    def switch_language(self, lang: str) -> None:
        """Speak `lang` from now on: reload the course in it, redraw the main screen where it
        stands, and remember the choice for the next `tutor start`."""
        try:
            course = self._course_loader(lang)
        except (LessonError, OSError) as exc:
            self.notify(
                _("cannot load the course in {lang}: {error}", lang=i18n.LANGUAGES.get(lang, lang), error=exc),
                severity="error",
            )
            return
        i18n.set_language(lang)
        self.course = course
        try:
            self.progress.set_state("lang", lang)
        except ProgressError as exc:
            self.notify(str(exc), severity="warning")
        if self.screen_stack and isinstance(self.screen_stack[0], MainScreen):
            self.main.relocalize()
        self.notify(_("Language: {name} (F12 switches back)", name=i18n.LANGUAGES[lang]), timeout=3)

    async def action_quit(self) -> None:
        if self.screen_stack and isinstance(self.screen_stack[0], MainScreen):
            self.exit_message = self.main.save_for_quit()
        # A check in flight holds a worker thread in the runner: cancel it now, or quitting
        # would wait for the check to end.
        self.cancel_run()
        self.exit(0)

    # -- shutdown -------------------------------------------------------------------------------

    def close_resources(self) -> None:
        """Stop the runner process and close the database (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._runner is not None:
            self._runner.cancel()
            self._runner.close()
        self.progress.close()


def run_app(
    course: Course,
    home: Path,
    chapter: int,
    step_id: str | None = None,
    device: str = "auto",
    course_loader: CourseLoader | None = None,
) -> int:
    """Run the app until the learner quits; return the process exit code."""
    try:
        app = TutorApp(course, home, chapter, step_id, device, course_loader=course_loader)
    except ProgressError as exc:
        print(f"tutor: {exc}", file=sys.stderr)
        return 1
    try:
        app.run()
    finally:
        app.close_resources()
    if app.exit_message:
        print(app.exit_message, file=sys.stderr)
    return app.return_code or 0
