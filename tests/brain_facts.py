"""Eight keyed facts of different people, words and cities, for tests that fill a small
Brain until it lets facts go to the archive."""

from __future__ import annotations

FACTS = [
    ("bread", "Olena bakes rye bread every Sunday morning in Lviv"),
    ("bicycle", "Dmytro repairs old bicycles in a garage in Kraków"),
    ("bandura", "Yaryna plays the bandura at folk festivals in Odesa"),
    ("tomatoes", "Taras grows yellow tomatoes on his balcony in Kyiv"),
    ("pottery", "Marta makes blue pottery for the market in Poltava"),
    ("sailing", "Ivan sails a small boat on the Dnipro river in summer"),
    ("chess", "Sofia plays chess online with friends from Chernihiv"),
    ("honey", "Petro keeps bees and sells linden honey in Vinnytsia"),
]
