"""Spanish-speaking people of ``kronika bench memory`` (Spain and Argentina)."""

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
    ("u: hola", "a: ¡Hola! ¿En qué te puedo ayudar?", "u: en nada, solo probaba", "a: ¡Vale!"),
    ("u: hola, ¿qué tal?", "a: Muy bien, gracias. ¿Y tú?", "u: bien", "a: Me alegro."),
    ("u: gracias", "a: ¡De nada!", "u: ok", "u: chao"),
    (
        "u: ¿cómo ordeno una lista en Python?",
        "a: sorted(lista) devuelve una lista nueva; lista.sort() la ordena en su sitio.",
        "u: ¡gracias!",
    ),
    ("u: buenos días", "a: ¡Buenos días! ¿Algún plan para hoy?", "u: no mucho, ok"),
    ("u: ¿cuánto es el 20% de 85?", "a: El 20% de 85 es 17.", "u: perfecto, gracias"),
    ("u: dame un sinónimo de 'rápido'", "a: Veloz, ágil, ligero.", "u: vale"),
    ("u: buenas", "a: ¡Buenas! ¿Cómo va el día?", "u: liado", "a: ¡Ánimo!"),
    (
        "u: ¿cómo escribo un correo formal para pedir una factura?",
        "a: Por ejemplo: 'Estimados señores: les agradecería que me enviaran la factura del "
        "pedido 4521.'",
        "u: gracias",
    ),
    ("u: gracias por lo de ayer", "a: ¡Cuando quieras!", "u: vale, hasta luego"),
)

