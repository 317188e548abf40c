"""Secret masking: the built-in rules and masker, what a masker finds, and
the session every text that leaves the process passes through."""
