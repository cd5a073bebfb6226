# ruff: noqa: E501
"""Hand-written L0 (Chat) routing requests: conversation, advice, opinions, knowledge, prose.

Written for the evaluation set only, independently of models/data/. Never train on these.
"""

from __future__ import annotations

LABEL = "L0"

ITEMS: list[tuple[str, str]] = [
    # ---- long_paste ----
    (
        "long_paste",
        """Hi Sandra,

I wanted to follow up on are conversation from last tuesday regarding the venue for the anual fundraiser. As discussed, the community hall is avalable on the 14th but they need a deposit by friday, which I beleive should come from the events budget rather then the general fund. Let me know if your ok with that and I'll sort it.

Best,
Tom

-- can you fix the spelling and make it sound a bit more professional? dont change the meaning""",
    ),
    (
        "long_paste",
        """Urban beekeeping has grown rapidly over the past decade, with rooftop hives appearing in cities from London to Tokyo. Supporters argue that city bees benefit from a wider variety of flowers than their rural cousins, who often face vast monocultures treated with pesticides. Critics, however, warn that too many managed honeybee colonies can crowd out wild pollinators such as solitary bees and bumblebees, which compete for the same limited forage. Some researchers now suggest that cities should cap the number of hives per square kilometre and plant more native flowers before encouraging new beekeepers.

tl;dr this for me in 3 sentences pls""",
    ),
    (
        "long_paste",
        """Dear Hiring Manager,

I am writing to express my strong and sincere interest in the position of Junior Marketing Coordinator which was advertised on your company website last week. Throughout the course of my academic career and my various part-time roles, I have developed a wide range of skills, including but not limited to communication, teamwork, organisation, time management and attention to detail, all of which I believe would make me an excellent and valuable addition to your dynamic and growing team. In my most recent role at a local café I was responsible for managing the social media accounts, which grew by 40% in six months.

Be honest: is this opening too long-winded? How would you tighten it?""",
    ),
    (
        "long_paste",
        """my friend just sent me this:

"hey so I know I said I'd come to your thing on saturday but honestly I've had the worst week and I think I need to just stay home and sleep. sorry, I know it's your birthday. I'll make it up to you I promise"

I'm kind of hurt but I also get it. how do I reply without sounding cold or passive aggressive?""",
    ),
    (
        "long_paste",
        """Banana bread
- 3 ripe bananas
- 1/3 cup melted butter
- 1 tsp baking soda
- 1 tsp baking powder
- pinch of salt
- 3/4 cup sugar
- 1 egg, beaten
- 1 tsp vanilla
- 1 1/2 cups flour

Why does this use both baking soda AND baking powder? Isn't that redundant?""",
    ),
    (
        "long_paste",
        """And when the tide has taken what it came for,
and the harbour lights go out one after one,
I will still be standing at the rail
counting the boats that never came back home.

This is the last stanza of a poem we're reading in class. What do you think the poet is trying to say here?""",
    ),
    (
        "long_paste",
        """From: Greg (landlord)
Subject: rent

Hi, just letting you know that from next month the rent will go up by £150. The market has changed a lot and I'm still below what other flats on the street are asking. Also I'll need to do an inspection on Sunday morning, please make sure you're in.

Thanks, Greg

---
Is he allowed to just do this? It feels sudden. What would you say back to him, roughly?""",
    ),
    (
        "long_paste",
        """Notes from Monday sync:
- new coffee machine arriving thurs, DON'T touch the old one
- Priya back from leave on the 3rd, welcome lunch TBD
- reminder that expense reports go to finance by the 25th
- office closed on bank holiday monday
- fire drill sometime next week (no exact date)

Rewrite this as a short, friendly paragraph for our team newsletter. Keep it light.""",
    ),
    (
        "long_paste",
        """Here is my draft best man speech:

"Good evening everyone. For those who don't know me, I'm Dave, and I've known James since we were seven. Back then he was obsessed with dinosaurs, and honestly not much has changed, except now the dinosaur is his car. When he met Lucy, I knew something was different, because for the first time ever he cancelled five-a-side football to go to a pottery class. Lucy, thank you for making him a better man, and for teaching him what a vegetable is."

Can you make it a bit funnier and give it a warm ending? It should stay under two minutes spoken.""",
    ),
    (
        "long_paste",
        """A black hole is a region of spacetime where gravity is so strong that nothing, including light and other electromagnetic waves, has enough energy to escape it. The boundary of no escape is called the event horizon. Although it has a great effect on the fate and circumstances of an object crossing it, it has no locally detectable features according to general relativity. In many ways, a black hole acts like an ideal black body, as it reflects no light.

Explain this to me like I'm 10 years old.""",
    ),
    (
        "long_paste",
        """Our handmade ceramic mugs are thrown on the wheel in our small studio in Cornwall. Each mug holds around 350ml, is glazed in a soft sea-green finish and is dishwasher safe. Because every piece is made by hand, small variations in shape and colour make each mug one of a kind.

Translate this product description into French for our shop, please. Keep the warm tone.""",
    ),
    (
        "long_paste",
        """ok so this is my third attempt at sourdough. starter is about 3 weeks old and doubles in about 6 hours. I mixed 500g flour, 350g water, 100g starter, 10g salt, did 4 sets of stretch and folds, bulk fermented for about 4 hours in my kitchen (it's pretty cold, maybe 18C), shaped it, put it in the fridge overnight and baked at 240C in a dutch oven. it came out flat and dense with a few big holes near the top and gummy at the bottom.

what went wrong??""",
    ),
    # ---- terse ----
    ("terse", "why is the sky blue"),
    ("terse", "capital of mongolia?"),
    ("terse", "tell me a joke"),
    ("terse", "synonym for happy"),
    ("terse", "fastest way to fall asleep"),
    ("terse", "explain inflation"),
    ("terse", "haiku about rain"),
    ("terse", "who painted the night watch"),
    ("terse", "meaning of ubiquitous"),
    ("terse", "pros and cons of remote work"),
    ("terse", "fun fact pls"),
    ("terse", "hamlet plot in 3 lines"),
    # ---- typo ----
    ("typo", "wat is the diffrence between wether and whether lol"),
    ("typo", "how do i tel my boss im quiting without burnin bridges"),
    ("typo", "can u explane how vacines work"),
    ("typo", "im so tired all the time any tips"),
    ("typo", "wright me a short birthday msg for my sister she turns 30"),
    ("typo", "why does my cat nead my blanket evry night"),
    ("typo", "recomend me a good scifi book simmilar to dune"),
    ("typo", "how meny moons does jupter have"),
    ("typo", "hows ur day goin"),
    ("typo", "whats a good name for a golden retreiver puppy"),
    ("typo", "is it bad to drink cofee on an empty stomache"),
    ("typo", "how do i stop procrastinaitng its ruining my semster"),
    # ---- polite ----
    ("polite", "Good morning! Could you please explain, in simple terms, how a mortgage works?"),
    (
        "polite",
        "Would you mind helping me write a thank-you note to my neighbour who watered my plants while I was away?",
    ),
    (
        "polite",
        "I'd be grateful if you could suggest a few ways to politely decline a wedding invitation.",
    ),
    ("polite", "Could you kindly tell me a little about the history of the Silk Road?"),
    (
        "polite",
        "Please could you help me think through whether to take a gap year before university?",
    ),
    (
        "polite",
        "Hello, I hope you're well. Could you recommend some gentle stretches for someone who sits at a desk all day?",
    ),
    (
        "polite",
        "If it's not too much trouble, could you explain the difference between weather and climate?",
    ),
    (
        "polite",
        "Thank you so much for earlier. Could you now shorten this sentence for me: 'In light of the fact that the meeting has been postponed, we will need to reconsider the timeline at a later date.'",
    ),
    ("polite", "May I ask what you think makes a good first impression in a job interview?"),
    ("polite", "Would you be so kind as to write a short limerick about a forgetful wizard?"),
    # ---- slang ----
    ("slang", "yo whats the deal with mercury retrograde, is it real or nah"),
    ("slang", "bruh my gf says im bad at texting back, how do i not be mid at this"),
    ("slang", "ngl kinda bored, hit me with a wild fact"),
    ("slang", "is it cringe to wear socks with sandals fr"),
    ("slang", "lowkey need a pep talk before my exam tmrw"),
    ("slang", "whats the tea on the roman empire falling, short version"),
    ("slang", "fam how do i get better at small talk at parties"),
    ("slang", "kinda random but do fish actually sleep"),
    ("slang", "need a caption for my beach pic, something chill"),
    ("slang", "rate my plan: quit job, move to portugal, become a surfer. vibes?"),
    # ---- non_native ----
    (
        "non_native",
        "Please, what is the meaning of the expression 'to beat around the bush'? I am learning English.",
    ),
    (
        "non_native",
        "I am from Brazil and I want to know why in English we say 'a university' and not 'an university'.",
    ),
    ("non_native", "How I can to improve my pronunciation of the 'th' sound?"),
    (
        "non_native",
        "My english is not good. Can you correct this sentence: 'Yesterday I have went to the market and buyed apples.'",
    ),
    ("non_native", "Which is the difference between 'make' and 'do'? Always I confuse them."),
    ("non_native", "For what reason the people in UK drive on the left side?"),
    ("non_native", "Explain me please what is 'inflation', with simple words."),
    (
        "non_native",
        "I am nervous for my interview in english tomorrow, you can give me some advices?",
    ),
    ("non_native", "Is polite to say 'I want' in restaurant, or is better 'I would like'?"),
    ("non_native", "What means 'break a leg'? My colleague said me this before my presentation."),
    ("non_native", "Can you tell me the history of the Eiffel tower in short?"),
    (
        "non_native",
        "How to write formal email to professor for ask extension of deadline, can you write example?",
    ),
    # ---- api_style ----
    ("api_style", "q: why do cats purr"),
    ("api_style", "explain(topic='compound interest', audience='teenager')"),
    ("api_style", "task=translate src=en tgt=es text='Where is the train station, please?'"),
    ("api_style", "mode: chat | topic: best day hikes near Lisbon"),
    ("api_style", "prompt> write a 4-line poem about Monday mornings"),
    ("api_style", "ask --short 'what caused the 2008 financial crisis'"),
    # ---- mixed ----
    (
        "mixed",
        "ugh my code won't compile and I'm exhausted. forget the code for now, how do I stop feeling like a failure at my job?",
    ),
    (
        "mixed",
        "I have reminders everywhere and still forget birthdays. honestly, is there a psychological reason some people are just more forgetful?",
    ),
    (
        "mixed",
        "thx for the script earlier, it worked! unrelated: what's a good gift for a dad who likes fishing?",
    ),
    (
        "mixed",
        "My todo list is a mess but never mind that. What's the Eisenhower matrix and does it actually work?",
    ),
    (
        "mixed",
        "I just ran the tests and they all pass, so I'm celebrating. Write me a silly two-line poem about green checkmarks?",
    ),
    (
        "mixed",
        "I'll set my own reminder, don't worry. I just want to know: is it better to study in the morning or at night?",
    ),
    (
        "mixed",
        "had to convert all my recipes to grams today, whatever. anyway why do Americans still measure in cups?",
    ),
    (
        "mixed",
        "fixed the bug, shipped it, boss is happy. now help me write a short LinkedIn post about the launch that doesn't sound cheesy",
    ),
    (
        "mixed",
        "after I finish this SQL stuff I need a break. recommend a short podcast about history?",
    ),
    (
        "mixed",
        "We're picking vendors at work later, not now. Right now I just need a two-sentence intro for our proposal saying our team maintains the internal payroll platform.",
    ),
    # ---- boundary ----
    (
        "boundary",
        "is Python a good first language for my 12 year old, or should she start with Scratch? just want your opinion",
    ),
    ("boundary", "why do so many programmers drink so much coffee? is that just a stereotype"),
    ("boundary", "Remind me, what's the difference between a virus and a bacterium?"),
    (
        "boundary",
        "What do you think about the idea that AI will replace software engineers? Give me your honest take.",
    ),
    (
        "boundary",
        "I have a coding interview on Friday. Not the technical part, the 'tell me about yourself' part. How do I answer that well?",
    ),
    ("boundary", "write a short poem about a program that never stops crashing"),
    ("boundary", "Explain to my grandma what 'the cloud' is, in two or three sentences."),
    ("boundary", "Should I put my personal GitHub projects on my CV, or is that unprofessional?"),
    (
        "boundary",
        "how do reminder apps on phones decide when to send a notification? just curious how it works in general",
    ),
    (
        "boundary",
        "Startup with equity or a stable bank job? I don't need a breakdown, just your gut feeling in a couple of sentences.",
    ),
    ("boundary", "Between tea and coffee, which do you personally prefer and why? Just chatting."),
    ("boundary", "What's a good way to keep a to-do list on paper? I don't want an app."),
    (
        "boundary",
        """Here's the changelog from our release:

- fix: race condition in session refresh
- feat: export to CSV from reports page
- perf: dashboard loads ~40% faster
- chore: bump deps

Rewrite it as two friendly sentences for customers who don't code.""",
    ),
    ("boundary", "What's the origin of the word 'bug' in computing?"),
    ("boundary", "tabs or spaces? I want your opinion, not a flame war"),
    ("boundary", "Is it normal to feel totally lost in my first month as a junior developer?"),
    (
        "boundary",
        "note to self: I'm terrible with numbers. So explain like I'm five: what is a stock index?",
    ),
    (
        "boundary",
        "What's the difference between a calendar and a planner? Which kind of person suits each?",
    ),
    (
        "boundary",
        "Could you explain what an API is without any code, like for a room of business people?",
    ),
    ("boundary", "Why does the US still use Fahrenheit when almost everyone else uses Celsius?"),
    (
        "boundary",
        "The intro of my project README sounds stiff: 'This library provides functionality for the manipulation of image files.' Can you make that sentence friendlier?",
    ),
    ("boundary", "What would you name a cat that belongs to a programmer?"),
    ("boundary", "Linux or Mac for a university student studying history? quick opinion"),
    (
        "boundary",
        "In your opinion, is learning to code still worth it for someone in their forties?",
    ),
    ("boundary", "Tell me about the history of spreadsheets, like VisiCalc and Lotus 1-2-3."),
    (
        "boundary",
        "thanks, that comparison table was great. Now just tell me in plain words: which of those phones would you buy yourself?",
    ),
    (
        "boundary",
        "my todo app keeps making me feel guilty. how do I make peace with a list that's never finished?",
    ),
    ("boundary", "What's the proper way to write the date in a formal British letter?"),
]
