"""References: the graph of which file refers to which, references to code and
their drift, and deltas (what changed since a baseline)."""
