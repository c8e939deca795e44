"""Vectors that compare what texts say, not whether they ask.

A sentence encoder places a question near other questions: with the default model,
"Where do I live now?" has a cosine of 0.32 with "what's the capital of Australia?"
and 0.22 with ``my city is Bristol``, the fact that answers it. A memory keeps many
questions (errands the user asked the assistant: "how do I politely remind someone
about an invoice?"), so on likeness of meaning alone they outrank the facts and notes
that answer a question, for no reason but their grammatical mood.

The mood has a direction of its own in the vector space. :class:`WithoutMood` finds
it as the mean difference between the vectors of questions and of statements that
say the same thing (:data:`MOOD_PAIRS`, written for this purpose in English, Polish,
Spanish and Ukrainian, generic and about no one; not drawn from any benchmark), and
takes it out of every vector it gives, stored text and query alike, which it then
normalises again. This is the "all but the top" post-processing of Mu and Viswanath
(2018), aimed at one known direction instead of the top principal components: there
is no weight to choose, and what remains of a question is what it asks about.

The direction is the embedder's own. For the models kronika offers it ships
computed (:data:`SHIPPED`, keyed by model id, package version included:
``scripts/gen-mood-directions`` writes it, and a test checks it against the model);
for any other model id it is computed with the wrapped model on its first use (about
100 short sentences; 45–120 ms with the default model on a shared machine) and kept
for the life of the object. The wrapped model's id gains ``/without-mood``, so stored
vectors of the plain model are never mixed with these (a workspace re-embeds once).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from kronika.errors import EmbedderError
from kronika.ports import Embedder, Vector

MOOD_PAIRS: tuple[tuple[str, str], ...] = (
    # English
    ("Where do you live?", "You live in a small town by the sea."),
    ("What time does the shop open?", "The shop opens at nine."),
    ("Do you like coffee?", "You like coffee."),
    ("When is the meeting?", "The meeting is on Thursday morning."),
    ("Who is coming to dinner?", "Your neighbours are coming to dinner."),
    ("How much does the ticket cost?", "The ticket costs twenty pounds."),
    ("Which bus goes to the station?", "The number seven bus goes to the station."),
    ("Is she working today?", "She is working today."),
    ("What did he buy yesterday?", "He bought a new jacket yesterday."),
    ("Why are we leaving early?", "We are leaving early because of the traffic."),
    ("Can you swim?", "You can swim."),
    ("How old is their son?", "Their son is twelve years old."),
    # Polish
    ("Gdzie mieszkasz?", "Mieszkasz w małym mieście nad morzem."),
    ("O której otwierają sklep?", "Sklep otwierają o dziewiątej."),
    ("Czy lubisz kawę?", "Lubisz kawę."),
    ("Kiedy jest spotkanie?", "Spotkanie jest w czwartek rano."),
    ("Kto przyjdzie na kolację?", "Na kolację przyjdą sąsiedzi."),
    ("Ile kosztuje bilet?", "Bilet kosztuje dwadzieścia złotych."),
    ("Który autobus jedzie na dworzec?", "Na dworzec jedzie autobus numer siedem."),
    ("Czy ona dziś pracuje?", "Ona dziś pracuje."),
    ("Co on wczoraj kupił?", "On wczoraj kupił nową kurtkę."),
    ("Dlaczego wychodzimy wcześniej?", "Wychodzimy wcześniej z powodu korków."),
    ("Umiesz pływać?", "Umiesz pływać."),
    ("Ile lat ma ich syn?", "Ich syn ma dwanaście lat."),
    # Spanish
    ("¿Dónde vives?", "Vives en un pueblo pequeño junto al mar."),
    ("¿A qué hora abre la tienda?", "La tienda abre a las nueve."),
    ("¿Te gusta el café?", "Te gusta el café."),
    ("¿Cuándo es la reunión?", "La reunión es el jueves por la mañana."),
    ("¿Quién viene a cenar?", "Tus vecinos vienen a cenar."),
    ("¿Cuánto cuesta la entrada?", "La entrada cuesta veinte euros."),
    ("¿Qué autobús va a la estación?", "El autobús número siete va a la estación."),
    ("¿Ella trabaja hoy?", "Ella trabaja hoy."),
    ("¿Qué compró él ayer?", "Él compró una chaqueta nueva ayer."),
    ("¿Por qué salimos temprano?", "Salimos temprano por el tráfico."),
    ("¿Sabes nadar?", "Sabes nadar."),
    ("¿Cuántos años tiene su hijo?", "Su hijo tiene doce años."),
    # Ukrainian
    ("Де ти живеш?", "Ти живеш у маленькому містечку біля моря."),
    ("О котрій відкривається магазин?", "Магазин відкривається о дев'ятій."),
    ("Ти любиш каву?", "Ти любиш каву."),
    ("Коли буде зустріч?", "Зустріч буде в четвер зранку."),
    ("Хто прийде на вечерю?", "На вечерю прийдуть сусіди."),
    ("Скільки коштує квиток?", "Квиток коштує двадцять гривень."),
    ("Який автобус їде на вокзал?", "На вокзал їде автобус номер сім."),
    ("Вона сьогодні працює?", "Вона сьогодні працює."),
    ("Що він учора купив?", "Він учора купив нову куртку."),
    ("Чому ми виходимо раніше?", "Ми виходимо раніше через затори."),
    ("Ти вмієш плавати?", "Ти вмієш плавати."),
    ("Скільки років їхньому синові?", "Їхньому синові дванадцять років."),
)
"""Questions beside statements that say the same, twelve in each of the four languages."""


SHIPPED = Path(__file__).parent / "data" / "mood_directions.json"
"""Each offered model's direction, by model id: ``{"<model id>": [floats]}``."""


