"""The statements :mod:`kronika.core.rules` recognises, as one table per language.

Each row is ``(key, shape, pattern)``. Patterns are written in lower case with accents
and apostrophes as people write them and are matched, from the start of a clause,
against text folded by :func:`kronika.core.commands.match_form` (so dropped accents
match too); ``(?P<v>…)`` captures the value and ``(?P<x>…)`` the word after "favourite".
The shape says how the value is read: ``name`` and ``place`` keep capitalised words,
``thing`` a short phrase that is not a pronoun, ``job`` a phrase cut before "at"/"in",
``date`` a day and month, ``languages`` a list of language names, ``whole`` the clause
as said, ``diet`` and ``pet`` the matched words, ``named_project`` a capitalised,
quoted or "a …" phrase.
"""

from __future__ import annotations

# ------------------------------------------------------------------ word lists
PARTICLES = "the of de del la las los el am an upon on nad pod na da di do van von der le du"
"""Lower-case words that may join two capitalised words of a name ("Rio de Janeiro")."""

NOT_NAMES = (
    "asap maybe later tomorrow today tonight now please soon back anytime sometime "
    "jutro później dzisiaj teraz mañana luego después hoy завтра пізніше сьогодні"
)
NOT_THINGS = {
    "en": "it this that these those you your yours him her them me when how what where if not "
    "something anything stuff things myself monday tuesday wednesday thursday friday saturday "
    "sunday weekends night nights home from in at on with for by about",
    "pl": "to tego tym cię ciebie go ją ich was kiedy jak gdy że co jeśli tak się mnie nie "
    "z ze w we na od do dla o",
    "es": "eso esto lo te que cuando como si me se tu no de en con por para desde",
    "uk": "це тебе його її їх коли як що якщо вас мене тобі так то не разом потім днем вечором "
    "ранком літом зимою цілим з із зі в у від до для про",
}
"""First words that make a value no fact ("I love you", "I like it when…", "lubię cię")
or a predicate rather than a thing ("my favourite coffee is from Ethiopia")."""

ES_LANGUAGES = """español castellano inglés francés alemán italiano portugués polaco ucraniano
    ruso chino japonés catalán gallego euskera árabe coreano holandés neerlandés sueco griego
    hebreo turco hindi guaraní quechua"""

LEADING_FILLERS = (
    r"(?:a|an|the|one|really|el|la|los|las|un|una|unos|unas|mucho|muchísimo|bastante|"
    r"nada|más|bardzo|najbardziej|дуже|найбільше|більше)\s+"
)
TRAILING_FILLERS = (
    r"\s+(?:too|also|a\s+lot|very\s+much|so\s+much|as\s+well|też|również|także|bardzo|"
    r"también|mucho|теж|також|дуже)$"
)
JOB_CUT = r"\s+(?:at|in|for|with|w|we|dla|u|en|para|con|в|у|на|з|для|із)\b"
NAMING = (
    r"(?:named|called|o\s+imieniu|imieniem|nazywa\s+się|ma\s+na\s+imię|llamad[oa]|"
    r"se\s+llama|на\s+ім'я|звати|звуть)\s+"
)
MONTHS = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|stycz|lut|kwie|maj|czerw|lip|sierp|"
    r"wrze|paźdz|listop|grud|ene|abr|ago|dic|січ|лют|берез|квіт|трав|черв|лип|серп|верес|"
    r"жовт|листопад|груд)\w*"
)
DATE_TOKEN = r"\d{1,4}(?:st|nd|rd|th|\.|/\d{1,4}|-\d{1,4})*|of|the|de|del|roku|r|року|р"
LIST_SPLIT = r"\s*(?:,|\s(?:and|or|i|oraz|lub|y|e|o|і|й|та|або)\s)\s*"
HYPOTHETICAL = (
    r"(?:if|suppose|imagine|what\s+if|maybe|perhaps|let's\s+say|pretend|jeśli|jeżeli|gdyby|"
    r"może|wyobraź|załóżmy|si(?!\s*,)|quizás|quizá|tal\s+vez|imagina|supongamos|якщо|якби|"
    r"можливо|уяви|припустимо)\b"
)
"""Sentence openings that make what follows hypothetical."""

CONJUNCTIONS = r"and|but|so|also|y|pero|también|e|i|a|ale|oraz|więc|też|та|і|й|а|але|також"
"""Words after which a new clause, and so a new statement, may begin."""

