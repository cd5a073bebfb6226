"""Generated UIs in the chat: each catalogue component as a live Textual widget.

Owns :class:`GenUIView` (one UI document, mounted progressively: ``add_component`` as each
top-level component is complete in the stream) and one small widget per component type, each
with ``read()`` / ``write(value)`` for its bound state. Every gesture becomes an Action
(``macaron_local.genui.actions``) posted up as :class:`GenUIView.ActionRaised`; the screen
decides where tool and model actions go. It must not build turn text or tool arguments (that is
where NoAI is enforced, in ``actions.py``).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import (
    Button,
    DataTable,
    Input,
    Label,
    Markdown,
    ProgressBar,
    RadioButton,
    RadioSet,
    SelectionList,
    Static,
    Switch,
    TabbedContent,
    TabPane,
)

from macaron_local.genui import catalogue as C
from macaron_local.genui.actions import Action, Gesture, UiState, make_action


class Bound:
    """Mixin of widgets that hold one component's state."""

    component: C.Component

    def read(self) -> Any:
        return None

    def write(self, value: Any) -> None:  # noqa: B027 - most widgets bind nothing
        pass


def _label(comp: C.Component) -> str:
    return comp.caption() + (" (private)" if comp.noai else "")


class ChoiceOne(Bound, RadioSet):
    def __init__(self, comp: C.Choice) -> None:
        self.component = comp
        super().__init__(
            *[RadioButton(o, value=o == comp.value) for o in comp.options], name=comp.id
        )
        self.border_title = _label(comp)

    def read(self) -> Any:
        i = self.pressed_index
        return self.component.options[i] if i >= 0 else None

    def write(self, value: Any) -> None:
        for button, option in zip(self.query(RadioButton), self.component.options, strict=True):
            button.value = option == value


class ChoiceMany(Bound, SelectionList[str]):
    def __init__(self, comp: C.Choice) -> None:
        self.component = comp
        chosen = comp.initial_state()
        super().__init__(*[(o, o, o in chosen) for o in comp.options], name=comp.id)
        self.border_title = _label(comp)

    def read(self) -> Any:
        return [o for o in self.component.options if o in self.selected]

    def write(self, value: Any) -> None:
        self.deselect_all()
        for o in value or []:
            self.select(o)


class InputBox(Bound, Vertical):
    def __init__(self, comp: C.Input) -> None:
        self.component = comp
        super().__init__(name=comp.id, classes="ui-field")

    def compose(self) -> ComposeResult:
        c = self.component
        unit = f" ({c.unit})" if c.unit else ""
        yield Label(_label(c) + unit)
        kind = "number" if c.kind == "number" else "text"
        yield Input(
            "" if c.value is None else str(c.value),
            placeholder=c.placeholder or ("YYYY-MM-DD" if c.kind == "date" else ""),
            type=kind,
            name=c.id,
            restrict=r"[0-9-]*" if c.kind == "date" else None,
        )

    def read(self) -> Any:
        text = self.query_one(Input).value.strip()
        if not text:
            return None
        if self.component.kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text else number
        return text

    def write(self, value: Any) -> None:
        self.query_one(Input).value = "" if value is None else str(value)


class ToggleBox(Bound, Horizontal):
    def __init__(self, comp: C.Toggle) -> None:
        self.component = comp
        super().__init__(name=comp.id, classes="ui-field ui-row")

    def compose(self) -> ComposeResult:
        yield Switch(bool(self.component.value), name=self.component.id)
        yield Label(_label(self.component))

    def read(self) -> Any:
        return self.query_one(Switch).value

    def write(self, value: Any) -> None:
        self.query_one(Switch).value = bool(value)


