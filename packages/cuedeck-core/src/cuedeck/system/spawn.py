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
from typing import IO, Any

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


#: Run by :func:`start_detached` in a small isolated interpreter: start the program in a
#: session of its own, write its pid to the pipe named by the first argument, and leave
#: (``os._exit``: nothing of this interpreter's is cleaned up or reported).
_LAUNCH = (
    "import os, subprocess, sys; w = int(sys.argv[1]); "
    "p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, start_new_session=True); "
    "os.write(w, str(p.pid).encode()); os._exit(0)"
)


def start_detached(
    module: str, *args: str, stdout: IO[bytes] | int, stderr: IO[bytes] | int, **options: Any
) -> int:
    """Start ``python -P -m module args`` in :func:`owned_directory` to outlive this
    process, and return its pid. A launcher starts it and exits at once, so the program
    is nobody's child here: a server that starts watchers all day keeps no zombie of
    the ones that ended and no handle to them, and its own exit reports none as left
    running. ``stdout`` and ``stderr`` are the program's (a file, or a pipe whose read end
    sees what it prints); ``options`` go to the launcher's :class:`subprocess.Popen`
    (``env``)."""
    if "cwd" in options:
        raise TypeError("children run in CueDeck's own folder; cwd cannot be chosen")
    read, write = os.pipe()
    try:
        launcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _LAUNCH, str(write), *python_command(module, *args)],
            cwd=owned_directory(),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            pass_fds=(write,),
            **options,
        )
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read()
    if launcher.wait() != 0 or not said.isdigit():
        raise OSError(f"could not start {module} in the background (exit {launcher.returncode})")
    return int(said)


def run(argv: list[str], **options: Any) -> subprocess.CompletedProcess[Any]:
    """Run ``argv`` to its end in :func:`owned_directory` (``-P`` added for this
    interpreter): an installer, which reads settings from its working directory."""
    if "cwd" in options:
        raise TypeError("children run in CueDeck's own folder; cwd cannot be chosen")
    return subprocess.run(safe_command(argv), cwd=owned_directory(), **options)