# ------------------------------------------------------------------ statements
V = r"(?P<v>.+)"
IM = r"(?:i\s+am|i'm)"
# after a word that must close its clause ("I'm vegan", not "I'm vegan-ish")
END = (
    r"(?=\s*(?:[,;.!]|$)|\s+(?:and|but|so|since|because|now|too|i|a|ale|bo|y|pero|porque|"
    r"і|й|та|а|але|бо|тому)\b)"
)
NAME_TAIL = r"(?:\s+(?:named|called)\s+\S+(?:\s+\S+)?)?"

ENGLISH: tuple[tuple[str, str, str], ...] = (
    ("name", "name", rf"my\s+name(?:\s+is|'s)\s+{V}"),
    ("name", "name", rf"(?:please\s+|just\s+)?call\s+me\s+{V}"),
    ("name", "name", rf"{IM}\s+called\s+{V}"),
    ("name", "name", rf"(?:hi|hello|hey)[,!]?\s+{IM}\s+{V}"),
    ("location", "place", rf"i\s+(?:live|reside)\s+in\s+{V}"),
    ("location", "place", rf"{IM}\s+(?:living|based)\s+in\s+{V}"),
    ("location", "place", rf"i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?moved\s+to\s+{V}"),
    ("origin", "place", rf"(?:{IM}\s+(?:originally\s+)?from|i\s+come\s+from)\s+{V}"),
    ("job", "job", rf"i\s+work\s+as\s+{V}"),
    ("employer", "place", rf"i\s+work\s+(?:at|for)\s+{V}"),
    (
        "dislike",
        "thing",
        rf"i\s+(?:really\s+)?(?:don't|do\s+not)\s+(?:really\s+)?(?:like|enjoy)\s+{V}",
    ),
    ("dislike", "thing", rf"i\s+(?:really\s+)?(?:hate|dislike|can't\s+stand|detest)\s+{V}"),
    ("preference", "thing", rf"i\s+(?:really\s+)?(?:prefer|like|love|enjoy|adore)\s+{V}"),
    ("favourite", "thing", rf"my\s+favou?rite\s+(?P<x>[a-z]+(?:\s+[a-z]+)?)\s+is\s+{V}"),
    ("allergy", "thing", rf"{IM}\s+(?:very\s+|severely\s+)?allergic\s+to\s+{V}"),
    ("allergy", "thing", rf"i\s+have\s+an?\s+allergy\s+to\s+{V}"),
    ("diet", "diet", rf"{IM}\s+(?:an?\s+)?(?P<v>vegan|vegetarian|pescatarian){END}"),
    ("language", "languages", rf"i\s+speak\s+{V}"),
    ("birthday", "date", rf"(?:my\s+birthday\s+is(?:\s+on)?|i\s+was\s+born\s+on)\s+{V}"),
    (
        "pet",
        "pet",
        r"i\s+(?:have|own|'ve\s+got|have\s+got)\s+(?:a|an|one)\s+(?P<v>(?:dog|cat|puppy|kitten|"
        r"parrot|hamster|rabbit|bunny|turtle|tortoise|horse|snake|guinea\s+pig|ferret|budgie)"
        rf"{NAME_TAIL}){END}",
    ),
    (
        "partner",
        "name",
        r"(?:my\s+(?:wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|spouse)"
        rf"(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named)|{IM}\s+married\s+to)\s+{V}",
    ),
    ("rule", "whole", r"(?P<v>i\s+(?:always|never)\s+want\s+.+)"),
    ("rule", "whole", r"(?P<v>i\s+want\s+you\s+to\s+(?:always|never)\s+.+)"),
    ("project", "thing", rf"{IM}\s+(?:currently\s+|now\s+)?working\s+on\s+{V}"),
    ("project", "named_project", rf"my\s+(?:current\s+|main\s+)?project\s+is\s+{V}"),
)

