"""The fact files of a Markdown workspace: ``brain.md``, ``brain_archive.md`` and
``history.md``.

The workspace's parts for them (:mod:`kronika.stores.markdown.workspace`):

- :mod:`.reads`: ``workspace.fact_reads``, each file's kept parse and its facts;
- :mod:`.write`: ``workspace.fact_writer``, every write of a fact file;
- :mod:`.files`: ``workspace.fact_files``, facts added, changed, superseded, archived.

What they stand on:

- :mod:`.brain`: the format (parse and render a fact bullet, the three files' specs);
- :mod:`.moves`: the order in which a fact moves between the files, and how a crash reads;
- :mod:`.cache`: the parse kept of each file while it is unchanged;
- :mod:`.lookup`: lookups kept with that parse (ids, keys, concepts, forms);
- :mod:`.splice`: a changed file's parse made from the old one and the lines that differ;
- :mod:`.append`: appending to the archive or the history in place.
"""
