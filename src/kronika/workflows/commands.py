"""Carrying out memory commands spoken in a conversation (SPEC C1), at once.

:func:`kronika.core.commands.detect_command` recognises the command; this module does
it through the facade (as the person: ``source_agent="user"``, so autonomy never holds
back what the user asked for) and answers in the language the command was said in.
"""

from __future__ import annotations

from dataclasses import dataclass

from kronika.core.commands import CommandKind, MemoryCommand
from kronika.core.model import SessionStatus, Source
from kronika.core.prompt import fact_line, render_brain
from kronika.core.rules import fact_from_remember
from kronika.engine.proposals import fact_of
from kronika.engine.write import USER
from kronika.errors import InvalidInput, NotFound
from kronika.memory import Memory

REPLIES: dict[str, dict[str, str]] = {
    "remembered": {
        "en": "Remembered: {what}",
        "pl": "Zapamiętane: {what}",
        "es": "Lo recordaré: {what}",
        "uk": "Запам'ятано: {what}",
    },
    "forgotten": {
        "en": "Forgotten:\n{what}",
        "pl": "Zapomniane:\n{what}",
        "es": "Olvidado:\n{what}",
        "uk": "Забуто:\n{what}",
    },
    "nothing_about": {
        "en": "I have nothing stored about “{topic}”.",
        "pl": "Nie mam nic zapisanego o „{topic}”.",
        "es": "No tengo nada guardado sobre «{topic}».",
        "uk": "Я нічого не зберігаю про «{topic}».",
    },
    "not_kept": {
        "en": "Understood — I won't keep that.",
        "pl": "Rozumiem — nie zapamiętam tego.",
        "es": "Entendido: no lo voy a guardar.",
        "uk": "Зрозуміло — я цього не збережу.",
    },
    "know_nothing": {
        "en": "I don't know anything about you yet.",
        "pl": "Nie wiem jeszcze nic o Tobie.",
        "es": "Todavía no sé nada de vos.",
        "uk": "Я ще нічого про тебе не знаю.",
    },
    "know": {
        "en": "Here is what I know about you:\n{facts}",
        "pl": "Oto co o Tobie wiem:\n{facts}",
        "es": "Esto es lo que sé de vos:\n{facts}",
        "uk": "Ось що я про тебе знаю:\n{facts}",
    },
    "memory": {
        "en": "{brain}\n\n{facts} facts ({archived} archived), {sessions} conversations "
        "({waiting} waiting for consolidation), {summaries} summaries. Files: {path}",
        "pl": "{brain}\n\nFakty: {facts} (w archiwum: {archived}), rozmowy: {sessions} "
        "(czeka na konsolidację: {waiting}), podsumowania: {summaries}. Pliki: {path}",
        "es": "{brain}\n\nHechos: {facts} ({archived} archivados), conversaciones: {sessions} "
        "({waiting} por consolidar), resúmenes: {summaries}. Archivos: {path}",
        "uk": "{brain}\n\nФакти: {facts} (в архіві: {archived}), розмови: {sessions} "
        "(чекають консолідації: {waiting}), підсумки: {summaries}. Файли: {path}",
    },
    "proposed": {
        "en": "I'd like to remember: {what} — this waits for your approval.",
        "pl": "Chciałbym zapamiętać: {what} — czeka to na Twoją zgodę.",
        "es": "Me gustaría recordar: {what} — queda a la espera de tu aprobación.",
        "uk": "Я хотів би запам'ятати: {what} — це чекає на твоє схвалення.",
    },
    "forget_proposed": {
        "en": "I'd like to forget:\n{what}\nThis waits for your approval.",
        "pl": "Chciałbym zapomnieć:\n{what}\nCzeka to na Twoją zgodę.",
        "es": "Me gustaría olvidar:\n{what}\nQueda a la espera de tu aprobación.",
        "uk": "Я хотів би забути:\n{what}\nЦе чекає на твоє схвалення.",
    },
    "new_conversation": {
        "en": "Starting a new conversation.",
        "pl": "Zaczynamy nową rozmowę.",
        "es": "Empezamos una conversación nueva.",
        "uk": "Починаємо нову розмову.",
    },
    "no_model": {
        "en": "(No language model is configured, so I can't answer that. Your message is "
        "saved, and memory commands — remember, forget, what do you know about me — work.)",
        "pl": "(Nie skonfigurowano modelu językowego, więc nie mogę na to odpowiedzieć. "
        "Wiadomość jest zapisana, a polecenia pamięci — zapamiętaj, zapomnij, co o mnie "
        "wiesz — działają.)",
        "es": "(No hay ningún modelo de lenguaje configurado, así que no puedo responder "
        "eso. Tu mensaje quedó guardado y los comandos de memoria — recordá, olvidate, qué "
        "sabés de mí — funcionan.)",
        "uk": "(Мовну модель не налаштовано, тож я не можу на це відповісти. Повідомлення "
        "збережено, а команди пам'яті — запам'ятай, забудь, що ти знаєш про мене — "
        "працюють.)",
    },
}