class RangeBox(Bound, Horizontal):
    """A slider or stepper: - and + buttons move the value by ``step`` within [min, max]."""

    def __init__(self, comp: C.Slider | C.Stepper) -> None:
        self.component, self.number = comp, comp.value
        super().__init__(name=comp.id, classes="ui-field ui-row")

    def compose(self) -> ComposeResult:
        yield Label(_label(self.component), classes="ui-range-label")
        yield Button("-", name="dec", classes="ui-step", compact=True)
        yield Static(self._text(), classes="ui-range-value")
        yield Button("+", name="inc", classes="ui-step", compact=True)

    def _text(self) -> str:
        c = self.component
        shown = f"{self.number:g}" + (f" {c.unit}" if c.unit else "")
        if isinstance(c, C.Slider):
            filled = round(10 * (self.number - c.min) / (c.max - c.min))
            shown += "  " + "█" * filled + "░" * (10 - filled)
        return shown

    def nudge(self, sign: int) -> None:
        c = self.component
        self.write(min(c.max, max(c.min, self.number + sign * c.step)))

    def read(self) -> Any:
        return self.number

    def write(self, value: Any) -> None:
        self.number = value
        if self.is_mounted:
            self.query_one(".ui-range-value", Static).update(self._text())


class TableBox(Bound, Vertical):
    def __init__(self, comp: C.Table) -> None:
        self.component = comp
        self.state: dict[str, Any] = comp.initial_state()
        super().__init__(name=comp.id, classes="ui-table")

    def compose(self) -> ComposeResult:
        if self.component.filterable:
            yield Input(placeholder="filter rows", name=f"{self.component.id}:filter")
        table: DataTable[Any] = DataTable(zebra_stripes=True)
        table.add_columns(*self.component.columns)
        yield table

    def on_mount(self) -> None:
        self._fill()

    def _rows(self) -> list[list[Any]]:
        st, rows = self.state, list(self.component.rows)
        if st["filter"]:
            rows = [r for r in rows if any(st["filter"].lower() in str(x).lower() for x in r)]
        if st["sort"] is not None:
            rows.sort(
                key=lambda r: (isinstance(r[st["sort"]], str), r[st["sort"]]),
                reverse=st["descending"],
            )
        return rows

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        table.add_rows([[str(x) for x in r] for r in self._rows()])

    def sort_by(self, column: int) -> None:
        if not self.component.sortable:
            return
        same = self.state["sort"] == column
        self.state = {
            **self.state,
            "sort": column,
            "descending": not self.state["descending"] if same else False,
        }
        self._fill()

    def filter(self, text: str) -> None:
        self.state = {**self.state, "filter": text}
        self._fill()

    def read(self) -> Any:
        return dict(self.state)

    def write(self, value: Any) -> None:
        self.state = dict(value)
        if self.component.filterable:
            box = self.query_one(Input)
            with box.prevent(Input.Changed):
                box.value = self.state["filter"]
        self._fill()


class Checklist(Bound, SelectionList[int]):
    def __init__(self, comp: C.ListComponent) -> None:
        self.component = comp
        super().__init__(*[(t, i, False) for i, t in enumerate(comp.items)], name=comp.id)

    def read(self) -> Any:
        return sorted(self.selected)

    def write(self, value: Any) -> None:
        self.deselect_all()
        for i in value or []:
            self.select(i)


class TabsBox(Bound, TabbedContent):
    def __init__(self, comp: C.Tabs, view: GenUIView) -> None:
        self.component = comp
        panes = [
            TabPane(t.label, *[view.build(c) for c in t.components], id=f"ui-tab-{i}")
            for i, t in enumerate(comp.tabs)
        ]
        super().__init__(name=comp.id)
        for pane in panes:  # what ``with TabbedContent(): yield pane`` does in a compose
            self.compose_add_child(pane)

    def read(self) -> Any:
        active = self.active
        return int(active.rsplit("-", 1)[1]) if active else 0

    def write(self, value: Any) -> None:
        self.active = f"ui-tab-{int(value)}"


class Plain(Bound, Static):
    """Text, lists, progress, charts, buttons' neighbours and plugin components."""

    def __init__(self, comp: C.Component, text: str) -> None:
        self.component, self.value = comp, comp.initial_state()
        super().__init__(text, name=comp.id, markup=False)

    def read(self) -> Any:
        return self.value

    def write(self, value: Any) -> None:
        self.value = value


def chart_text(c: C.Chart, width: int = 30) -> str:
    top = max(max(c.values), 0) or 1
    pad = max(len(lb) for lb in c.labels)
    unit = f" {c.unit}" if c.unit else ""
    marks = "█" if c.kind == "bar" else "•"
    lines = [c.title] if c.title else []
    for lb, v in zip(c.labels, c.values, strict=True):
        n = max(0, round(v / top * width))
        bar = marks * n if c.kind == "bar" else " " * max(n - 1, 0) + marks
        lines.append(f"{lb.rjust(pad)} {bar} {v:g}{unit}")
    return "\n".join(lines)


