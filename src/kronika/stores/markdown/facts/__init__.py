"""The fact files of a Markdown workspace: ``brain.md``, ``brain_archive.md`` and
``history.md``.

- :mod:`.brain`: their format (parse and render a fact bullet, the three files' specs);
- :mod:`.moves`: the order in which a fact moves between them, and how a crash reads;
- :mod:`.cache`: the parse kept of each file while it is unchanged;
- :mod:`.lookup`: lookups kept with that parse (ids, keys, concepts, forms);
- :mod:`.splice`: a changed file's parse made from the old one and the lines that differ;
- :mod:`.append`: appending to the archive or the history in place.
"""