def reply(name: str, language: str, **values: object) -> str:
    """The reply ``name`` in ``language`` (English when that language has none)."""
    table = REPLIES[name]
    return table.get(language, table["en"]).format(**values)


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did: the reply, the lines that changed in memory (``+``/``-``), the
    fact it stored (for a later "forget that"), whether the previous user message
    must be dropped from the transcript ("don't remember this"), and the forgotten
    text (``redact``) that must not be written again — the reply itself holds it."""

    command: MemoryCommand
    reply: str
    changed: tuple[str, ...] = ()
    stored_id: str | None = None
    drop_previous: bool = False
    end_session: bool = False
    redact: tuple[str, ...] = ()


class CommandRunner:
    """Runs :class:`MemoryCommand` values for one agent."""

    def __init__(self, memory: Memory, agent: str) -> None:
        self.memory = memory
        self.agent = agent

    def run(self, command: MemoryCommand, *, last_stored: str | None = None) -> CommandResult:
        lang = command.language
        match command.kind:
            case CommandKind.REMEMBER:
                return self._remember(command)
            case CommandKind.FORGET if command.argument is None:
                if last_stored is not None:
                    return self._forget(command, item_id=last_stored)
                return CommandResult(command, reply("not_kept", lang), drop_previous=True)
            case CommandKind.FORGET | CommandKind.CLEAR_TOPIC:
                return self._forget(command, topic=command.argument or "")
            case CommandKind.DONT_REMEMBER:
                # With an argument the content was never stored; without, the previous
                # user message is taken back out of the transcript.
                drop = command.argument is None
                return CommandResult(command, reply("not_kept", lang), drop_previous=drop)
            case CommandKind.WHAT_DO_YOU_KNOW:
                facts = self.memory.facts(agent=self.agent, include_archived=False)
                if not facts:
                    return CommandResult(command, reply("know_nothing", lang))
                listed = "\n".join(fact_line(f) for f in facts)
                return CommandResult(command, reply("know", lang, facts=listed))
            case CommandKind.SHOW_MEMORY:
                return CommandResult(command, self._show(lang))
            case CommandKind.NEW_CONVERSATION:
                return CommandResult(command, reply("new_conversation", lang), end_session=True)
        raise AssertionError(command.kind)  # pragma: no cover - every kind is matched

    def _remember(self, command: MemoryCommand) -> CommandResult:
        lang = command.language
        content = (command.argument or "").strip()
        if not content:
            return CommandResult(command, reply("nothing_about", lang, topic=""))
        fact = fact_from_remember(content)
        try:
            receipt = self.memory.remember(
                key=fact.key,
                value=fact.value,
                agent=self.agent,
                section=fact.section,
                multi=fact.multi,
                source=Source.EXPLICIT,
                source_agent=USER,
                tags=("said",),
            )
        except InvalidInput as exc:
            return CommandResult(command, str(exc))
        # what was stored (screened for secrets), not what was said
        kept = receipt.item or fact_of(receipt.change)
        key, value = (kept.key, kept.value or kept.content) if kept else (fact.key, fact.value)
        shown = f"{key}: {value}" if key != "note" else value
        if receipt.outcome == "proposed":
            return CommandResult(command, reply("proposed", lang, what=shown))
        stored = receipt.item.id if receipt.item is not None else None
        return CommandResult(
            command, reply("remembered", lang, what=shown), (f"+ {shown}",), stored_id=stored
        )

    def _forget(
        self, command: MemoryCommand, *, item_id: str | None = None, topic: str | None = None
    ) -> CommandResult:
        """Forget through :meth:`Memory.forget` (one path for every interface)."""
        lang = command.language
        try:
            receipt = self.memory.forget(item_id, topic=topic, agent=self.agent, source_agent=USER)
        except (NotFound, InvalidInput):
            return CommandResult(command, reply("nothing_about", lang, topic=topic or ""))
        lines = tuple(dict.fromkeys(fact_line(f) for f in receipt.items))
        lines = lines or (f"- {topic}",)  # only sentences about it were written
        what = "\n".join(lines)
        if not receipt.applied:
            return CommandResult(command, reply("forget_proposed", lang, what=what))
        return CommandResult(
            command,
            reply("forgotten", lang, what=what),
            tuple("- " + x[2:] for x in lines),
            redact=receipt.phrases,
        )

    def _show(self, lang: str) -> str:
        ws = self.memory.workspace
        brain = self.memory.facts(agent=self.agent, include_archived=False)
        archived = ws.archived_facts(self.agent)
        headers = ws.session_headers(self.agent)
        waiting = sum(1 for h in headers if h.status == SessionStatus.ENDED)
        summaries = len(ws.summary_headers(self.agent, "L1")) + len(
            ws.summary_headers(self.agent, "L2")
        )
        return reply(
            "memory",
            lang,
            brain=render_brain(self.agent, brain) or reply("know_nothing", lang),
            facts=len(brain),
            archived=len(archived),
            sessions=len(headers),
            waiting=waiting,
            summaries=summaries,
            path=ws.agent_dir(self.agent),
        )


__all__ = ["REPLIES", "CommandResult", "CommandRunner", "reply"]
