"""The two-step flow of destructive git tools, on core's confirmation tokens.

The first call answers ``requires_confirmation`` with a token and a warning that says
what would be lost; the second call, with that token, acts. The token is bound to the
tool, its exact arguments and a digest of the repository's state
(:func:`~cuedeck_git.status.state_digest`), so it confirms nothing else; a refused token
is error 1009 carrying a fresh one (:class:`~cuedeck.confirmation.Confirmations`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.confirmation import Confirmations

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.tools import lazy_pydantic as pydantic

Token = Annotated[
    str | None,
    pydantic.Field(
        description="The confirmation_token a first call returned", min_length=1, max_length=64
    ),
]


class ConfirmationAsked(TypedDict):
    """The reply of a destructive tool's first call: nothing was changed yet."""

    requires_confirmation: bool
    confirmation_token: str
    warning_message: str


def confirmed(
    workspace: Workspace,
    operation: str,
    arguments: Mapping[str, Any],
    state: str,
    warning: str,
    token: str | None,
) -> ConfirmationAsked | None:
    """None when ``token`` confirms this exact call; else the reply that asks for one.

    A token that does not confirm it (unknown, used, expired, for other arguments or an
    older state) raises :class:`~cuedeck.errors.ConfirmationRequired` (1009).
    """
    confirmations = Confirmations(workspace.root)
    if token is None:
        return {
            "requires_confirmation": True,
            "confirmation_token": confirmations.issue(operation, arguments, state),
            "warning_message": warning,
        }
    confirmations.redeem(token, operation, arguments, state, warning=warning)
    return None


def listing(items: list[str], *, limit: int = 10) -> str:
    """``a, b, c`` for at most ``limit`` items, then ``and N more``."""
    shown = ", ".join(items[:limit])
    return f"{shown} and {len(items) - limit} more" if len(items) > limit else shown
