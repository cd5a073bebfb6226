# ruff: noqa: E501
"""Hand-written finished turns (label, request, answer) for summary length compliance.

The specialist that answered must summarize each turn in at most 192 tokens. Answers range
from one line to long multi-section replies. Written for evaluation only, independently of
models/data/. Never train on these.
"""

from __future__ import annotations

TURNS: list[tuple[str, str, str]] = [
    # =========================== L0 ===========================
    ("L0", "capital of mongolia?", "Ulaanbaatar."),
    (
        "L0",
        "synonym for happy",
        "Cheerful, content, glad, joyful or delighted, depending on how strong you want it to sound. 'Content' is the calmest; 'delighted' is the most excited.",
    ),
    (
        "L0",
        "how do i tel my boss im quiting without burnin bridges",
        """Tell them in person (or on a video call if you're remote) before you send anything in writing, and keep it short and positive. Something like:

"I wanted to let you know first that I've accepted another offer and I'll be leaving. My last day will be 14 March, which gives us the full four weeks' notice. I've really valued working here, especially learning from you on the migration project, and I want to make the handover as smooth as possible."

A few things that help:
- Don't criticise the company or colleagues, even if asked why. "It was the right opportunity for me" is enough.
- Offer a concrete handover plan: what you'll document, who could take over what.
- Follow up the same day with a brief written resignation that states your last day.
- Keep working properly until the end; people remember the last weeks more than the first years.

If they make a counter-offer and you've already decided, thank them and say your decision is final.""",
    ),
    (
        "L0",
        "Good morning! Could you please explain, in simple terms, how a mortgage works?",
        """Good morning! A mortgage is a loan you use to buy a home, where the home itself is the security for the loan.

**The basic idea.** Say a flat costs £250,000. You pay part of it yourself — the deposit, for example £25,000 (10%). A bank lends you the other £225,000. You then pay the bank back in monthly instalments over a long period, usually 25 to 35 years.

**What each payment covers.** Every monthly payment has two parts: interest (the bank's charge for lending you the money) and capital (paying back the amount you borrowed). On a normal "repayment" mortgage, the early payments are mostly interest and the later ones mostly capital, because interest is charged on what you still owe, and that shrinks over time.

**Interest rates.** With a *fixed* rate, your rate — and so your payment — stays the same for a set period, often 2, 5 or 10 years. With a *variable* or *tracker* rate, it moves with the central bank's rate or the lender's own rate, so payments can go up or down. When a fixed deal ends, people usually "remortgage" onto a new deal rather than drop to the lender's more expensive standard rate.

**Why the deposit matters.** The bigger your deposit, the lower the loan-to-value (LTV), and lenders usually offer better rates at lower LTVs. A 40% deposit will typically get a noticeably cheaper rate than a 5% deposit.

**The security part.** Because the home secures the loan, if you stop paying for a long time the lender can eventually repossess and sell it to recover what you owe. That's why lenders check your income and spending carefully before agreeing how much to lend.

**Extra costs to budget for:** arrangement fees, a valuation or survey, solicitor's fees, and in many countries a property purchase tax.

In short: you borrow most of the price, pay it back monthly with interest over decades, and the house is the bank's guarantee until you've paid it off.""",
    ),
    (
        "L0",
        "my friend cancelled on my birthday last minute, how do I reply without sounding cold?",
        """Something warm and short works best, because it takes the pressure off without pretending you're not a little disappointed:

"Ah, I'll miss you! Totally get it though, sounds like a rough week. Rest up properly, and let's grab dinner next week to celebrate, your treat 😉"

It acknowledges that you wanted them there, shows you understand, and gives a concrete next step so it doesn't feel like a brush-off.""",
    ),
    (
        "L0",
        "pros and cons of remote work",
        """**Pros**
- No commute: more time, less money spent, less stress.
- Fewer interruptions for focused work.
- Flexibility to fit work around life (school runs, appointments).
- Wider choice of jobs, not limited by where you live.

**Cons**
- Isolation and fewer casual conversations, which some people find draining.
- Harder to switch off when your home is your office.
- Less visibility, which can slow down mentoring or promotion if a team isn't set up for it.
- Communication takes more effort; small misunderstandings linger in text.

Whether it suits you mostly depends on your home setup, how you like to socialise, and whether your team has good remote habits.""",
    ),
    (
        "L0",
        "tl;dr this article about urban beekeeping in 3 sentences",
        "Urban beekeeping has boomed, and supporters say city bees enjoy more varied flowers than rural ones surrounded by pesticide-treated monocultures. Critics warn that too many honeybee hives compete with wild pollinators like bumblebees and solitary bees for limited food. Some researchers therefore suggest capping hives per square kilometre and planting more native flowers first.",
    ),
    (
        "L0",
        "Explain me please what is 'inflation', with simple words.",
        """Inflation means that prices, in general, go up over time. When there is inflation, the same money buys less than before.

Example: last year a coffee cost 2 euros. This year the same coffee costs 2.10 euros. If most things become about 5% more expensive like this, we say inflation is 5%.

Why does it happen? Often because people want to buy more than shops and factories can produce, or because costs like energy and wages go up, so companies raise their prices.

A little inflation (around 2% a year) is considered normal. High inflation is a problem, because salaries and savings lose value if they don't grow at the same speed.""",
    ),
    (
        "L0",
        "What do you think about the idea that AI will replace software engineers? Give me your honest take.",
        """Honest take: I think AI will replace a lot of *typing* that software engineers do, but not the job itself — at least not in the next decade, and the job will look different.

Here's my reasoning. Most of the hard part of software engineering isn't producing lines of code; it's deciding what should be built, understanding a messy existing system, making trade-offs between speed, cost, safety and maintainability, and taking responsibility when things break at 3am. Current AI tools are genuinely good at the production step: boilerplate, tests, translations between languages, first drafts of functions, explaining unfamiliar code. That's a real productivity gain, and it will reduce the number of hours needed for some kinds of work.

Where they're weaker is exactly where engineering judgement lives: knowing which requirement is the real one, noticing that a "simple change" touches billing, deciding that the right answer is to not build the feature at all. AI can assist there, but someone still has to own the decision and its consequences, and organisations are slow to hand accountability to a tool.

What I do expect:
1. **Fewer pure "ticket-to-code" roles.** Work that is mostly translating a precise spec into code is the most exposed. Junior roles may shrink or change shape, which is a real problem for how people learn the craft.
2. **More leverage per engineer.** One person can maintain more, prototype faster and cover more of the stack. Teams may get smaller rather than disappear.
3. **Shift in valued skills.** Reading and reviewing code, testing, system design, security, and communicating with non-engineers become more important than raw typing speed or memorising APIs.
4. **More software overall.** When something gets cheaper to build, people usually build more of it, which historically has created work rather than removed it.

So if you're an engineer, I wouldn't panic, but I wouldn't ignore it either. Learn to use these tools well, get good at the parts that require judgement, and stay close to the problems your users actually have. If you're considering entering the field, it's still a reasonable choice, but expect the entry path to be bumpier than it was five years ago.""",
    ),
    (
        "L0",
        "Dear Hiring Manager... is this cover letter opening too long-winded? How would you tighten it?",
        """Yes, it's a bit long-winded: the first sentence takes 30 words to say "I'm applying", and the list of skills is generic enough that it doesn't tell them anything. Your strongest point — growing the café's social media by 40% — is hidden at the end.

Here's a tighter version that leads with evidence:

"I'm applying for the Junior Marketing Coordinator role. In my current job at a local café I run our social media accounts and grew our following by 40% in six months, and I'd love to bring that same energy to your team."

Then use the next paragraph to say *how* you did it (what content, what you learned), which demonstrates communication and organisation instead of listing them.""",
    ),
    (
        "L0",
        "write a short poem about a program that never stops crashing",
        """It wakes at dawn with eager light,
loads every module, sets things right,
then trips upon a null at nine —
a stack trace, forty pages fine.

The watchdog sighs and starts it new;
it greets the world, as programs do,
and boldly reaches, once again,
for memory it freed at ten.

Oh loyal loop of fall and rise,
you never learn, but never die.""",
    ),
    (
        "L0",
        "plan me 3 relaxed days in Lisbon in October, I like food, views and not too much walking uphill",
        """Lisbon is hilly everywhere, so the trick is to let trams, funiculars and the odd taxi do the climbing while you walk the flat or downhill bits. October is a lovely time: usually 18–23°C, fewer crowds than summer, and sunset around 7pm, which matters for the viewpoints.

**Where to stay.** Baixa or Chiado. Both are central and fairly flat at street level, with the metro, trams and most of the places below within a short ride. Avoid booking a room at the top of Alfama or Graça unless you enjoy stairs.

**Day 1 — Baixa, Chiado and a gentle first sunset**
- Morning: coffee and a pastel de nata at a café on Rua Augusta, then stroll down to Praça do Comércio and along the river to Cais das Colunas. All flat.
- Late morning: take the Santa Justa lift (or walk round via the back entrance from Largo do Carmo to skip the queue) up to Chiado. Browse Livraria Bertrand, said to be the oldest working bookshop in the world.
- Lunch: Chiado has lots of small tascas; look for a prato do dia (dish of the day) written on a board, usually the best value.
- Afternoon: the Carmo Convent ruins — roofless Gothic arches left by the 1755 earthquake. Quiet and short.
- Sunset: Miradouro de São Pedro de Alcântara, reached by the Glória funicular from Restauradores so you don't climb. Views over the castle and Baixa.
- Dinner: Bairro Alto is right there; eat around 8pm before it gets loud, then head downhill to bed.

**Day 2 — Belém by the river**
- Take tram 15 or a riverside train from Cais do Sodré to Belém (flat, about 20 minutes).
- Jerónimos Monastery: go at opening time or buy tickets online; the cloister is the highlight.
- Pastéis de Belém: the original custard tarts. The queue for takeaway moves fast; the sit-down rooms inside often have space.
- Walk along the river to the Monument to the Discoveries and Belém Tower. Completely flat, with benches.
- Afternoon: MAAT (the wave-shaped art and technology museum) has a walkable roof with river views.
- Back in town, dinner at Time Out Market in Cais do Sodré: many of the city's good kitchens in one hall, easy if you're tired and want choice.

**Day 3 — Alfama and the castle, the lazy way**
- Take tram 28 (board early at Martim Moniz to get a seat) or a taxi up to the castle, São Jorge. Then *walk downhill* through Alfama instead of up it.
- Stops on the way down: Miradouro das Portas do Sol and Miradouro de Santa Luzia, with tiled terraces and the classic rooftop view.
- Lunch in Alfama: grilled sardines or bacalhau in a small family place; October is the end of sardine season, so ask.
- Afternoon: the National Tile Museum (Museu Nacional do Azulejo) is a short taxi ride east, flat inside, and beautiful.
- Evening: a fado dinner in Alfama. Book ahead; smaller places are more atmospheric than the big shows.

**Food to try:** bifana (pork sandwich), polvo à lagareiro (octopus with olive oil and potatoes), arroz de marisco (seafood rice), ginjinha (cherry liqueur, from a tiny bar near Rossio), and vinho verde with lunch.

**Getting around without climbing:**
- A Viva Viagem card covers metro, trams, funiculars and the Santa Justa lift; load it with credit.
- Elevador da Bica and Elevador da Glória are funiculars that skip the steepest streets.
- Ride-hailing is cheap by Western European standards; use it for uphill legs.

**If it rains:** swap Day 2's outdoor walk for the Gulbenkian Museum, which has an excellent collection and a calm garden, and keep Belém for a dry afternoon.

Enjoy it. Three days is enough to see the best of it without rushing, especially if you let yourself sit at a viewpoint with a drink for an hour.""",
    ),
    # =========================== L1 ===========================
    (
        "L1",
        "remind me to call mom at 6",
        """```repl
r = reminders.add("Call mom", at="today 18:00")
print(r)
```
Reminder(id=41, text='Call mom', at='2025-05-14 18:00')

Done: I'll remind you to call mom today at 18:00.""",
    ),
    (
        "L1",
        "todos?",
        """```repl
open_todos = todos.list(status="open")
for t in open_todos:
    print(t.id, t.title, t.due, t.tags)
```
12 Book dentist 2025-05-16 ['health']
15 Send invoice to Dana 2025-05-14 ['work']
18 Fix bike brakes None ['home']
19 Renew passport 2025-06-30 ['admin']

You have 4 open todos: send invoice to Dana (due today), book dentist (Friday), renew passport (30 June) and fix bike brakes (no due date).""",
    ),
    (
        "L1",
        "what's overdue on my todo list and how many hours is that in total?",
        """```repl
from datetime import date
overdue = [t for t in todos.list(status="open") if t.due and t.due < date.today()]
hours = sum(t.estimate_hours or 0 for t in overdue)
for t in overdue:
    print(t.title, t.due, t.estimate_hours)
print("total", hours, "missing estimates", sum(1 for t in overdue if t.estimate_hours is None))
```
Quarterly VAT return 2025-05-07 3.0
Clean out garage 2025-05-10 4.0
Reply to school about trip 2025-05-12 0.5
Update CV 2025-05-13 None
total 7.5 missing estimates 1

You have 4 overdue todos. Three of them add up to 7.5 hours (VAT return 3h, garage 4h, school reply 0.5h); "Update CV" has no estimate, so the real total is a bit higher.""",
    ),
    (
        "L1",
        "Action items from the planning call... I'm JK. Add my action items to my todo list with those due dates.",
        """```repl
from datetime import date, timedelta
today = date.today()
def next_weekday(d, wd):
    return d + timedelta(days=(wd - d.weekday()) % 7)
items = [
    ("Send revised budget to Anna", next_weekday(today, 2)),
    ("Update onboarding doc with new VPN steps", None),
    ("Review the Q3 roadmap", next_weekday(today, 4)),
    ("Chase legal about the contract renewal", None),
]
added = [todos.add(title, due=due, tags=["work"]) for title, due in items]
for t in added:
    print(t.id, t.title, t.due)
```
31 Send revised budget to Anna 2025-05-14
32 Update onboarding doc with new VPN steps None
33 Review the Q3 roadmap 2025-05-16
34 Chase legal about the contract renewal None

I added your 4 action items as work todos: the revised budget for Anna (due Wednesday 14 May), the Q3 roadmap review (due Friday 16 May), and the VPN onboarding update and legal chase with no due date, since the notes didn't give one. "Book the room" was MT's, so I left it out.""",
    ),
    (
        "L1",
        "how many days from today is 14 August, and set a reminder for that morning at 9",
        """```repl
from datetime import date
target = date(date.today().year, 8, 14)
days = (target - date.today()).days
r = reminders.add("Follow-up appointment with Dr Reyes, Clinic B, 10:40 (bring medication list)", at=f"{target} 09:00")
print(days, r)
```
92 Reminder(id=57, text='Follow-up appointment with Dr Reyes, Clinic B, 10:40 (bring medication list)', at='2025-08-14 09:00')

14 August is 92 days from today. I set a reminder for 9:00 that morning for your 10:40 appointment with Dr Reyes in Clinic B, including the note to bring your medication list.""",
    ),
    (
        "L1",
        "convert the distances in runs.csv to kilometres",
        """```repl
import csv
rows = list(csv.DictReader(open("runs.csv")))
print(rows[0].keys(), len(rows))
```
dict_keys(['date', 'distance_mi', 'time_min']) 38

```repl
for r in rows:
    r["distance_km"] = f"{float(r['distance_mi']) * 1.609344:.2f}"
with open("runs.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["date", "distance_mi", "distance_km", "time_min"])
    w.writeheader()
    w.writerows(rows)
print(rows[0], rows[-1])
print(sum(float(r["distance_km"]) for r in rows))
```
{'date': '2025-01-04', 'distance_mi': '3.1', 'time_min': '29', 'distance_km': '4.99'} {'date': '2025-05-12', 'distance_mi': '6.2', 'time_min': '55', 'distance_km': '9.98'}
302.51

I added a distance_km column to runs.csv next to the miles (kept, not overwritten) for all 38 runs. Your total this year is about 302.5 km.""",
    ),
    (
        "L1",
        "search my notes for anything mentioning 'warranty'",
        """```repl
hits = notes.search("warranty")
for n in hits:
    print(n.title, "|", n.snippet)
```
Dishwasher | Bosch SMV4, bought 3 Mar 2023, 2-year warranty, receipt in email
Laptop | ThinkPad warranty extended to Nov 2026, case no. 88231
Boiler | Warranty needs annual service to stay valid, last service Oct 2024

Three notes mention a warranty: the dishwasher (2-year warranty from March 2023, so it ended in March 2025), the laptop (extended to November 2026, case 88231) and the boiler (only valid with an annual service; the last one was October 2024).""",
    ),
    (
        "L1",
        "run the tests in my workspace and tell me what failed",
        """```repl
result = shell.run("python -m pytest -q", cwd="project")
print(result.returncode)
print(result.stdout[-1500:])
```
1
....F.......F..........                                              [100%]
=================================== FAILURES ===================================
____________________________ test_parse_date_dmy _______________________________
    def test_parse_date_dmy():
>       assert parse_date("31/01/2025") == date(2025, 1, 31)
E       ValueError: time data '31/01/2025' does not match format '%m/%d/%Y'
tests/test_dates.py:14: ValueError
__________________________ test_total_with_discount ____________________________
    def test_total_with_discount():
>       assert total([10, 20], discount=0.1) == 27
E       assert 30 == 27
tests/test_cart.py:22: AssertionError
=========================== short test summary info ============================
FAILED tests/test_dates.py::test_parse_date_dmy - ValueError: time data '31/0...
FAILED tests/test_cart.py::test_total_with_discount - assert 30 == 27
2 failed, 21 passed in 0.84s

2 of 23 tests failed: test_parse_date_dmy (parse_date only accepts month-first dates, so "31/01/2025" raises ValueError) and test_total_with_discount (total ignores the discount and returns 30 instead of 27). The other 21 passed.""",
    ),
    (
        "L1",
        "delete the todos I finished, then tell me what's left",
        """```repl
done = todos.list(status="done")
print(len(done), [t.title for t in done])
```
5 ['Buy bin bags', 'Call landlord', 'Pay council tax', 'Return library books', 'Book MOT']

Before I delete anything: these 5 finished todos would be removed permanently — buy bin bags, call landlord, pay council tax, return library books, book MOT. Shall I go ahead? Your open list is unaffected either way.""",
    ),
    (
        "L1",
        "take the lines in shopping.txt and add each one as a todo tagged 'groceries'",
        """```repl
lines = [l.strip() for l in open("shopping.txt") if l.strip()]
added = [todos.add(l, tags=["groceries"]) for l in lines]
print(len(added), [t.title for t in added])
```
14 ['oat milk x2', 'eggs', 'spinach', 'chickpeas (3 tins)', 'bin bags', 'coffee beans', 'lemons', 'toothpaste', 'rice', 'tortillas', 'cheddar', 'tomatoes', 'coriander', 'limes']

Added all 14 items from shopping.txt as todos tagged groceries, from oat milk to limes.""",
    ),
    (
        "L1",
        "look through my notes for anything with a date in it and make reminders for the ones still in the future",
        """```repl
import re
from datetime import date, datetime
pattern = re.compile(r"\\b(\\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (\\d{4})\\b")
found = []
for n in notes.list():
    for m in pattern.finditer(n.body):
        d = datetime.strptime(" ".join(m.groups()), "%d %b %Y").date()
        found.append((d, n.title, n.body[max(0, m.start()-40):m.end()+40].replace("\\n", " ")))
future = sorted(f for f in found if f[0] >= date.today())
print(len(found), len(future))
for d, title, ctx in future:
    print(d, "|", title, "|", ctx)
```
11 5
2025-05-30 | Car | ... MOT due 30 May 2025, garage on Elm Rd takes bookings ...
2025-06-18 | Ana | ... Ana's recital at St John's, 18 June 2025, 7pm, tickets ...
2025-07-01 | Flat | ... rent goes up from 1 July 2025 per Greg's email ...
2025-09-02 | Kids | ... school starts again 2 Sep 2025, need new shoes ...
2026-01-31 | Flat | ... fixed term ends 31 January 2026, 2 months' notice ...

```repl
made = [reminders.add(f"{title}: {ctx.strip(' .')}", at=f"{d} 09:00") for d, title, ctx in future]
print([(r.id, r.at) for r in made])
```
[(61, '2025-05-30 09:00'), (62, '2025-06-18 09:00'), (63, '2025-07-01 09:00'), (64, '2025-09-02 09:00'), (65, '2026-01-31 09:00')]

I found 11 dates across your notes; 5 are still in the future, and I set a 9:00 reminder on each: MOT due (30 May), Ana's recital (18 June, 7pm), rent increase (1 July), school restarts (2 September) and the end of your fixed-term tenancy (31 January 2026). The other 6 dates were already past, so I left them alone. You may want an earlier reminder for the tenancy, since it needs two months' notice.""",
    ),
    (
        "L1",
        "cron: remind 9am standup",
        """```repl
r = reminders.add("Standup", at="09:00", repeat="weekdays")
print(r)
```
Reminder(id=66, text='Standup', at='09:00', repeat='weekdays')

Set: a "Standup" reminder at 9:00 every weekday.""",
    ),
    # =========================== L2 ===========================
    (
        "L2",
        "python reverse a string",
        """```python
s = "hello"
print(s[::-1])  # "olleh"
```
The slice `[::-1]` walks the string backwards with a step of -1.""",
    ),
    (
        "L2",
        "regex for email",
        """A practical pattern (not full RFC 5322, which is enormous):

```regex
^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$
```

It accepts the usual `name.surname+tag@example.co.uk` shapes and rejects missing `@` or missing domain suffix. For real validation, send a confirmation email; a regex can only catch typos.""",
    ),
    (
        "L2",
        "KeyError: 'North' in totals[row['region']] += float(row['amount']) — what's wrong?",
        """The cause: `totals` starts empty, so the first time a region appears, `totals[row["region"]]` doesn't exist yet and `+=` has to *read* it before adding, which raises `KeyError`.

Smallest fix, with `defaultdict`:

```python
from collections import defaultdict

totals = defaultdict(float)
for row in reader:
    totals[row["region"]] += float(row["amount"])
```

Or, without the import:

```python
totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
```

Convert back with `dict(totals)` if something later expects a plain dict.""",
    ),
    (
        "L2",
        "this breaks on files with spaces in the name. can you fix it? for f in $(ls ~/Downloads/*.pdf); do mv $f ~/Documents/pdfs/; done",
        """The cause is word splitting: `$(ls ...)` produces text that the shell splits on spaces, so `tax return 2023.pdf` becomes three "files". Unquoted `$f` splits again.

Let the glob produce the list and quote the variable:

```bash
#!/bin/bash
shopt -s nullglob
mkdir -p ~/Documents/pdfs
for f in ~/Downloads/*.pdf; do
  mv -- "$f" ~/Documents/pdfs/
done
```

- The glob hands each filename to the loop intact, spaces and all.
- `"$f"` stops the second split.
- `nullglob` makes the loop do nothing if there are no PDFs (instead of trying to move a file literally called `*.pdf`).
- `--` protects against names that start with `-`.""",
    ),
    (
        "L2",
        "write a query that gives monthly revenue per product for 2024, newest month first",
        """```sql
SELECT
    date_trunc('month', s.sold_at)::date AS month,
    p.id   AS product_id,
    p.name AS product_name,
    SUM(s.qty * s.unit_price) AS revenue
FROM sales AS s
JOIN products AS p ON p.id = s.product_id
WHERE s.sold_at >= DATE '2024-01-01'
  AND s.sold_at <  DATE '2025-01-01'
GROUP BY month, p.id, p.name
ORDER BY month DESC, revenue DESC;
```

This is PostgreSQL. On MySQL replace `date_trunc(...)` with `DATE_FORMAT(s.sold_at, '%Y-%m-01')`; on SQLite with `strftime('%Y-%m', s.sold_at)`. The half-open date range keeps an index on `sold_at` usable. Products with no sales in a month won't appear; say if you want zero rows for those.""",
    ),
    (
        "L2",
        "review this please, anything unidiomatic? def get_active(users): ...",
        """A few things, most important first:

1. **`== True` and `== None`.** Compare to `None` with `is`/`is not`, and test booleans directly: `if user["active"]:`. `== None` can be fooled by objects that override `__eq__`.
2. **Index loop.** `for i in range(0, len(users))` plus `users[i]` is noise; iterate over the users themselves.
3. **Nested ifs** can be one condition.
4. **Missing keys.** If some users lack `"active"` or `"email"`, you'll get `KeyError`; `.get()` makes that explicit.

Rewritten:

```python
def get_active(users):
    return [
        user["email"].lower()
        for user in users
        if user.get("active") and user.get("email") is not None
    ]
```

Same behaviour, except that users without an `"active"` or `"email"` key are skipped instead of raising. If you'd rather those raise (to catch bad data), keep the `[]` lookups.""",
    ),
    (
        "L2",
        "why does this print 'hi undefined'? const user = { name: 'Ines', greet: () => 'hi ' + this.name }",
        """Because `greet` is an **arrow function**, and arrow functions don't get their own `this`. They use the `this` of the surrounding scope — here, the module or global scope, where `this.name` is `undefined` (or `this` is `undefined` in strict mode modules, which would throw instead).

Use a regular method so `this` is the object the method is called on:

```javascript
const user = {
  name: "Ines",
  greet() {
    return "hi " + this.name;
  },
};
console.log(user.greet()); // "hi Ines"
```

Rule of thumb: use arrow functions for callbacks (where you *want* the outer `this`), and method syntax for object methods.""",
    ),
    (
        "L2",
        "I want a tiny command-line todo app in Python, 50 lines max",
        """Here's a single-file todo app that stores tasks in a JSON file next to your home directory:

```python
#!/usr/bin/env python3
\"\"\"Tiny todo list: add, list, done, remove. Data lives in ~/.todo.json.\"\"\"
import json
import sys
from pathlib import Path

DB = Path.home() / ".todo.json"


def load():
    return json.loads(DB.read_text()) if DB.exists() else []


def save(items):
    DB.write_text(json.dumps(items, indent=2))


def main(argv):
    items = load()
    cmd, args = (argv[0], argv[1:]) if argv else ("list", [])
    if cmd == "add" and args:
        items.append({"text": " ".join(args), "done": False})
        save(items)
        print(f"added #{len(items)}")
    elif cmd == "list":
        if not items:
            print("nothing to do")
        for i, item in enumerate(items, 1):
            mark = "x" if item["done"] else " "
            print(f"{i:>3} [{mark}] {item['text']}")
    elif cmd in ("done", "rm") and args and args[0].isdigit():
        index = int(args[0]) - 1
        if not 0 <= index < len(items):
            sys.exit(f"no todo #{args[0]}")
        if cmd == "done":
            items[index]["done"] = True
        else:
            items.pop(index)
        save(items)
        print("ok")
    else:
        sys.exit("usage: todo.py [add TEXT | list | done N | rm N]")


if __name__ == "__main__":
    main(sys.argv[1:])
```

Usage:

```bash
python todo.py add buy oat milk
python todo.py add call the plumber
python todo.py list
python todo.py done 1
python todo.py rm 2
```

Notes:
- It's 46 lines, standard library only.
- Numbers shown by `list` are positions, so they shift after `rm`; if you want stable ids, store an incrementing `id` field instead.
- Writing the whole file on each change is fine for hundreds of items; for more, or for several processes at once, switch to SQLite (`sqlite3` is in the standard library too).
- Make it a command with `chmod +x todo.py` and a symlink somewhere on your `PATH`, e.g. `ln -s "$PWD/todo.py" ~/.local/bin/todo`.""",
    ),
    (
        "L2",
        "the image is 1.4GB. how do I make it smaller? FROM python:3.12 ... RUN apt-get install -y build-essential ...",
        """Most of the 1.4 GB comes from three things: the full `python:3.12` base (Debian with lots of tools, ~1 GB), `build-essential` (compilers you only need while installing packages), and `COPY . .` pulling in everything in your folder (including `.git`, virtualenvs, caches). A multi-stage build fixes the first two; a `.dockerignore` fixes the third.

```dockerfile
# ---- build stage: has compilers, builds wheels ----
FROM python:3.12-slim AS build
RUN apt-get update \\
 && apt-get install -y --no-install-recommends build-essential \\
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip wheel --no-cache-dir --wheel-dir /wheels -r requirements.txt

# ---- runtime stage: slim, no compilers ----
FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/* && rm -rf /wheels
COPY . .
RUN useradd --create-home app
USER app
CMD ["python", "server.py"]
```

And a `.dockerignore`:

```
.git
__pycache__/
*.pyc
.venv/
venv/
node_modules/
.pytest_cache/
dist/
build/
*.log
.env
```

What each change does:

1. **`python:3.12-slim`** instead of `python:3.12`: the slim image drops compilers, docs and many libraries. This alone usually saves 700–800 MB.
2. **Multi-stage build**: `build-essential` exists only in the first stage. The final image gets the compiled wheels, not the compilers.
3. **`--no-install-recommends` and removing apt lists** keep the build stage lean (it matters less now, since it's discarded, but it speeds up builds).
4. **`--no-cache-dir`** stops pip from storing its download cache inside a layer.
5. **`COPY requirements.txt` before `COPY . .`**: dependencies are installed in a layer that's cached until `requirements.txt` changes, so code edits rebuild in seconds.
6. **`.dockerignore`** keeps `.git` and local virtualenvs out of the build context; these are often hundreds of MB by themselves.
7. **Non-root user**: not a size fix, but a cheap security win while you're here.

Expect something around 150–250 MB depending on your dependencies. Check what's left with `docker history <image>` or a tool like `dive`. If you need to go further, `python:3.12-alpine` is smaller still, but packages with C extensions (numpy, pandas, psycopg) often have no musl wheels and compile slowly or fail, so I'd only try it if slim isn't small enough.""",
    ),
    (
        "L2",
        "Interview tomorrow and I'm nervous. Can you give me a clean binary search in Python to practise with?",
        """Good luck tomorrow! Here's a clean version plus the things interviewers usually probe:

```python
def binary_search(items: list[int], target: int) -> int:
    \"\"\"Return the index of target in sorted items, or -1 if absent.\"\"\"
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target:
            return mid
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


assert binary_search([1, 3, 5, 7, 9], 7) == 3
assert binary_search([1, 3, 5, 7, 9], 4) == -1
assert binary_search([], 1) == -1
```

Talking points:
- **Invariant**: if the target is present, it's always within `items[lo..hi]`. Say this out loud; it's what makes the loop obviously correct.
- **Complexity**: O(log n) time, O(1) space.
- **Off-by-one traps**: `lo <= hi` (not `<`) because `hi` is inclusive; `mid ± 1` so the range always shrinks.
- **Follow-ups** they like: find the *first* occurrence of a duplicate (don't return on equality, keep searching left), or the insertion point (that's `bisect.bisect_left` in the standard library — worth mentioning).""",
    ),
    (
        "L2",
        "can you explain what this decorator does and whether it's safe to use on methods? def memo(f): cache = {} ...",
        """Here's what your decorator does, then the problems and a safer version.

```python
def memo(f):
    cache = {}
    def wrapper(*args):
        if args not in cache:
            cache[args] = f(*args)
        return cache[args]
    return wrapper
```

**What it does.** `memo` takes a function `f` and returns `wrapper`. Every call to the decorated function goes through `wrapper`, which uses the tuple of positional arguments as a dictionary key. The first time it sees a given tuple it calls `f` and stores the result; after that it returns the stored value without calling `f` again. `cache` lives in the closure, so there's one cache per decorated function, shared by all callers for the life of the process.

**Problems, most important first:**

1. **Unbounded memory.** The cache never forgets. For a function called with many different arguments (user ids, timestamps), it grows forever: effectively a memory leak in a long-running service.
2. **Methods keep objects alive.** On a method, `args[0]` is `self`, so every instance that ever called the method is stored inside a key and can never be garbage collected while the function exists.
3. **Unhashable arguments fail.** Lists, dicts and sets can't be dictionary keys, so `obj.total([1, 2])` raises `TypeError: unhashable type: 'list'`.
4. **Keyword arguments are rejected.** `wrapper` only accepts `*args`, so `f(x=1)` raises `TypeError`. Adding `**kwargs` would also mean making them part of the key.
5. **Mutable results are shared.** If `f` returns a list and one caller appends to it, the next caller gets the modified list from the cache.
6. **Lost metadata.** Without `functools.wraps`, the decorated function's `__name__`, docstring and signature become those of `wrapper`, which confuses debuggers, docs and some frameworks.
7. **Not "call once" under threads.** Two threads can both miss the cache and both call `f`. The dict won't corrupt in CPython, but expensive work may run twice.

**The standard library already solves most of this:**

```python
from functools import cached_property, lru_cache


@lru_cache(maxsize=1024)
def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5


class Report:
    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    @cached_property
    def total(self) -> float:
        # computed once per instance, stored on the instance, freed with it
        return sum(row["amount"] for row in self.rows)
```

- `lru_cache(maxsize=...)` bounds memory, supports keyword arguments, keeps metadata, and gives you `distance.cache_info()` and `distance.cache_clear()`.
- For a per-instance value with no arguments, `cached_property` stores the result on the instance itself, so it disappears when the instance does.
- For methods *with* arguments, avoid `lru_cache` directly on the method (same `self`-retention problem); give each instance its own cache in `__init__` instead, e.g. `self._price = lru_cache(maxsize=256)(self._price_uncached)`.

**So, is yours safe on methods?** It works, but it keeps every instance alive forever and fails on unhashable or keyword arguments. I'd replace it with `cached_property` for argument-less methods, a per-instance `lru_cache` for the rest, and plain `lru_cache` with a `maxsize` for module-level functions.""",
    ),
    # =========================== L3 ===========================
    (
        "L3",
        "compare iphone 15 vs pixel 8",
        """```ui
{"type": "table", "id": "phones", "sortable": true,
 "columns": ["", "iPhone 15", "Pixel 8"],
 "rows": [
  ["Screen", "6.1\\" OLED, 60 Hz", "6.2\\" OLED, 120 Hz"],
  ["Main camera", "48 MP", "50 MP"],
  ["Battery", "3,349 mAh", "4,575 mAh"],
  ["Updates", "~6 years (typical)", "7 years promised"],
  ["Charging port", "USB-C", "USB-C"],
  ["Launch price", "$799", "$699"]
 ]}
```""",
    ),
    (
        "L3",
        "rsvp form",
        """```ui
{"type": "form", "id": "rsvp", "title": "RSVP", "submit": {"label": "Send reply", "action": "model"},
 "fields": [
  {"type": "text_input", "id": "name", "label": "Your name", "required": true},
  {"type": "choice", "id": "attending", "label": "Will you come?", "options": ["Yes", "No", "Maybe"], "default": "Yes"},
  {"type": "stepper", "id": "guests", "label": "Extra guests", "min": 0, "max": 4, "default": 0},
  {"type": "text_input", "id": "dietary", "label": "Dietary requirements", "placeholder": "e.g. vegetarian, nut allergy"}
 ]}
```""",
    ),
    (
        "L3",
        "Between the 12-pack for £6 and the 24-pack for £11, which is cheaper per can? just tell me",
        "The 24-pack: about 46p a can, versus 50p a can for the 12-pack.",
    ),
    (
        "L3",
        "packing checklist for camping",
        """```ui
{"type": "tabs", "id": "camping", "tabs": [
 {"label": "Shelter", "children": [{"type": "checklist", "id": "shelter", "items": [
   "Tent + pegs + poles", "Groundsheet", "Sleeping bags", "Sleeping mats", "Pillow", "Mallet"]}]},
 {"label": "Kitchen", "children": [{"type": "checklist", "id": "kitchen", "items": [
   "Stove + gas", "Lighter / matches", "Pot and pan", "Mugs, plates, cutlery", "Water bottles", "Cool box", "Bin bags", "Washing-up kit"]}]},
 {"label": "Clothes", "children": [{"type": "checklist", "id": "clothes", "items": [
   "Waterproof jacket", "Warm layer", "Spare socks", "Hat", "Walking boots", "Sleepwear"]}]},
 {"label": "Other", "children": [{"type": "checklist", "id": "other", "items": [
   "Head torch + batteries", "First-aid kit", "Sun cream", "Insect repellent", "Toilet roll", "Power bank", "Map / offline maps", "Pocket knife"]}]}
],
 "footer": {"type": "progress", "id": "packed", "bind": ["shelter", "kitchen", "clothes", "other"], "label": "Packed"}}
```""",
    ),
    (
        "L3",
        "help me compare these four flats side by side and pick one (Leith £1,150, Marchmont £1,080, Portobello £995, Stockbridge £1,320)",
        """```ui
{"type": "card", "id": "flats", "title": "Four flats, side by side",
 "children": [
  {"type": "table", "id": "flat_table", "sortable": true, "filterable": true,
   "columns": ["", "Leith", "Marchmont", "Portobello", "Stockbridge"],
   "rows": [
    ["Rent / month", "£1,150", "£1,080", "£995", "£1,320"],
    ["Bedrooms", "2", "1 + box room", "2", "2"],
    ["Commute", "25 min bus", "15 min walk", "40 min train", "20 min bike"],
    ["Outdoor space", "none", "shared garden", "near beach", "balcony"],
    ["Available", "1 Sept", "now", "15 Sept", "1 Oct"]
   ]},
  {"type": "slider", "id": "max_rent", "label": "Highest rent you'd pay", "min": 900, "max": 1400, "step": 10, "default": 1200},
  {"type": "choice", "id": "priority", "label": "What matters most?", "multiple": true,
   "options": ["Lowest rent", "Shortest commute", "Two real bedrooms", "Outdoor space", "Move in soon"],
   "default": ["Lowest rent", "Shortest commute"]},
  {"type": "choice", "id": "pick", "label": "Your pick",
   "options": [
    {"value": "leith", "label": "Leith", "hint": "two bedrooms, mid price, bus commute"},
    {"value": "marchmont", "label": "Marchmont", "hint": "walk to work, available now, smaller"},
    {"value": "portobello", "label": "Portobello", "hint": "cheapest, by the sea, longest commute"},
    {"value": "stockbridge", "label": "Stockbridge", "hint": "nicest extras, most expensive, latest"}
   ]},
  {"type": "button", "id": "decide", "label": "Go with this one", "action": "model"}
 ]}
```""",
    ),
    (
        "L3",
        "let me set my reading preferences: font size, line spacing, theme, and justify on or off",
        """```ui
{"type": "form", "id": "reading_prefs", "title": "Reading preferences", "submit": {"label": "Save", "action": "local"},
 "fields": [
  {"type": "stepper", "id": "font_size", "label": "Font size", "min": 10, "max": 28, "default": 16},
  {"type": "choice", "id": "line_spacing", "label": "Line spacing", "options": ["Compact", "Normal", "Relaxed"], "default": "Normal"},
  {"type": "choice", "id": "theme", "label": "Theme", "options": ["Light", "Sepia", "Dark"], "default": "Light"},
  {"type": "toggle", "id": "justify", "label": "Justify text", "default": false}
 ]}
```""",
    ),
    (
        "L3",
        "no table please, just tell me the winner: which of those three vacuums is quietest?",
        "The Roborock Q7 is the quietest of the three, at about 60 dB on its standard setting; the other two are around 65–67 dB.",
    ),
    (
        "L3",
        "show me the five Python web frameworks in a table I can sort by popularity and learning curve",
        """```ui
{"type": "table", "id": "frameworks", "sortable": true, "filterable": true,
 "columns": ["Framework", "Style", "Popularity", "Learning curve", "Async", "Good for"],
 "rows": [
  ["Django", "batteries included", 5, "medium", "partial", "full sites with admin, auth, ORM"],
  ["Flask", "micro", 5, "easy", "via extensions", "small apps, learning, custom stacks"],
  ["FastAPI", "API-first", 4, "easy", "yes", "typed JSON APIs, automatic docs"],
  ["Starlette", "ASGI toolkit", 3, "medium", "yes", "building your own framework pieces"],
  ["Pyramid", "flexible", 2, "steep", "no", "large apps that outgrow micro frameworks"]
 ],
 "notes": "Popularity: 1-5, rough community size. Learning curve for someone who knows basic Python."}
```""",
    ),
    (
        "L3",
        "a loan calculator with sliders for amount, interest rate and years",
        """```ui
{"type": "card", "id": "loan", "title": "Loan calculator",
 "state": {"amount": 15000, "rate": 6.5, "years": 5},
 "children": [
  {"type": "slider", "id": "amount", "label": "Amount (£)", "min": 1000, "max": 50000, "step": 500, "bind": "amount"},
  {"type": "slider", "id": "rate", "label": "Interest rate (% a year)", "min": 0, "max": 20, "step": 0.1, "bind": "rate"},
  {"type": "slider", "id": "years", "label": "Term (years)", "min": 1, "max": 10, "step": 1, "bind": "years"},
  {"type": "text", "id": "monthly", "compute": "amount * (rate/1200) / (1 - (1 + rate/1200) ** (-years*12))", "format": "Monthly payment: £{:.2f}"},
  {"type": "text", "id": "total", "compute": "monthly * years * 12", "format": "Total repaid: £{:.2f}"}
 ]}
```""",
    ),
    (
        "L3",
        "thanks, I submitted the RSVP form. what happens next?",
        "Your reply has been recorded with the details you entered. Nothing else is needed from you; if you want to change your answer later, just ask and I'll show the form again with your current choices filled in.",
    ),
    (
        "L3",
        "help me decide which of my three job offers to take; let me weight salary, commute and growth",
        """Here's a scorer: set how much each factor matters to you, rate each offer, and the totals update as you go.

```ui
{"type": "card", "id": "offers", "title": "Which offer?",
 "state": {"w_salary": 3, "w_commute": 2, "w_growth": 3},
 "children": [
  {"type": "text", "id": "intro", "markdown": "**1. How much does each factor matter?** (0 = not at all, 5 = a lot)"},
  {"type": "slider", "id": "w_salary", "label": "Salary", "min": 0, "max": 5, "step": 1, "bind": "w_salary"},
  {"type": "slider", "id": "w_commute", "label": "Commute", "min": 0, "max": 5, "step": 1, "bind": "w_commute"},
  {"type": "slider", "id": "w_growth", "label": "Growth", "min": 0, "max": 5, "step": 1, "bind": "w_growth"},
  {"type": "text", "id": "rate_intro", "markdown": "**2. Rate each offer** from 1 (poor) to 5 (great)."},
  {"type": "table", "id": "ratings", "editable": true,
   "columns": ["", "Northwind", "Brightleaf", "Kestrel"],
   "rows": [
    ["Salary", 3, 2, 5],
    ["Commute", 2, 5, 3],
    ["Growth", 3, 4, 3]
   ]},
  {"type": "bar_chart", "id": "scores", "label": "Weighted score",
   "compute": "sum(weight * rating) per offer", "bind": ["w_salary", "w_commute", "w_growth", "ratings"]},
  {"type": "choice", "id": "decision", "label": "I'm going with", "options": ["Northwind", "Brightleaf", "Kestrel", "Still unsure"], "default": "Still unsure"},
  {"type": "button", "id": "done", "label": "Talk it through", "action": "model"}
 ]}
```

I pre-filled the ratings from what you told me (Kestrel pays most, Brightleaf is remote, Northwind sits in between); change any of them if they feel wrong.""",
    ),
]
