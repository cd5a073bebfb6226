# ruff: noqa: E501
"""Hand-written L1 (Agent) routing requests: act on, or read, the user's own/live data via tools.

Reminders, todos, notes, date maths, workspace files, unit conversions on their data, running
shell commands. Written for the evaluation set only, independently of models/data/.
"""

from __future__ import annotations

LABEL = "L1"

ITEMS: list[tuple[str, str]] = [
    # ---- long_paste ----
    (
        "long_paste",
        """Dear parents and carers,

The Year 5 trip to the Science Museum will take place on Thursday 12 June. Children must arrive at school by 8:15am as the coach leaves promptly at 8:30. Please return the signed permission slip by Monday 2 June at the latest. A packed lunch and a waterproof coat are required; no fizzy drinks please.

Kind regards,
Mrs Okafor

^ add reminders for the permission slip deadline and for the trip morning (8am)""",
    ),
    (
        "long_paste",
        """BOOKING CONFIRMED
Passenger: R. Lindqvist
Flight SK 1467  Copenhagen (CPH) -> Málaga (AGP)
Departure: Sat 19 Jul, 07:05   Arrival: 11:20
Online check-in opens 24 hours before departure.
Booking ref: QX7T2L

put a reminder on the friday to do the online check-in, around 8am""",
    ),
    (
        "long_paste",
        """Action items from the planning call:
- JK: send revised budget to Anna (by Wed)
- MT: book the room for the workshop
- JK: update the onboarding doc with the new VPN steps
- all: review the Q3 roadmap before Friday
- JK: chase legal about the contract renewal

I'm JK. Add my action items to my todo list with those due dates.""",
    ),
    (
        "long_paste",
        """[2025-03-02 02:00:01] backup: starting nightly job
[2025-03-02 02:00:04] backup: mounting /mnt/nas ... ok
[2025-03-02 02:14:37] backup: rsync error: some files/attrs were not transferred (code 23)
[2025-03-02 02:14:37] backup: 3 files skipped: /home/ana/.cache/..., /home/ana/vm/disk.qcow2 (in use)
[2025-03-02 02:14:38] backup: finished with warnings

just save this to my notes under 'backup failures' so I can show IT on monday""",
    ),
    (
        "long_paste",
        """Grandma's scones
2 cups self-raising flour
1/2 cup butter, cold
2/3 cup milk
2 tbsp sugar
1 egg

convert these quantities to grams and save the result as a note called 'scones (metric)'""",
    ),
    (
        "long_paste",
        """Invoice #2231 from Harbour Web Hosting
Amount due: €84.00
Issued: 3 May
Due date: 2 June
Pay by bank transfer to IBAN NL91 ABNA 0417 1643 00, reference 2231.

make a todo to pay this before it's due and remind me three days before the due date""",
    ),
    (
        "long_paste",
        """Dear Mr Haddad,

Following your consultation, we have booked a follow-up appointment with Dr Reyes on 14 August at 10:40 in Clinic B, second floor. Please bring a list of your current medications and arrive 10 minutes early.

St Mary's Outpatients

how many days from today is that, and set a reminder for that morning at 9""",
    ),
    (
        "long_paste",
        """weekly shop:
oat milk x2
eggs
spinach
chickpeas (3 tins)
bin bags
coffee beans
lemons
toothpaste

add all of these to my groceries list please""",
    ),
    (
        "long_paste",
        """Message from Priya in #finance:
"hey! could you send me the Q3 headcount numbers by thursday? need them for the board pack, ta"

make that a todo for me, due thursday, tag it work""",
    ),
    (
        "long_paste",
        """PyCon day 2 schedule
09:30 Keynote: The long tail of packaging
11:00 * Async without tears (Room B)
12:15 Lunch
13:30 * Typing in practice (Room A)
15:00 Testing legacy code (Room C)
16:30 * Lightning talks (Main hall)

set reminders 10 minutes before each talk I marked with a *""",
    ),
    (
        "long_paste",
        """date,distance_km,time_min
2025-04-01,5.2,27
2025-04-03,8.0,44
2025-04-06,12.1,68

append these rows to runs.csv in my workspace""",
    ),
    (
        "long_paste",
        """8. TERMINATION. Either party may end this tenancy by giving not less than two (2) months' written notice. The fixed term of this agreement ends on 31 January 2026, after which it continues on a monthly periodic basis unless notice is given.

note down the notice period and the end date, and remind me two months before the end date so I can decide""",
    ),
    # ---- terse ----
    ("terse", "remind me to call mom at 6"),
    ("terse", "todos?"),
    ("terse", "what's due today"),
    ("terse", "add milk to shopping list"),
    ("terse", "mark 'pay rent' done"),
    ("terse", "delete the dentist reminder"),
    ("terse", "list my notes"),
    ("terse", "days until christmas"),
    ("terse", "ls my workspace"),
    ("terse", "run git status in my project"),
    ("terse", "snooze that reminder 1h"),
    ("terse", "how many todos overdue"),
    ("terse", "new note: gate code 4417"),
    ("terse", "clear completed todos"),
    # ---- typo ----
    ("typo", "remnd me tmrw 8am to take the bins out"),
    ("typo", "wats on my todo lst for today"),
    ("typo", "add fix bike to my todos pls due saterday"),
    ("typo", "can u chek my notes for the wifi pasword"),
    ("typo", "delet all the remiders from last week there old"),
    ("typo", "hw many days till my pasport expires its in my notes"),
    ("typo", "put a remider for mums bday on the 14th"),
    ("typo", "open budjet.csv in my workspace and tel me the total"),
    ("typo", "wat time is my dentist apointment i set a remindr"),
    ("typo", "make a note that the plumber charged 120 quid"),
    ("typo", "mark the grocerys todo as dun"),
    ("typo", "run the backup scirpt in my workspace plz"),
    # ---- api_style ----
    ("api_style", "todo.add title='buy milk' due=fri"),
    ("api_style", "GET my reminders"),
    ("api_style", "cron: remind 9am standup"),
    ("api_style", "notes.search q='wifi'"),
    ("api_style", "reminders.list(status='overdue')"),
    ("api_style", 'POST /todos {"title": "renew passport", "due": "2025-09-01"}'),
    ("api_style", "fs.ls ~/workspace/reports"),
    ("api_style", "sh: df -h"),
    ("api_style", "todo.complete id=14"),
    ("api_style", "reminder.create text='pay rent' at='1st of every month 09:00'"),
    ("api_style", "dates.diff from=today to=2025-12-24 unit=days"),
    ("api_style", "units.convert file=runs.csv col=distance from=mi to=km"),
    ("api_style", "notes.append title='ideas' body='podcast about old maps'"),
    ("api_style", "DELETE reminder where title='gym'"),
    # ---- polite ----
    ("polite", "Could you please remind me to water the tomatoes every evening at 7?"),
    ("polite", "Would you mind adding 'book dentist' to my to-do list for next week?"),
    ("polite", "Please could you check which of my tasks are overdue?"),
    (
        "polite",
        "I'd appreciate it if you could find the note where I wrote down the boiler model number.",
    ),
    ("polite", "Could you kindly tell me how many days are left until my exam on 20 June?"),
    ("polite", "Would you please move my 'team lunch' reminder from Thursday to Friday?"),
    ("polite", "If you don't mind, could you list the files in my workspace that changed today?"),
    ("polite", "Could you please save this as a note: the spare key is under the blue pot."),
    ("polite", "Would you kindly add up the hours in my timesheet.csv for this week?"),
    ("polite", "Please could you rename my note 'misc' to 'house stuff'? Thank you."),
    # ---- slang ----
    ("slang", "yo remind me to hit the gym at 6 tmrw"),
    ("slang", "whats on my plate today fam"),
    ("slang", "bruh add 'call landlord' to my list before i forget again"),
    ("slang", "nuke all my done todos"),
    ("slang", "lemme see my reminders for the weekend"),
    ("slang", "stash this in my notes: locker combo 12-31-7"),
    ("slang", "how many days till payday, it's the 28th"),
    ("slang", "ping me in 20 mins to take the pizza out"),
    ("slang", "check my notes, did i write down that guy's number from the party"),
    ("slang", "bump the 'taxes' todo to next week lol"),
    # ---- non_native ----
    ("non_native", "Please you can make a reminder for me tomorrow at 9 for call the bank?"),
    ("non_native", "I want add in my list of tasks: buy present for wedding of my cousin."),
    ("non_native", "How many days is between today and 15 of August? I have visa appointment."),
    ("non_native", "Show me please my notes about the apartment, I wrote them last week."),
    ("non_native", "You can delete the task 'send documents'? I already sent them."),
    ("non_native", "Make for me a reminder every Monday morning for the Spanish lesson."),
    ("non_native", "Which tasks I have not finished from this week?"),
    ("non_native", "Please change the hour of my reminder 'doctor' to 15:30."),
    ("non_native", "Convert please the weights in my file gym_log.csv from pounds to kilograms."),
    ("non_native", "Write in my notes that the electrician comes on Saturday."),
    ("non_native", "I forget, what I have in reminders for tomorrow?"),
    ("non_native", "Please open the file contract.txt in my folder and tell me the end date."),
    # ---- mixed ----
    ("mixed", "thanks that helped! btw can you remind me to call mom at 6"),
    ("mixed", "ugh mondays. anyway add 'send invoice to Dana' to my todos for today"),
    ("mixed", "That poem was lovely haha. Now, what do I have in my reminders tomorrow?"),
    (
        "mixed",
        "I was reading about the Roman empire and got distracted, lol. Add 'read SPQR by Mary Beard' to my reading list note.",
    ),
    (
        "mixed",
        "the code from before works, cheers. Now please set a reminder to deploy it Friday at 4pm",
    ),
    (
        "mixed",
        "I'm so stressed about the move. Please just add these to my todos: book van, cancel internet, change address.",
    ),
    (
        "mixed",
        "great explanation of mortgages. Can you save that summary into my notes as 'mortgage basics'?",
    ),
    (
        "mixed",
        "I don't need advice, I just need the count: how many of my todos are tagged 'work' and still open?",
    ),
    ("mixed", "coffee first. then: what's the first thing on my todo list?"),
    (
        "mixed",
        "my sister's birthday is on the 9th and I forget it every single year, so remind me the day before this time",
    ),
    # ---- boundary ----
    ("boundary", "run the tests in my workspace and tell me what failed"),
    ("boundary", "check how much disk space is left on this machine"),
    ("boundary", "remind me every weekday at 9:15 for standup"),
    ("boundary", "convert the distances in runs.csv to kilometres"),
    ("boundary", "how long until my passport expires? the date is in my notes"),
    ("boundary", "What did I write in my notes about the plumber?"),
    ("boundary", "add a todo to read up on regular expressions this weekend"),
    (
        "boundary",
        "save this SQL query in my notes so I don't lose it: SELECT * FROM orders WHERE status = 'late';",
    ),
    ("boundary", "put 'learn Rust' on my todo list for saturday"),
    ("boundary", "count the lines in all the .py files in my workspace"),
    ("boundary", "find the file in my workspace where I wrote my packing list and read it to me"),
    ("boundary", "zip up the logs folder in my workspace"),
    ("boundary", "rename every photo in my workspace/photos folder to the date it was taken"),
    ("boundary", "I need to remember to compare phone plans this weekend, make that a todo"),
    ("boundary", "set a reminder to fill in the tax form on the 30th"),
    ("boundary", "what are my open todos, soonest due first?"),
    ("boundary", "what's the date 45 days from today?"),
    ("boundary", "git pull the repo in my workspace and tell me what changed"),
    ("boundary", "how many hours did I log in timesheet.csv last week?"),
    ("boundary", "turn my note 'trip ideas' into todos, one per line"),
    ("boundary", "remind me tomorrow to ask Sam about the regex bug"),
    ("boundary", "delete the todos I finished, then tell me what's left"),
    ("boundary", "show me the last 20 lines of server.log in my workspace"),
    ("boundary", "my reminders are a mess, delete the duplicates"),
    ("boundary", "Is there anything in my notes about the car insurance renewal?"),
    ("boundary", "my garden log has temperatures in Fahrenheit, convert them all to Celsius"),
]