POLISH: tuple[tuple[str, str, str], ...] = (
    ("name", "name", rf"(?:ja\s+)?(?:mam\s+na\s+imię|nazywam\s+się)\s+{V}"),
    ("name", "name", rf"(?:mów|możesz\s+mi\s+mówić)\s+(?:do\s+)?(?:mi\s+)?{V}"),
    ("name", "name", rf"(?:cześć|hej|witaj)[,!]?\s+jestem\s+{V}"),
    ("location", "place", rf"(?:ja\s+)?(?:teraz\s+|obecnie\s+)?mieszkam\s+(?:w|we|na)\s+{V}"),
    ("location", "place", rf"(?:ja\s+)?przeprowadził(?:em|am)\s+się\s+do\s+{V}"),
    ("origin", "place", rf"(?:ja\s+)?(?:jestem|pochodzę)\s+z(?:e)?\s+{V}"),
    ("job", "job", rf"(?:ja\s+)?pracuję\s+jako\s+{V}"),
    ("job", "job", rf"z\s+zawodu\s+jestem\s+{V}"),
    ("employer", "place", rf"(?:ja\s+)?pracuję\s+(?:dla|w\s+firmie)\s+{V}"),
    ("project", "thing", rf"(?:ja\s+)?(?:teraz\s+|obecnie\s+)?pracuję\s+nad\s+{V}"),
    (
        "dislike",
        "thing",
        rf"(?:ja\s+)?(?:bardzo\s+)?(?:nie\s+lubię|nienawidzę|nie\s+znoszę|nie\s+cierpię)\s+{V}",
    ),
    ("preference", "thing", rf"(?:ja\s+)?(?:bardzo\s+)?(?:wolę|lubię|uwielbiam|kocham)\s+{V}"),
    (
        "favourite",
        "thing",
        rf"(?:mój|moja|moje)\s+ulubion[yae]\s+(?P<x>\w+(?:\s+\w+)?)\s+(?:to|jest)\s+{V}",
    ),
    ("allergy", "thing", rf"(?:ja\s+)?jestem\s+uczulon[ya]\s+na\s+{V}"),
    ("allergy", "thing", rf"(?:ja\s+)?mam\s+(?:alergię|uczulenie)\s+na\s+{V}"),
    (
        "diet",
        "diet",
        rf"(?:ja\s+)?jestem\s+(?P<v>weganką|weganinem|wegetarianką|wegetarianinem){END}",
    ),
    ("language", "languages", r"(?:ja\s+)?mówię\s+(?P<v>po\s+.+)"),
    (
        "birthday",
        "date",
        r"(?:(?:moje\s+)?urodziny\s+(?:mam|są|to|przypadają|wypadają)|mam\s+urodziny|"
        rf"urodził(?:em|am)\s+się)\s+{V}",
    ),
    (
        "pet",
        "pet",
        r"(?:ja\s+)?mam\s+(?P<v>(?:psa|kota|kotkę|suczkę|papugę|chomika|królika|żółwia|konia|"
        r"węża|świnkę\s+morską|fretkę)(?:,?\s+(?:o\s+imieniu|imieniem|który\s+nazywa\s+się|"
        rf"która\s+nazywa\s+się)\s+\S+(?:\s+\S+)?)?){END}",
    ),
    (
        "partner",
        "name",
        r"(?:mój|moja)\s+(?:żona|mąż|partner|partnerka|dziewczyna|chłopak|narzeczona|narzeczony)"
        rf"\s+(?:ma\s+na\s+imię|nazywa\s+się)\s+{V}",
    ),
    (
        "rule",
        "whole",
        r"(?P<v>(?:ja\s+)?(?:zawsze\s+chcę|nigdy\s+nie\s+chcę|chcę\s+zawsze|nie\s+chcę\s+nigdy|"
        r"chcę,?\s+(?:żebyś|abyś)\s+(?:zawsze|nigdy))\s+.+)",
    ),
    (
        "project",
        "thing",
        rf"mój\s+(?:obecny\s+|aktualny\s+|główny\s+)?projekt\s+to\s+{V}",
    ),
)

