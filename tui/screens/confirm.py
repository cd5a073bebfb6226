"""Yes/no modals, and the questions worker threads ask through them.

``ConfirmScreen`` is the modal (purging experience, running a side-effecting tool).
``Questions`` is how a worker thread (a turn, a generated UI's tool) asks the user and waits:
each question is a :class:`~concurrent.futures.Future` the dialog resolves. Anything but a
"Run" is a no: the user's Cancel or Esc, a cancelled turn, the app closing, or no answer within
the timeout (then the modal goes away and the caller learns why). Nothing polls: the asking
thread blocks on its future, and closing the screen answers every open question at once, so
quitting never waits for a dialog nobody will answer.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmScreen(ModalScreen[bool]):
    """Returns True only when the user presses the confirming button; Esc is No."""

    BINDINGS = [Binding("escape", "no", "Cancel", id="confirm.no")]

    class Withdrawn(Message):
        """The question was answered elsewhere (timeout, cancel, closing): close the modal."""

    def __init__(self, question: str, yes: str = "Yes") -> None:
        super().__init__()
        self.question, self.yes = question, yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(self.question, markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("Cancel", id="no")
                yield Button(self.yes, variant="error", id="yes")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_no(self) -> None:
        self.dismiss(False)

    def withdraw(self) -> None:
        """Close the modal without an answer; safe from any thread."""
        self.post_message(self.Withdrawn())

    def on_confirm_screen_withdrawn(self) -> None:
        if self.app.screen is self:
            self.dismiss(False)


class Questions:
    """The yes/no questions open now, each a future; closed means every later one is a no."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[Future[bool]] = set()
        self._closed = False

    def open(self) -> Future[bool] | None:
        """A new question's future, or None once closed."""
        with self._lock:
            if self._closed:
                return None
            future: Future[bool] = Future()
            self._open.add(future)
            return future

    def wait(self, future: Future[bool], timeout_s: float) -> bool | None:
        """Block the asking thread for the answer; None when none came within ``timeout_s``."""
        try:
            return future.result(timeout_s)
        except FutureTimeout:
            return None
        finally:
            answer(future, False)
            with self._lock:
                self._open.discard(future)

    def decline_all(self) -> None:
        """Answer every open question no (the turn that asked was cancelled)."""
        with self._lock:
            pending = list(self._open)
        for future in pending:
            answer(future, False)

    def close(self) -> None:
        """No more questions; the open ones are answered no (the app is closing)."""
        with self._lock:
            self._closed = True
        self.decline_all()


def answer(future: Future[bool], ok: bool) -> None:
    """Resolve ``future`` unless something answered first (the first answer wins)."""
    try:
        future.set_result(ok)
    except InvalidStateError:
        pass
