"""References to code and how they drift (the recorded state of each, its label
now), and deltas: what changed in the workspace's files since a baseline."""
