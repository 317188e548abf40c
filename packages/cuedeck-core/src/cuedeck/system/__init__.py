"""How CueDeck meets the operating system: the child processes it starts and how."""