LUCIA = person(
    "es-lucia",
    "es",
    "2026-11-25 19:00",
    (
        Summary(
            "sum_2025",
            "2026-01-03",
            "Conversaciones de finales de 2025: Lucía terminó un máster en recursos humanos y "
            "pensaba dejar la capital.",
        ),
        Fact("f_nombre", "2026-01-08", "nombre", "Lucía"),
        Fact("f_ciudad1", "2026-01-08", "ciudad", "Madrid"),
        Fact("f_trabajo1", "2026-01-08", "empresa", "Telefónica"),
        Fact("f_pareja", "2026-01-08", "pareja", "Javier"),
        Fact("f_color", "2026-01-15", "color_favorito", "amarillo"),
        *small_talk("es-lucia-st", ("2026-01-10", "2026-01-24", "2026-02-05"), SMALL_TALK),
        Session(
            "es-lucia-s01",
            "2026-01-18 20:00",
            (
                "u: hola",
                "a: ¡Hola Lucía! ¿En qué te ayudo?",
                "u#t_sevilla: en abril vamos a la Feria de Sevilla con unas amigas",
                "a: ¡Qué bien! ¿Busco alojamiento?",
                "u: no, gracias",
            ),
        ),
        Fact("f_gato", "2026-02-03", "nombre_del_gato", "Michi"),
        Fact("f_idioma1", "2026-02-20", "idioma_que_estudia", "alemán"),
        Session(
            "es-lucia-s02",
            "2026-02-25 19:00",
            (
                "u#t_guitarra: empecé clases de guitarra flamenca los jueves",
                "a: ¡Olé! ¿Qué tal la primera clase?",
                "u: me duelen los dedos jaja",
            ),
        ),
        Fact("f_cafe", "2026-03-03", "café", "cortado con leche de avena"),
        EntityPage(
            "e_javier",
            "2026-03-12",
            "Javier",
            "Javier es bombero y los sábados entrena a un equipo de baloncesto infantil.",
        ),
        Note(
            "n_lesion", "2026-03-15", "Lucía tiene una hernia discal y no puede levantar peso.", "W"
        ),
        Outcome(
            "2026-04-03",
            "comprar entradas para el concierto de Rosalía",
            "intenté comprarlas en la web oficial",
            False,
            ("las entradas se agotaron en diez minutos",),
        ),
        Session(
            "es-lucia-s03",
            "2026-04-14 18:00",
            (
                "u: buenas",
                "a: ¡Buenas!",
                "u#t_piso: estamos buscando piso con terraza y que admitan gatos",
                "a: Te puedo ayudar a preparar una lista de preguntas para las visitas.",
                "u: vale",
            ),
        ),
        Fact("f_ciudad2", "2026-05-20", "ciudad", "Valencia"),
        Note("n_alquiler", "2026-05-25", "Lucía paga 950 euros al mes de alquiler."),
        Fact("f_trabajo2", "2026-06-01", "empresa", "Mercadona"),
        Session(
            "es-lucia-s04",
            "2026-06-12 19:00",
            (
                "u: hola!",
                "a: ¡Hola! ¿Qué tal el trabajo nuevo?",
                "u#t_primerdia: primer día hecho, estoy en el equipo de logística",
                "a: ¡Mucha suerte!",
                "u: gracias",
            ),
        ),
        EntityPage(
            "e_carmen",
            "2026-07-22",
            "Carmen",
            "Carmen, la abuela de Lucía, vive en Cádiz y cumplió 90 años en julio.",
        ),
        Session(
            "es-lucia-s05",
            "2026-07-30 13:00",
            ("u: ¿cómo se dice 'mariposa' en inglés?", "a: Butterfly.", "u: vale, gracias"),
        ),
        Session(
            "es-lucia-s06",
            "2026-08-18 21:00",
            (
                "u#t_vacaciones: volvimos de Menorca, Javier se quemó con el sol el primer día",
                "a: ¡Ay! Mucha crema la próxima vez.",
                "u: jaja sí",
            ),
        ),
        Fact("f_idioma2", "2026-09-10", "idioma_que_estudia", "japonés"),
        Outcome(
            "2026-09-15",
            "enviar el recordatorio del alquiler",
            "programé un correo para el día 1",
            True,
        ),
        Note("n_hermano", "2026-09-28", "@Pablo, el hermano de Lucía, se casa en abril de 2027."),
        Session(
            "es-lucia-s07",
            "2026-10-09 22:00",
            (
                "u: ¿me recomiendas una serie?",
                "a#t_serie: Te recomiendo 'La casa de papel' si te gusta la acción, o 'Aquí no "
                "hay quien viva' para reírte.",
                "u: ok",
            ),
        ),
        Session(
            "es-lucia-s08",
            "2026-11-02 20:00",
            (
                "u#t_maraton: me apunté a la media maratón de Valencia de enero",
                "a: ¡Genial! ¿Te preparo un plan de entrenamiento?",
                "u: más adelante",
            ),
        ),
        Note(
            "n_medico",
            "2026-11-20",
            "Cita con la dermatóloga el 11 de diciembre a las 9:15 en el Hospital La Fe.",
        ),
        *small_talk(
            "es-lucia-st2", ("2026-09-03", "2026-10-20", "2026-11-12", "2026-11-23"), SMALL_TALK
        ),
    ),
    (
        ("now", "¿Dónde vivo ahora?", "f_ciudad2"),
        ("now", "¿En qué empresa trabaja Lucía?", "f_trabajo2"),
        ("now", "¿Qué idioma estoy estudiando?", "f_idioma2"),
        ("now", "¿En qué ciudad vive Lucía actualmente?", "f_ciudad2"),
        ("then", "¿Dónde vivía en marzo?", "f_ciudad1"),
        ("then", "¿Dónde trabajaba Lucía antes de Mercadona?", "f_trabajo1"),
        ("then", "¿Qué idioma estudiaba en junio?", "f_idioma1"),
        ("then", "¿Qué pasó en agosto en las vacaciones?", "t_vacaciones"),
        ("then", "¿Qué planes tenía en enero para la primavera?", "t_sevilla"),
        ("keyword", "¿Cómo se llama mi gato?", "f_gato"),
        ("keyword", "¿Dónde vive el usuario?", "f_ciudad2"),
        ("keyword", "¿Cuál es mi color favorito?", "f_color"),
        ("keyword", "¿Qué serie me recomendó el asistente?", "t_serie"),
        ("keyword", "¿Cómo toma el café el usuario?", "f_cafe"),
        ("keyword", "¿A qué se dedica la pareja del usuario?", "e_javier"),
        ("paraphrase", "¿Cuándo me revisan la piel?", "n_medico"),
        ("paraphrase", "¿Cuánto pago cada mes por la vivienda?", "n_alquiler"),
        ("paraphrase", "¿Qué problema de espalda tengo?", "n_lesion"),
        ("paraphrase", "¿Qué instrumento estoy aprendiendo a tocar?", "t_guitarra"),
        ("paraphrase", "¿En qué área de la empresa nueva estoy?", "t_primerdia"),
        ("paraphrase", "¿Qué carrera voy a correr en invierno?", "t_maraton"),
        ("paraphrase", "¿Qué estudié el año pasado?", "sum_2025"),
        ("paraphrase", "¿Cuántos años cumplió mi abuela?", "e_carmen"),
        ("paraphrase", "¿Cuándo se casa mi hermano?", "n_hermano"),
        ("paraphrase", "¿Qué tipo de casa buscábamos en primavera?", "t_piso"),
        ("crosslingual", "What is Lucía's cat called?", "f_gato", "en"),
        ("crosslingual", "Де зараз живе Лусія?", "f_ciudad2", "uk"),
        ("crosslingual", "Na jakim instrumencie uczy się grać Lucía?", "t_guitarra", "pl"),
        ("crosslingual", "What job does Javier have?", "e_javier", "en"),
        ("none", "¿Cuál es mi número de pasaporte?", ""),
        ("none", "¿Cómo se llama mi perro?", ""),
        ("none", "¿En qué año me saqué el carnet de conducir?", ""),
        ("none", "¿Qué cené anoche?", ""),
        ("none", "¿Dónde estudió Javier?", ""),
    ),
)

