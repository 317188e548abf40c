"""The facts of a Python file (see :mod:`.facts`), from its tree-sitter parse.

One walk over the tree: definitions with their qualified names (as the index names
them), bases and return annotations; imports as bindings to the files they name;
every name in an expression as a chain to resolve; and the names each scope binds
(parameters, assignments, loop targets), with their type when the syntax says it
(an annotation, ``x = Foo()``, ``self``). Names in a definition's header (decorators,
bases, annotations, defaults) are resolved in the scope around it, as Python does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.walk_python_modules import PythonModules

if TYPE_CHECKING:
    from cuedeck_code.imports import PathIndex
    from cuedeck_code.intel.facts import Chain, Facts

#: Decorators that make a method read like an attribute.
PROPERTIES = frozenset({"property", "cached_property", "cachedproperty", "cached"})
_SKIP = frozenset({"comment", "string_start", "string_end", "string_content", "escape_sequence"})
_LEAVES = frozenset(
    {
        "integer",
        "float",
        "true",
        "false",
        "none",
        "ellipsis",
        "pass_statement",
        "break_statement",
        "continue_statement",
    }
)
_LOCAL_TARGETS = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern"})


def python_facts(root: Any, data: bytes, path: str, index: PathIndex) -> Facts:
    """The facts of the Python file at ``path`` whose tree is ``root``."""
    walker = _Walker(data, path, index)
    walker.block(root, "", "", False)
    return walker.facts


class _Walker(PythonModules):
    def __init__(self, data: bytes, path: str, index: PathIndex) -> None:
        super().__init__(data, path, index)
        #: The handler of each node type that is not walked as a plain block.
        self.handlers: dict[str, Any] = {
            "class_definition": lambda n, s, o: self.definition(n, [], s, o),
            "function_definition": lambda n, s, o: self.definition(n, [], s, o),
            "decorated_definition": self.decorated,
            "import_statement": lambda n, s, o: self.imports(n, s),
            "import_from_statement": lambda n, s, o: self.imports(n, s),
            "assignment": self.assignment,
            "augmented_assignment": self.assignment,
            "for_statement": self.loop,
            "for_in_clause": self.loop,
            "as_pattern": self.as_pattern,
            "named_expression": self.walrus,
            "except_clause": self.except_clause,
            "lambda": self.lambda_,
            "global_statement": _nothing,
            "nonlocal_statement": _nothing,
            "future_import_statement": _nothing,
            "keyword_argument": self.keyword,
            "identifier": self.reference,
            "attribute": self.reference,
            "call": self.reference,
            "subscript": self.reference,
            "type": self.typed,
            "string": self.string,
            "return_statement": self.return_,
        }

    # -- statements ------------------------------------------------------------------------

    def block(self, node: Any, scope: str, owner: str, in_class: bool) -> None:
        handlers = self.handlers
        refs = self.facts["refs"]
        for child in node.named_children:
            kind = child.type
            if kind == "identifier":  # the commonest: a name read
                refs.append([scope, owner, "reference", [self.part(child)]])
            elif kind in _SKIP or kind in _LEAVES:
                continue
            else:
                handler = handlers.get(kind)
                if handler is None:
                    if child.named_child_count:
                        self.block(child, scope, owner, in_class)
                else:
                    handler(child, scope, owner)

    def node(self, node: Any, scope: str, owner: str, in_class: bool = False) -> None:
        kind = node.type
        if kind in _SKIP or kind in _LEAVES:
            return
        handler = self.handlers.get(kind)
        if handler is None:
            self.block(node, scope, owner, in_class)
        else:
            handler(node, scope, owner)

    def decorated(self, node: Any, scope: str, owner: str) -> None:
        target = node.child_by_field_name("definition")
        decorators = [c for c in node.named_children if c.type == "decorator"]
        if target is not None:
            self.definition(target, decorators, scope, owner)

    def loop(self, node: Any, scope: str, owner: str) -> None:
        left = node.child_by_field_name("left")
        if left is not None:
            self.targets(left, scope, owner)
        for child in node.named_children:
            if child != left:
                self.node(child, scope, owner)

    def as_pattern(self, node: Any, scope: str, owner: str) -> None:
        for child in node.named_children:
            if child.type == "as_pattern_target":
                self.targets(child, scope, owner)
            else:
                self.node(child, scope, owner)

    def walrus(self, node: Any, scope: str, owner: str) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None:
            self.var(scope, self.text(name), "local")
        if value is not None:
            self.node(value, scope, owner)

    def except_clause(self, node: Any, scope: str, owner: str) -> None:
        for child in node.named_children:
            previous = child.prev_sibling
            if child.type == "identifier" and previous is not None and previous.type == "as":
                self.var(scope, self.text(child), "local")
            else:
                self.node(child, scope, owner)

    def lambda_(self, node: Any, scope: str, owner: str) -> None:
        """A lambda: its parameters are its own scope's (:meth:`anonymous_scope`); its
        chains stay ``owner``'s."""
        inner = self.anonymous_scope(scope)
        params = node.child_by_field_name("parameters")
        if params is not None:
            for child in params.named_children:
                name = _param_name(child)
                if name is not None:
                    self.var(inner, self.text(name), "local")
        body = node.child_by_field_name("body")
        if body is not None:
            self.node(body, inner, owner)

    def return_(self, node: Any, scope: str, owner: str) -> None:
        value = node.named_children[0] if node.named_children else None
        if value is not None:
            self.returns(scope, self.expression(value, scope, owner, "reference"))

    def keyword(self, node: Any, scope: str, owner: str) -> None:
        value = node.child_by_field_name("value")
        if value is not None:
            self.node(value, scope, owner)

    def reference(self, node: Any, scope: str, owner: str) -> None:
        self.expression(node, scope, owner, "reference")

    def typed(self, node: Any, scope: str, owner: str) -> None:
        for child in node.named_children:
            self.expression(child, scope, owner, "type")

    def string(self, node: Any, scope: str, owner: str) -> None:
        for child in node.named_children:
            if child.type == "interpolation":
                self.block(child, scope, owner, False)

    def definition(self, node: Any, decorators: list[Any], scope: str, owner: str) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = self.text(name_node)
        qual = f"{scope}.{name}" if scope else name
        outer_is_class = self.kinds.get(scope) == "class"
        if qual in self.kinds:  # declared again (an overload, a redefinition): its name
            self.ref(scope, owner, "reference", [self.part(name_node)])  # is the first's
        flags: dict[str, Any] = {}
        for decorator in decorators:
            expression = decorator.named_children[0] if decorator.named_children else None
            if expression is None:
                continue
            written = self.text(expression).rpartition(".")[2]
            if written in PROPERTIES:
                flags["property"] = True
            elif written in ("staticmethod", "classmethod"):
                flags[written] = True
            self.expression(expression, scope, qual, "decorator")
        first = (node.start_point[0] + 1) if not decorators else decorators[0].start_point[0] + 1
        end = _end_line(node)
        if node.type == "class_definition":
            self.kinds[qual] = "class"
            bases: list[Chain] = []
            superclasses = node.child_by_field_name("superclasses")
            if superclasses is not None:
                for argument in superclasses.named_children:
                    if argument.type == "keyword_argument":
                        self.node(argument, scope, qual)
                        continue
                    chain = self.expression(argument, scope, qual, "inherit")
                    if chain:
                        bases.append(chain)
            if bases:
                flags["bases"] = bases
            self.facts["defs"].append([qual, "class", first, end, flags])
            body = node.child_by_field_name("body")
            if body is not None:
                self.block(body, qual, qual, True)
            return
        kind = "method" if outer_is_class else "function"
        self.kinds[qual] = kind
        returns = node.child_by_field_name("return_type")
        if returns is not None:
            chain = self.annotation(returns, scope, qual)
            if chain:
                flags["returns"] = chain
        self.facts["defs"].append([qual, kind, first, end, flags])
        parameters = node.child_by_field_name("parameters")
        if parameters is not None:
            self.parameters(parameters, scope, qual, outer_is_class, flags)
        body = node.child_by_field_name("body")
        if body is not None:
            self.block(body, qual, qual, False)
        self.gives(qual, flags)

    def parameters(
        self, node: Any, scope: str, qual: str, method: bool, flags: dict[str, Any]
    ) -> None:
        first = method and not flags.get("staticmethod")
        for child in node.named_children:
            name = _param_name(child)
            annotation = child.child_by_field_name("type")
            default = child.child_by_field_name("value")
            if default is not None:
                self.node(default, scope, qual)
            chain = self.annotation(annotation, scope, qual) if annotation is not None else None
            if name is None:
                continue
            written = self.text(name)
            if first and child.type in ("identifier", "typed_parameter", "default_parameter"):
                first = False
                self.var(qual, written, "cls" if flags.get("classmethod") else "self")
                continue
            first = False
            if chain:
                self.var(qual, written, "annot", chain)
            else:
                self.var(qual, written, "local")

    def annotation(self, node: Any, scope: str, owner: str) -> Chain | None:
        """Walk an annotation (its names are ``type`` references); its chain when it
        names one type (``Foo``, ``mod.Foo``, ``"Foo"``, ``Optional[Foo]``)."""
        inner = node.named_children[0] if node.type == "type" and node.named_children else node
        if inner.type == "string":
            content = self.text(inner).strip("'\"")
            if content.replace(".", "").replace("_", "").isalnum():
                line, column = inner.start_point[0] + 1, self.column(inner) + 1
                return [[p, line, column] for p in content.split(".")]
            return None
        chain = self.expression(inner, scope, owner, "type")
        if inner.type in ("generic_type", "subscript"):
            # Optional[Foo] / list[Foo]: the one type argument that names a class.
            arguments = [c for c in inner.named_children[1:] if c.type not in ("comment",)]
            names = [a for a in arguments if a.type in ("identifier", "attribute", "type")]
            if len(names) == 1 and self.text(inner).split("[", 1)[0].rpartition(".")[2] in (
                "Optional",
                "Type",
                "type",
            ):
                return _plain(self, names[0])
            return None
        return chain if chain and all(p[0] not in ("()", "[]", "?") for p in chain) else None

    def assignment(self, node: Any, scope: str, owner: str) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        annotation = node.child_by_field_name("type")
        typed = self.annotation(annotation, scope, owner) if annotation is not None else None
        value: Chain | None = None
        how = "local"
        if right is not None:
            value = self.expression(right, scope, owner, "reference")
            if value and node.type == "assignment":
                if value[-1][0] == "()" and all(p[0] not in ("[]", "?") for p in value):
                    how = "new"
                    value = value[:-1]
                elif all(p[0] not in ("()", "[]", "?") for p in value):
                    how = "alias"
                else:
                    value = None
        if left is None:
            return
        if right is not None and right.type == "subscript" and value is None:
            returned = self.callable_returns(right)
            if returned:  # Factory = Callable[..., Client]: calling one gives a Client
                how, value = "returns", returned
        if typed:
            how, value = "annot", typed
        if left.type == "identifier" and right is not None and not typed:
            written = self.text(left)
            defined = f"{scope}.{written}" if scope else written
            if defined in self.kinds and _wraps(self, right, written):
                # class C: ... then C = decorate(C): still the class, as the type
                # checker takes it
                self.ref(scope, owner, "reference", [self.part(left)])
                return
        if left.type == "identifier":
            self.var(scope, self.text(left), how if value else "local", value)
        elif left.type == "attribute":
            obj = left.child_by_field_name("object")
            attr = left.child_by_field_name("attribute")
            if (
                obj is not None
                and attr is not None
                and obj.type == "identifier"
                and self.text(obj) == "self"
                and value
                and self.kinds.get(scope) == "method"
            ):
                self.var(scope.rpartition(".")[0], self.text(attr), how, value)
            self.expression(left, scope, owner, "reference")
        elif left.type in _LOCAL_TARGETS:
            self.targets(left, scope, owner)
        else:
            self.expression(left, scope, owner, "reference")

    def callable_returns(self, node: Any) -> Chain | None:
        """``T`` of ``Callable[..., T]`` (written ``typing.Callable`` too)."""
        value = node.child_by_field_name("value")
        if value is None or self.text(value).rpartition(".")[2] != "Callable":
            return None
        items = [c for c in node.children_by_field_name("subscript")]
        if len(items) != 2:
            return None
        return _plain(self, items[1])

    def targets(self, node: Any, scope: str, owner: str) -> None:
        """Names bound by a loop, ``as`` or an unpacking: locals of the scope."""
        if node.type == "identifier":
            self.var(scope, self.text(node), "local")
            return
        if node.type in ("attribute", "subscript"):
            self.expression(node, scope, owner, "reference")
            return
        for child in node.named_children:
            self.targets(child, scope, owner)

    # -- expressions -----------------------------------------------------------------------

    def expression(self, node: Any, scope: str, owner: str, role: str) -> Chain | None:
        """Record the chain ``node`` is (walking what hangs off it) and return it."""
        chain = self.chain(node, scope, owner)
        if chain is None:
            self.node(node, scope, owner)
            return None
        self.ref(scope, owner, role, chain)
        return chain

    def chain(self, node: Any, scope: str, owner: str) -> Chain | None:
        kind = node.type
        if kind == "identifier":
            return [self.part(node)]
        if kind == "attribute":
            obj = node.child_by_field_name("object")
            attr = node.child_by_field_name("attribute")
            if obj is None or attr is None:
                return None
            base = self.chain(obj, scope, owner)
            if base is None:
                self.node(obj, scope, owner)
                base = [self.part(obj, "?")]
            return [*base, self.part(attr)]
        if kind == "call":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if arguments is not None:
                self.node(arguments, scope, owner)
            if function is None:
                return None
            base = self.chain(function, scope, owner)
            if base is None:
                self.node(function, scope, owner)
                base = [self.part(function, "?")]
            return [*base, self.part(node, "()")]
        if kind == "subscript":
            value = node.child_by_field_name("value")
            for child in node.children_by_field_name("subscript"):
                self.node(child, scope, owner)
            if value is None:
                return None
            base = self.chain(value, scope, owner)
            if base is None:
                self.node(value, scope, owner)
                base = [self.part(value, "?")]
            return [*base, self.part(node, "[]")]
        if kind == "parenthesized_expression" and len(node.named_children) == 1:
            return self.chain(node.named_children[0], scope, owner)
        return None


