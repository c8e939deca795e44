"""The Markdown workspace: kronika's canonical, human-editable memory files.

File formats are described in ``docs/workspace.md``; :class:`MarkdownWorkspace` is the
one class that reads and writes them.
"""

from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.workspace import MarkdownWorkspace, ParsedSource, SourceFile

__all__ = ["MarkdownWorkspace", "ParsedSource", "SourceFile", "atomic_write_text"]
