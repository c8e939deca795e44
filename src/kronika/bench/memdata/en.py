"""English-speaking people of ``kronika bench memory``."""

from __future__ import annotations

from kronika.bench.memdata.model import (
    EntityPage,
    Fact,
    Note,
    Outcome,
    Session,
    Summary,
    person,
    small_talk,
)

SMALL_TALK = (
    ("u: hi", "a: Hi! What can I do for you today?", "u: nothing, just testing", "a: OK!"),
    (
        "u: hello, how are you?",
        "a: I'm doing well, thanks for asking. How about you?",
        "u: fine thanks",
        "a: Glad to hear it.",
    ),
    ("u: thanks", "a: You're welcome!", "u: ok", "u: bye"),
    (
        "u: how do I reverse a list in Python?",
        "a: Use reversed(items) for an iterator or items[::-1] for a new list.",
        "u: thanks!",
    ),
    ("u: good morning", "a: Good morning! Anything on your mind?", "u: not really, ok"),
    (
        "u: can you convert 5 miles to kilometres?",
        "a: 5 miles is about 8.05 kilometres.",
        "u: perfect, thank you",
    ),
    ("u: what's a synonym for 'happy'?", "a: Cheerful, content, glad or joyful.", "u: ok cool"),
    ("u: hey", "a: Hey! How's your day going?", "u: busy", "a: Hang in there."),
    (
        "u: give me a quick tip for focusing",
        "a: Try 25 minutes of work, then a 5-minute break.",
        "u: nice, thanks",
    ),
    ("u: thank you for your help yesterday", "a: Any time!", "u: ok see you"),
)