def _nothing(node: Any, scope: str, owner: str) -> None:
    return


def _wraps(walker: _Walker, node: Any, name: str) -> bool:
    """Whether the call ``node`` passes ``name`` itself on (``f(name)``,
    ``f(g(name))``, ``f(x)(name)``): a decoration by hand, whose result stands for it."""
    if node.type != "call":
        return False
    function = node.child_by_field_name("function")
    if function is not None and _wraps(walker, function, name):
        return True
    arguments = node.child_by_field_name("arguments")
    for argument in arguments.named_children if arguments is not None else ():
        if argument.type == "identifier" and walker.text(argument) == name:
            return True
        if _wraps(walker, argument, name):
            return True
    return False


def _plain(walker: _Walker, node: Any) -> Chain | None:
    inner = node.named_children[0] if node.type == "type" and node.named_children else node
    parts: Chain = []
    while inner.type == "attribute":
        attr = inner.child_by_field_name("attribute")
        parts.insert(0, walker.part(attr))
        inner = inner.child_by_field_name("object")
    if inner.type != "identifier":
        return None
    return [walker.part(inner), *parts]


def _param_name(node: Any) -> Any:
    if node.type == "identifier":
        return node
    if node.type in ("typed_parameter", "list_splat_pattern", "dictionary_splat_pattern"):
        for child in node.named_children:
            if child.type == "identifier":
                return child
        return None
    if node.type in ("default_parameter", "typed_default_parameter"):
        return node.child_by_field_name("name")
    return None


def _end_line(node: Any) -> int:
    row, column = node.end_point
    return int(row + 1 if column > 0 or row == node.start_point[0] else row)
