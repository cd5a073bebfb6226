# ruff: noqa: E501
"""Hand-written L3 (GenUI) routing requests: the user wants an interactive interface.

Pick or compare options with criteria, side-by-side comparisons, forms to fill in, settings to
configure, checklists to tick, sortable tables, calculators with inputs, clickable quizzes.
Written for the evaluation set only, independently of models/data/.
"""

from __future__ import annotations

LABEL = "L3"

ITEMS: list[tuple[str, str]] = [
    # ---- long_paste ----
    (
        "long_paste",
        """Flat A: 2 bed, Leith, £1,150/month, 25 min to work by bus, no garden, available 1 Sept
Flat B: 1 bed + box room, Marchmont, £1,080/month, 15 min walk to work, shared garden, available now
Flat C: 2 bed, Portobello, £995/month, 40 min by train, near the beach, available 15 Sept
Flat D: 2 bed, Stockbridge, £1,320/month, 20 min by bike, balcony, available 1 Oct

help me compare these side by side and pick one""",
    ),
    (
        "long_paste",
        """Option 1: KLM, dep 06:40, 1 stop (AMS, 1h10), arrives 13:05, €212, 23kg bag included
Option 2: easyJet, dep 09:15, direct, arrives 12:30, €149, bag +€45
Option 3: Lufthansa, dep 11:50, 1 stop (FRA, 2h30), arrives 19:10, €178, bag included
Option 4: Ryanair, dep 17:20, direct, arrives 20:35, €96, bag +€52

let me choose: I care about price (with a bag), total travel time and number of stops""",
    ),
    (
        "long_paste",
        """Offer 1 - Northwind Logistics: £52k, hybrid 3 days office, 50 min commute, 25 days holiday, 5% pension
Offer 2 - Brightleaf Health: £48k, fully remote, 28 days holiday, 8% pension, 4-day week trial
Offer 3 - Kestrel Bank: £61k, 5 days office, 35 min commute, 25 days holiday, bonus up to 15%

put these in a comparison I can sort by salary, commute and holiday""",
    ),
    (
        "long_paste",
        """Restaurants near the venue:
Nonna's Kitchen - Italian - ££ - 4.5 stars - 5 min walk
Saffron House - Indian - £ - 4.3 stars - 8 min walk
Tokyo Lane - Japanese - £££ - 4.7 stars - 12 min walk
Green Fork - Vegan - ££ - 4.1 stars - 3 min walk
El Fuego - Mexican - £ - 4.0 stars - 10 min walk
The Anchor - Pub food - ££ - 3.9 stars - 2 min walk

sortable table please, so I can sort by price, rating and distance""",
    ),
    (
        "long_paste",
        """You're invited to Maya & Tom's engagement party!
Saturday 6 September, 7pm, The Boathouse, Richmond.
Please let us know by 15 August whether you can come, how many guests you're bringing, and any dietary requirements (we'll have vegetarian and vegan options).

make me an RSVP form with those fields that guests can fill in""",
    ),
    (
        "long_paste",
        """Shop 1: Lenovo IdeaPad Slim 5, Ryzen 7, 16GB RAM, 512GB SSD, 1.46kg, £699
Shop 2: ASUS Zenbook 14, Core Ultra 5, 16GB RAM, 1TB SSD, 1.2kg, £849
Shop 3: Acer Swift Go 14, Core i5, 8GB RAM, 512GB SSD, 1.3kg, £579

compare them on price, RAM and weight in a table I can sort""",
    ),
    (
        "long_paste",
        """Basic: £19/month, off-peak only (10am-4pm), gym floor only
Standard: £29/month, any time, gym + classes
Premium: £45/month, any time, gym + classes + pool + sauna, 2 guest passes
Student: £22/month, any time, gym + classes, needs student ID

which one fits me? let me set what matters (price, hours, pool) and show me the best match""",
    ),
    (
        "long_paste",
        """For the trip we need: passports, EHIC cards, chargers, the big adapter, sunscreen, hats, swimming stuff for the kids, Sam's inhaler, snacks for the plane, the car seat, printed hotel booking, euros in cash, and the book I'm halfway through.

turn this into a checklist I can tick off while packing""",
    ),
    (
        "long_paste",
        """Plan S: 10GB data, unlimited calls, 12-month contract, £10/month
Plan M: 50GB data, unlimited calls, EU roaming, 24-month contract, £16/month
Plan L: unlimited data, unlimited calls, EU + US roaming, 24-month contract, £25/month
Plan Flex: 20GB data, 500 minutes, no contract, £14/month

side-by-side comparison please, I want to choose""",
    ),
    (
        "long_paste",
        """Customer survey draft:
1. How did you hear about us? (friend / social media / search / other)
2. How satisfied are you with delivery speed? (1-5)
3. Would you recommend us? (yes / no / maybe)
4. Anything else you'd like to tell us? (free text)

make this into a form I can actually fill out""",
    ),
    (
        "long_paste",
        """Candidate names for the new team: Northstar, Bluebird, Atlas, Lantern, Quokka, Tidepool, Ember, Compass

let the team rank these, drag to reorder or vote, and show me the winner""",
    ),
    (
        "long_paste",
        """From the app docs: Notifications can be sent for: new messages, mentions, task assignments, daily digest, weekly report, product updates. Each can be delivered by push, email or both, and quiet hours can be set between any two times.

give me the settings panel for these so I can toggle them""",
    ),
    # ---- terse ----
    ("terse", "compare iphone 15 vs pixel 8"),
    ("terse", "packing checklist for camping"),
    ("terse", "notification settings panel"),
    ("terse", "form: new contact"),
    ("terse", "pick a laptop under 1000"),
    ("terse", "sortable table of planets by mass"),
    ("terse", "quiz me on capitals, multiple choice"),
    ("terse", "compare netflix disney+ max"),
    ("terse", "weekly meal planner grid"),
    ("terse", "rsvp form"),
    ("terse", "budget vs actual table, editable"),
    ("terse", "choose a paint colour, show swatches"),
    # ---- typo ----
    ("typo", "cmpare the 3 cheapest electirc cars side by side"),
    ("typo", "i need a chek list for moving house i can tick"),
    ("typo", "help me pik a vacum cleaner budjet 200 pet hair"),
    ("typo", "make me a form to fil in my travel detials"),
    ("typo", "show me a tabel of the contries in europe i can sort by popuation"),
    ("typo", "let me configur my notifcation setings"),
    ("typo", "compair ps5 and xbox series x for me plz"),
    ("typo", "gimme a quiz with options on the solar sytem for my kid"),
    ("typo", "need to chose betwen 3 gyms near me price and opening hours matter"),
    ("typo", "a form for my wedding guests to pick there meal"),
    ("typo", "shw me options for a weekend trip and let me filter by price"),
    ("typo", "rate these pizza toppings, let me drag them to rank lol"),
    # ---- api_style ----
    (
        "api_style",
        "ui.compare items=['pixel 8','iphone 15','galaxy s24'] by=['price','camera','battery']",
    ),
    ("api_style", "render form fields=name,email,dietary_needs"),
    ("api_style", "widget: checklist title='road trip' items=[tent, snacks, charger]"),
    ("api_style", "table(sortable=true) data=planets cols=[name, mass, moons]"),
    ("api_style", "picker options=[flask, django, fastapi] criteria=[learning curve, speed, docs]"),
    ("api_style", "settings.ui sections=[theme, font_size, language]"),
    ("api_style", "GET /ui/compare?a=kindle&b=kobo"),
    ("api_style", "ui.render slider label='daily budget' min=0 max=200"),
    ("api_style", "poll: team lunch options sushi / tacos / pizza"),
    ("api_style", "ui.form title='event' fields=[title:text, date:date, attendees:number]"),
    # ---- polite ----
    (
        "polite",
        "Could you please help me choose between three laptops? I care most about battery life and weight.",
    ),
    (
        "polite",
        "Would you mind laying out the differences between these two insurance plans side by side?",
    ),
    (
        "polite",
        "I'd love a checklist for getting my house ready for winter that I can tick off as I go.",
    ),
    (
        "polite",
        "Could you please give me a form where I can enter the details for my job application?",
    ),
    (
        "polite",
        "Would it be possible to see a table of European capitals that I can sort by population?",
    ),
    (
        "polite",
        "Please could you let me adjust the assistant's settings: theme, language and text size?",
    ),
    (
        "polite",
        "If you could show me a few holiday destinations and let me filter by budget and weather, that would be wonderful.",
    ),
    (
        "polite",
        "Could you kindly compare the three mobile plans I mentioned on price, data and contract length?",
    ),
    (
        "polite",
        "May I have a short multiple-choice quiz on World War II that I can answer by clicking?",
    ),
    (
        "polite",
        "Would you help me pick a dog breed for a small flat? My criteria are size, energy level and shedding.",
    ),
    # ---- slang ----
    ("slang", "yo lemme compare these 3 sneakers side by side real quick"),
    ("slang", "need a checklist for festival weekend fr, something i can tick"),
    ("slang", "help me pick a game to play tonight: chill, co-op, under 20 bucks"),
    ("slang", "ngl i need a form to log my gym PRs, make one"),
    ("slang", "drop a table of the best ramen spots i can sort by price"),
    ("slang", "app settings pls, lemme toggle dark mode and stuff"),
    ("slang", "which headphones bro: airpods pro vs sony xm5 vs bose qc, side by side"),
    ("slang", "make me a lil poll for the group chat: bowling or karaoke"),
    ("slang", "gimme a multiple choice quiz on 2000s pop hits"),
    ("slang", "bruh i got 4 job offers, help me pick: salary, commute, wfh"),
    # ---- non_native ----
    (
        "non_native",
        "Please, I want compare three cars for my family: price, consumption, space. Show me the comparison.",
    ),
    ("non_native", "Can you make for me a list for the travel, with boxes that I can mark?"),
    (
        "non_native",
        "I need form for register the students of my class: name, age, telephone of parents.",
    ),
    (
        "non_native",
        "Help me to choose the university between Bologna, Lyon and Leipzig: cost, language, ranking.",
    ),
    (
        "non_native",
        "Is possible to have a table of the fruits with vitamins, that I can order by vitamin C?",
    ),
    (
        "non_native",
        "I want to change the settings: the language Spanish, the letters more big, the dark colour.",
    ),
    (
        "non_native",
        "Please give me options of hotels in Lisbon and I choose one, my budget is 100 euro per night.",
    ),
    ("non_native", "Make me a quiz with answers to choose, about the verbs in English past tense."),
    (
        "non_native",
        "Compare for me please the internet plans of Vodafone, MEO and NOS side by side.",
    ),
    (
        "non_native",
        "I need choose a washing machine, important for me are the noise and the energy class.",
    ),
    ("non_native", "Can you do a checklist for my first day in new job, that I can tick?"),
    (
        "non_native",
        "Please show the differences between Kindle and Kobo in a table, one next to the other.",
    ),
    # ---- mixed ----
    (
        "mixed",
        "thanks for the joke haha. ok now help me pick a laptop: under 900, light, good keyboard",
    ),
    (
        "mixed",
        "I'm moving to Berlin next month, so exciting! Show me the neighbourhoods side by side: rent, commute, nightlife?",
    ),
    (
        "mixed",
        "ugh the kitchen leak again. anyway, the roofers: A £4,200 with 10-yr warranty, B £3,800 5-yr, C £4,600 15-yr. side by side so I can choose?",
    ),
    (
        "mixed",
        "I've been reading about minimalism and I love it. Make me a decluttering checklist per room that I can tick off.",
    ),
    (
        "mixed",
        "code works now, thanks! different topic: give me a form to plan my sister's surprise party with guests, budget, venue and date",
    ),
    (
        "mixed",
        "honestly I know nothing about cameras. Help me choose between the Sony a6400, Fuji X-T30 and Canon R50 for travel; I care about weight and video.",
    ),
    (
        "mixed",
        "Long week. Let me configure how you reply (shorter answers, no emojis, British spelling) with some toggles.",
    ),
    (
        "mixed",
        "My kid has a spelling test Friday. Could you make a clickable multiple-choice quiz with these words: necessary, separate, rhythm, definitely?",
    ),
    (
        "mixed",
        "Not sure this is the right place, but I want to compare three savings accounts by interest rate, access and minimum deposit.",
    ),
    (
        "mixed",
        "Happy Friday! Let's plan dinner: show me five recipes I can filter by cooking time and dietary needs.",
    ),
    # ---- boundary ----
    (
        "boundary",
        "Flask, Django or FastAPI for a beginner? compare them side by side on learning curve, docs and speed",
    ),
    ("boundary", "compare postgres, mysql and sqlite for my hobby project in a table"),
    ("boundary", "give me a form to log my expenses each day"),
    ("boundary", "make me a packing checklist for Iceland that I can tick off"),
    (
        "boundary",
        "I want to configure which tools the agent is allowed to use, show me the switches",
    ),
    (
        "boundary",
        "help me pick a programming language to learn; my criteria are jobs, ease and fun",
    ),
    ("boundary", "which VS Code theme should I use? show me 5 with previews I can flip through"),
    (
        "boundary",
        "compare three mechanical keyboards on price, switches and layout so I can choose one",
    ),
    (
        "boundary",
        "a sortable table of the popular JavaScript frameworks by size, age and learning curve",
    ),
    (
        "boundary",
        "rank these five holiday ideas with me interactively: Rome, Kyoto, Lima, Oslo, Cape Town",
    ),
    (
        "boundary",
        "I need a bug report form for my team: title, steps to reproduce, severity dropdown",
    ),
    (
        "boundary",
        "show me renting vs buying side by side, with sliders for price and number of years",
    ),
    (
        "boundary",
        "help me choose a name for my startup: here are 6 candidates, let me score each on memorability and how easy it is to spell",
    ),
    ("boundary", "set up my preferences: summary length, tone, language. give me a panel"),
    ("boundary", "compare the nutrition of oats, quinoa and brown rice in a sortable table"),
    ("boundary", "mortgage calculator with sliders for interest rate and term"),
    ("boundary", "show me a BMI calculator I can type my height and weight into"),
    (
        "boundary",
        "which of these 4 hosting options fits my side project? criteria: price, free tier, ease of setup",
    ),
    ("boundary", "a checklist of the steps to set up a new Mac for development, with tick boxes"),
    ("boundary", "compare AWS, GCP and Azure for a small startup, side by side"),
    (
        "boundary",
        "show these three offsite options as cards so the team can vote: lake cabin, city hotel, beach house",
    ),
    (
        "boundary",
        "I'm torn between three sofas. Put their dimensions, price and delivery time next to each other so I can decide.",
    ),
    ("boundary", "a unit converter where I type a number and pick the units from dropdowns"),
    ("boundary", "make an RSVP form for my birthday: name, plus-one, food allergies"),
    ("boundary", "give me a tip calculator: bill amount, tip percentage slider, number of people"),
    (
        "boundary",
        "help me pick between a Kindle, a Kobo and a cheap tablet for reading in bed; criteria are eyes, price, battery",
    ),
]
