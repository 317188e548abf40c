"""The workspace boundary, decided once in the index: links out, binary and unreadable files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cuedeck.errors import FileNotFound, InvalidInput
from cuedeck.scene import build_scene
from cuedeck.serving.read_doc import read_doc
from cuedeck.workspace import open_workspace
from tests.conftest import MakeWorkspace

CUE = str(Path(sys.executable).with_name("cue"))
SECRET_TEXT = "root:x:0:0:TOPSECRET-OUTSIDE-THE-WORKSPACE"
CARD = "---\ntitle: Leak test\nstatus: active\n---\n# Leak test\n\nSee @doc/leak and @doc/inner.\n"


@pytest.fixture
def linked(make_workspace: MakeWorkspace, tmp_path: Path) -> Path:
    """A workspace whose docs link out (a file and a folder) and in (a file)."""
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "passwd.md").write_text(f"# passwd\n\n{SECRET_TEXT}\n")
    (outside / "folder" / "hosts.md").write_text(f"# hosts\n\n{SECRET_TEXT}\n")
    root = make_workspace(
        {
            ".cuedeck/cards/aaa111.md": CARD,
            "notes/real.md": "# Inner\n\nThe linked text inside.\n",
        }
    )
    docs = root / ".cuedeck" / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "leak.md").symlink_to(outside / "passwd.md")
    (docs / "ext").symlink_to(outside / "folder", target_is_directory=True)
    (docs / "inner.md").symlink_to(root / "notes" / "real.md")
    return root


def test_links_out_of_the_workspace_are_not_part_of_it(linked: Path) -> None:
    workspace = open_workspace(linked)
    paths = set(workspace.documents)
    assert ".cuedeck/docs/inner.md" in paths  # a link that stays inside is followed
    assert not any("leak" in path or "/ext/" in path for path in paths)
    for read in (workspace.snapshot, lambda path: read_doc(workspace, path)):
        with pytest.raises((FileNotFound, InvalidInput)) as refused:
            read(".cuedeck/docs/leak.md")
        assert "TOPSECRET" not in str(refused.value.to_dict())
    scene = build_scene(workspace, token_limit=4000)
    assert "The linked text inside." in scene.text
    assert "TOPSECRET" not in scene.text


@pytest.mark.slow
def test_doctor_names_each_link_left_out(linked: Path) -> None:
    done = subprocess.run(
        [CUE, "-C", str(linked), "doctor", "--json"], capture_output=True, text=True, check=False
    )
    problems = json.loads(done.stdout)["problems"]
    left_out = {p["path"]: p for p in problems if p["code"] == 1011}
    assert set(left_out) == {".cuedeck/docs/leak.md", ".cuedeck/docs/ext"}
    assert all(p["severity"] == "warning" for p in left_out.values())
    assert (
        str(linked.parent / "outside" / "passwd.md") in left_out[".cuedeck/docs/leak.md"]["message"]
    )


def test_search_never_finds_what_is_outside(linked: Path) -> None:
    pytest.importorskip("cuedeck_search")
    workspace = open_workspace(linked)
    results = workspace.search("TOPSECRET", mode="keyword")
    assert results == []


def test_a_card_linking_out_is_not_a_card(linked: Path) -> None:
    pytest.importorskip("cuedeck_tasks")
    outside = linked.parent / "outside" / "card.md"
    outside.write_text(f"---\ntitle: {SECRET_TEXT}\nstatus: todo\n---\n")
    (linked / ".cuedeck" / "cards" / "zzz999.md").symlink_to(outside)
    store = open_workspace(linked).service("cards")
    assert "zzz999" not in store.all()
    with pytest.raises(FileNotFound):
        store.get("zzz999")


def test_a_binary_markdown_file_is_skipped_with_a_warning(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            ".cuedeck/docs/ok.md": "# OK\n",
            ".cuedeck/docs/image.md": "",
            "docs/garbage.md": "",
        }
    )
    (root / ".cuedeck/docs/image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50)
    (root / "docs/garbage.md").write_bytes(bytes(range(128, 256)) * 40)
    workspace = open_workspace(root)
    assert set(workspace.documents) == {".cuedeck/docs/ok.md"}
    warned = {p.path for p in workspace.index.left_out if p.code == 1011}
    assert warned == {".cuedeck/docs/image.md", "docs/garbage.md"}
    generation = workspace.index.generation
    workspace.refresh()
    assert workspace.index.generation == generation  # skipping again changes nothing


def _as_unprivileged(*command: str) -> list[str]:
    """``command``, run so that file permissions bind (root ignores them otherwise)."""
    if os.geteuid() != 0:
        return list(command)
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot bind")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *command]


@pytest.mark.slow
def test_an_unreadable_folder_is_a_warning_not_an_internal_error(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(
        {".cuedeck/cards/aaa111.md": CARD, "private/notes.md": "# Private\n", "docs/a.md": "# A\n"}
    )
    (root / "private").chmod(0)
    try:
        doctor = subprocess.run(
            _as_unprivileged(CUE, "-C", str(root), "doctor", "--json"),
            capture_output=True,
            text=True,
            check=False,
        )
        scene = subprocess.run(
            _as_unprivileged(CUE, "-C", str(root), "scene", "--dry-run"),
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        (root / "private").chmod(0o755)
    problems = json.loads(doctor.stdout)["problems"]
    unreadable = [p for p in problems if p["code"] == 1010]
    assert [p["path"] for p in unreadable] == ["private"]
    assert "internal error" not in doctor.stderr + scene.stderr
    assert scene.returncode == 0, scene.stderr
    assert "# Scene: Leak test" in scene.stdout


def test_a_read_only_cards_folder_is_a_clear_error(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_tasks")
    root = make_workspace({".cuedeck/cards/aaa111.md": CARD})
    cards = root / ".cuedeck" / "cards"
    immutable = os.geteuid() == 0
    if immutable:  # root writes through permission bits; an immutable folder stops it
        if subprocess.run(["chattr", "+i", str(cards)], check=False).returncode != 0:
            pytest.skip("chattr +i is not supported here")
    else:
        cards.chmod(0o555)
    try:
        done = subprocess.run(
            [CUE, "-C", str(root), "card", "new", "Cannot be written"],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(cards)], check=True)
        else:
            cards.chmod(0o755)
    assert done.returncode == 1
    assert done.stderr.startswith("error[1010] .cuedeck/cards/")
    assert "internal error" not in done.stderr
    assert sorted(p.name for p in cards.iterdir()) == ["aaa111.md"]
