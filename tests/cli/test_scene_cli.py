"""`cue scene`: output file, dry run, formats, --json, --check and the clipboard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from cuedeck_cli.app import make_cli
from tests.conftest import MakeWorkspace

CUE = [sys.executable, "-m", "cuedeck_cli"]
KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"

FILES = {
    ".cuedeck/cards/abc123.md": (
        "---\nid: abc123\ntitle: Refunds\nstatus: active\n---\n# Refunds\n\n"
        "Follow @doc/api#Refunds and @doc/ops.\n"
    ),
    ".cuedeck/docs/api.md": "# API\n\nIntro.\n\n## Refunds\n\nPOST /refunds.\n\n## Other\n\nNo.\n",
    ".cuedeck/docs/ops.md": f"# Ops\n\n    STRIPE_SECRET_KEY={KEY}\n",
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_scene_writes_the_file_and_reports(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    code, out, _ = run("-C", str(root), "scene", "--no-clipboard")
    assert code == 0, out
    assert out.startswith("wrote .cuedeck/SCENE.md: card abc123: ")
    text = (root / ".cuedeck" / "SCENE.md").read_text(encoding="utf-8")
    assert text.startswith("# Scene: Refunds (abc123)")
    assert KEY not in text and "[REDACTED:stripe-secret-key#1]" in text
    code, out, _ = run("-C", str(root), "scene", "--no-clipboard")
    assert out.startswith("unchanged: .cuedeck/SCENE.md")


def test_dry_run_prints_and_writes_nothing(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    code, out, _ = run("-C", str(root), "scene", "-d", "--format", "xml", "--token-limit", "900")
    assert code == 0
    assert out.startswith('<scene card="abc123"') and 'budget="900"' in out
    assert KEY not in out
    assert not (root / ".cuedeck" / "SCENE.md").exists()


def test_json_prints_the_manifest(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    code, out, _ = run("-C", str(root), "scene", "--json", "--no-clipboard")
    assert code == 0
    manifest = json.loads(out)
    assert manifest["card"] == "abc123"
    assert [c["placed"] for c in manifest["candidates"]] == ["whole", "section", "whole"]
    assert manifest["secrets"] == {"stripe-secret-key": 1}
    assert (root / ".cuedeck" / "SCENE.md").exists()


def test_check_fails_with_1006_naming_the_changed_input(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    run("-C", str(root), "scene", "--no-clipboard")
    code, out, _ = run("-C", str(root), "scene", "--check")
    assert code == 0 and "is up to date" in out
    (root / ".cuedeck" / "docs" / "api.md").write_text("# API\n\n## Refunds\n\nNew.\n")
    code, _, err = run("-C", str(root), "scene", "--check")
    assert code == 1
    assert "error[1006]" in err and ".cuedeck/docs/api.md changed" in err


def test_errors_are_reported_with_their_code(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    code, _, err = run("-C", str(root), "scene", "zzz999")
    assert code == 1 and "error[1001]" in err
    code, _, err = run("-C", str(root), "scene", "--token-limit", "20", "-d")
    assert code == 1 and "error[1003]" in err and "over the budget of 20" in err
    cyclic = dict(FILES)
    cyclic[".cuedeck/docs/ops.md"] = "# Ops\n\nBack to @card/abc123.\n"
    code, _, err = run("-C", str(make_workspace(cyclic)), "scene", "-d")
    assert code == 1 and "error[1002]" in err and " -> " in err


def headless_env() -> dict[str, str]:
    """This process's environment without any display or clipboard helper."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + "/usr/bin" + os.pathsep + "/bin"
    return env


def test_headless_clipboard_is_a_note_not_a_failure(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    env = headless_env()
    for helper in ("xclip", "xsel", "wl-copy", "klipper"):
        for folder in env["PATH"].split(os.pathsep):
            assert not (Path(folder) / helper).exists(), f"{helper} found: not headless"
    result = subprocess.run(
        [*CUE, "-C", str(root), "scene"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("wrote .cuedeck/SCENE.md")
    assert result.stderr.count("no clipboard here") == 1
    assert (root / ".cuedeck" / "SCENE.md").is_file()


def test_strict_fails_on_a_dead_reference(make_workspace: MakeWorkspace) -> None:
    card = "---\ntitle: T\nstatus: active\n---\n# T\n\nSee @doc/gone and @doc/here.\n"
    root = make_workspace({".cuedeck/cards/aaa111.md": card, ".cuedeck/docs/here.md": "# H\n"})
    lenient = run("-C", str(root), "scene", "-d", "--json")
    strict = run("-C", str(root), "scene", "-d", "--strict")
    assert lenient[0] == 0
    assert [m["line"] for m in json.loads(lenient[1])["missing"]] == [7]
    assert strict[0] == 1
    assert strict[2].startswith("error[1001] .cuedeck/cards/aaa111.md:7: 1 reference(s)")
