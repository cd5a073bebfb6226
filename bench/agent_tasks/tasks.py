"""Thirty-two multi-step personal tasks, each with two scripted oracle policies and a checker.

``repl`` is the policy of an agent that composes calls in the persistent REPL: a generator that
yields code blocks, receives each block's output and returns the final answer. ``fc`` is the
discrete function-calling policy: it yields ``C(tool, **args)`` one call at a time, receives
the parsed result and returns the final answer. ``check(answer, world)`` decides success from
the final answer and the state of the world after the run; expected values are computed from
the world, never typed in. Written for this benchmark only (never training data).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

TODAY = date(2025, 3, 14)


@dataclass(frozen=True)
class C:
    tool: str
    args: dict[str, Any]

    def __init__(self, tool: str, **args: Any) -> None:
        object.__setattr__(self, "tool", tool)
        object.__setattr__(self, "args", args)


@dataclass(frozen=True)
class World:
    data_dir: Path
    workspace: Path

    def rows(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        conn = sqlite3.connect(self.data_dir / "personal.db")
        conn.row_factory = sqlite3.Row
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def overdue(self) -> list[sqlite3.Row]:
        return self.rows(
            "SELECT * FROM todos WHERE status='open' AND due < ? ORDER BY id", TODAY.isoformat()
        )

    def file(self, rel: str) -> str:
        return (self.workspace / rel).read_text()


@dataclass(frozen=True)
class Task:
    id: str
    request: str
    repl: Callable[[], Generator[str, str, str]]
    fc: Callable[[], Generator[C, Any, str]]
    check: Callable[[str, World], bool]


def nums(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))]


def has(text: str, value: float, tol: float = 0.01) -> bool:
    return any(abs(n - value) <= tol for n in nums(text))


def runs(world: World) -> list[tuple[float, float]]:
    out = []
    for r in world.rows("SELECT text FROM notes WHERE text LIKE 'Running log:%'"):
        km, mins = re.findall(r"([\d.]+) km in (\d+) minutes", r["text"])[0]
        out.append((float(km), float(mins)))
    return out


def expenses(world: World) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(world.file("expenses.csv"))))


TASKS: list[Task] = []


def task(id: str, request: str, check: Callable[[str, World], bool]):
    def wrap(pair: tuple[Callable[..., Any], Callable[..., Any]]) -> None:
        TASKS.append(Task(id, request, pair[0], pair[1], check))

    return wrap


# --- todos -----------------------------------------------------------------------------------


def _r01():
    out = yield ("od = todos.list(status='overdue')\nsum(t['estimate_h'] or 0 for t in od)")
    return f"Your overdue todos add up to {out} hours."


def _f01():
    od = yield C("todos.list", status="overdue")
    return f"Your overdue todos add up to {sum(t['estimate_h'] or 0 for t in od)} hours."


task(
    "overdue_total",
    "total the estimates of my overdue todos",
    lambda a, w: has(a, sum(r["estimate_h"] or 0 for r in w.overdue())),
)((_r01, _f01))


def _r02():
    out = yield "len(todos.list(status='overdue'))"
    return f"You have {out} overdue todos."


def _f02():
    od = yield C("todos.list", status="overdue")
    return f"You have {len(od)} overdue todos."


task(
    "overdue_count", "how many of my todos are overdue?", lambda a, w: has(a, len(w.overdue()), 0)
)((_r02, _f02))


def _r03():
    out = yield (
        "ids = [t['id'] for t in todos.list() if 'errands' in t['title'].lower()]\n"
        "for i in ids:\n    todos.done(i)\nlen(ids)"
    )
    return f"Marked {out} errands as done."


def _f03():
    todos = yield C("todos.list")
    n = 0
    for t in todos:
        if "errands" in t["title"].lower():
            yield C("todos.done", id=t["id"])
            n += 1
    return f"Marked {n} errands as done."


task(
    "errands_done",
    "mark every errand on my todo list as done",
    lambda a, w: (
        not w.rows("SELECT 1 FROM todos WHERE status='open' AND title LIKE '%errands%'")
        and len(w.rows("SELECT 1 FROM todos WHERE status='done' AND title LIKE '%errands%'")) == 3
    ),
)((_r03, _f03))


def _r04():
    out = yield (
        "from datetime import date, timedelta\n"
        "today = date.fromisoformat(clock.now()[:10])\n"
        "sunday = (today + timedelta(days=6 - today.weekday())).isoformat()\n"
        "sum(t['estimate_h'] or 0 for t in todos.list()\n"
        "    if t['due'] and t['due'] <= sunday)"
    )
    return f"{out} hours of work are due by Sunday."


def _f04():
    now = yield C("clock.now")
    today = date.fromisoformat(now[:10])
    sunday = (today + timedelta(days=6 - today.weekday())).isoformat()
    todos = yield C("todos.list")
    return f"{sum(t['estimate_h'] or 0 for t in todos if t['due'] and t['due'] <= sunday)} hours."


task(
    "due_by_sunday",
    "how many estimated hours of open todos are due by this Sunday?",
    lambda a, w: has(
        a,
        sum(
            r["estimate_h"] or 0
            for r in w.rows("SELECT * FROM todos WHERE status='open' AND due <= '2025-03-16'")
        ),
    ),
)((_r04, _f04))


def _r05():
    out = yield (
        "today = clock.now()[:10]\n"
        "nxt = min((t for t in todos.list() if t['due'] and t['due'] >= today), "
        "key=lambda t: t['due'])\nnxt['title'], nxt['due']"
    )
    return f"Next up: {out}"


def _f05():
    now = yield C("clock.now")
    todos = yield C("todos.list")
    nxt = min((t for t in todos if t["due"] and t["due"] >= now[:10]), key=lambda t: t["due"])
    return f"Next up: {nxt['title']} on {nxt['due']}"


task(
    "next_due",
    "which of my todos is due next?",
    lambda a, w: (
        w.rows(
            "SELECT title FROM todos WHERE status='open' AND due >= '2025-03-14' "
            "ORDER BY due LIMIT 1"
        )[0]["title"]
        in a
    ),
)((_r05, _f05))


def _r06():
    out = yield "[t['title'] for t in todos.list() if not t['due']]"
    return f"No due date: {out}"


def _f06():
    todos = yield C("todos.list")
    return f"No due date: {[t['title'] for t in todos if not t['due']]}"


task(
    "no_due_date",
    "which open todos don't have a due date?",
    lambda a, w: all(
        r["title"] in a
        for r in w.rows("SELECT title FROM todos WHERE status='open' AND due IS NULL")
    ),
)((_r06, _f06))


def _r07():
    out = yield (
        "t = [t for t in todos.list() if t['title'] == 'Read chapter 4'][0]\n"
        "todos.done(t['id'])\n"
        "todos.add(t['title'], due='mon', estimate_h=t['estimate_h'])['due']"
    )
    return f"Moved 'Read chapter 4' to {out}."


def _f07():
    todos = yield C("todos.list")
    t = [t for t in todos if t["title"] == "Read chapter 4"][0]
    yield C("todos.done", id=t["id"])
    new = yield C("todos.add", title=t["title"], due="mon", estimate_h=t["estimate_h"])
    return f"Moved 'Read chapter 4' to {new['due']}."


task(
    "move_due",
    "push 'Read chapter 4' to Monday",
    lambda a, w: (
        [
            r["due"]
            for r in w.rows("SELECT due FROM todos WHERE status='open' AND title='Read chapter 4'")
        ]
        == ["2025-03-17"]
    ),
)((_r07, _f07))


def _r08():
    out = yield (
        "items = [x for x in files.read('trip/packing.txt').splitlines() if x]\n"
        "for x in items:\n    todos.add('Pack ' + x, due='2025-04-09')\nlen(items)"
    )
    return f"Added {out} packing todos."


def _f08():
    text = yield C("files.read", path="trip/packing.txt")
    items = [x for x in text.splitlines() if x]
    for x in items:
        yield C("todos.add", title="Pack " + x, due="2025-04-09")
    return f"Added {len(items)} packing todos."


task(
    "packing_todos",
    "make a todo for each item on my packing list, due April 9",
    lambda a, w: (
        len(w.rows("SELECT 1 FROM todos WHERE title LIKE 'Pack %' AND due='2025-04-09'"))
        == len([x for x in w.file("trip/packing.txt").splitlines() if x])
    ),
)((_r08, _f08))


def _r09():
    out = yield ("op = todos.list()\nround(sum(t['estimate_h'] or 0 for t in op) / 8, 2)")
    return f"That is about {out} working days."


def _f09():
    op = yield C("todos.list")
    return f"That is about {round(sum(t['estimate_h'] or 0 for t in op) / 8, 2)} working days."


task(
    "workdays",
    "if I work 8 hours a day, how many days would all my open todos take?",
    lambda a, w: has(
        a, sum(r["estimate_h"] or 0 for r in w.rows("SELECT * FROM todos WHERE status='open'")) / 8
    ),
)((_r09, _f09))


def _r10():
    out = yield "[t['title'] for t in todos.list(status='done')]"
    return f"Done: {out}"


def _f10():
    d = yield C("todos.list", status="done")
    return f"Done: {[t['title'] for t in d]}"


task(
    "done_list",
    "what have I finished already?",
    lambda a, w: all(
        r["title"] in a for r in w.rows("SELECT title FROM todos WHERE status='done'")
    ),
)((_r10, _f10))


# --- notes -----------------------------------------------------------------------------------


def _simple(code: str, call: C, fmt: Callable[[Any], str]):
    """A one-call task: the REPL block and the single discrete call return the same value."""
    import ast

    def r():
        out = yield code
        return fmt(ast.literal_eval(out) if out else None)

    def f():
        v = yield call
        return fmt(v)

    return r, f


task("wifi", "what's the wifi password at the cabin?", lambda a, w: "pinecone42" in a)(
    _simple(
        "[n['text'] for n in notes.search('wifi cabin')]",
        C("notes.search", query="wifi cabin"),
        lambda v: f"From your notes: {v[0]['text'] if isinstance(v[0], dict) else v[0]}",
    )
)


def _r12():
    out = yield (
        "import re\nkm = [float(re.search(r'([\\d.]+) km', n['text']).group(1)) "
        "for n in notes.search('running log')]\nround(sum(km), 2)"
    )
    return f"You ran {out} km in total."


def _f12():
    ns = yield C("notes.search", query="running log")
    km = [float(re.search(r"([\d.]+) km", n["text"]).group(1)) for n in ns]
    return f"You ran {round(sum(km), 2)} km in total."


task(
    "running_total",
    "how far have I run in total according to my running log?",
    lambda a, w: has(a, sum(k for k, _ in runs(w))),
)((_r12, _f12))


def _r13():
    out = yield (
        "import re\nrs = [tuple(map(float, re.search(r'([\\d.]+) km in (\\d+)', "
        "n['text']).groups())) for n in notes.search('running log')]\n"
        "round(sum(m for _, m in rs) / sum(k for k, _ in rs), 2)"
    )
    return f"Your average pace is {out} min/km."


def _f13():
    ns = yield C("notes.search", query="running log")
    rs = [tuple(map(float, re.search(r"([\d.]+) km in (\d+)", n["text"]).groups())) for n in ns]
    return f"Your average pace is {round(sum(m for _, m in rs) / sum(k for k, _ in rs), 2)} min/km."


task(
    "running_pace",
    "what's my average running pace per km?",
    lambda a, w: has(a, sum(m for _, m in runs(w)) / sum(k for k, _ in runs(w))),
)((_r13, _f13))


def _r14():
    out = yield "len(notes.search('tag:work'))"
    return f"{out} notes are tagged work."


def _f14():
    ns = yield C("notes.search", query="tag:work")
    return f"{len(ns)} notes are tagged work."


task(
    "work_notes",
    "how many of my notes are tagged work?",
    lambda a, w: has(
        a, sum("work" in json.loads(r["tags"]) for r in w.rows("SELECT tags FROM notes")), 0
    ),
)((_r14, _f14))


def _r15():
    out = yield (
        "titles = [t['title'] for t in todos.list(status='overdue')]\n"
        "notes.add('Overdue: ' + '; '.join(titles), tags=['review'])['id']"
    )
    return f"Saved note {out} with your overdue todos."


def _f15():
    od = yield C("todos.list", status="overdue")
    n = yield C("notes.add", text="Overdue: " + "; ".join(t["title"] for t in od), tags=["review"])
    return f"Saved note {n['id']} with your overdue todos."


task(
    "overdue_note",
    "write a note tagged review that lists my overdue todos",
    lambda a, w: any(
        all(o["title"] in r["text"] for o in w.overdue())
        for r in w.rows("SELECT text FROM notes WHERE tags LIKE '%review%'")
    ),
)((_r15, _f15))


def _r16():
    out = yield (
        "import re\nn = notes.search('insurance')[0]['text']\n"
        "clock.days_until(re.search(r'\\d{4}-\\d{2}-\\d{2}', n).group())"
    )
    return f"Your car insurance renews in {out} days."


def _f16():
    ns = yield C("notes.search", query="insurance")
    day = re.search(r"\d{4}-\d{2}-\d{2}", ns[0]["text"]).group()
    d = yield C("clock.days_until", date=day)
    return f"Your car insurance renews in {d} days."


task(
    "insurance_days",
    "how many days until my car insurance renews?",
    lambda a, w: has(a, (date(2025, 4, 2) - TODAY).days, 0),
)((_r16, _f16))


def _r17():
    out = yield (
        "likes = notes.search('Ana likes')[0]['text']\n"
        "gift = [t for t in todos.list() if 'Ana' in t['title']][0]\nlikes, gift['due']"
    )
    return f"From your notes (likes, gift due): {out}"


def _f17():
    ns = yield C("notes.search", query="Ana likes")
    todos = yield C("todos.list")
    gift = [t for t in todos if "Ana" in t["title"]][0]
    return f"{ns[0]['text']}; the gift is due {gift['due']}."


task(
    "gift_for_ana",
    "what should I get Ana, and by when?",
    lambda a, w: "chocolate" in a and "2025-03-16" in a,
)((_r17, _f17))


def _r18():
    out = yield (
        "dent = notes.search('dentist')[0]['text'].split('phone ')[1]\n"
        "t = [t for t in todos.list() if t['title'] == 'Book dentist appointment'][0]\n"
        "todos.done(t['id'])\ntodos.add(f\"Book dentist appointment ({dent})\")['title']"
    )
    return f"Updated the todo: {out}"


def _f18():
    ns = yield C("notes.search", query="dentist")
    phone = ns[0]["text"].split("phone ")[1]
    todos = yield C("todos.list")
    t = [t for t in todos if t["title"] == "Book dentist appointment"][0]
    yield C("todos.done", id=t["id"])
    new = yield C("todos.add", title=f"Book dentist appointment ({phone})")
    return f"Updated the todo: {new['title']}"


task(
    "dentist_phone",
    "put the dentist's phone number on my 'book dentist' todo",
    lambda a, w: bool(
        w.rows("SELECT 1 FROM todos WHERE status='open' AND title LIKE '%dentist%555-0142%'")
    ),
)((_r18, _f18))


# --- reminders -------------------------------------------------------------------------------


def _r19():
    out = yield (
        "today = clock.now()[:10]\n"
        "[(r['at'][11:], r['text']) for r in reminders.list()\n"
        "    if r['at'].startswith(today)]"
    )
    return f"Today: {out}"


def _f19():
    now = yield C("clock.now")
    rs = yield C("reminders.list")
    return f"Today: {[(r['at'][11:], r['text']) for r in rs if r['at'].startswith(now[:10])]}"


task(
    "reminders_today",
    "what reminders do I have today?",
    lambda a, w: all(
        r["text"] in a for r in w.rows("SELECT text FROM reminders WHERE at LIKE '2025-03-14%'")
    ),
)((_r19, _f19))


def _r20():
    out = yield (
        "import re\nfly = re.search(r'(\\d{4}-\\d{2}-\\d{2}) fly out', "
        "files.read('trip/itinerary.md')).group(1)\n"
        "from datetime import date, timedelta\n"
        "day = (date.fromisoformat(fly) - timedelta(days=1)).isoformat()\n"
        "reminders.add('Pack for Lisbon', day + ' 18:00')['at']"
    )
    return f"I'll remind you to pack at {out}."


def _f20():
    text = yield C("files.read", path="trip/itinerary.md")
    fly = re.search(r"(\d{4}-\d{2}-\d{2}) fly out", text).group(1)
    day = (date.fromisoformat(fly) - timedelta(days=1)).isoformat()
    r = yield C("reminders.add", text="Pack for Lisbon", at=day + " 18:00")
    return f"I'll remind you to pack at {r['at']}."


task(
    "pack_reminder",
    "remind me to pack the evening before my Lisbon flight, at 6pm",
    lambda a, w: bool(w.rows("SELECT 1 FROM reminders WHERE at='2025-04-09T18:00'")),
)((_r20, _f20))


def _r21():
    out = yield (
        "od = todos.list(status='overdue')\nfor t in od:\n"
        "    reminders.add('Overdue: ' + t['title'], 'tomorrow 09:00')\nlen(od)"
    )
    return f"Set {out} reminders for tomorrow at 9."


def _f21():
    od = yield C("todos.list", status="overdue")
    for t in od:
        yield C("reminders.add", text="Overdue: " + t["title"], at="tomorrow 09:00")
    return f"Set {len(od)} reminders for tomorrow at 9."


task(
    "remind_overdue",
    "remind me about each overdue todo tomorrow at 9am",
    lambda a, w: (
        len(w.rows("SELECT 1 FROM reminders WHERE at='2025-03-15T09:00' AND text LIKE 'Overdue:%'"))
        == len(w.overdue())
    ),
)((_r21, _f21))


def _r22():
    out = yield (
        "now = clock.now()[:16]\n"
        "nxt = [r for r in reminders.list() if r['at'] > now][0]\nnxt['text'], nxt['at']"
    )
    return f"Next reminder: {out}"


def _f22():
    now = yield C("clock.now")
    rs = yield C("reminders.list")
    nxt = [r for r in rs if r["at"] > now[:16]][0]
    return f"Next reminder: {nxt['text']} at {nxt['at']}"


task("next_reminder", "what's my next reminder?", lambda a, w: "Stretch break" in a)((_r22, _f22))


# --- files -----------------------------------------------------------------------------------


def _sum_cat(text: str) -> dict[str, float]:
    totals: dict[str, float] = {}
    for row in csv.DictReader(io.StringIO(text)):
        totals[row["category"]] = round(totals.get(row["category"], 0) + float(row["amount"]), 2)
    return totals


_CAT = (
    "import csv, io\nrows = list(csv.DictReader(io.StringIO(files.read('expenses.csv'))))\n"
    "tot = {}\nfor r in rows:\n"
    "    tot[r['category']] = round(tot.get(r['category'], 0) + float(r['amount']), 2)\n"
)


def _r23():
    out = yield _CAT + "tot['groceries']"
    return f"You spent {out} on groceries."


def _f23():
    text = yield C("files.read", path="expenses.csv")
    return f"You spent {_sum_cat(text)['groceries']} on groceries."


task(
    "groceries_total",
    "how much did I spend on groceries according to expenses.csv?",
    lambda a, w: has(
        a, sum(float(r["amount"]) for r in expenses(w) if r["category"] == "groceries")
    ),
)((_r23, _f23))


def _r24():
    out = yield _CAT + "max(tot, key=tot.get)"
    return f"Your biggest category is {out}."


def _f24():
    text = yield C("files.read", path="expenses.csv")
    t = _sum_cat(text)
    return f"Your biggest category is {max(t, key=t.get)}."


task(
    "top_category",
    "which spending category is biggest in my expenses file?",
    lambda a, w: "groceries" in a,
)((_r24, _f24))


def _r25():
    out = yield _CAT + (
        "files.write('summary.txt', ''.join(f'{k}: {v:.2f}\\n' for k, v in sorted(tot.items())))"
    )
    return f"Wrote summary.txt ({out} characters)."


def _f25():
    text = yield C("files.read", path="expenses.csv")
    body = "".join(f"{k}: {v:.2f}\n" for k, v in sorted(_sum_cat(text).items()))
    n = yield C("files.write", path="summary.txt", text=body)
    return f"Wrote summary.txt ({n} characters)."


task(
    "expense_summary",
    "write the total per category from expenses.csv into summary.txt",
    lambda a, w: (
        (w.workspace / "summary.txt").exists()
        and all(
            f"{k}: {v:.2f}" in w.file("summary.txt")
            for k, v in _sum_cat(w.file("expenses.csv")).items()
        )
    ),
)((_r25, _f25))


def _r26():
    out = yield (
        "moved = []\nfor name in files.list('inbox'):\n"
        "    if 'invoice' in files.read('inbox/' + name).lower():\n"
        "        moved.append(files.move('inbox/' + name, 'invoices/' + name))\nmoved"
    )
    return f"Moved {out}."


def _f26():
    names = yield C("files.list", path="inbox")
    moved = []
    for name in names:
        text = yield C("files.read", path="inbox/" + name)
        if "invoice" in text.lower():
            moved.append((yield C("files.move", src="inbox/" + name, dst="invoices/" + name)))
    return f"Moved {moved}."


task(
    "file_invoices",
    "move the invoices in my inbox folder into an invoices folder",
    lambda a, w: (
        (w.workspace / "invoices/scan_001.pdf.txt").exists()
        and not (w.workspace / "inbox/scan_001.pdf.txt").exists()
        and (w.workspace / "inbox/scan_002.pdf.txt").exists()
    ),
)((_r26, _f26))


def _r27():
    out = yield (
        "import re\nround(sum(float(m) for n in files.list('inbox') for m in "
        "re.findall(r'([\\d.]+) EUR', files.read('inbox/' + n))), 2)"
    )
    return f"The scans in your inbox total {out} EUR."


def _f27():
    names = yield C("files.list", path="inbox")
    total = 0.0
    for n in names:
        text = yield C("files.read", path="inbox/" + n)
        total += sum(float(m) for m in re.findall(r"([\d.]+) EUR", text))
    return f"The scans in your inbox total {round(total, 2)} EUR."


task("inbox_total", "add up the amounts on the scans in my inbox", lambda a, w: has(a, 143.49))(
    (_r27, _f27)
)


task(
    "packing_count",
    "how many things are on my packing list?",
    lambda a, w: has(a, len([x for x in w.file("trip/packing.txt").splitlines() if x]), 0),
)(
    _simple(
        "len([x for x in files.read('trip/packing.txt').splitlines() if x])",
        C("files.read", path="trip/packing.txt"),
        lambda v: f"{v if isinstance(v, int) else len([x for x in v.splitlines() if x])} items.",
    )
)


# --- clock and units -------------------------------------------------------------------------


def _r29():
    out = yield (
        "import json\nw = json.loads(files.read('readings.json'))['weights_kg']\n"
        "units.convert(w[0] - w[-1], 'kg', 'lb')"
    )
    return f"You lost {out} lb."


def _f29():
    text = yield C("files.read", path="readings.json")
    ws = json.loads(text)["weights_kg"]
    lb = yield C("units.convert", value=ws[0] - ws[-1], from_unit="kg", to_unit="lb")
    return f"You lost {lb} lb."


task(
    "weight_lb",
    "how many pounds have I lost since my first weight reading?",
    lambda a, w: has(a, (81.2 - 79.9) / 0.45359237),
)((_r29, _f29))


def _r30():
    out = yield (
        "import re\nkm = max(float(re.search(r'([\\d.]+) km', n['text']).group(1)) "
        "for n in notes.search('running log'))\nunits.convert(km, 'km', 'mi')"
    )
    return f"Your longest run was {out} miles."


def _f30():
    ns = yield C("notes.search", query="running log")
    km = max(float(re.search(r"([\d.]+) km", n["text"]).group(1)) for n in ns)
    mi = yield C("units.convert", value=km, from_unit="km", to_unit="mi")
    return f"Your longest run was {mi} miles."


task(
    "longest_run_miles",
    "what's my longest run in miles?",
    lambda a, w: has(a, max(k for k, _ in runs(w)) / 1.609344),
)((_r30, _f30))


def _r31():
    out = yield (
        "import re\nfly = re.search(r'(\\d{4}-\\d{2}-\\d{2}) fly out', "
        "files.read('trip/itinerary.md')).group(1)\nclock.days_until(fly)"
    )
    return f"{out} days until you fly to Lisbon."


def _f31():
    text = yield C("files.read", path="trip/itinerary.md")
    fly = re.search(r"(\d{4}-\d{2}-\d{2}) fly out", text).group(1)
    d = yield C("clock.days_until", date=fly)
    return f"{d} days until you fly to Lisbon."


task(
    "days_to_trip",
    "how many days until my Lisbon trip?",
    lambda a, w: has(a, (date(2025, 4, 10) - TODAY).days, 0),
)((_r31, _f31))


task(
    "thermostat",
    "the cabin thermostat says 64 F, what is that in celsius?",
    lambda a, w: has(a, (64 - 32) * 5 / 9),
)(
    _simple(
        "units.convert(64, 'F', 'C')",
        C("units.convert", value=64, from_unit="F", to_unit="C"),
        lambda v: f"That's {v} °C.",
    )
)