ALICE = person(
    "en-alice",
    "en",
    "2026-11-20 18:00",
    (
        Fact("f_name", "2026-01-05", "name", "Alice Morgan"),
        Fact("f_city1", "2026-01-05", "city", "Leeds"),
        Fact("f_job1", "2026-01-05", "employer", "Monzo"),
        Fact("f_partner", "2026-01-05", "partner", "Tom"),
        Summary(
            "sum_2025",
            "2026-01-03",
            "Conversations of late 2025: Alice was finishing a UX design course at the Open "
            "University and thinking about changing jobs within a year.",
        ),
        *small_talk("en-alice-st", ("2026-01-08", "2026-01-16", "2026-01-27"), SMALL_TALK),
        Session(
            "en-alice-s01",
            "2026-01-12 20:00",
            (
                "u: hi",
                "a: Hello Alice! How can I help?",
                "u: can you help me plan a weekend in Edinburgh?",
                "a: Of course. When are you going, and how are you travelling?",
                "u#t_edinburgh: we'll take the train on Friday 6 February and stay at a B&B "
                "near the Meadows",
                "a: Lovely. I'd book the castle tickets online in advance.",
                "u: thanks",
                "a: You're welcome!",
            ),
        ),
        Fact("f_colour", "2026-01-20", "favourite_colour", "teal"),
        Fact("f_dog", "2026-02-02", "dog_name", "Biscuit"),
        Fact("f_gym1", "2026-02-10", "gym", "PureGym Leeds"),
        Note("n_allergy", "2026-02-15", "Alice is allergic to penicillin.", "W"),
        Session(
            "en-alice-s02",
            "2026-02-20 19:00",
            (
                "u: hello, how are you?",
                "a: Very well, thank you! And you?",
                "u#t_marathon: good! I signed up for the Leeds half marathon in May, my first one!",
                "a: That's exciting. Do you have a training plan?",
                "u: not yet",
                "a: I can draft a 12-week plan whenever you like.",
                "u: ok",
                "u: bye",
            ),
        ),
        *small_talk("en-alice-st2", ("2026-02-25", "2026-03-04", "2026-03-11"), SMALL_TALK[3:]),
        Outcome(
            "2026-03-01",
            "book a table at Ottolenghi for Alice's birthday",
            "used the restaurant's web form",
            False,
            ("the form refuses bookings more than 30 days ahead",),
        ),
        Fact("f_diet", "2026-03-03", "diet", "vegetarian"),
        Fact("f_birthday", "2026-03-05", "birthday", "12 March"),
        Session(
            "en-alice-s03",
            "2026-03-28 21:00",
            (
                "u: can you suggest a name for my sourdough starter?",
                "a#t_doughlene: How about Doughlene? It has a nice ring to it.",
                "u: haha ok",
            ),
        ),
        Fact("f_car", "2026-04-01", "car", "a blue Fiat 500"),
        Session(
            "en-alice-s04",
            "2026-04-22 18:30",
            (
                "u: hi again",
                "a: Hi Alice, how is the training going?",
                "u#t_knee: my knee started hurting after long runs, the physio says it's "
                "runner's knee",
                "a: Sorry to hear that. Rest, ice and strengthening exercises usually help.",
                "u: thanks",
            ),
        ),
        Note(
            "n_mum",
            "2026-05-04",
            "@Margaret, Alice's mum, had her hip operation on 2 May and is recovering well.",
        ),
        Session(
            "en-alice-s05",
            "2026-05-18 17:00",
            (
                "u: guess what",
                "a: Tell me!",
                "u#t_halfresult: I finished the half marathon in 2 hours 4 minutes!",
                "a: Congratulations, that's a great time for a first race!",
                "u: thank you!!",
            ),
        ),
        Summary(
            "sum_emma",
            "2026-05-30",
            "Alice's sister Emma got engaged in April and asked Alice to be her maid of "
            "honour; the wedding is planned for June 2027 in Cornwall.",
        ),
        Session(
            "en-alice-s06",
            "2026-06-10 19:00",
            (
                "u: hey",
                "a: Hey Alice!",
                "u#t_interview: I had a second interview with Nubank today, for a product "
                "designer role",
                "a: How did it go?",
                "u: well I think, they'll call next week",
                "a: Fingers crossed!",
            ),
        ),
        EntityPage(
            "e_tom",
            "2026-06-20",
            "Tom",
            "Tom is a paramedic and plays bass guitar in a pub band called The Loose Ends.",
        ),
        Session(
            "en-alice-s07",
            "2026-07-02 20:00",
            (
                "u#t_moving: the movers are booked for 12 July, we're packing the whole flat",
                "a: Good luck! Label the boxes by room, it saves hours later.",
                "u: ok",
            ),
        ),
        Note(
            "n_flat",
            "2026-07-10",
            "Alice signed the lease for the new flat; the rent is £1,250 a month.",
        ),
        Fact("f_city2", "2026-07-14", "city", "Bristol"),
        EntityPage(
            "e_margaret",
            "2026-07-20",
            "Margaret",
            "Margaret lives in York. She taught chemistry at a secondary school until she "
            "retired, and she grows dahlias.",
        ),
        Fact("f_gym2", "2026-08-02", "gym", "The Climbing Hangar"),
        Session(
            "en-alice-s08",
            "2026-08-05 21:00",
            (
                "u#t_bouldering: Tom and I tried bouldering last weekend and loved it",
                "a: That's great! It's a fun full-body workout.",
                "u: yes!",
            ),
        ),
        Fact("f_lang", "2026-08-20", "learning", "Portuguese"),
        Fact("f_job2", "2026-09-01", "employer", "Nubank"),
        Session(
            "en-alice-s09",
            "2026-09-09 18:00",
            (
                "u: hi",
                "a: Hi Alice! How was the first week?",
                "u#t_firstweek: first week done, my team works on the savings app",
                "a: Sounds like a good fit for you.",
                "u: thanks",
            ),
        ),
        Outcome(
            "2026-09-20",
            "export Alice's running data to a spreadsheet",
            "downloaded the Strava archive and converted it to CSV",
            True,
        ),
        Note("n_book", "2026-10-02", "Alice is reading The Overstory for her book club.", "W"),
        Session(
            "en-alice-s10",
            "2026-10-14 20:30",
            (
                "u#t_lisbon: we booked flights to Lisbon for New Year's Eve",
                "a: Lovely! Lisbon is beautiful in winter.",
                "u: ok thanks",
            ),
        ),
        Note(
            "n_dentist",
            "2026-11-10",
            "Dentist appointment moved to 3 December, 10:30, at Clifton Dental.",
        ),
        *small_talk(
            "en-alice-st3", ("2026-10-20", "2026-11-03", "2026-11-12", "2026-11-18"), SMALL_TALK
        ),
    ),
    (
        ("now", "Where do I live now?", "f_city2"),
        ("now", "Which company does Alice work for?", "f_job2"),
        ("now", "Which gym do I go to?", "f_gym2"),
        ("now", "Where is she based these days?", "f_city2"),
        ("then", "Where did I live in June?", "f_city1"),
        ("then", "Where did Alice work before Nubank?", "f_job1"),
        ("then", "Which gym was I a member of in March?", "f_gym1"),
        ("then", "What did I say about my knee in April?", "t_knee"),
        ("then", "What happened with my job interview in June?", "t_interview"),
        ("keyword", "What is the name of my dog?", "f_dog"),
        ("keyword", "Where does the user live?", "f_city2"),
        ("keyword", "Does the user eat meat?", "f_diet"),
        ("keyword", "What name did the assistant suggest for my sourdough starter?", "t_doughlene"),
        ("keyword", "What does the user's partner do for work?", "e_tom"),
        ("keyword", "Which language is the user learning?", "f_lang"),
        ("paraphrase", "How long did my first half marathon take me?", "t_halfresult"),
        ("paraphrase", "Which antibiotic must I avoid?", "n_allergy"),
        ("paraphrase", "When should I get my teeth looked at?", "n_dentist"),
        ("paraphrase", "Who asked me to be a bridesmaid?", "sum_emma"),
        ("paraphrase", "What did my mother do before she retired?", "e_margaret"),
        ("paraphrase", "How much do I pay for my new place each month?", "n_flat"),
        ("paraphrase", "Where are we spending the last night of the year?", "t_lisbon"),
        ("paraphrase", "What new sport did we pick up in the summer?", "t_bouldering"),
        ("paraphrase", "What was I studying at the end of last year?", "sum_2025"),
        ("paraphrase", "What does my new team build?", "t_firstweek"),
        ("crosslingual", "Gdzie teraz mieszka Alice?", "f_city2", "pl"),
        ("crosslingual", "¿Qué libro está leyendo Alice para su club de lectura?", "n_book", "es"),
        ("crosslingual", "Який мій улюблений колір?", "f_colour", "uk"),
        ("crosslingual", "W jakim czasie przebiegłam półmaraton?", "t_halfresult", "pl"),
        ("crosslingual", "¿Qué coche tengo?", "f_car", "es"),
        ("none", "What is my passport number?", ""),
        ("none", "Which university did Tom study at?", ""),
        ("none", "What's the name of my cat?", ""),
        ("none", "How much did I pay for my car insurance?", ""),
        ("none", "What did I have for breakfast today?", ""),
    ),
)

PEOPLE = (ALICE,)