SPANISH: tuple[tuple[str, str, str], ...] = (
    ("name", "name", rf"(?:yo\s+)?me\s+llamo\s+{V}"),
    ("name", "name", rf"(?:mi\s+nombre\s+es|llámame)\s+{V}"),
    ("name", "name", rf"(?:hola|buenas)[,!]?\s+soy\s+{V}"),
    ("location", "place", rf"(?:yo\s+)?(?:ahora\s+|actualmente\s+)?vivo\s+en\s+{V}"),
    ("location", "place", rf"(?:yo\s+)?me\s+(?:mudé|he\s+mudado)\s+a\s+{V}"),
    ("origin", "place", rf"(?:yo\s+)?soy\s+(?:de|del)\s+{V}"),
    ("job", "job", rf"(?:yo\s+)?trabajo\s+como\s+{V}"),
    ("employer", "place", rf"(?:yo\s+)?trabajo\s+(?:para|en\s+la\s+empresa)\s+{V}"),
    (
        "dislike",
        "thing",
        rf"(?:(?:a\s+mí\s+)?no\s+me\s+(?:gusta|gustan)|(?:yo\s+)?(?:odio|detesto))\s+{V}",
    ),
    (
        "preference",
        "thing",
        rf"(?:(?:a\s+mí\s+)?me\s+(?:gusta|gustan|encanta|encantan)|(?:yo\s+)?(?:prefiero|adoro))"
        rf"\s+{V}",
    ),
    (
        "favourite",
        "thing",
        rf"mi\s+(?P<x>\w+(?:\s+de\s+\w+)?)\s+(?:favorit[oa]|preferid[oa])\s+es\s+{V}",
    ),
    ("allergy", "thing", rf"(?:yo\s+)?(?:soy\s+alérgic[oa]|tengo\s+alergia)\s+al?\s+{V}"),
    (
        "diet",
        "diet",
        rf"(?:yo\s+)?soy\s+(?P<v>vegan[oa]|vegetarian[oa]|pescetarian[oa]){END}",
    ),
    ("language", "languages", rf"(?:yo\s+)?hablo\s+{V}"),
    (
        "birthday",
        "date",
        rf"(?:mi\s+cumpleaños\s+es|cumplo\s+años|(?:yo\s+)?nací)(?:\s+el)?\s+{V}",
    ),
    (
        "pet",
        "pet",
        r"(?:yo\s+)?tengo\s+(?:un|una)\s+(?P<v>(?:perro|perra|perrito|perrita|gato|gata|gatito|"
        r"gatita|loro|hámster|conejo|coneja|tortuga|caballo|hurón)(?:,?\s+(?:que\s+se\s+llama|"
        rf"llamad[oa])\s+\S+(?:\s+\S+)?)?){END}",
    ),
    (
        "partner",
        "name",
        r"(?:mi\s+(?:esposa|esposo|mujer|marido|pareja|novia|novio|prometida|prometido)\s+se\s+"
        rf"llama|estoy\s+casad[oa]\s+con)\s+{V}",
    ),
    (
        "rule",
        "whole",
        r"(?P<v>(?:yo\s+)?(?:siempre\s+quiero|nunca\s+quiero|no\s+quiero\s+nunca|"
        r"quiero\s+que\s+siempre|quiero\s+que\s+nunca)\s+.+)",
    ),
    (
        "project",
        "thing",
        r"(?:yo\s+)?(?:ahora\s+|actualmente\s+)?estoy\s+trabajando\s+en\s+(?P<v>(?:un|una|el|mi)"
        r"\s+(?:proyecto|app|aplicación|tesis|libro|juego|sitio|startup)\b.*)",
    ),
    ("project", "named_project", rf"mi\s+(?:proyecto\s+actual|proyecto)\s+es\s+{V}"),
)

