"""A team server for real: uvicorn, tokens of three roles, the official MCP client, real
git repositories; every test on both stores (the embedded one and PostgreSQL)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from mcp.client import Client

from cuedeck.plugins.host import make_plugin_host
from cuedeck_mcp.server import TEAM_ONLY
from cuedeck_team.home import Team
from cuedeck_team.store import open_store
from tests.mcp.conftest import add_token
from tests.team.conftest import BACKEND, FRONTEND, call, git, refusal, session, team_server

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: The team's own tools (they run on the team, not on the repository they name).
TEAM_TOOLS = {
    name for name, tool in make_plugin_host().tools().items() if tool.category in TEAM_ONLY
}


@pytest.fixture(autouse=True)
def _store(home: Path, team_database: str) -> None:
    """The home's store: the embedded one, or PostgreSQL named in its config.toml."""
    if team_database:
        config = home / ".cuedeck" / "config.toml"
        config.write_text(
            config.read_text() + f'\n[team]\ndatabase = "{team_database}"\n', encoding="utf-8"
        )


def member_token(home: Path, name: str, role: str) -> str:
    """A new member of the team at ``home``, in its store; their token."""
    store = open_store(home)
    try:
        return store.add_member(name, role)
    finally:
        store.close()


@pytest.fixture
def tokens(home: Path) -> dict[str, str]:
    """A token per role: admin, power (write) and reader (read)."""
    config = home / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + '\n[mcp]\ntools = ["all"]\n', encoding="utf-8")
    return {
        name: member_token(home, name, role)
        for name, role in (("admin", "admin"), ("power", "write"), ("reader", "read"))
    }


def _snapshot(root: Path) -> dict[str, Any]:
    """A shared repository's files (bytes), refs, status and index files."""
    files = {}
    for current, folders, names in os.walk(root):
        folders[:] = [f for f in folders if f != ".git"]
        for name in names:
            path = Path(current, name)
            if ".cache" not in path.parts:
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return {
        "files": files,
        "refs": git(root, "show-ref"),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
    }


async def test_each_role_may_do_what_its_permissions_say(
    home: Path, tokens: dict[str, str], upstream: Callable[..., Path]
) -> None:
    bare = upstream("backend", BACKEND)
    with team_server(home) as (base, _log):
        url = f"{base}/mcp"

        async def admin_work(client: Client) -> Any:
            added = await call(
                client,
                "add_golden_repo",
                {"repo_url": str(bare), "alias": "backend", "embed": False},
            )
            return added, await call(client, "list_users", {})

        added, users = await session(url, tokens["admin"], admin_work)

        async def reader_work(client: Client) -> Any:
            listed = {t.name for t in (await client.list_tools()).tools}
            found = await call(
                client,
                "read_context",
                {"repository_alias": "backend-global", "query": "bcrypt", "mode": "keyword"},
            )
            page = await call(
                client, "read_doc", {"repository_alias": "backend-global", "path": "docs/auth.md"}
            )
            who = await call(client, "whoami", {})
            # docs/teams.md: every tool but the team's own takes repository_alias
            assert await call(client, "whoami", {"repository_alias": "backend-global"}) == who
            unknown = await refusal(client, "whoami", {"repository_alias": "nobody-global"})
            assert unknown.code == 1400
            refused = {
                tool: await refusal(client, tool, arguments)
                for tool, arguments in (
                    ("activate_repository", {"golden_repo_alias": "backend-global"}),
                    ("add_golden_repo", {"repo_url": str(bare), "alias": "x"}),
                    ("list_users", {}),
                    ("create_task", {"repository_alias": "backend-global", "title": "x"}),
                )
            }
            return listed, found, page, who, refused

        listed, found, page, who, refused = await session(url, tokens["reader"], reader_work)

        async def power_work(client: Client) -> Any:
            listed = {t.name for t in (await client.list_tools()).tools}
            made = await call(
                client,
                "activate_repository",
                {"golden_repo_alias": "backend-global", "user_alias": "mine"},
            )
            card = await call(client, "create_task", {"repository_alias": "mine", "title": "Mine"})
            on_shared = await refusal(
                client, "create_task", {"repository_alias": "backend-global", "title": "No"}
            )
            destroy = await refusal(
                client, "delete_file", {"repository_alias": "mine", "file_path": "README.md"}
            )
            register = await refusal(
                client, "add_golden_repo", {"repo_url": str(bare), "alias": "y"}
            )
            synced = await call(client, "sync_repository", {"repository_alias": "mine"})
            mine = await call(client, "list_activated_repos", {})
            return listed, made, card, on_shared, destroy, register, synced, mine

        p_listed, made, card, on_shared, destroy, register, synced, mine = await session(
            url, tokens["power"], power_work
        )
    team = Team(home)
    # admin registers and sees the team
    assert added["alias"] == "backend-global"
    assert {(u["name"], u["role"], u["spec_role"]) for u in users} == {
        ("admin", "admin", "admin"),
        ("power", "write", "power_user"),
        ("reader", "read", "normal_user"),
    }
    # a reader searches and reads shared repositories, nothing more
    assert found["results"][0]["path"] == "docs/auth.md" and "bcrypt" in page["content"]
    assert who["spec_role"] == "normal_user" and who["permissions"] == ["query_repos"]
    assert "activate_repository" not in listed and "list_global_repos" in listed
    assert {tool: (e.code, e.data["permission"]) for tool, e in refused.items()} == {
        "activate_repository": (1012, "activate_repos"),
        "add_golden_repo": (1012, "manage_golden_repos"),
        "list_users": (1012, "manage_users"),
        "create_task": (1012, "repository:write"),
    }
    # a power user works in an activation of their own, never in the shared repository
    assert {"activate_repository", "create_task"} <= p_listed and "add_golden_repo" not in p_listed
    assert made["repository_alias"] == "mine" and made["parsed"] == 0
    record = team.registry.find_activation("power", "mine")
    assert record is not None and (team.user_path(record) / card["path"]).is_file()
    assert (on_shared.code, on_shared.data["permission"]) == (1401, "repository:write")
    assert "activate it" in on_shared.data["help"]
    assert (destroy.code, destroy.data["permission"]) == (1012, "destructive_operations")
    assert (register.code, register.data["permission"]) == (1012, "manage_golden_repos")
    assert synced["behind"] == 0 and synced["current_branch"] == "main"
    assert [m["alias"] for m in mine] == ["mine"]
    assert not (team.shared_path("backend-global") / card["path"]).exists()