MATEO = person(
    "es-mateo",
    "es",
    "2026-10-15 21:00",
    (
        Fact("f_nombre", "2026-01-04", "nombre", "Mateo"),
        Fact("f_ciudad1", "2026-01-04", "ciudad", "Buenos Aires"),
        Fact("f_trabajo1", "2026-01-04", "trabajo", "Mercado Libre"),
        Fact("f_novia", "2026-01-04", "novia", "Sofía"),
        Fact("f_equipo", "2026-01-10", "equipo_de_futbol", "River Plate"),
        *small_talk("es-mateo-st", ("2026-01-07", "2026-01-15", "2026-02-12"), SMALL_TALK[1:]),
        Session(
            "es-mateo-s01",
            "2026-01-22 19:00",
            (
                "u: hola che",
                "a: ¡Hola Mateo! ¿Qué necesitás?",
                "u: el sábado hago un asado para 12 personas, ¿cuánta carne compro?",
                "a#t_carne: Calculá unos 400 gramos por persona: alrededor de 5 kilos en total.",
                "u: genial, gracias",
            ),
        ),
        Fact("f_perro", "2026-02-02", "nombre_del_perro", "Toto"),
        Fact("f_deporte1", "2026-02-10", "deporte", "pádel"),
        Session(
            "es-mateo-s02",
            "2026-03-16 20:00",
            (
                "u#t_entrevista: pasé la primera entrevista en Nubank, la segunda es en abril",
                "a: ¡Buenísimo! ¿Querés practicar preguntas?",
                "u: dale, otro día",
            ),
        ),
        Note("n_carne", "2026-03-28", "Mateo no come carne roja desde marzo.", "W"),
        Session(
            "es-mateo-s03",
            "2026-05-05 12:00",
            ("u: ¿cuál es la capital de Canadá?", "a: Ottawa.", "u: ok gracias"),
        ),
        Note(
            "n_visa",
            "2026-06-12",
            "A Mateo le aprobaron la visa de trabajo mexicana el 12 de junio.",
        ),
        Outcome(
            "2026-06-20",
            "reservar el vuelo de Mateo",
            "busqué vuelos directos en la web de la aerolínea",
            False,
            ("no había vuelos directos en esa fecha",),
        ),
        Summary(
            "sum_mudanza",
            "2026-06-28",
            "Antes de la mudanza Mateo vendió su moto y le regaló los muebles a su primo Nico.",
        ),
        Fact("f_ciudad2", "2026-07-01", "ciudad", "Ciudad de México"),
        Session(
            "es-mateo-s04",
            "2026-07-03 22:00",
            (
                "u: hola!",
                "a: ¡Hola! ¿Llegaron bien?",
                "u#t_llegada: sí, el departamento es chiquito pero lindo y tiene mucha luz",
                "a: ¡Qué bueno!",
            ),
        ),
        Fact("f_trabajo2", "2026-07-15", "trabajo", "Nubank"),
        Fact("f_deporte2", "2026-08-20", "deporte", "escalada"),
        Session(
            "es-mateo-s05",
            "2026-08-25 20:00",
            (
                "u#t_sofia: Sofía consiguió trabajo de diseñadora en una agencia",
                "a: ¡Qué bueno! Felicitala de mi parte.",
                "u: jaja dale",
            ),
        ),
        Outcome("2026-09-01", "pagar la luz del departamento", "usé la app del banco", True),
        EntityPage(
            "e_graciela",
            "2026-09-05",
            "Graciela",
            "Graciela vive en Rosario; fue profesora de historia hasta jubilarse.",
        ),
        Session(
            "es-mateo-s06",
            "2026-09-14 21:00",
            (
                "u: holaa",
                "a: ¡Hola!",
                "u#t_picante: todavía no me acostumbro al picante de acá, ayer lloré con unos "
                "tacos",
                "a: Jaja, pedí 'sin chile' hasta que te acostumbres.",
            ),
        ),
        Session(
            "es-mateo-s07",
            "2026-10-02 20:00",
            (
                "u#t_cumple: el 28 de octubre cumplo 30 y quiero festejar en una terraza",
                "a: ¡Qué lindo plan! ¿Te ayudo a buscar lugar?",
                "u: sí, después",
            ),
        ),
        Note(
            "n_mama",
            "2026-10-10",
            "@Graciela, la mamá de Mateo, viene de visita el 20 de noviembre.",
        ),
        *small_talk(
            "es-mateo-st2", ("2026-08-02", "2026-09-20", "2026-10-08", "2026-10-13"), SMALL_TALK
        ),
    ),
    (
        ("now", "¿Dónde vive Mateo ahora?", "f_ciudad2"),
        ("now", "¿Dónde trabajo?", "f_trabajo2"),
        ("now", "¿Qué deporte practico?", "f_deporte2"),
        ("then", "¿Dónde vivía en mayo?", "f_ciudad1"),
        ("then", "¿Dónde trabajaba antes de Nubank?", "f_trabajo1"),
        ("then", "¿Qué deporte hacía en marzo?", "f_deporte1"),
        ("then", "¿Qué te conté en marzo sobre la entrevista?", "t_entrevista"),
        ("then", "¿Qué me pasó en septiembre con la comida?", "t_picante"),
        ("keyword", "¿Cómo se llama mi perro?", "f_perro"),
        ("keyword", "¿Dónde vive el usuario?", "f_ciudad2"),
        ("keyword", "¿Cuánta carne me dijo el asistente que comprara?", "t_carne"),
        ("keyword", "¿De qué equipo es hincha el usuario?", "f_equipo"),
        ("keyword", "¿Cómo se llama la novia del usuario?", "f_novia"),
        ("paraphrase", "¿Cuándo me dieron el permiso para trabajar en México?", "n_visa"),
        ("paraphrase", "¿Cuándo llega mi vieja de visita?", "n_mama"),
        ("paraphrase", "¿Qué dejé de comer este año?", "n_carne"),
        ("paraphrase", "¿Qué hice con la moto antes de irme?", "sum_mudanza"),
        ("paraphrase", "¿Cómo es el departamento nuevo?", "t_llegada"),
        ("paraphrase", "¿De qué trabaja mi pareja ahora?", "t_sofia"),
        ("paraphrase", "¿A qué se dedicaba mi mamá?", "e_graciela"),
        ("paraphrase", "¿Cómo quiero celebrar mi cumpleaños?", "t_cumple"),
        ("crosslingual", "Where did Mateo work before Nubank?", "f_trabajo1", "en"),
        ("crosslingual", "Jak się wabi pies Mateo?", "f_perro", "pl"),
        ("crosslingual", "Як Матео хоче святкувати свій день народження?", "t_cumple", "uk"),
        ("none", "¿Cuál es mi CURP?", ""),
        ("none", "¿Cómo se llama mi gato?", ""),
        ("none", "¿Qué nota saqué en el examen de manejo?", ""),
        ("none", "¿Cuánto pesa Sofía?", ""),
    ),
)

PEOPLE = (LUCIA, MATEO)