UKRAINIAN: tuple[tuple[str, str, str], ...] = (
    ("name", "name", rf"мене\s+(?:звати|звуть)\s+{V}"),
    ("name", "name", rf"(?:моє\s+ім'я(?:\s*[—–:-]|\s+це)?|називай\s+мене)\s+{V}"),
    ("name", "name", rf"(?:привіт|вітаю)[,!]?\s+я\s+{V}"),
    ("location", "place", rf"(?:я\s+)?(?:зараз\s+|тепер\s+)?живу\s+(?:в|у)\s+{V}"),
    ("location", "place", rf"(?:я\s+)?переїха(?:в|ла)\s+(?:до|в|у)\s+{V}"),
    ("origin", "place", rf"я\s+(?:родом\s+)?(?:з|зі|із|походжу\s+з)\s+{V}"),
    ("project", "thing", rf"(?:я\s+)?(?:зараз\s+)?працюю\s+над\s+{V}"),
    ("job", "job", rf"(?:я\s+)?працюю\s+як\s+{V}"),
    ("job", "job", rf"(?:я\s+)?працюю\s+(?P<v>\w+(?:ом|ем|єм|ою|ею|єю)){END}"),
    ("employer", "place", rf"(?:я\s+)?працюю\s+(?:(?:в|у)\s+(?:компанії|фірмі)|на)\s+{V}"),
    (
        "dislike",
        "thing",
        r"(?:мені\s+не\s+(?:подобається|подобаються)|(?:я\s+)?(?:не\s+люблю|ненавиджу|терпіти\s+"
        rf"не\s+можу))\s+{V}",
    ),
    (
        "preference",
        "thing",
        r"(?:мені\s+(?:дуже\s+|більше\s+)?(?:подобається|подобаються)|(?:я\s+)?(?:дуже\s+)?"
        rf"(?:люблю|обожнюю)|(?:я\s+)?(?:віддаю|надаю)\s+перевагу)\s+{V}",
    ),
    (
        "favourite",
        "thing",
        r"(?:мій|моя|моє|мої)\s+улюблен\w+\s+(?P<x>\w+(?:\s+\w+)?)(?:\s*[—–:-]\s*(?:це\s+)?|"
        rf"\s+(?:це|є)\s+){V}",
    ),
    (
        "allergy",
        "thing",
        rf"(?:(?:у|в)\s+мене\s+(?:є\s+)?алергія|(?:я\s+)?маю\s+алергію)\s+на\s+{V}",
    ),
    ("diet", "diet", rf"я\s+(?P<v>веган|веганка|вегетаріанець|вегетаріанка){END}"),
    ("language", "languages", rf"(?:я\s+)?(?:розмовляю|говорю|володію)\s+{V}"),
    (
        "birthday",
        "date",
        r"(?:мій\s+день\s+народження(?:\s*[—–:-]|\s+це|\s+є)?|(?:у|в)\s+мене\s+день\s+"
        rf"народження|(?:я\s+)?народил(?:ся|ася))\s+{V}",
    ),
    (
        "pet",
        "pet",
        r"(?:у|в)\s+мене\s+(?:є\s+)?(?P<v>(?:собака|пес|песик|кіт|кішка|кицька|папуга|хом'як|"
        r"кролик|черепаха|кінь|цуценя|кошеня)(?:,?\s+(?:на\s+ім'я|якого\s+звати|яку\s+звати)\s+"
        rf"\S+(?:\s+\S+)?)?){END}",
    ),
    (
        "partner",
        "name",
        r"(?:мою|мого)\s+(?:дружину|чоловіка|дівчину|хлопця|партнера|партнерку|наречену|"
        rf"нареченого)\s+(?:звати|звуть)\s+{V}",
    ),
    (
        "rule",
        "whole",
        r"(?P<v>(?:я\s+)?(?:завжди\s+хочу|ніколи\s+не\s+хочу|хочу\s+завжди|не\s+хочу\s+ніколи|"
        r"хочу,?\s+щоб\s+ти\s+(?:завжди|ніколи))\s+.+)",
    ),
    (
        "project",
        "thing",
        rf"мій\s+(?:поточний\s+|головний\s+)?про(?:є|е)кт(?:\s*[—–:-]\s*(?:це\s+)?|\s+це\s+){V}",
    ),
)

# Where a value ends: before ", but", " because", " and I"…
STOPS = {
    "en": r",\s*(?:but|because|since|though|although|and|which|who|where|so|it|it's|this|that|"
    r"he|she|we|they|i|i'm|my|as|when|if|not|especially)\b|\s+(?:but|because|since|although|"
    r"though|which|who|when|if|unless)\b|\s+and\s+(?:i|i'm|i've|i'd|i'll|my|me)\b",
    "pl": r",\s*(?:ale|bo|ponieważ|chociaż|choć|który|która|które|gdzie|więc|i|a|to|ja|jest|"
    r"jestem|kiedy|jeśli|nie|mam|że|zwłaszcza)\b|\s+(?:ale|bo|ponieważ|chociaż|choć|więc|kiedy|"
    r"jeśli|gdy)\b|\s+(?:i|a|oraz)\s+(?:ja|mój|moja|moje|mam|jestem|lubię|wolę|mówię|"
    r"\w+(?:uję|cę|am|em))\b",
    "es": r",\s*(?:pero|porque|aunque|que|donde|y|e|así|es|yo|cuando|si|no|mi|me|sobre\s+todo|"
    r"especialmente)\b|\s+(?:pero|porque|aunque|ya\s+que|cuando|si)\b|\s+[ye]\s+(?:yo|mi|mis|"
    r"me|soy|tengo|estoy|vivo|trabajo|hablo|prefiero|odio|no)\b",
    "uk": r",\s*(?:але|бо|тому|хоча|який|яка|яке|які|де|і|й|та|а|це|я|коли|якщо|не|що|мені|"
    r"мене|особливо)\b|\s+(?:але|бо|хоча|оскільки|тому\s+що|коли|якщо)\b|\s+(?:і|й|та|а)\s+"
    r"(?:я|мій|моя|моє|мені|мене|у\s+мене|в\s+мене|живу|працюю|люблю|маю|говорю|розмовляю)\b",
}
STOP_ALL = r"\s*[;(]|\s+[-–—]\s"  # in every language

