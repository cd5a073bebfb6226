# ruff: noqa: E501
"""Hand-written L1 (Agent) requests for measuring how often L1 output parses in its tool format.

Each item: (domain, text). Domains name the kind of tool the request needs; "multi" needs a
chain of several. Written for evaluation only, independently of models/data/.
"""

from __future__ import annotations

ITEMS: list[tuple[str, str]] = [
    ("todos", "what's overdue on my todo list and how many hours is that in total?"),
    ("todos", "add 'renew car insurance' to my todos, due the 28th, high priority"),
    ("todos", "mark every todo tagged 'errands' as done"),
    ("todos", "how many open todos do I have per tag?"),
    ("todos", "move all of today's unfinished todos to tomorrow"),
    ("todos", "which todo has been open the longest?"),
    ("todos", "delete the todo called 'test entry'"),
    ("reminders", "remind me to stretch every 2 hours between 9 and 5 on weekdays"),
    ("reminders", "what reminders do I have this week?"),
    ("reminders", "cancel all reminders that mention 'gym'"),
    ("reminders", "remind me on the last Friday of every month to submit my expenses"),
    ("reminders", "set a reminder for 10 minutes before my 3pm call: 'prep slides'"),
    ("reminders", "push my 'call grandma' reminder back by a day"),
    ("reminders", "did I already set a reminder about the boiler service?"),
    ("notes", "create a note called 'gift ideas' with: scarf for Ana, book for Dev, plant for Mo"),
    ("notes", "search my notes for anything mentioning 'warranty'"),
    ("notes", "append 'call back on Tuesday' to my note 'plumber'"),
    ("notes", "which of my notes were edited in the last 7 days?"),
    ("notes", "read me my note about the bike lock code"),
    ("notes", "merge my notes 'books 2024' and 'books to read' into one"),
    ("dates", "how many working days are there between today and 31 March?"),
    ("dates", "what weekday is 3 weeks from today?"),
    ("dates", "how old will I be on 1 January 2030 if I was born on 17 May 1991?"),
    ("dates", "how many days ago was my last dentist appointment? it's in my reminders as done"),
    ("dates", "if my notice period is 8 weeks starting today, what's my last working day?"),
    ("dates", "how many weeks until the due date in my todo 'submit thesis'?"),
    ("files", "list the five biggest files in my workspace"),
    ("files", "what's the total of the 'amount' column in expenses.csv?"),
    (
        "files",
        "create a file called shopping.txt in my workspace with eggs, rice and lemons on separate lines",
    ),
    ("files", "how many rows in contacts.csv have no email address?"),
    ("files", "move every .pdf in my workspace into a folder called pdfs"),
    ("files", "show me the first 10 lines of notes/meeting.md"),
    ("files", "which files in my workspace were modified today?"),
    ("units", "my runs.csv has distances in miles, add a column with kilometres"),
    (
        "units",
        "convert the prices in trip_costs.csv from USD to EUR at 0.92 and give me the new total",
    ),
    ("units", "the recipe in my note 'pancakes' uses cups, rewrite it in grams and millilitres"),
    ("units", "what's my average weight in kg from weights.csv (it's logged in pounds)?"),
    ("shell", "run the unit tests in my project folder and tell me how many passed"),
    ("shell", "how much free disk space do I have?"),
    ("shell", "what's the current git branch of the repo in my workspace, and is it clean?"),
    ("shell", "show me which processes are using the most memory right now"),
    ("shell", "count how many TODO comments there are in the .py files in my project"),
    ("multi", "find all todos due this week and set a reminder the evening before each one"),
    (
        "multi",
        "look through my notes for anything with a date in it and make reminders for the ones still in the future",
    ),
    (
        "multi",
        "add up the hours in timesheet.csv for this month and save the total as a note called 'hours May'",
    ),
    ("multi", "take the lines in shopping.txt and add each one as a todo tagged 'groceries'"),
    ("multi", "how many days until each of my reminders this month? sort them by soonest"),
    (
        "multi",
        "archive my done todos into a note called 'done archive', then delete them from the list",
    ),
]
