"""``kronika recalls``: the recall log on the command line, whole for the owner and as a
reader may have it with ``--user``/``--channel``; ``--json`` is the export."""

from __future__ import annotations

import json


def test_each_recall_is_logged_and_exported_as_its_reader_may_have_it(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    run("remember", "--key", "drink", "tea")
    run("note", "ann's tea is green", "--user", "ann")
    run("recall", "tea")
    run("recall", "tea", "--user", "ann")
    run("recall", "tea", "--no-record")  # a look that does not count
    owner = json.loads(run("logs", "recalls", "--json"))["recalls"]
    # the owner reads everything; ann may not see the owner's own fact
    assert [(e["user"], e["hits"]) for e in owner] == [(None, 2), ("ann", 1)]
    assert all(e["query"] is None for e in owner)  # recall_log_queries is off
    ann = json.loads(run("logs", "recalls", "--json", "--user", "ann", "--days", "1"))["recalls"]
    # the owner's recall counts for ann by her note alone; her own is whole
    assert [(e["user"], e["hits"]) for e in ann] == [(None, 1), ("ann", 1)]
    assert ann[0]["item_ids"] == ann[1]["item_ids"] != owner[0]["item_ids"]
    bob = json.loads(run("logs", "recalls", "--json", "--user", "bob"))["recalls"]
    assert bob == []  # bob may see nothing either recall used
    assert "recall log of default" in run("logs", "recalls")
    assert "days" in run("logs", "recalls", "--days", "0", code=2)
