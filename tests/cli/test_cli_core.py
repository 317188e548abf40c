"""The core `cue` commands: init, index, doctor, clean, upgrade, plugins, errors."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuedeck_cli.app import make_cli
from tests.conftest import (
    OPTIONAL,
    REPO,
    MakeWorkspace,
    installed,
    needs_extras,
    plant_shadows,
)

CUE = [sys.executable, "-m", "cuedeck_cli"]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_init_creates_the_workspace_once(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/", encoding="utf-8")
    code, out, _ = run("-C", str(tmp_path), "init")
    assert code == 0, out
    for sub in ("cards", "docs", ".cache"):
        assert (tmp_path / ".cuedeck" / sub).is_dir()
    config = (tmp_path / ".cuedeck" / "config.toml").read_text(encoding="utf-8")
    assert "# token_limit = 32000" in config
    gitignore = (tmp_path / ".gitignore").read_text(encoding="utf-8")
    assert gitignore.startswith("node_modules/\n")
    assert gitignore.count(".cuedeck/.cache/") == 1
    assert ".cuedeck/SCENE.md" in gitignore.splitlines()

    code, out, _ = run("-C", str(tmp_path), "init")
    assert code == 0
    assert "nothing changed" in out
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == gitignore


def test_init_force_keeps_a_backup(tmp_path: Path) -> None:
    run("-C", str(tmp_path), "init")
    config = tmp_path / ".cuedeck" / "config.toml"
    config.write_text("[scene]\ntoken_limit = 5\n", encoding="utf-8")
    code, out, _ = run("-C", str(tmp_path), "init", "--force")
    assert code == 0, out
    backups = list((tmp_path / ".cuedeck").glob("config.toml.*.bak"))
    assert [b.read_text(encoding="utf-8") for b in backups] == ["[scene]\ntoken_limit = 5\n"]
    assert "# token_limit = 32000" in config.read_text(encoding="utf-8")


def test_index_reports_seen_parsed_reused(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"docs/a.md": "# A\n", ".cuedeck/docs/b.md": "# B\n"})
    code, out, _ = run("-C", str(root), "index", "--json")
    assert code == 0
    first = json.loads(out)
    assert (first["seen"], first["parsed"], first["reused"]) == (2, 2, 0)
    assert first["counter"] in ("estimate", "o200k")
    second = json.loads(run("-C", str(root), "index", "--json")[1])
    assert (second["parsed"], second["reused"]) == (0, 2)
    code, out, _ = run("-C", str(root), "index", "--rebuild")
    assert code == 0
    assert "2 parsed" in out


def test_doctor_healthy_and_unhealthy(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({".cuedeck/docs/api.md": "# API\n## Login\n"})
    code, out, _ = run("-C", str(root), "doctor")
    assert code == 0
    assert "healthy: 0 errors, 0 warnings" in out
    assert "token counter:" in out

    (root / ".cuedeck/docs/card.md").write_text(
        "---\ntitle: [broken\n---\nSee @doc/api#Logon\n", encoding="utf-8"
    )
    code, out, _ = run("-C", str(root), "doctor")
    assert code == 1
    assert "error[1004] .cuedeck/docs/card.md:2: frontmatter is not valid YAML" in out
    assert "error[1001] .cuedeck/docs/card.md:4: reference '@doc/api#Logon'" in out
    assert "help: Did you mean 'Login'?" in out
    assert "unhealthy: 2 errors" in out


def test_doctor_json_and_strict(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.md": "# A\n"}, config="[scene]\nshiny = true\n")
    code, out, _ = run("-C", str(root), "doctor", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["healthy"] is True
    assert report["problems"] == [
        {
            "severity": "warning",
            "code": 1004,
            "path": ".cuedeck/config.toml",
            "line": 2,
            "message": "unknown config key 'scene.shiny' (ignored)",
            "help": "docs/config.md lists every key",
        }
    ]
    code, out, _ = run("-C", str(root), "doctor", "--json", "--strict")
    assert code == 1
    assert json.loads(out)["healthy"] is False


def test_doctor_reports_a_config_error_with_its_line(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({}, config="[watch]\ndebounce_ms = 'fast'\n")
    code, out, _ = run("-C", str(root), "doctor")
    assert code == 1
    assert "error[1004] .cuedeck/config.toml:2: config key 'watch.debounce_ms'" in out


def test_clean_removes_the_cache(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.md": "# A\n"})
    run("-C", str(root), "index")
    assert (root / ".cuedeck/.cache/index.sqlite3").exists()
    code, out, _ = run("-C", str(root), "clean")
    assert code == 0 and "removed" in out
    assert not (root / ".cuedeck/.cache").exists()
    assert (root / "a.md").exists()
    assert "nothing to remove" in run("-C", str(root), "clean")[1]


@needs_extras
def test_plugins_json_lists_the_example_plugin(make_workspace: MakeWorkspace) -> None:
    code, out, _ = run("-C", str(make_workspace()), "plugins", "--json")
    assert code == 0
    report = json.loads(out)
    example = next(p for p in report["plugins"] if p["name"] == "example")
    assert example["distribution"] == "cuedeck-example-plugin"
    assert example["hooks"] == [
        "register_commands",
        "register_maskers",
        "register_parsers",
        "register_settings",
        "register_tools",
    ]
    assert report["registered"]["tools"]["word_count"] == "example"
    assert report["registered"]["commands"]["words"] == "example"
    assert report["registered"]["commands"]["word-count"] == "example"
    assert report["failures"] == []


def test_plugins_json_lists_cuedeck_cli_and_its_commands(make_workspace: MakeWorkspace) -> None:
    code, out, _ = run("-C", str(make_workspace()), "plugins", "--json")
    assert code == 0
    report = json.loads(out)
    cli = next(p for p in report["plugins"] if p["name"] == "cli")
    assert cli["distribution"] == "cuedeck-cli"
    assert cli["hooks"] == ["register_commands"]
    owned = {name for name, owner in report["registered"]["commands"].items() if owner == "cli"}
    assert owned == {
        "init",
        "index",
        "doctor",
        "status",
        "clean",
        "scene",
        "watch",
        "plugins",
        "upgrade",
        "board",
    }
    # Every hook of the contract is reported, whoever implements it.
    assert {"searchers", "pruners", "maskers", "tools", "commands", "services"} <= set(
        report["registered"]
    )


@pytest.mark.parametrize("columns", [80, 60])
def test_plugins_fit_a_narrow_terminal_and_name_everything_whole(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    root = str(make_workspace())
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run("-C", root, "plugins")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "CueDeck plugins" and "…" not in out
    assert max(len(line) for line in lines) <= columns
    report = json.loads(run("-C", root, "plugins", "--json")[1])
    words = set(re.split(r"[\s,]+", out))
    for plugin in report["plugins"]:  # each name, distribution and registration, whole
        assert f"{plugin['name']}  {plugin['distribution']} {plugin['version']}" in lines
    for kind, names in report["registered"].items():
        for name, owner in names.items():
            assert name in words, (kind, name, owner)


def test_disabling_the_cli_plugin_removes_its_commands(make_workspace: MakeWorkspace) -> None:
    root = make_workspace()
    env = {**os.environ, "CUEDECK_DISABLE_PLUGINS": "cli"}
    listed = subprocess.run(
        [*CUE, "-C", str(root), "--help"], capture_output=True, text=True, env=env, check=False
    )
    doctor = subprocess.run(
        [*CUE, "-C", str(root), "doctor"], capture_output=True, text=True, env=env, check=False
    )
    assert listed.returncode == 0
    commands = listed.stdout.partition("Commands:")[2]  # none at all with core alone
    assert "doctor" not in commands and "scene" not in commands
    if importlib.util.find_spec("cuedeck_tasks") is not None:
        assert "card" in commands  # the other plugins' commands stay
    assert doctor.returncode == 1
    assert doctor.stderr.startswith("error[1004]")
    assert "No such command 'doctor'" in doctor.stderr


@needs_extras
def test_example_plugin_command_runs(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"docs/a.md": "# A\n\none two three\n"})
    code, out, _ = run("-C", str(root), "words", "docs/a.md")
    assert code == 0
    assert out == "docs/a.md: 5 words, 1 headings\n"


def test_errors_are_codes_not_tracebacks(tmp_path: Path) -> None:
    result = subprocess.run(
        [*CUE, "-C", str(tmp_path), "doctor"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"error[1001] {tmp_path}: {tmp_path} is not a CueDeck")
    assert "help: run `cue init`" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@needs_extras
def test_missing_document_suggests_a_near_match(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"docs/guide.md": "# Guide\n"})
    code, _, err = run("-C", str(root), "words", "docs/guid.md")
    assert code == 1
    assert "error[1001] docs/guid.md: docs/guid.md is not in the workspace index" in err
    assert "help: Did you mean 'docs/guide.md'?" in err


@needs_extras
def test_help_does_not_import_heavy_libraries() -> None:
    probe = (
        "import sys\n"
        "from cuedeck_cli.app import make_cli\n"
        "try:\n    make_cli()(['--help'], prog_name='cue')\n"
        "except SystemExit:\n    pass\n"
        "heavy = ['fastmcp', 'sklearn', 'onnxruntime', 'mcp', 'numpy', 'pydantic']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert "Usage: cue" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_version() -> None:
    code, out, _ = run("--version")
    assert code == 0
    assert out.startswith("cue 0.1.0 (cuedeck-core 0.1.0)")


def test_init_takes_the_directory_as_docs_teams_shows(tmp_path: Path) -> None:
    """`cue init /srv/cuedeck` (docs/teams.md) makes the folder and the workspace there."""
    home = tmp_path / "srv" / "cuedeck"
    code, out, _ = run("init", str(home))
    assert code == 0, out
    assert (home / ".cuedeck" / "config.toml").is_file()
    assert f"Initialised CueDeck workspace in {home}" in out
    code, out, _ = run("-C", str(home), "doctor", "--json")
    assert code == 0 and json.loads(out)["problems"] == []
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    code, _, err = run("init", str(tmp_path / "a-file"))
    assert code != 0 and "Traceback" not in err


def test_upgrade_dry_run_names_the_installer_and_keeps_the_extras() -> None:
    code, out, _ = run("upgrade", "--dry-run")
    assert code == 0
    everything = all(installed(module) for module in OPTIONAL) and installed("bpe_openai")
    # Upgrading `cuedeck` alone would leave the extras' packages at the old version.
    assert out.strip().endswith("'cuedeck[all]'" if everything else "cuedeck")
    assert any(word in out for word in ("uv", "pip", "pipx"))


@pytest.mark.slow
def test_upgrade_fails_clearly_without_a_package_index(tmp_path: Path) -> None:
    """Run from a folder holding a planted `pip` package and `uv.toml`: the installer
    runs from CueDeck's own folder, so neither is read."""
    here = tmp_path / "workspace"
    here.mkdir()
    marker = tmp_path / "planted-code-ran"
    plant_shadows(here, marker)
    (here / "uv.toml").write_text("this is [not toml\n", encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_")) and k != "VIRTUAL_ENV"
    }
    dead = "http://127.0.0.1:9/simple"
    env.update(PIP_INDEX_URL=dead, UV_DEFAULT_INDEX=dead, UV_INDEX_URL=dead, UV_NO_CACHE="1")
    result = subprocess.run(
        # the `cue` script: `python -m cuedeck_cli` itself would import the planted package
        [str(Path(sys.executable).with_name("cue")), "upgrade"], capture_output=True,
        text=True, env=env, check=False, timeout=300, cwd=here,
    )  # fmt: skip
    assert result.returncode == 1
    assert "error[1000]" in result.stderr
    assert "package index cannot be reached" in result.stderr
    assert "Traceback" not in result.stderr
    assert not marker.exists()
    assert "uv.toml" not in result.stderr


