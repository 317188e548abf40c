"""Resolving a file's chains to the definitions they name, as far as syntax allows.

A name is looked up as the language would: the scopes around it (a function's
parameters and assignments, the enclosing functions, a class body for the code
directly in it; a class's members for Java, C++ and Ruby, whose methods call each
other bare), then the file's imports and its namespace (the module, or the Go
package, Java package, C global names shared with other files). Each further part
looks a member up in what the chain named so far: a module's names (its imports
too, so a re-export is followed to the definition), a class's members then its
bases', an instance's the same (``self``, ``this``, a typed parameter, ``x = Foo()``,
a function's annotated return, a property). What cannot be known without running or
type-checking the code (an untyped parameter, a dict's values) ends the chain.

Each part that names a definition of a linked kind becomes an edge from the
definition the chain is written in (its ``owner``) to that definition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.facts import CONTAINERS, LINKED, RECEIVERS, THIS
from cuedeck_code.intel.walk_base import collector_paused

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck_code.intel.facts import Chain, Edge, Facts
    from cuedeck_code.intel.lookup import NameLookup

#: What a chain names so far: ``("def", ns, qual, kind, path, extra)``, ``("inst", ns,
#: qual, path, extra)`` (an instance of the class ``qual``), ``("mod", ns)``.
Entity = tuple[Any, ...]

#: Most steps one lookup may take (imports of imports, bases of bases).
MAX_STEPS = 64
#: Languages whose bare names inside a class reach its members.
IMPLICIT_MEMBERS = frozenset({"java", "cpp", "ruby", "c"})
_SELF = frozenset({"this", "self", "Self"})
_SCRIPTS = frozenset({"javascript", "typescript", "tsx"})
#: A call, as a chain part (a ``new`` value is its chain called).
_CALL = ["()", 0, 0]


class FileResolver:
    """Resolves the chains of one file (its ``facts``) against ``names``."""

    #: Whether lookups are memoised (off: each looked up afresh, the reference the
    #: memo is held to in tests).
    memoise = True

    def __init__(self, path: str, language: str, facts: Facts, names: NameLookup) -> None:
        self.path = path
        self.language = language
        self.facts = facts
        self.ns = facts["ns"]
        self.names = names
        self.kinds: dict[str, str] = {d[0]: d[1] for d in facts["defs"]}
        self.extra: dict[str, dict[str, Any]] = {d[0]: d[4] for d in facts["defs"]}
        self.locals: dict[tuple[str, str], tuple[str, Chain]] = {}
        for scope, name, how, chain in facts["vars"]:
            key = (scope, name)
            if key not in self.locals or how != "local":
                self.locals[key] = (how, chain)
        self.binds: dict[tuple[str, str], tuple[str | None, str | None]] = {}
        self.stars: list[str] = []
        for scope, local, target_ns, target_name, _line, _column in facts["binds"]:
            if local == "*":
                if target_ns:
                    self.stars.append(target_ns)
            else:
                self.binds[(scope, local)] = (target_ns, target_name)
        self.steps = 0
        self.active: set[tuple[str, str]] = set()
        #: Times a lookup read this file's own scopes (its result is this file's only).
        self.local_reads = 0
        #: A chain's first name in a scope: what it named, and the steps it took.
        self.starts: dict[tuple[str, str], tuple[Entity | None, int]] = {}

    # -- edges -----------------------------------------------------------------------------

    def edges(self) -> list[Edge]:
        """Every edge of the file: its chains' and its imports'."""
        with collector_paused():
            return self._edges()

    def _edges(self) -> list[Edge]:
        found: list[Edge] = []
        for scope, owner, role, chain in self.facts["refs"]:
            self.steps = 0
            self.chain_edges(scope, owner, role, chain, found)
        for scope, local, target_ns, target_name, line, column in self.facts["binds"]:
            if local == "*" or target_ns is None or target_name is None or column < 0:
                continue  # column -1: a name bound where it is defined (no reference)
            self.steps = 0
            entity = self.member(("mod", target_ns), target_name)
            if entity is not None and entity[0] == "def" and entity[3] in LINKED:
                found.append((self.path, scope, entity[4], entity[2], line, column, "import"))
        return found

    def chain_edges(self, scope: str, owner: str, role: str, chain: Chain, out: list[Edge]) -> None:
        entity: Entity | None = None
        receiver: Entity | None = None
        last = len(chain) - 1
        for position, (name, line, column) in enumerate(chain):
            if name == "()":
                if entity is not None and entity[0] != "super":
                    entity = self.called(entity, receiver)
                continue
            if name == "[]" or name == "?":
                entity = None
                continue
            instance = entity is not None and entity[0] in ("inst", "super")
            receiver = entity if instance else None
            if position == 0:
                entity = self.start(name, scope)
            elif entity is None:
                return
            else:
                entity = self.member(entity, name)
            if entity is None:
                # An unknown start may still be followed by nothing we can name.
                if position == 0:
                    continue
                return
            if entity[0] == "def" and entity[3] in LINKED:
                calls = position < last and chain[position + 1][0] == "()"
                relation = "call" if calls else (role if position == last else "reference")
                target = self.constructor(entity) if calls else entity
                out.append((self.path, owner, target[4], target[2], line, column, relation))
                if instance and (entity[5] or {}).get("property"):
                    entity = self.called(entity)

    def constructor(self, entity: Entity) -> Entity:
        """What calling the definition ``entity`` reaches: in JavaScript and TypeScript,
        a class's own ``constructor`` when it has one (``new A()`` runs it; a class
        cannot be called without ``new``), else the definition itself."""
        if entity[3] != "class" or self.language not in _SCRIPTS:
            return entity
        found = self.row_entity(entity[1], f"{entity[2]}.constructor")
        return found if found is not None and found[0] == "def" else entity

    # -- lookups ---------------------------------------------------------------------------

    # A lookup's result depends on its arguments, the names table and, through
    # MAX_STEPS, the steps taken before it: it is kept with the steps it took, when it
    # stayed within the limit (none of the limit's checks cut it short, and steps only
    # grow), and reused whenever the same steps still fit, which gives what running it
    # again would.

    def start(self, name: str, scope: str) -> Entity | None:
        """:meth:`lookup` of a chain's first name (memoised: chains repeat them)."""
        if not self.memoise:
            return self.lookup(name, scope)
        key = (name, scope)
        kept = self.starts.get(key)
        if kept is not None and self.steps + kept[1] <= MAX_STEPS:
            self.steps += kept[1]
            return kept[0]
        before = self.steps
        entity = self.lookup(name, scope)
        if self.steps <= MAX_STEPS and not self.active:
            self.starts[key] = (entity, self.steps - before)
        return entity

    def lookup(self, name: str, scope: str) -> Entity | None:
        """What the bare ``name`` names in ``scope`` of this file."""
        if name == "__class__" and self.language == "python":  # a method's own class
            container = self.container(scope)
            return self.here(container) if container is not None else None
        if name in _SELF or name == "super":
            container = self.container(scope)
            if container is None:
                return None
            entity = self.here(container)
            if entity is None:
                return None
            if name == "super":
                return ("super", *entity[1:])
            return entity if name == "Self" else ("inst", *entity[1:3], entity[4], entity[5])
        current = scope
        first = True
        while True:
            if not current and name in self.kinds:
                return self.here(name)
            found = self.locals.get((current, name))
            if found is not None:
                how, chain = found
                if how == "import":
                    target = self.binds.get((current, name))
                    return self.bound(target) if target else None
                if how == "def":
                    return self.here(f"{current}.{name}" if current else name)
                key = (current, name)
                if key in self.active:
                    return None
                self.active.add(key)
                try:
                    return self.value(how, chain, current)
                finally:
                    self.active.discard(key)
            if (current, name) in self.binds:
                return self.bound(self.binds[(current, name)])
            kind = self.kinds.get(current, "module" if not current else None)
            if current:
                nested = f"{current}.{name}"
                if nested in self.kinds and (kind not in CONTAINERS or first):
                    return self.here(nested)
                if kind in CONTAINERS and self.language in IMPLICIT_MEMBERS:
                    entity = self.here(current)
                    if entity is not None:
                        member = self.member(entity, name)
                        if member is not None:
                            return member
            if not current:
                break
            current = current.rpartition(".")[0]
            first = False
        return self.module_name(name)

    def module_name(self, name: str) -> Entity | None:
        """``name`` at the top of this file: its imports, then its namespace's names."""
        for ns in (self.path, self.ns) if self.ns != self.path else (self.path,):
            entity = self.row_entity(ns, name)
            if entity is not None:
                return entity
        for star in self.stars:
            entity = self.member(("mod", star), name)
            if entity is not None:
                return entity
        if self.language in ("cpp", "c") and self.ns != "c:":
            return self.row_entity("c:", name)
        return None

    def here(self, qual: str) -> Entity | None:
        """The definition ``qual`` of this file."""
        kind = self.kinds.get(qual)
        if kind is None:
            return self.row_entity(self.ns, qual)
        return ("def", self.ns, qual, kind, self.path, self.extra.get(qual) or {})

    def container(self, scope: str) -> str | None:
        current = scope
        while current:
            if self.kinds.get(current) in CONTAINERS:
                return current
            if self.kinds.get(current) is None and self.language in ("go", "rust", "cpp", "c"):
                # A Go method Type.M, a Rust impl's fn, C++'s Type::m: the type is the scope.
                head = current.rpartition(".")[0]
                if head and self.row_entity(self.ns, head) is not None:
                    return head
            current = current.rpartition(".")[0]
        return None

    def row_entity(self, ns: str, name: str) -> Entity | None:
        """The first useful row of ``name`` in namespace ``ns``."""
        rows = self.names.rows(ns, name)
        if not rows:
            return None
        self.steps += 1
        if self.steps > MAX_STEPS:
            return None
        rows = sorted(rows, key=lambda r: (r[0] == "import", r[0] == "var"))
        kind, path, _line, _end, target_ns, target_name, data = rows[0]
        if kind == "import":
            if target_ns == ns and target_name == name:
                # from . import sub, in a package's __init__: its own submodule
                return self.names.submodule(ns, name)
            return self.bound((target_ns, target_name))
        if kind == "var":
            how, chain = data.get("how", "local"), data.get("chain") or []
            return self.foreign_value(how, chain, ns, path, name)
        return ("def", ns, name, kind, path, data)

    def bound(self, target: tuple[str | None, str | None]) -> Entity | None:
        target_ns, target_name = target
        if not target_ns:
            return None
        if target_name is None:
            return ("mod", target_ns)
        return self.member(("mod", target_ns), target_name)

    def member(self, entity: Entity, name: str) -> Entity | None:
        """``name`` looked up in what ``entity`` is (memoised for every file, unless
        the lookup read this file's own scopes)."""
        kind = entity[0]
        if kind == "super" or kind == "fn" or not self.memoise:
            return self.find_member(entity, name)
        # A definition or an instance is told apart by its extra too (two of one name
        # in a file); an empty one reads as none.
        key = (name, *entity) if kind == "mod" else (name, *entity[:-1], id(entity[-1] or 0))
        return self.shared(key, self.find_member, entity, name)  # type: ignore[no-any-return]

    def shared(self, key: tuple[Any, ...], find: Callable[..., Any], *arguments: Any) -> Any:
        """``find(*arguments)``, kept for every file under ``key`` unless it read this
        file's own scopes (see :meth:`start` for the steps)."""
        kept = self.names.members.get(key)
        if kept is not None and self.steps + kept[1] <= MAX_STEPS:
            self.steps += kept[1]
            return kept[0]
        before, reads = self.steps, self.local_reads
        found = find(*arguments)
        if self.steps <= MAX_STEPS and self.local_reads == reads:
            self.names.members[key] = (found, self.steps - before)
        return found

    def find_member(self, entity: Entity, name: str) -> Entity | None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            return None
        kind = entity[0]
        if kind == "mod":
            ns = entity[1]
            found = self.row_entity(ns, name) if not ns.startswith("dir:") else None
            if found is not None:
                return found
            sub = self.names.submodule(ns, name)
            if sub is not None:
                return sub
            for star in self.names.star_exports(ns):
                found = self.member(("mod", star), name)
                if found is not None:
                    return found
            return None
        if kind == "def":
            if entity[3] not in CONTAINERS and entity[3] != "namespace":
                return None
            found = self.class_member(entity, name, instance=False)
            if found is None and entity[3] in ("interface", "type"):
                return self.value_member(entity, name)
            return found
        if kind == "inst":
            found = self.class_member(
                ("def", entity[1], entity[2], "class", entity[3], entity[4]), name, instance=True
            )
            return found
        if kind == "super":
            cls = ("def", entity[1], entity[2], "class", entity[4], entity[5])
            for base in self.bases(cls):
                found = self.class_member(base, name, instance=True)
                if found is not None:
                    return found
        return None

    def value_member(self, entity: Entity, name: str) -> Entity | None:
        """``name`` of the value a TypeScript type shares its name with (``interface
        A`` and ``const A: Maker<A>``: ``A.init`` is the constant's)."""
        for kind, path, _line, _end, _ns, _name, data in self.names.rows(entity[1], entity[2]):
            if kind == "var":
                held = self.foreign_value(
                    data.get("how", "local"), data.get("chain") or [], entity[1], path, entity[2]
                )
                return self.member(held, name) if held is not None else None
        return None

    def class_member(self, cls: Entity, name: str, *, instance: bool) -> Entity | None:
        seen: set[tuple[str, str]] = set()
        queue = [cls]
        while queue and self.steps <= MAX_STEPS:
            current = queue.pop(0)
            key = (current[1], current[2])
            if key in seen:
                continue
            seen.add(key)
            self.steps += 1
            found = self.row_entity(current[1], f"{current[2]}.{name}")
            if found is not None:
                return found
            queue.extend(self.bases(current))
        return None

    def bases(self, cls: Entity) -> list[Entity]:
        """The classes ``cls`` names as its bases (memoised like :meth:`member`)."""
        extra = cls[5] if len(cls) > 5 else {}
        if not extra or not extra.get("bases"):
            return []
        if not self.memoise:
            return self.find_bases(cls)
        key = ("bases", *cls[:-1], id(extra))
        return self.shared(key, self.find_bases, cls)  # type: ignore[no-any-return]

    def find_bases(self, cls: Entity) -> list[Entity]:
        extra = cls[5] if len(cls) > 5 else {}
        found = []
        for chain in (extra or {}).get("bases", []):
            entity = self.foreign_chain(chain, cls[1], cls[4])
            if entity is not None and entity[0] == "def" and entity[3] in CONTAINERS:
                found.append(entity)
        return found

    def called(self, entity: Entity, receiver: Entity | None = None) -> Entity | None:
        """What calling ``entity`` gives: an instance of a class, a function's return
        (a fluent method's, ``-> this``/``Self``, the ``receiver`` it was looked up on:
        a subclass's instance stays one)."""
        if entity[0] == "fn":  # a value of a Callable[..., T] type
            result = self.foreign_chain(entity[3], entity[1], entity[2])
            if result is not None and result[0] == "def" and result[3] in CONTAINERS:
                return ("inst", result[1], result[2], result[4], result[5])
            return None
        if entity[0] == "inst":  # an instance called: its class's __call__
            method = self.member(entity, "__call__")
            return self.called(method) if method is not None and method[0] == "def" else None
        if entity[0] != "def":
            return None
        if entity[3] in CONTAINERS:
            return ("inst", entity[1], entity[2], entity[4], entity[5])
        returns = (entity[5] or {}).get("returns")
        if not returns:
            gives = (entity[5] or {}).get("gives")
            return self.given(entity, gives, receiver) if gives else None
        if returns[0][0] in _SELF and len(returns) == 1:  # a fluent method: -> this / Self
            if receiver is not None and receiver[0] == "inst":
                return receiver
            owner = self.row_entity(entity[1], entity[2].rpartition(".")[0])
            if owner is None or owner[0] != "def":
                return None
            return ("inst", owner[1], owner[2], owner[4], owner[5])
        result = self.foreign_chain(returns, entity[1], entity[4])
        if result is not None and result[0] == "def" and result[3] in CONTAINERS:
            return ("inst", result[1], result[2], result[4], result[5])
        return None

    def given(self, entity: Entity, gives: Chain, receiver: Entity | None) -> Entity | None:
        """What the function ``entity`` returns, from the chain its ``return`` statements
        give: its receiver's (``self``, ``this``, ``cls``) or its file's names."""
        self.steps += 1  # a step: functions may return each other's results
        if self.steps > MAX_STEPS:
            return None
        head = gives[0][0]
        if head not in RECEIVERS.get(self.language, THIS):
            return self.foreign_chain(gives, entity[1], entity[4])
        if receiver is not None and receiver[0] == "inst":
            start: Entity | None = receiver
        else:
            owner = self.row_entity(entity[1], entity[2].rpartition(".")[0])
            if owner is None or owner[0] != "def" or owner[3] not in CONTAINERS:
                return None
            start = ("inst", owner[1], owner[2], owner[4], owner[5])
        if head == "cls" and start is not None:
            start = self.row_entity(start[1], start[2])
        return self.walk(start, gives[1:])

    def value(self, how: str, chain: Chain, scope: str) -> Entity | None:
        if how == "returns":
            return ("fn", self.ns, self.path, chain) if chain else None
        if how == "self":
            container = self.container(scope)
            entity = self.here(container) if container else None
            return ("inst", *entity[1:3], entity[4], entity[5]) if entity else None
        if how == "cls":
            container = self.container(scope)
            return self.here(container) if container else None
        if not chain:
            return None
        start = self.lookup(chain[0][0], scope.rpartition(".")[0] if how == "annot" else scope)
        if how == "new":  # walked with its call, which a fluent method needs
            return self.walk(start, [*chain[1:], _CALL])
        entity = self.walk(start, chain[1:])
        return self.shaped(how, entity)

    def shaped(self, how: str, entity: Entity | None) -> Entity | None:
        if entity is None:
            return None
        if entity[0] == "fn":  # annotated with a Callable alias: the callable itself
            return entity if how in ("annot", "alias") else self.called(entity)
        if how == "new":
            return self.called(entity)
        if how == "annot":
            if entity[0] == "def" and entity[3] in CONTAINERS:
                return ("inst", entity[1], entity[2], entity[4], entity[5])
            # typeof x (TypeScript): what x holds
            return entity if entity[0] == "inst" else None
        return entity

    def walk(self, entity: Entity | None, rest: Chain) -> Entity | None:
        receiver: Entity | None = None
        for name, _line, _column in rest:
            if entity is None:
                return None
            if name == "()":
                entity = entity if entity[0] == "super" else self.called(entity, receiver)
            elif name in ("[]", "?"):
                return None
            else:
                instance = entity[0] in ("inst", "super")
                receiver = entity if instance else None
                entity = self.member(entity, name)
                if (
                    instance
                    and entity is not None
                    and entity[0] == "def"
                    and ((entity[5] or {}).get("property"))
                ):
                    entity = self.called(entity)
        return entity

    def foreign_chain(self, chain: Chain, ns: str, path: str) -> Entity | None:
        """``chain`` resolved at the top of the file ``path`` (namespace ``ns``)."""
        if path == self.path:
            self.local_reads += 1
            start = self.lookup(chain[0][0], "")
        else:
            start = None
            for where in (path, ns) if ns != path else (path,):
                start = self.row_entity(where, chain[0][0])
                if start is not None:
                    break
        return self.walk(start, chain[1:])

    def foreign_value(self, how: str, chain: Chain, ns: str, path: str, name: str) -> Entity | None:
        if how in ("local", "import") or not chain:
            return None
        if how == "returns":
            return ("fn", ns, path, chain)
        if how in ("self", "cls"):
            return None
        if how == "new":
            return self.foreign_chain([*chain, _CALL], ns, path)
        return self.shaped(how, self.foreign_chain(chain, ns, path))
