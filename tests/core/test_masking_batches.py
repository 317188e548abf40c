"""Masking many texts at once: each comes out as it would alone, secrets are learned in
the same pass, and a reply's strings are masked together in the order a walk meets them."""

from __future__ import annotations

from typing import Any

from cuedeck import hookimpl, open_workspace
from cuedeck.masking.session import JOINT, MaskSession
from cuedeck.masking.spans import SecretSpan
from cuedeck.plugins.host import make_plugin_host
from tests.conftest import MakeWorkspace
from tests.core.test_masking import EXAMPLES, PEM_KEY

URL = "postgres://ledger:hunter2pass@db.internal:5432/ledger"
#: A user pattern anchored at both ends: it holds only for a whole text.
ANCHORED = "[masking.patterns]\nacme-id = '^acme-[0-9]{6}$'\n"


class Counting:
    """A plugin masker that finds ``zz-`` and 8 digits, and notes every text it sees."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def find_secrets(self, text: str) -> list[SecretSpan]:
        self.seen.append(text)
        start = text.find("zz-")
        return [] if start < 0 else [SecretSpan(start, start + 11, "zz-key")]


class CountingPlugin:
    def __init__(self, masker: Counting) -> None:
        self.masker = masker

    @hookimpl
    def register_maskers(self, register: Any) -> None:
        register("counting", self.masker)


def _session(make_workspace: MakeWorkspace, config: str = "") -> tuple[MaskSession, Counting]:
    counting = Counting()
    host = make_plugin_host(entry_points=False)
    host.register(CountingPlugin(counting), name="counting")
    workspace = open_workspace(make_workspace(config=config), plugins=host)
    return workspace.mask_session(), counting


def test_texts_masked_together_come_out_as_each_alone(make_workspace: MakeWorkspace) -> None:
    texts = [f"line one\n{text}\nlast line" for text, _ in EXAMPLES.values()]
    texts += ["acme-123456", "zz-12345678 and more", "", "plain prose", URL, "acme-123456 too"]
    together, _ = _session(make_workspace, ANCHORED)
    alone, _ = _session(make_workspace, ANCHORED)
    masked = together.mask_many(texts)
    assert masked == [alone.mask(text) for text in texts]  # numbering included
    assert masked[-6] == "[REDACTED:acme-id#1]"  # the anchored pattern saw the text alone
    assert masked[-1] == "acme-123456 too"
    assert masked[-5] == "[REDACTED:zz-key#1] and more"
    assert together.counts == alone.counts


def test_a_secret_across_texts_sends_each_through_the_rules_alone(
    make_workspace: MakeWorkspace,
) -> None:
    head, tail = PEM_KEY.split("\n", 1)
    token = EXAMPLES["github-token"][1]
    for texts in ([head, tail, f"and {token}"], [f"a {JOINT} b", f"c {token}"]):
        together, _ = _session(make_workspace)
        alone, _ = _session(make_workspace)
        assert together.mask_many(texts) == [alone.mask(text) for text in texts]


def test_secrets_are_learned_in_the_pass_that_masks(make_workspace: MakeWorkspace) -> None:
    session, counting = _session(make_workspace)
    texts = [f"connect with {URL}", "zz-87654321", "nothing here"]
    session.mask_many(texts, learn=True)
    assert counting.seen == texts  # each text once, alone
    session.learn_many(["zz-87654321", "nothing here", "new"])
    assert counting.seen == [*texts, "new"]  # what was learned is not looked at again
    # Normalised out of any rule's reach, the password and the key are still known.
    normalised = session.mask("postgres:/ledger:hunter2pass@db zz-87654321")
    assert "hunter2pass" not in normalised and "87654321" not in normalised


def test_learning_many_finds_what_learning_each_finds(make_workspace: MakeWorkspace) -> None:
    texts = [URL, EXAMPLES["slack-token"][0], "plain", PEM_KEY]
    many, _ = _session(make_workspace)
    each, _ = _session(make_workspace)
    many.learn_many(texts)
    for text in texts:
        each.learn(text)
    echoed = "\n".join(text.replace("//", "/").upper() for text in texts) + URL[11:]
    assert many.mask(echoed) == each.mask(echoed)


def test_a_reply_is_numbered_in_walk_order_and_allowed_paths_stay(
    make_workspace: MakeWorkspace,
) -> None:
    first, second = EXAMPLES["github-token"][1], "ghp_" + "Zq9" * 12
    config = '[masking]\nallow_paths = ["fixtures/**"]\n'
    reply = {
        second: [first, {"path": "fixtures/keys.md", "text": first, "other": second}],
        "ids": ["1m879xgecngadtf", first],
        "hits": ({"path": "docs/a.md", "text": f"{second} {first}"},),
    }
    session, _ = _session(make_workspace, config)
    masked = session.mask_json(reply)
    one, two = "[REDACTED:github-token#1]", "[REDACTED:github-token#2]"
    assert masked == {
        one: [two, {"path": "fixtures/keys.md", "text": first, "other": second}],
        "ids": ["1m879xgecngadtf", two],
        "hits": [{"path": "docs/a.md", "text": f"{one} {two}"}],
    }
