"""Workflows: the use cases built on top of a :class:`kronika.Memory`.

A workflow takes a ``Memory`` and drives it through its public API only — the methods
and attributes documented on the facade, never its private helpers — to do one thing a
user asks for: a conversation (:mod:`~kronika.workflows.session`, with its memory
commands in :mod:`~kronika.workflows.commands`, the reference chat loop in
:mod:`~kronika.workflows.chat` and the agent tools in :mod:`~kronika.workflows.tools`),
consolidating finished sessions (:mod:`~kronika.workflows.consolidate`), the memory
jobs (:mod:`~kronika.workflows.jobs`), export and import
(:mod:`~kronika.workflows.portability`), why an item exists
(:mod:`~kronika.workflows.explain`), the browser's charts and policy editing
(:mod:`~kronika.workflows.charts`, :mod:`~kronika.workflows.policy_edit`) and the one
reading context every interface reads through (:mod:`~kronika.workflows.context`).

The floors, arrows down: ``cli``, ``server``, ``bench`` → ``workflows`` → ``memory``
(the facade) → ``engine`` → ``core`` + ``ports`` ← ``stores``, ``providers``. A module
that needs a ``Memory`` belongs here; one that needs only the engine's parts (the write
path, recall, sync) belongs in :mod:`kronika.engine`, which never imports this floor.
"""
