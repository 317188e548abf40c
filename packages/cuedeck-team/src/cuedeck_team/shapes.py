"""The replies of the team's tools (:mod:`.tools`): each reply's fields, typed, as
``get_tool_docs`` and ``replies = "spec"`` publish them."""

# The tools' annotations are read at run time (their schemas): imported, not type-only.
# ruff: noqa: TC001

from __future__ import annotations

from typing import Required  # pydantic needs it on 3.11

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.serving.confirmation import ConfirmationAsked
from cuedeck.serving.indexes import IndexReport


class GlobalRepo(TypedDict):
    """A shared repository as ``list_global_repos`` shows it."""

    alias: str
    source: str
    branch: str
    head: str
    indexed_at: str
    registered_at: str
    registered_by: str
    description: str


class GlobalRepoStatus(GlobalRepo):
    """A shared repository with its indexes and branches (``global_repo_status``)."""

    files: int
    disk_bytes: int
    branches: list[str]
    indexes: list[IndexReport]


class RepoDescribed(TypedDict):
    """The reply of ``set_global_repo_description``."""

    success: bool
    alias: str
    description: str


class Indexed(TypedDict):
    """What indexing a repository did."""

    files: int
    parsed: int
    reused: int
    embedded: int | None
    seconds: float


class GoldenRepoAdded(Indexed):
    """The reply of ``add_golden_repo``."""

    success: bool
    alias: str
    branch: str
    head: str


class GoldenRepoRefreshed(Indexed):
    """The reply of ``refresh_golden_repo``."""

    success: bool
    alias: str
    branch: str
    previous_head: str
    head: str
    changed: bool


class GoldenRepoGone(TypedDict):
    """A shared repository removed, and the space its removal freed."""

    success: bool
    alias: str
    space_freed_bytes: int
    space_freed_mb: float


#: The reply of ``remove_golden_repo``: done, or asking for confirmation.
GoldenRepoRemoved = GoldenRepoGone | ConfirmationAsked


class Component(TypedDict):
    """One component of a composite: its shared repository and its folder."""

    alias: str
    path: str
    indexed: bool


class Activated(TypedDict, total=False):
    """The reply of ``activate_repository``: the working copy made, or the composite."""

    success: Required[bool]
    repository_alias: Required[str]
    kind: str
    golden_repo_alias: str
    branch: str
    head: str
    seeded_from_shared: bool
    components: list[Component]
    files: int
    parsed: int
    reused: int
    embedded: int | None
    seconds: float


class ActivatedRepo(TypedDict, total=False):
    """One of the caller's repositories (``list_activated_repos``)."""

    alias: Required[str]
    kind: Required[str]
    created_at: Required[str]
    golden_repo_alias: str
    branch: str
    head: str
    components: list[str]


class DeactivatedRepo(TypedDict):
    """A repository deactivated: the indexes deleted and the space freed (what it shared
    with its shared repository stays)."""

    success: bool
    repository_alias: str
    indexes_deleted: list[str]
    space_freed_mb: float
    space_freed_bytes: int
    shared_bytes_kept: int


#: The reply of ``deactivate_repository``: done, or asking for confirmation.
Deactivated = DeactivatedRepo | ConfirmationAsked


class Followed(TypedDict):
    """A composite's component moved to its shared repository's head."""

    alias: str
    previous_head: str
    head: str


class Synced(TypedDict, total=False):
    """The reply of ``sync_repository``: an activation's position against its upstream,
    or a composite's components moved to their shared repositories."""

    success: Required[bool]
    repository_alias: Required[str]
    current_branch: str
    has_upstream: bool
    ahead: int
    behind: int
    updated_refs: list[str]
    pruned_refs: list[str]
    needs_pull: bool
    needs_push: bool
    kind: str
    components: list[Followed]
    updated: list[str]
    files: int
    parsed: int
    reused: int
    embedded: int | None
    seconds: float


class CompositeComponents(TypedDict):
    """The reply of ``manage_composite_repository``."""

    success: bool
    composite_alias: str
    operation: str
    components: list[Component]
    total_components: int


class User(TypedDict):
    """A member of the team (``list_users``)."""

    name: str
    role: str
    spec_role: str
    created: str
    activations: int
