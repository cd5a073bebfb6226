"""The seeded personal world every agent task starts from (fixed clock: Fri 2025-03-14 10:30).

Writes notes, todos and reminders into ``personal.db`` and a few files into the workspace.
Deterministic; written for this benchmark only (never training data).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from macaron_local.agent.personal import personal_db

NOW = datetime(2025, 3, 14, 10, 30)

TODOS = [  # title, due, estimate_h, status
    ("File expense report", "2025-03-10", 1.5, "open"),
    ("Renew passport", "2025-03-01", 2.0, "open"),
    ("Call plumber about the leak", "2025-03-12", 0.5, "open"),
    ("Buy birthday gift for Ana", "2025-03-16", 1.0, "open"),
    ("Prepare quarterly slides", "2025-03-20", 4.0, "open"),
    ("Errands: pick up dry cleaning", "2025-03-13", 0.5, "open"),
    ("Errands: post office", "2025-03-15", 0.75, "open"),
    ("Errands: return library books", None, 0.25, "open"),
    ("Book dentist appointment", None, None, "open"),
    ("Clean garage", "2025-03-08", 3.0, "done"),
    ("Pay electricity bill", "2025-03-05", 0.25, "done"),
    ("Read chapter 4", "2025-03-18", 1.25, "open"),
]
NOTES = [  # text, tags, created
    ("Wifi password at the cabin is pinecone42", ["home", "travel"], "2025-02-02T09:10"),
    ("Ana likes dark chocolate and jazz records", ["people"], "2025-02-10T18:00"),
    ("Project Falcon kickoff moved to March 24", ["work"], "2025-03-03T11:20"),
    ("Dentist: Dr. Ruiz, phone 555-0142", ["health"], "2025-03-04T08:45"),
    ("Falcon budget approved: 48000 EUR", ["work", "finance"], "2025-03-07T16:30"),
    ("Running log: 5.2 km in 31 minutes", ["fitness"], "2025-03-09T07:15"),
    ("Running log: 7.5 km in 44 minutes", ["fitness"], "2025-03-11T07:05"),
    ("Running log: 3.8 km in 22 minutes", ["fitness"], "2025-03-13T07:20"),
    ("Idea: weekly review every Sunday evening", ["habits"], "2025-03-12T21:00"),
    ("Car insurance renews on 2025-04-02, policy 77-1193", ["finance", "car"], "2025-03-01T10:00"),
]
REMINDERS = [  # text, at
    ("Take out recycling", "2025-03-14T19:00"),
    ("Team standup", "2025-03-17T09:30"),
    ("Water the plants", "2025-03-15T08:00"),
    ("Call mom", "2025-03-16T17:00"),
    ("Stretch break", "2025-03-14T15:00"),
]
FILES = {
    "expenses.csv": "date,category,amount\n2025-03-01,groceries,54.20\n2025-03-02,transport,"
    "12.50\n2025-03-05,groceries,38.75\n2025-03-07,eating out,42.00\n"
    "2025-03-09,transport,8.40\n2025-03-11,groceries,61.10\n",
    "trip/packing.txt": "passport\ncharger\nrain jacket\nhiking boots\nsunscreen\n",
    "trip/itinerary.md": "# Lisbon\n- 2025-04-10 fly out 08:15\n- 2025-04-14 fly back 19:40\n",
    "inbox/scan_001.pdf.txt": "Invoice 2025-031 from Acme Web: 120.00 EUR\n",
    "inbox/scan_002.pdf.txt": "Receipt: hardware store, 23.49 EUR\n",
    "inbox/notes_draft.txt": "draft: ideas for the garden\n",
    "readings.json": json.dumps({"weights_kg": [81.2, 80.9, 80.4, 80.6, 79.9]}),
}


def seed(data_dir: Path, workspace: Path) -> None:
    """Create the personal database and workspace files from scratch."""
    with personal_db(data_dir) as db:
        db.executemany(
            "INSERT INTO todos (title, due, estimate_h, status) VALUES (?, ?, ?, ?)", TODOS
        )
        db.executemany(
            "INSERT INTO notes (text, tags, created) VALUES (?, ?, ?)",
            [(t, json.dumps(g), c) for t, g, c in NOTES],
        )
        db.executemany("INSERT INTO reminders (text, at) VALUES (?, ?)", REMINDERS)
    for rel, text in FILES.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