async def test_no_tool_writes_a_shared_repository(
    home: Path, tokens: dict[str, str], upstream: Callable[..., Path]
) -> None:
    from cuedeck_team import shared

    team = Team(home)
    shared.register(team, str(upstream("backend", BACKEND)), "backend", by="admin", embed=False)
    golden = team.shared_path("backend-global")
    git(golden, "branch", "keep")  # a branch git_branch_delete could aim at
    before = _snapshot(golden)
    with team_server(home) as (base, _log):

        async def every_writer(client: Client) -> Any:
            tools = (await client.list_tools()).tools
            # Every tool that runs on the repository its repository_alias names and writes
            # (the team's own tools name repositories to manage them: an admin refreshes
            # a shared repository from its source with refresh_golden_repo).
            writers = [
                t.name
                for t in tools
                if not (t.annotations and t.annotations.read_only_hint)
                and "repository_alias" in t.input_schema.get("properties", {})
                and t.name not in TEAM_TOOLS
            ]
            codes = {}
            for name in writers:
                error = await refusal(client, name, {"repository_alias": "backend-global"})
                codes[name] = (error.code, error.data.get("permission"))
            return codes

        codes = await session(f"{base}/mcp", tokens["admin"], every_writer)
    # Every writing tool: files, git (destructive ones too), tasks, memory.
    assert {
        "create_file",
        "edit_file",
        "delete_file",
        "git_commit",
        "git_reset",
        "git_branch_delete",
        "create_task",
        "update_task",
        "context_capture",
    } <= set(codes)
    assert set(codes.values()) == {(1401, "repository:write")}
    assert _snapshot(golden) == before


