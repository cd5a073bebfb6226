# ruff: noqa: E501
"""Hand-written L3 (GenUI) requests with the expected kind of answer: "ui" or "text".

"text" marks requests that reach the UI specialist (option-picking, follow-ups on a UI, tiny
comparisons) where plain prose is the right answer: teaching *when* to render matters more than
*how*. Written for evaluation only, independently of models/data/.
"""

from __future__ import annotations

ITEMS: list[tuple[str, str]] = [
    # ---- ui ----
    ("ui", "compare three robot vacuums for a flat with a cat: price, suction, noise, app"),
    (
        "ui",
        "give me a form to register for our book club: name, email, favourite genre, how often you can meet",
    ),
    ("ui", "a checklist for the morning of my marathon that I can tick off"),
    (
        "ui",
        "let me set my reading preferences: font size, line spacing, theme, and justify on or off",
    ),
    (
        "ui",
        "a sortable table of the 8 planets with diameter, distance from the sun and number of moons",
    ),
    (
        "ui",
        "help me choose a city break: Porto, Kraków, Valencia, Ljubljana. criteria: cost, weather in April, food",
    ),
    ("ui", "loan calculator with sliders for amount, interest rate and years"),
    ("ui", "make a multiple-choice quiz with 5 questions about the human body for a 9 year old"),
    ("ui", "compare the Nintendo Switch OLED, Steam Deck and ROG Ally side by side"),
    ("ui", "a weekly habit tracker grid: water, reading, exercise, sleep by 11"),
    (
        "ui",
        "I want to pick a coffee grinder under £150. Show me options I can filter by burr type and noise",
    ),
    (
        "ui",
        "a feedback form for my workshop: rating 1-5, what worked, what to improve, would you come again",
    ),
    (
        "ui",
        "configure my daily digest: which sections to include, what time to send it, and how long it should be",
    ),
    ("ui", "put these side by side: electric car vs hybrid vs petrol for 12,000 miles a year"),
    ("ui", "a checklist for closing down the holiday cottage at the end of the season"),
    (
        "ui",
        "show me the five Python web frameworks in a table I can sort by popularity and learning curve",
    ),
    ("ui", "let me build my pizza: base, sauce, up to 4 toppings, size"),
    (
        "ui",
        "a packing list for a business trip with checkboxes, grouped by clothes, tech and documents",
    ),
    (
        "ui",
        "help me decide which of my three job offers to take; let me weight salary, commute and growth",
    ),
    ("ui", "a recipe scaler: I enter the number of servings and the ingredient amounts update"),
    ("ui", "show a poll for the family: where do we go on Sunday, zoo, beach or museum"),
    ("ui", "compare four password managers on price, platforms, family sharing and open source"),
    ("ui", "a form to report a broken streetlight: location, description, photo, contact email"),
    ("ui", "a sortable table of 10 classic novels with author, year and page count"),
    (
        "ui",
        "a date and time picker to choose a slot for my haircut from: Tue 10:00, Tue 15:30, Wed 12:00, Thu 17:00",
    ),
    ("ui", "currency converter where I choose the two currencies and type the amount"),
    (
        "ui",
        "let me pick which notifications I get from you, each with on/off and a quiet-hours range",
    ),
    ("ui", "rank my weekend tasks by dragging them: laundry, gym, call mum, groceries, fix shelf"),
    ("ui", "show three broadband plans as cards with a 'choose' button on each"),
    ("ui", "give me a shopping list for tacos that I can tick off in the shop"),
    ("ui", "a tip splitter: total bill, tip %, how many people, and whether to round up"),
    (
        "ui",
        "a comparison of the iPad Air and the Galaxy Tab S9 on screen, weight, price and pen support",
    ),
    # ---- text ----
    (
        "text",
        "Between the 12-pack for £6 and the 24-pack for £11, which is cheaper per can? just tell me",
    ),
    (
        "text",
        "I already picked the Pixel 8 from your comparison. In one sentence, was that a sensible choice for photos?",
    ),
    ("text", "thanks, I submitted the RSVP form. what happens next?"),
    ("text", "no table please, just tell me the winner: which of those three vacuums is quietest?"),
    (
        "text",
        "Only two options: plan A is £20 a month, plan B is £200 a year. Which costs less over a year?",
    ),
    ("text", "what does 'energy class A' on a washing machine actually mean?"),
    ("text", "in the laptop comparison you showed, what does 'TDP' stand for?"),
    (
        "text",
        "I ticked everything on the packing checklist. Anything people usually forget for a beach holiday?",
    ),
    ("text", "which is heavier, the Kindle Paperwhite or the Kobo Clara? just the answer"),
    ("text", "why did you rank the Fuji camera first in the table?"),
    ("text", "quick yes or no: is the Steam Deck able to play games offline?"),
    ("text", "explain in two sentences what a 'burr grinder' is, I saw it in your options"),
    (
        "text",
        "I changed the theme to dark in the settings panel. Is dark mode actually better for your eyes?",
    ),
    (
        "text",
        "Of the three flights, I'll take the direct one. Can you remind me roughly how long the flight is? You said 3h15 earlier, right?",
    ),
    (
        "text",
        "forget the comparison, I just want to know: is 16GB of RAM enough for photo editing?",
    ),
    (
        "text",
        "just one option then: if you had to pick a single city break for April food, which and why, in a sentence?",
    ),
]
