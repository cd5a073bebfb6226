"""The inspector: everything recorded about the selected turn, summaries included.

Summaries appear here and nowhere in the chat. An agent turn's tool steps follow, folded like
in the chat (``ToolSteps``). Shows what it is given; asks nothing.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from macaron_local.facade import TurnItem, badge
from macaron_local.tui.widgets.toolsteps import ToolSteps

BAR = 16


def backend_text(item: TurnItem) -> str:
    """``remote (Macaron-V1-Venti, forced)``, ``local``, or the failover and its reason."""
    heavy = item.meta.get("heavy")
    if item.backend == "remote":
        why = [str(x) for x in (item.meta.get("remote_model"), heavy) if x]
        return "remote" + (f" ({', '.join(why)})" if why else "")
    if item.failover_reason:
        detail = item.meta.get("failover_detail")
        return (
            f"local: the remote failed ({item.failover_reason}"
            + (f": {detail})" if detail else ")")
            + ", so this turn was answered locally"
        )
    return "local"


def describe(item: TurnItem, names: dict[str, str] | None = None) -> Text:
    """The inspector's text for one turn (``names``: each label's specialist name)."""
    names = names or {}
    out = Text()
    out.append("Turn ", style="bold").append(f"{item.id}\n")
    answered = badge(item.label, item.route_kind, name=names.get(item.label, ""))
    out.append("Answered by ", style="bold").append(answered + "\n")
    out.append("Backend ", style="bold").append(backend_text(item) + "\n")
    if item.tool_calls:
        failed = f", {item.failed_calls} failed" if item.failed_calls else ""
        out.append("Tool calls ", style="bold").append(f"{len(item.tool_calls)}{failed}\n")
    if item.branches > 1:
        out.append("Branch ", style="bold").append(f"{item.branch} of {item.branches}\n")
    out.append("\nRoute probabilities\n", style="bold")
    if not item.route_probs:
        out.append("  (not routed: the label was pinned or sticky)\n", style="dim")
    for label, p in sorted(item.route_probs.items(), key=lambda kv: -kv[1]):
        bar = "█" * round(p * BAR)
        out.append(f"  {label} {names.get(label, ''):<6} {bar:<{BAR}} {p:6.1%}\n")
    out.append("\nAdapter revision ", style="bold").append(f"{item.adapter_revision}\n")
    if "seed" in item.meta:
        out.append("Sampling seed ", style="bold").append(f"{item.meta['seed']}\n")
    out.append("Profile hash ", style="bold").append(f"{item.profile_hash[:16]}\n")
    out.append("\nTokens\n", style="bold")
    for key, value in item.tokens.items():
        out.append(f"  {key:<10} {value}\n")
    out.append("\nTimings\n", style="bold")
    for key, value in item.timings.items():
        out.append(f"  {key:<10} {value:.0f} ms\n")
    out.append("\nSummary\n", style="bold")
    out.append(
        f"  {item.summary}\n" if item.summary else "  (not written yet)\n",
        style="" if item.summary else "dim",
    )
    return out


class Inspector(VerticalScroll):
    """Details of one turn (or a hint when none is selected)."""

    DEFAULT_CSS = """
    Inspector { width: 44; }
    """

    def compose(self):  # noqa: ANN201
        yield Static("Select an answer to inspect it.", id="inspector-body")
        yield ToolSteps(id="inspector-steps")

    def show(self, item: TurnItem | None) -> None:
        body = self.query_one("#inspector-body", Static)
        assistant = getattr(self.app, "assistant", None)
        names = assistant.specialists() if assistant is not None else {}
        body.update(describe(item, names) if item else "Select an answer to inspect it.")
        steps = self.query_one("#inspector-steps", ToolSteps)
        self.call_later(steps.show, item.tool_calls if item else ())
