"""``kronika chat`` (the reference agent loop) and ``kronika jobs consolidate``."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading

if TYPE_CHECKING:  # the chat loop and the model client load only for these commands
    from kronika.settings import Settings
    from kronika.workflows.chat import ChatReply
    from kronika.workflows.consolidate import ConsolidationReport

HELP = "commands: /new (new conversation), /memory (show the Brain), /quit"


def _with_llm_flags(args: argparse.Namespace, settings: Settings) -> Settings:
    return settings.with_overrides(
        llm_base_url=getattr(args, "base_url", None),
        llm_api_key=getattr(args, "api_key", None),
        llm_model=getattr(args, "model", None),
        minion_model=getattr(args, "minion_model", None),
    )


def _lines(interactive: bool) -> Iterator[str]:
    if not interactive:
        # bytes that are not UTF-8 arrive as lone surrogates, which the write path
        # refuses with a clear message, instead of stopping the whole chat
        if isinstance(sys.stdin, io.TextIOWrapper):
            sys.stdin.reconfigure(errors="surrogateescape")
        for raw in sys.stdin:
            yield raw.rstrip("\n")
        return
    while True:
        try:
            yield render.out.input("[bold cyan]you ›[/] ")
        except EOFError:
            render.out.print()
            return


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    from rich.text import Text

    from kronika.app import build_llm, build_memory
    from kronika.workflows.chat import ChatAgent
    from kronika.workflows.session import Session

    settings = _with_llm_flags(args, settings)
    interactive = sys.stdin.isatty() and not args.json
    llm = build_llm(settings)
    minion = build_llm(settings, minion=True)
    with build_memory(settings, create=True) as memory:
        session = Session(reading(memory, args), agent=args.agent, llm=llm, minion=minion)
        agent = ChatAgent(session, llm, tools=not args.no_tools)
        wake = session.wake()
        if not args.quiet:
            model = f"model {llm.model}" if llm is not None else "no model configured"
            render.err.print(
                Text(
                    f"kronika chat · agent {session.agent} · {model} · "
                    f"memory at wake: {wake.tokens} tokens"
                    + (f" · resumed {wake.resumed}" if wake.resumed else ""),
                    style="dim",
                )
            )
            if wake.recovered is not None:
                _show_report(wake.recovered, "earlier sessions")
            if interactive:
                render.err.print(Text(HELP, style="dim"))
        try:
            for line in _lines(interactive):
                text = line.strip()
                if not text:
                    continue
                if text in ("/quit", "/exit"):
                    break
                if text == "/memory":
                    brain = memory.brain(agent=session.agent) or "(the Brain is empty)"
                    render.out.print(brain, markup=False)
                    continue
                if text == "/new":
                    report = session.new_conversation()
                    if report is not None and not args.quiet:
                        _show_report(report, "conversation ended")
                    continue
                answer = agent.send(text)
                _print_reply(answer, args, interactive, settings.secrets)
        finally:
            report = session.close()
            if report is not None and not args.quiet:
                _show_report(report, "conversation ended")
    return 0


def _events(answer: ChatReply, secrets: str) -> list[str]:
    from kronika.core.secrets import redact_secrets

    turn = answer.turn
    events: list[str] = []
    if turn.ended is not None:
        events.append("the previous conversation ended: " + _report_line(turn.ended))
    if turn.recalled:
        cites = ", ".join(hit.citation for hit in turn.recalled[:3])
        events.append(f"recalled {len(turn.recalled)} memories ({cites})")
    if turn.lessons:
        events.append(f"{len(turn.lessons)} lessons in context")
    if turn.command is not None:
        events.append(f"memory command: {turn.command.command.kind.value}")
        events += list(turn.command.changed)
    for use in answer.tools:
        state = "ok" if use.result.get("ok") else f"error: {use.result.get('error')}"
        arguments = use.arguments if secrets == "allow" else redact_secrets(use.arguments)
        events.append(f"tool {use.name}({arguments}) → {state}")
    if turn.summarized:
        events.append("summarised the older part of the conversation")
    return events


def _print_reply(
    answer: ChatReply, args: argparse.Namespace, interactive: bool, secrets: str
) -> None:
    from rich.text import Text

    events = _events(answer, secrets)
    if args.json:
        data = {
            "reply": answer.text,
            "session": answer.turn.session_id,
            "command": answer.turn.command.command.kind.value if answer.turn.command else None,
            "recalled": [hit.citation for hit in answer.turn.recalled],
            "changed": list(answer.turn.command.changed) if answer.turn.command else [],
            "tools": [{"name": u.name, "result": u.result} for u in answer.tools],
            "error": answer.error,
        }
        sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    if not args.quiet:
        for event in events:
            render.err.print(Text(f"  · {event}", style="dim"))
    if interactive:
        render.out.print(Text.assemble(("kronika › ", "bold green"), answer.text))
    else:
        sys.stdout.write(answer.text + "\n")
        sys.stdout.flush()


def _report_line(report: ConsolidationReport) -> str:
    parts = []
    for outcome in report.sessions:
        text = f"{outcome.session_id} {outcome.status}"
        if outcome.written:
            text += f" ({len(outcome.written)} memory changes)"
        parts.append(text)
    parts += [f"wrote {path}" for path in report.summaries]
    if report.waiting:
        parts.append("waiting: " + "; ".join(report.waiting))
    return ", ".join(parts) or "nothing to consolidate"


def _show_report(report: ConsolidationReport, title: str) -> None:
    from rich.text import Text

    render.err.print(Text(f"  · {title}: {_report_line(report)}", style="dim"))
    for outcome in report.sessions:
        for line in outcome.written:
            render.err.print(Text(f"      {line}", style="dim"))


def report_json(report: ConsolidationReport) -> dict[str, Any]:
    return {
        "sessions": [
            {
                "session": o.session_id,
                "status": o.status,
                "written": list(o.written),
                "summary": o.summary,
                "error": o.error,
                "extractor": o.extractor,
            }
            for o in report.sessions
        ],
        "summaries": report.summaries,
        "waiting": report.waiting,
    }


def cmd_consolidate(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table
    from rich.text import Text

    from kronika.app import build_llm, build_memory
    from kronika.workflows.consolidate import Consolidator

    settings = _with_llm_flags(args, settings)
    minion = build_llm(settings, minion=True)
    with build_memory(settings) as memory:
        agents = memory.agents() if args.all_agents else [args.agent or settings.default_agent]
        reports = {}
        for name in agents:
            memory.workspace.require_agent(name)
            reports[name] = Consolidator(memory, minion).run(name, retry_failed=args.retry_failed)
    if args.json:
        render.print_json({name: report_json(r) for name, r in reports.items()})
        return 0
    table = Table(title="consolidation", title_justify="left")
    for column in ("agent", "session", "status", "changes", "note"):
        table.add_column(column, overflow="fold")
    for name, report in reports.items():
        for o in report.sessions:
            note = o.error or (o.summary or "")[:80]
            table.add_row(name, o.session_id, o.status, "\n".join(o.written), note)
        for path in report.summaries:
            table.add_row(name, path, "written", "", "")
    render.out.print(table if table.row_count else "nothing waiting for consolidation")
    for name, report in reports.items():
        for waiting in report.waiting:
            render.err.print(Text(f"{name}: waiting: {waiting}", style="yellow"))
    return 0


def _llm_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", help="OpenAI-compatible endpoint ($KRONIKA_LLM_BASE_URL)")
    p.add_argument("--api-key", help="API key ($KRONIKA_LLM_API_KEY)")
    p.add_argument("--model", help="model that answers ($KRONIKA_LLM_MODEL)")
    p.add_argument("--minion-model", help="model for background work ($KRONIKA_MINION_MODEL)")


def register(cli: Commands) -> None:
    p = cli.add("chat", cmd_chat)
    _llm_flags(p)
    p.add_argument("--no-tools", action="store_true", help="do not offer the memory tools")
    add_reading_context(p)
    p.add_argument("--quiet", action="store_true", help="print replies only")


def register_consolidate(jobs: Commands) -> None:
    p = jobs.add("consolidate", cmd_consolidate)
    _llm_flags(p)
    p.add_argument("--retry-failed", action="store_true", help="also retry failed sessions")
    p.add_argument("--all-agents", action="store_true", help="every agent in the workspace")