@needs_extras
def test_the_demo_workspace_is_healthy(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", demo, ignore=shutil.ignore_patterns(".cache"))
    (demo / ".cuedeck" / "SCENE.md").unlink(missing_ok=True)
    code, out, _ = run("-C", str(demo), "doctor", "--json")
    assert json.loads(out)["problems"] == []
    assert code == 0


def test_long_work_logs_progress_lines_when_piped(
    make_workspace: MakeWorkspace, capsys: pytest.CaptureFixture[str]
) -> None:
    from cuedeck import open_workspace
    from cuedeck.progress import reporting_to
    from cuedeck_cli.output import ProgressLines

    root = make_workspace({f"docs/d{n}.md": f"# Doc {n}\n\nText {n}.\n" for n in range(5)})
    with reporting_to(ProgressLines(delay=0.0, every=3600.0)):
        open_workspace(root).refresh()
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["Indexing files: 1/5 (20%)", "Indexing files: 5/5 (100%)"]

    with reporting_to(ProgressLines()):  # quick work says nothing
        open_workspace(root).refresh(rebuild=True)
    assert capsys.readouterr().err == ""
    quiet = CliRunner().invoke(make_cli(), ["-C", str(root), "index", "--rebuild"])
    assert quiet.exit_code == 0 and "Indexing files" not in quiet.output


def test_long_work_draws_bars_on_a_terminal_without_a_thread(make_workspace: MakeWorkspace) -> None:
    import io
    import threading

    from rich.console import Console

    from cuedeck import open_workspace
    from cuedeck.progress import reporting_to
    from cuedeck_cli.output import ProgressBars

    root = make_workspace({f"docs/d{n}.md": f"# Doc {n}\n\nText {n}.\n" for n in range(5)})
    screen = io.StringIO()
    bars = ProgressBars(delay=0.0, out=Console(file=screen, force_terminal=True, width=100))
    threads = threading.active_count()
    with reporting_to(bars):
        open_workspace(root).refresh()
        assert threading.active_count() == threads  # drawn here: workers may still fork
    bars.close()
    assert "Indexing files" in screen.getvalue() and "5/5" in screen.getvalue()

    quick = io.StringIO()
    bars = ProgressBars(out=Console(file=quick, force_terminal=True))
    with reporting_to(bars):  # quick work draws nothing
        open_workspace(root).refresh(rebuild=True)
    bars.close()
    assert "Indexing files" not in quick.getvalue()


@pytest.mark.slow
def test_a_misspelled_config_key_is_warned_on_stderr_once(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({".cuedeck/docs/a.md": "# A\n"}, config="[scene]\ntoken_limt = 8000\n")
    code, _, err = run("-C", str(root), "index")
    assert code == 0, err
    assert err == (
        "warning: .cuedeck/config.toml:2: unknown config key 'scene.token_limt' (ignored); "
        "did you mean 'scene.token_limit'?\n"
    )
    # A fresh process: doctor's report lists it, and it is not logged a second time.
    doctor = subprocess.run(
        [*CUE, "-C", str(root), "doctor"], capture_output=True, text=True, check=False
    )
    both = doctor.stdout + doctor.stderr
    assert both.count("unknown config key 'scene.token_limt'") == 1, both


def test_init_then_an_appended_section_is_read(tmp_path: Path) -> None:
    run("-C", str(tmp_path), "init")
    config = tmp_path / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + "\n[scene]\ntoken_limit = 1234\n", encoding="utf-8"
    )
    code, out, err = run("-C", str(tmp_path), "doctor", "--json")
    assert code == 0, out + err
    assert json.loads(out)["problems"] == []


def test_state_locks_are_git_ignored_and_doctor_notices_old_workspaces(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code, out, _ = run("-C", str(tmp_path), "init")
    assert code == 0, out
    (tmp_path / ".cuedeck" / ".state.lock").write_text("", encoding="utf-8")
    (tmp_path / ".cuedeck" / ".state.lock.pid").write_text("1\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    staged = subprocess.run(
        ["git", "-C", str(tmp_path), "diff", "--cached", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(staged) == [".cuedeck/config.toml", ".gitignore"]
    code, out, _ = run("-C", str(tmp_path), "doctor", "--json")
    assert [p for p in json.loads(out)["problems"] if p["code"] == 1052] == []

    # A workspace whose .gitignore predates the lock lines: doctor says so, init mends it.
    gitignore = tmp_path / ".gitignore"
    old = [
        line for line in gitignore.read_text(encoding="utf-8").splitlines() if "lock" not in line
    ]
    gitignore.write_text("\n".join(old) + "\n", encoding="utf-8")
    code, out, _ = run("-C", str(tmp_path), "doctor", "--json")
    found = [p for p in json.loads(out)["problems"] if p["code"] == 1052]
    assert [(p["severity"], p["path"], p["message"]) for p in found] == [
        (
            "warning",
            ".gitignore",
            "git would commit CueDeck's per-person files: .cuedeck/.state.lock, "
            ".cuedeck/.state.lock.pid not ignored",
        )
    ]
    run("-C", str(tmp_path), "init")
    code, out, _ = run("-C", str(tmp_path), "doctor", "--json")
    assert [p for p in json.loads(out)["problems"] if p["code"] == 1052] == []


def test_a_busy_port_for_the_board_is_error_1050(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("uvicorn")
    root = make_workspace()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, _, err = run("-C", str(root), "board", "--port", str(port), "--no-open")
    assert code == 1
    first, help_line = err.splitlines()[:2]
    assert first == (
        f"error[1050] port {port} on 127.0.0.1 is taken: another program is listening on "
        f"127.0.0.1:{port}"
    )
    assert help_line.startswith("  help: stop that program, or serve on another port: --port ")


def test_finished_bars_leave_the_screen_before_results_are_printed() -> None:
    import io

    from rich.console import Console

    from cuedeck_cli.output import ProgressBars

    screen = io.StringIO()
    bars = ProgressBars(delay=0.0, out=Console(file=screen, force_terminal=True, width=80))
    bars(1, 3, "Embedding sections")
    drawn = screen.getvalue()
    assert "Embedding sections" in drawn
    bars(3, 3, "Embedding sections")  # done: the bar goes at once, not at the command's end
    erased = screen.getvalue()[len(drawn) :]
    assert bars._progress is None
    after_last_draw = erased.rsplit("3/3", 1)[1]
    assert "\r\x1b[2K" in after_last_draw  # the bar's line cleared, the cursor at its start


def test_the_board_offers_the_configured_budget(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_tasks")
    from cuedeck import open_workspace
    from cuedeck_cli.board.api import BoardApi

    root = make_workspace(config="[scene]\ntoken_limit = 12000\n")
    assert BoardApi(open_workspace(root)).cards()["budget"] == 12000


@needs_extras
def test_a_reader_that_leaves_early_ends_the_command_quietly(
    make_workspace: MakeWorkspace,
) -> None:
    """`cue ... | head -1`: the pipe's reader is gone before the command writes."""
    root = make_workspace({"docs/a.md": "# Tokens\n\nRefresh tokens expire.\n"})
    reader, writer = os.pipe()
    os.close(reader)
    argv = [*CUE, "-C", str(root), "search", "tokens", "--mode", "keyword"]
    with subprocess.Popen(argv, stdout=writer, stderr=subprocess.PIPE) as process:
        os.close(writer)
        _, err = process.communicate(timeout=120)
    assert (process.returncode, err.decode()) == (141, "")