# "my favourite <word> is": the English key part for each word people use, with spaces as _.
FAVOURITE_WORDS = {
    "color": "colour kolor color колір",
    "food": "food dish meal potrawa jedzenie danie comida plato страва їжа",
    "drink": "drink napój bebida напій",
    "movie": "movie film película фільм",
    "book": "book książka libro книга книжка",
    "band": "band zespół banda grupo гурт",
    "song": "song piosenka canción пісня",
    "music": "music muzyka música музика",
    "sport": "sport deporte спорт",
    "game": "game gra juego гра",
    "language": "language język idioma lengua мова",
    "programming_language": "programming_language język_programowania "
    "lenguaje_de_programación мова_програмування lenguaje",
    "animal": "animal zwierzę тварина",
    "city": "city miasto ciudad місто",
    "country": "country kraj país країна",
    "fruit": "fruit owoc fruta фрукт",
    "season": "season pora_roku estación пора_року",
    "show": "show tv_show series serial serie серіал",
    "author": "author writer autor pisarz escritor автор письменник",
    "singer": "singer piosenkarz piosenkarka cantante співак співачка",
    "actor": "actor actress aktor aktorka actriz актор акторка",
    "team": "team drużyna equipo команда",
    "place": "place miejsce lugar місце",
    "restaurant": "restaurant restauracja restaurante ресторан",
    "dessert": "dessert deser postre десерт",
    "flower": "flower kwiat flor квітка",
    "car": "car samochód coche машина",
}


STATEMENTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "en": ENGLISH,
    "pl": POLISH,
    "es": SPANISH,
    "uk": UKRAINIAN,
}

# The names people, models and the rule extractor give each concept the extractor knows,
# in English, Polish, Spanish and Ukrainian (words of one name joined by _). An extracted
# fact whose key is one of these takes the key already in use for its concept
# (core.dedup.key_concept); only names that mean nothing else are listed ("work" could
# be a job or an employer, "home" a city or a flat).
KEY_NAMES = {
    "name": "name first_name given_name full_name imię imie nombre nombre_de_pila ім'я імя",
    "location": "location city current_city home_city residence place_of_residence lives_in "
    "living_in miasto lokalizacja miejsce_zamieszkania ciudad ubicación residencia "
    "lugar_de_residencia місто місце_проживання місцезнаходження",
    "origin": "origin hometown home_town birthplace place_of_birth country_of_origin "
    "pochodzenie miejsce_urodzenia origen procedencia lugar_de_nacimiento походження "
    "місце_народження",
    "job": "job occupation profession praca_zawodowa zawód profesja stanowisko profesión "
    "ocupación oficio puesto професія посада фах",
    "employer": "employer company workplace pracodawca miejsce_pracy empresa empleador "
    "lugar_de_trabajo роботодавець місце_роботи",
    "birthday": "birthday birth_date birthdate date_of_birth urodziny data_urodzenia "
    "cumpleaños fecha_de_nacimiento день_народження дата_народження",
    "partner": "partner spouse wife husband partnerka żona mąż małżonek małżonka pareja "
    "esposa esposo cónyuge партнер партнерка дружина чоловік",
    "diet": "diet dieta дієта",
    "allergy": "allergy allergies alergia alergie uczulenie alergias алергія алергії",
    "language": "language languages spoken_languages język języki idioma idiomas мова мови",
    "pet": "pet pets zwierzę zwierzak mascota mascotas домашня_тварина домашній_улюбленець",
    "preference": "preference preferences likes preferencja preferencje preferencia "
    "preferencias gustos вподобання уподобання",
    "dislike": "dislike dislikes",
    "rule": "rule rules zasada zasady reguła reguły regla reglas правило правила",
    "project": "project current_project projekt proyecto проєкт проект",
}
FAVOURITE_MARKS = (
    "favourite favorite ulubiony ulubiona ulubione favorito favorita preferido preferida "
    "улюблений улюблена улюблене улюблені"
)
"""Words that make a key "favourite <thing>" (the thing from FAVOURITE_WORDS)."""