async def test_a_composite_search_and_scene_cover_every_component(
    home: Path, tokens: dict[str, str], upstream: Callable[..., Path]
) -> None:
    from cuedeck_team import shared

    team = Team(home)
    for name, files in (("backend", BACKEND), ("frontend", FRONTEND)):
        shared.register(team, str(upstream(name, files)), name, by="admin", embed=False)
    with team_server(home) as (base, _log):

        async def work(client: Client) -> Any:
            made = await call(
                client,
                "activate_repository",
                {
                    "golden_repo_aliases": ["backend-global", "frontend-global"],
                    "user_alias": "stack",
                    "composite": True,
                },
            )
            found = await call(
                client,
                "read_context",
                {"repository_alias": "stack", "query": "bcrypt login", "mode": "keyword"},
            )
            card = await call(
                client,
                "create_task",
                {
                    "repository_alias": "stack",
                    "title": "Passwords end to end",
                    "body": "See @backend/docs/auth.md and @frontend/docs/login-page.md.",
                },
            )
            await call(
                client,
                "update_task",
                {"repository_alias": "stack", "id": card["id"], "updates": {"status": "active"}},
            )
            scene = await call(
                client, "build_scene", {"repository_alias": "stack", "manifest": True}
            )
            followed = await call(client, "sync_repository", {"repository_alias": "stack"})
            assert followed["kind"] == "composite" and followed["updated"] == []
            edit = await refusal(
                client,
                "create_file",
                {"repository_alias": "stack", "file_path": "backend/x.md", "content": "x"},
            )
            return made, found, scene, edit

        made, found, scene, edit = await session(f"{base}/mcp", tokens["power"], work)
    assert made["kind"] == "composite" and len(made["components"]) == 2
    assert {r["path"].split("/")[0] for r in found["results"]} == {"backend", "frontend"}
    placed = {row["path"] for row in scene["manifest"]["candidates"] if row["placed"] != "dropped"}
    assert {"backend/docs/auth.md", "frontend/docs/login-page.md"} <= placed
    assert edit.code == 1401  # its components are read-only; its cards are the user's


async def test_two_workers_share_tokens_and_rate_limits(
    home: Path, tokens: dict[str, str], upstream: Callable[..., Path]
) -> None:
    config = home / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text() + "\n[rate_limits.list_global_repos]\nper_minute = 1\nburst = 4\n",
        encoding="utf-8",
    )
    with team_server(home, workers=2) as (base, log):
        url = f"{base}/mcp"

        async def listing(client: Client) -> int:
            try:
                await client.call_tool("list_global_repos", {})
            except Exception as error:
                return int(error.error.code)
            return 0

        outcomes = [await session(url, tokens["reader"], listing) for _ in range(10)]
        late = member_token(home, "late", "read")  # made while both workers run

        async def who(client: Client) -> str:
            return str((await call(client, "whoami", {}))["name"])

        late_names = [await session(url, late, who) for _ in range(8)]
        import subprocess

        from tests.mcp.conftest import CUE, environment

        subprocess.run(
            [CUE, "-C", str(home), "team", "member", "remove", "late"],
            check=True,
            capture_output=True,
            env=environment(),
        )
        async with httpx2.AsyncClient() as http:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            revoked = [
                (
                    await http.post(url, json=ping, headers={"Authorization": f"Bearer {late}"})
                ).status_code
                for _ in range(8)
            ]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    tool_pids = {line["pid"] for line in lines if line["event"] == "tool"}
    assert len(tool_pids) == 2  # both workers served calls
    # One bucket for both workers: a burst of 4, whichever worker a call reached.
    assert outcomes.count(0) == 4 and outcomes.count(429) == 6
    assert late_names == ["late"] * 8 and revoked == [401] * 8
    assert all(
        late not in line and tokens["reader"] not in line for line in log.read_text().splitlines()
    )


