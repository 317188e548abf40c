"""What the script walker reads of TypeScript's types (see :mod:`.walk_script`): the
types a type alias joins (``type A = B & Partial<C>``), the typed members of interfaces
and object types, the type an object literal is written as, a chain's type written
without recording it again, and the names a pattern binds (``const {a, b: c} = x``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.walk_script_modules import ScriptModules

if TYPE_CHECKING:
    from cuedeck_code.intel.facts import Chain


class ScriptTypes(ScriptModules):
    """The type facts of the script walker, which provides the rest."""

    def alias_bases(self, node: Any) -> list[Chain]:
        """The types whose members a type alias's value has: a named type, each side of
        an intersection, and a generic's outer type and first argument (``Partial<C>``,
        ``Omit<C, 'k'>`` keep C's members; a generic defined here names its own)."""
        kind = node.type
        if kind == "type_identifier":
            return [[self.part(node)]]
        if kind == "nested_type_identifier":
            return [self.nested(node)]
        if kind == "generic_type":
            name = node.child_by_field_name("name")
            found = self.alias_bases(name) if name is not None else []
            arguments = node.child_by_field_name("type_arguments")
            if arguments is not None and arguments.named_children:
                found.extend(self.alias_bases(arguments.named_children[0]))
            return found
        if kind in ("intersection_type", "parenthesized_type"):
            return [chain for child in node.named_children for chain in self.alias_bases(child)]
        return []

    def object_members(self, node: Any, qual: str) -> None:
        """The typed members of the object types a type alias's value joins
        (``type A = {b: B} & C``)."""
        if node.type == "object_type":
            for member in node.named_children:
                self.typed_member(member, qual)
        elif node.type in ("intersection_type", "parenthesized_type"):
            for child in node.named_children:
                self.object_members(child, qual)

    def typed_member(self, node: Any, qual: str) -> None:
        """``b: B`` in an interface or an object type: the member ``b`` of ``qual`` is
        a B (``b: () => B``: calling it gives one)."""
        if node.type != "property_signature":
            return
        name = node.child_by_field_name("name")
        annotation = node.child_by_field_name("type")
        if name is None or annotation is None or name.type != "property_identifier":
            return
        written = annotation.named_children[0] if annotation.named_children else None
        if written is not None and written.type == "function_type":  # b: () => B
            returned = written.child_by_field_name("return_type")
            chain = self.named_type(returned) if returned is not None else None
            if chain:
                self.var(qual, self.text(name), "returns", chain)
            return
        chain = self.named_type(written) if written is not None else None
        if chain:
            self.var(qual, self.text(name), "annot", chain)

    def named_type(self, node: Any) -> Chain | None:
        """The chain of the type ``node`` names (a generic's outer type), unrecorded."""
        if node.type == "type_identifier":
            return [self.part(node)]
        if node.type == "nested_type_identifier":
            return self.nested(node)
        if node.type == "generic_type":
            name = node.child_by_field_name("name")
            return self.named_type(name) if name is not None else None
        return None

    def nested(self, node: Any) -> Chain:
        """The chain of ``a.b.C`` written as a type."""
        line, column = node.start_point[0] + 1, self.column(node)
        parts: Chain = [[piece.strip(), line, column] for piece in self.text(node).split(".")]
        name = node.child_by_field_name("name")
        if name is not None:
            parts[-1] = self.part(name)
        return parts

    def typed_keys(self, node: Any, typed: Chain, scope: str, owner: str) -> None:
        """An object literal whose type is written (``const x: T = {a: 1}``, ``{...} as
        T``): each key names that member of T."""
        if node.type != "object":
            return
        for child in node.named_children:
            key = child.child_by_field_name("key") if child.type == "pair" else None
            if child.type == "method_definition":
                key = child.child_by_field_name("name")
            elif child.type == "shorthand_property_identifier":
                key = child
            if key is not None and key.type in (
                "property_identifier",
                "shorthand_property_identifier",
            ):
                self.ref(scope, owner, "reference", [*typed, self.part(key)])

    def fallback_made(self, node: Any) -> Chain | None:
        """``a ?? new C()`` (or ``||``): the class made when ``a`` is missing, which ``a``
        must be an instance of too (unrecorded: the walk recorded it)."""
        if node.type != "binary_expression":
            return None
        operator = node.child_by_field_name("operator")
        right = node.child_by_field_name("right")
        if operator is None or right is None or operator.type not in ("??", "||"):
            return None
        if right.type != "new_expression":
            return None
        made = right.child_by_field_name("constructor")
        parts: Chain = []
        while made is not None and made.type == "member_expression":
            member = made.child_by_field_name("property")
            if member is None:
                return None
            parts.insert(0, self.part(member))
            made = made.child_by_field_name("object")
        if made is None or made.type != "identifier":
            return None
        return [self.part(made), *parts]

    def unpacked(self, pattern: Any, value: Chain, scope: str, owner: str) -> None:
        """``const {a, b: c} = value``: ``a`` is ``value.a``, ``c`` is ``value.b``."""
        for child in pattern.named_children:
            if child.type == "shorthand_property_identifier_pattern":
                self.ref(scope, owner, "reference", [*value, self.part(child)])
                self.var(scope, self.text(child), "alias", [*value, self.part(child)])
                continue
            key = child.child_by_field_name("key") if child.type == "pair_pattern" else None
            target = child.child_by_field_name("value") if key is not None else None
            if (
                key is not None
                and key.type == "property_identifier"
                and target is not None
                and target.type == "identifier"
            ):
                self.ref(scope, owner, "reference", [*value, self.part(key)])
                self.var(scope, self.text(target), "alias", [*value, self.part(key)])
            else:
                self.targets(child, scope)

    def targets(self, node: Any, scope: str) -> None:
        if node.type in ("identifier", "shorthand_property_identifier_pattern"):
            self.var(scope, self.text(node), "local")
            return
        for child in node.named_children:
            if child.type == "pair_pattern":
                value = child.child_by_field_name("value")
                if value is not None:
                    self.targets(value, scope)
            else:
                self.targets(child, scope)