@lru_cache(maxsize=1)
def _shipped() -> dict[str, list[float]]:
    try:
        loaded: dict[str, list[float]] = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded


def shipped_direction(model_id: str, dim: int) -> Vector | None:
    """The shipped direction of ``model_id`` when there is one of ``dim`` numbers."""
    numbers = _shipped().get(model_id)
    if numbers is None or len(numbers) != dim:
        return None
    direction: Vector = np.asarray(numbers, dtype=np.float32)
    return direction


def mood_direction(embedder: Embedder, pairs: Sequence[tuple[str, str]] = MOOD_PAIRS) -> Vector:
    """The unit vector from statements to questions in ``embedder``'s space: the mean of
    each pair's question vector minus its statement vector, normalised."""
    if not pairs:
        raise EmbedderError("the mood direction needs at least one pair")
    questions = np.asarray(embedder.embed_documents([q for q, _ in pairs]), dtype=np.float64)
    statements = np.asarray(embedder.embed_documents([s for _, s in pairs]), dtype=np.float64)
    mean = (questions - statements).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    if norm == 0.0:
        raise EmbedderError("the embedder gives questions and statements the same vectors")
    direction: Vector = (mean / norm).astype(np.float32)
    return direction


def without_direction(vectors: Vector, direction: Vector) -> Vector:
    """``vectors`` (rows) with their component along the unit ``direction`` taken out,
    each normalised again (a row that was the direction alone stays zero)."""
    rows = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    rows = rows - np.outer(rows @ direction, direction)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Vector = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return out


class WithoutMood:
    """An :class:`~kronika.ports.Embedder` giving ``inner``'s vectors without their mood
    (see the module docstring)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._direction: Vector | None = None
        self._looked_up = False  # whether the shipped direction was looked for
        self._lock = threading.Lock()

    @property
    def inner(self) -> Embedder:
        """The model whose vectors these are."""
        return self._inner

    @property
    def model_id(self) -> str:
        return f"{self._inner.model_id}/without-mood"

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def loaded(self) -> bool:
        """Whether embedding costs no load: the model is in memory and the direction
        known (a shipped one costs no model)."""
        if not getattr(self._inner, "loaded", True):
            return False
        return self._known() is not None

    @property
    def direction(self) -> Vector:
        """The mood direction of the wrapped model: the shipped one for its model id,
        else computed on first use."""
        known = self._known()
        if known is not None:
            return known
        with self._lock:
            if self._direction is None:
                self._direction = mood_direction(self._inner)
            return self._direction

    def _known(self) -> Vector | None:
        """The direction without computing it: as kept, or the shipped one (looked up
        once: the model id reads the installed packages)."""
        if self._direction is None and not self._looked_up:
            with self._lock:
                if not self._looked_up:
                    self._direction = shipped_direction(self._inner.model_id, self._inner.dim)
                    self._looked_up = True
        return self._direction

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        direction = self.direction
        if not texts:
            return np.asarray(self._inner.embed_documents(texts), dtype=np.float32)
        return without_direction(self._inner.embed_documents(texts), direction)

    def embed_query(self, text: str) -> Vector:
        row: Vector = without_direction(self._inner.embed_query(text), self.direction)[0]
        return row