async def test_two_members_work_apart_then_sync_and_deactivate(
    home: Path, tmp_path: Path, upstream: Callable[..., Path]
) -> None:
    from cuedeck_team import shared
    from cuedeck_team.disk import footprint
    from tests.team.conftest import push_from

    alice, bob = member_token(home, "alice", "write"), member_token(home, "bob", "write")
    config = home / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + '\n[mcp]\ntools = ["all"]\n', encoding="utf-8")
    team = Team(home)
    bare = upstream("backend", BACKEND)
    shared.register(team, str(bare), "backend", by="admin", embed=False)
    readme = {"repository_alias": "backend", "file_path": "README.md"}
    with team_server(home) as (base, _log):
        url = f"{base}/mcp"

        async def activate(client: Client) -> Any:
            return await call(
                client, "activate_repository", {"golden_repo_alias": "backend-global"}
            )

        await session(url, alice, activate)
        await session(url, bob, activate)  # the same alias, each their own copy

        async def alice_commits(client: Client) -> Any:
            page = await call(client, "get_file_content", readme)
            await call(
                client,
                "edit_file",
                {
                    **readme,
                    "old_string": "payments backend",
                    "new_string": "billing backend",
                    "content_hash": page["content_hash"],
                },
            )
            await call(
                client, "git_stage", {"repository_alias": "backend", "file_paths": ["README.md"]}
            )
            await call(client, "git_commit", {"repository_alias": "backend", "message": "rename"})
            return await call(client, "sync_repository", {"repository_alias": "backend"})

        ahead = await session(url, alice, alice_commits)
        pushed = push_from(bare, tmp_path, {"CHANGELOG.md": "# Changes\n"}, "upstream change")

        async def bob_reads_and_syncs(client: Client) -> Any:
            page = await call(client, "get_file_content", readme)
            log = await call(client, "git_log", {"repository_alias": "backend", "limit": 5})
            return page, log, await call(client, "sync_repository", {"repository_alias": "backend"})

        bob_page, bob_log, behind = await session(url, bob, bob_reads_and_syncs)
        record = team.registry.find_activation("bob", "backend")
        assert record is not None
        folder = team.user_path(record)
        assert git(folder, "rev-parse", "origin/main").strip() == pushed
        expected = footprint(folder)  # measured by the test, before the call

        async def bob_leaves(client: Client) -> Any:
            return await call(client, "deactivate_repository", {"repository_alias": "backend"})

        gone = await session(url, bob, bob_leaves)
        alice_left = await session(url, alice, lambda c: call(c, "list_activated_repos", {}))
    assert (ahead["ahead"], ahead["behind"], ahead["needs_push"]) == (1, 0, True)
    assert "payments backend" in bob_page["content"]  # alice's edit is hers alone
    assert "rename" not in json.dumps(bob_log)
    assert (behind["ahead"], behind["behind"], behind["needs_pull"]) == (0, 1, True)
    assert behind["updated_refs"] == ["refs/remotes/origin/main"]
    assert gone["space_freed_bytes"] == expected.own and not folder.exists()
    assert ".cuedeck/.cache/index.sqlite3" in gone["indexes_deleted"]
    assert [entry["alias"] for entry in alice_left] == ["backend"]  # alice's copy stays
    golden = team.shared_path("backend-global")
    assert "payments backend" in (golden / "README.md").read_text(encoding="utf-8")


async def test_cue_mcp_serves_a_team_from_one_process(home: Path) -> None:
    from tests.mcp.conftest import http_server

    admin = member_token(home, "root", "admin")
    with http_server(home, "--team", str(home)) as (url, _port):
        who = await session(url, admin, lambda client: call(client, "whoami", {}))
        listed = await session(url, admin, lambda client: call(client, "list_global_repos", {}))
    assert (who["name"], who["workspace"], who["spec_role"]) == ("root", "team", "admin")
    assert listed == []


async def test_a_repositorys_own_control_files_grant_nothing(
    home: Path, tokens: dict[str, str], upstream: Callable[..., Path], tmp_path: Path
) -> None:
    from cuedeck_team import shared

    # A repository that carries CueDeck control files of its own: a token of its own, and
    # a local_role of admin. Neither may count on the team's server.
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".cuedeck").mkdir(parents=True)
    own_token = add_token(elsewhere, "intruder", "admin")
    files = {
        **BACKEND,
        ".cuedeck/access.toml": (elsewhere / ".cuedeck" / "access.toml").read_text(),
        ".cuedeck/config.toml": '[mcp]\nlocal_role = "admin"\n',
    }
    shared.register(Team(home), str(upstream("evil", files)), "evil", by="admin", embed=False)
    with team_server(home) as (base, _log):
        async with httpx2.AsyncClient() as http:
            answer = await http.post(
                f"{base}/mcp",
                headers={"Authorization": f"Bearer {own_token}"},
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            )
        assert answer.status_code == 401  # the repository's token is nobody here

        async def reader(client: Client) -> Any:
            me = await call(client, "whoami", {})
            error = await refusal(client, "create_task", {"repository_alias": "evil-global"})
            return me["role"], error.code

        assert await session(f"{base}/mcp", tokens["reader"], reader) == ("read", 1012)

        async def power(client: Client) -> Any:
            await call(client, "activate_repository", {"golden_repo_alias": "evil-global"})
            codes = []
            for path in (".cuedeck/access.toml", ".cuedeck/config.toml"):
                arguments = {"repository_alias": "evil", "file_path": path, "content": "x"}
                codes.append((await refusal(client, "create_file", arguments)).code)
            return codes

        assert await session(f"{base}/mcp", tokens["power"], power) == [1013, 1013]
