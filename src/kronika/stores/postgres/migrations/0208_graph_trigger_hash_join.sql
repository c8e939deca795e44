-- The trigger that keeps idx_graph beside an UPDATE of idx_items (0207) joins the rows
-- before and after the statement by rowid. The planner knows nothing of a transition
-- table's contents and chose a nested loop: each row after was compared with every row
-- before, and the rows (vectors of 2 KB) spilled to disk were read again for each one.
-- An archived fact given a new value renumbers the rows after it in a team's archive:
-- 5,000 rows took 67 s at 10,000 archived facts. A hash join reads each side once.
ALTER FUNCTION idx_graph_changed() SET enable_nestloop = off;
