"""Storage adapters: the Markdown workspace (the truth) and the derived indexes."""