CHANGE_EVENTS = (
    RadioSet.Changed,
    SelectionList.SelectedChanged,
    Input.Changed,
    Switch.Changed,
    TabbedContent.TabActivated,
)


class GenUIView(Vertical):
    """One generated UI; components are added as they complete (``add_component``)."""

    DEFAULT_CSS = """
    GenUIView { height: auto; border: round $accent; padding: 0 1; margin: 1 0 0 0; }
    GenUIView Vertical, GenUIView Horizontal { height: auto; }
    GenUIView .ui-row { height: auto; }
    GenUIView .ui-card, GenUIView .ui-form { border: round $panel; padding: 0 1; }
    GenUIView RadioSet, GenUIView SelectionList { height: auto; max-height: 12; }
    GenUIView DataTable { height: auto; max-height: 14; }
    GenUIView TabbedContent { height: auto; }
    GenUIView .ui-range-label { width: auto; padding: 0 1 0 0; }
    GenUIView .ui-range-value { width: auto; padding: 0 1; }
    """

    class ActionRaised(Message):
        """A gesture's Action; ``view`` holds the document and its state."""

        def __init__(self, view: GenUIView, action: Action) -> None:
            super().__init__()
            self.view, self.action = view, action

        @property
        def turn_id(self) -> str | None:
            """The turn that drew the UI (what a ``send`` carries the result of), if known."""
            return self.view.turn_id

    def __init__(
        self,
        document: C.Document | None = None,
        *,
        title: str = "",
        turn_id: str | None = None,
        saved: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(classes="genui")
        self.saved = saved  # the kept state ({"values", "submissions"}), restored at mount
        self.turn_id = turn_id  # set by the message once its turn is committed
        self.title_text = document.title if document else title
        self.components: list[C.Component] = []
        self.document: C.Document | None = None
        self._initial = document

    def compose(self) -> ComposeResult:
        if self._initial is not None:
            self.components = list(self._initial.components)
            self.document = self._initial
            yield from (self.build(c) for c in self.components)

    def on_mount(self) -> None:
        self.border_title = self.title_text
        if self.saved:
            known = self.bound()
            self.write_state({k: v for k, v in self.saved["values"].items() if k in known})
            self.show_submissions(len(self.saved["submissions"]))

    def show_submissions(self, n: int) -> None:
        """Say, under the UI, how many submissions nothing handled and where they are."""
        if not n:
            return
        text = f"{n} submission(s) kept with this chat · nothing handles this form"
        found = self.query(".ui-submitted")
        if found:
            found.first(Static).update(text)
        else:
            self.mount(Static(text, classes="ui-submitted dim", markup=False))

    # --- building ----------------------------------------------------------------------------

    def build(self, comp: C.Component) -> Widget:
        """The widget tree for one component (children built before it is mounted)."""
        if isinstance(comp, C.Card | C.Form):
            kids: list[Widget] = []
            if isinstance(comp, C.Card) and comp.text:
                kids.append(Markdown(comp.text))
            kids += [self.build(c) for c in comp.children()]
            if isinstance(comp, C.Form):
                kids.append(Button(comp.submit, name=comp.id, variant="primary"))
            return _titled(kids, comp)
        return self._leaf(comp)

    def _leaf(self, comp: C.Component) -> Widget:
        if isinstance(comp, C.Choice):
            return ChoiceOne(comp) if comp.mode == "single" else ChoiceMany(comp)
        if isinstance(comp, C.Input):
            return InputBox(comp)
        if isinstance(comp, C.Toggle):
            return ToggleBox(comp)
        if isinstance(comp, C.Slider | C.Stepper):
            return RangeBox(comp)
        if isinstance(comp, C.Button):
            return Button(comp.label, name=comp.id)
        if isinstance(comp, C.Table):
            return TableBox(comp)
        if isinstance(comp, C.ListComponent) and comp.checkable:
            return Checklist(comp)
        if isinstance(comp, C.Tabs):
            return TabsBox(comp, self)
        if isinstance(comp, C.Text):
            return Markdown(comp.text, name=comp.id)
        if isinstance(comp, C.Progress):
            bar = ProgressBar(total=100, show_eta=False, name=comp.id)
            bar.progress = comp.value * 100
            return Vertical(Label(comp.label or ""), bar, name=comp.id) if comp.label else bar
        return Plain(comp, _plain_text(comp))

    async def add_component(self, comp: C.Component) -> None:
        """Mount one more top-level component (progressive rendering)."""
        self.components.append(comp)
        await self.mount(self.build(comp))

    def finish(self, document: C.Document) -> None:
        """The whole document arrived: actions may run from now on."""
        self.document = document
        self.title_text = self.border_title = document.title

    # --- state -------------------------------------------------------------------------------

    def bound(self) -> dict[str, Bound]:
        return {
            w.component.id: w for w in self.query("*") if isinstance(w, Bound) and w.component.binds
        }

    def read_state(self) -> dict[str, Any]:
        return {k: w.read() for k, w in self.bound().items()}

    def write_state(self, values: dict[str, Any]) -> None:
        """Set values (no gesture: the widgets' change events are not turned into actions)."""
        widgets = self.bound()
        with self.prevent(*CHANGE_EVENTS):
            for key, value in values.items():
                widgets[key].write(value)

    def ui_state(self) -> UiState | None:
        if self.document is None:
            return None
        state = UiState(self.document)
        state.values.update(self.read_state())
        return state

    # --- gestures ----------------------------------------------------------------------------

    def _raise(self, component_id: str, gesture: Gesture) -> None:
        state = self.ui_state()
        if state is None or self.document is None:
            return  # still streaming: values are kept by the widgets; actions wait
        action = make_action(self.document, state, component_id, gesture)
        if action.execution.reset:
            self.write_state(state.initial)
        self.post_message(self.ActionRaised(self, action))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        owner = _owner(event.button)
        if isinstance(owner, RangeBox):
            owner.nudge(1 if event.button.name == "inc" else -1)
            self._raise(owner.component.id, "change")
            return
        comp_id = event.button.name or ""
        kind = next((c for c in self._all() if c.id == comp_id), None)
        self._raise(comp_id, "submit" if isinstance(kind, C.Form) else "click")

    def _all(self) -> list[C.Component]:
        out: list[C.Component] = []
        stack = list(self.components)
        while stack:
            c = stack.pop(0)
            out.append(c)
            stack.extend(c.children())
        return out

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        self._changed(event.radio_set)

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        event.stop()
        self._changed(
            event.selection_list,
            "check" if isinstance(event.selection_list, Checklist) else "change",
        )

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        owner = _owner(event.input)
        if isinstance(owner, TableBox):
            owner.filter(event.value)
            self._raise(owner.component.id, "filter")
        elif owner is not None:
            self._changed(owner)

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        self._changed(_owner(event.switch))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        owner = _owner(event.data_table)
        if isinstance(owner, TableBox):
            owner.sort_by(event.column_index)
            self._raise(owner.component.id, "sort")

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        if isinstance(event.tabbed_content, TabsBox):
            self._raise(event.tabbed_content.component.id, "select_tab")

    def _changed(self, widget: Widget | None, gesture: Gesture = "change") -> None:
        if isinstance(widget, Bound):
            self._raise(widget.component.id, gesture)


def _owner(widget: Widget) -> Widget | None:
    """The nearest Bound ancestor (or the widget itself)."""
    node: Any = widget
    while node is not None and not isinstance(node, GenUIView):
        if isinstance(node, Bound):
            return node
        node = node.parent
    return None


def _titled(kids: list[Widget], comp: C.Component) -> Widget:
    box = Vertical(*kids, name=comp.id, classes=f"ui-{comp.type}")
    box.border_title = comp.caption() if isinstance(comp, C.Card) else ""
    return box


def _plain_text(comp: C.Component) -> str:
    if isinstance(comp, C.ListComponent):
        return "\n".join(
            (f"{i + 1}. " if comp.ordered else "• ") + t for i, t in enumerate(comp.items)
        )
    if isinstance(comp, C.Chart):
        return chart_text(comp)
    props = comp.model_dump(exclude={"type", "id"}, exclude_none=True)
    return f"{comp.type}: " + ", ".join(f"{k}={v}" for k, v in props.items())
