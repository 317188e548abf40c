"""The one way CueDeck starts a child process that runs Python or installs packages.

``python -m module`` puts its working directory first on ``sys.path``. Started in the
caller's folder (a workspace, where a client may create any file), a child would import
a planted ``__main__.py`` of the CLI, or a ``json.py``, before the real ones and run it as
the user. So every child here runs with ``-P`` (no unsafe path: its working directory
and a script's folder stay off ``sys.path``) and in a working directory CueDeck owns
(:func:`owned_directory`), so a relative ``PYTHONPATH`` entry or a tool that reads its
settings from the current folder (``uv`` reads ``uv.toml``) finds nothing a client wrote.
The person's own environment (``PYTHONPATH``, a user site) is theirs and is kept.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

#: Where children run: a folder of the user cache that nothing else writes into.
RUN_DIR = "run"


def owned_directory() -> str:
    """The working directory of every child: ``<user cache>/run``, made private."""
    from cuedeck.layout import user_cache_dir

    folder = os.path.join(user_cache_dir(), RUN_DIR)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def python_command(module: str, *args: str) -> list[str]:
    """``python -P -m module args``: this interpreter, its working directory off the path."""
    return [sys.executable, "-P", "-m", module, *args]


def safe_command(argv: list[str]) -> list[str]:
    """``argv`` with ``-P`` added when it runs this interpreter (``python -m pip``)."""
    if argv and argv[0] == sys.executable and argv[1:2] != ["-P"]:
        return [argv[0], "-P", *argv[1:]]
    return list(argv)


#: Run by :func:`memory_bounded`: set the address-space limit, then become the program.
_LIMIT_AND_EXEC = (
    "import os, resource, sys; n = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_AS, (n, n)); os.execvp(sys.argv[2], sys.argv[2:])"
)


def memory_bounded(argv: list[str], limit_bytes: int) -> list[str]:
    """``argv`` run under an address-space limit of ``limit_bytes``: a small isolated
    interpreter (``-I -S``: nothing from the working directory, no site) sets it and
    execs the program (no ``preexec_fn``, which is unsafe in a process with threads)."""
    return [sys.executable, "-I", "-S", "-c", _LIMIT_AND_EXEC, str(limit_bytes), *argv]


def start_python(module: str, *args: str, **options: Any) -> subprocess.Popen[bytes]:
    """Start ``python -P -m module args`` in :func:`owned_directory`; ``options`` go to
    :class:`subprocess.Popen` (a ``cwd`` is refused: the folder is not the caller's)."""
    if "cwd" in options:
        raise TypeError("children run in CueDeck's own folder; cwd cannot be chosen")
    return subprocess.Popen(python_command(module, *args), cwd=owned_directory(), **options)


def run(argv: list[str], **options: Any) -> subprocess.CompletedProcess[Any]:
    """Run ``argv`` to its end in :func:`owned_directory` (``-P`` added for this
    interpreter): an installer, which reads settings from its working directory."""
    if "cwd" in options:
        raise TypeError("children run in CueDeck's own folder; cwd cannot be chosen")
    return subprocess.run(safe_command(argv), cwd=owned_directory(), **options)
