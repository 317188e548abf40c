"""What the syntactic graph follows for scip's recall (issue 38), on real grammar output:
a long fluent chain through re-exports is followed to its end."""

from __future__ import annotations

import pytest

from tests.code.test_intel import call, sites
from tests.conftest import MakeWorkspace

pytest.importorskip("cuedeck_code")


CHAIN = {
    "src/types.ts": (
        "export class Schema {\n"
        "  parse(data: unknown): unknown { return data; }\n"
        "  optional(): this { return this; }\n"
        "  array(): List { return new List(); }\n"
        "}\n"
        "export class Text extends Schema {\n"
        "  static create = (): Text => new Text();\n"
        "  min(n: number): this { return this; }\n"
        "}\n"
        "export class List extends Schema {\n"
        "  max(n: number): this { return this; }\n"
        "}\n"
        "const textType = Text.create;\n"
        "export { textType as text };\n"
    ),
    "src/external.ts": "export * from './types';\n",
    "src/v3.ts": "export * from './external';\n",
    "src/index.ts": "import * as z from './v3';\nexport { z };\n",
    "test/use.test.ts": (
        "import { z } from '../src/index';\n"  # 1
        "const list = z.text().min(1).min(2).optional().array().max(3).optional();\n"
        "list.max(4).optional().max(5).parse('x');\n"  # 3
    ),
}


def test_a_long_chain_through_re_exports_is_followed(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(CHAIN)
    # Every link of the chain resolves, the last one many steps from the start.
    assert sites(root, "Schema.parse") == {("test/use.test.ts", 3, "call")}


OPTIONS = {
    "src/options.ts": (
        "export default class Options {\n"  # 1
        "  get headers(): string { return ''; }\n"  # 2
        "  get url(): string { return ''; }\n"  # 3
        "  merge(other: Options): void {}\n"  # 4
        "}\n"
        "type Except<T, K> = { [P in Exclude<keyof T, K>]: T[P] };\n"  # 6
        "export type Internals = Except<Options, 'merge'>;\n"  # 7
        "export type Init = Partial<Internals> & { extra?: boolean };\n"  # 8
        "const defaults: Internals = {} as Internals;\n"  # 9
        "export function clone(internals: typeof defaults): string {\n"  # 10
        "  return internals.headers;\n"  # 11
        "}\n"
        "export class Holder {\n"  # 13
        "  readonly #internals: Internals = defaults;\n"  # 14
        "  constructor(public raw: Init) {}\n"  # 15
        "  read(): string {\n"  # 16
        "    const {url, headers: named} = this.#internals;\n"  # 17
        "    return this.raw.headers + url + named;\n"  # 18
        "  }\n"
        "}\n"
        "export const made: Options = {headers: 'a', url, merge() {}};\n"  # 21
        "export const cast = {url: 'b'} as Options;\n"  # 22
        "export const checked = {url: 'c'} satisfies Internals;\n"  # 23
    ),
}


def test_a_type_aliass_members_are_its_types(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(OPTIONS)
    path = "src/options.ts"
    # Internals = Except<Options, ...>: its members are Options'; Init (Partial<Internals>
    # & {...}) has Internals'; typeof defaults is what defaults is declared as; and a
    # name unpacked from a value is that value's member.
    assert {line for p, line, _ in sites(root, "Options.headers") if p == path} == {11, 17, 18, 21}
    assert {line for p, line, _ in sites(root, "Options.url") if p == path} == {17, 21, 22, 23}


def test_an_object_literals_keys_are_members_of_its_written_type(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(OPTIONS)
    # const x: T = {...}, {...} as T, {...} satisfies T: each key is T's member (a
    # shorthand key and a method written in the literal too).
    assert ("src/options.ts", 21, "reference") in sites(root, "Options.headers")
    assert ("src/options.ts", 21, "reference") in sites(root, "Options.merge")


def test_a_package_importing_its_own_submodule(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "pkg/__init__.py": "from . import tools\n",
            "pkg/tools.py": "def convert(value):\n    return value\n",
            "pkg/use.py": "from . import tools\n\nDEFAULT = tools.convert(1)\n",  # 3
            "app.py": "import pkg\n\npkg.tools.convert(2)\n",  # 3
        }
    )
    # from . import tools in the package's __init__ is its submodule, so the name the
    # package holds (from . import tools elsewhere, pkg.tools) is that module too.
    assert sites(root, "convert") == {("pkg/use.py", 3, "call"), ("app.py", 3, "call")}


def test_what_an_unannotated_function_returns(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "shop/query.py": (
                "class Query:\n"  # 1
                "    def where(self, test):\n"  # 2
                "        if not test:\n"
                "            return None\n"
                "        return self._copy()\n"  # 5
                "\n"
                "    def _copy(self):\n"  # 7
                "        return Query()\n"  # 8
                "\n"
                "    def run(self):\n"  # 10
                "        return []\n"
                "\n"
                "\n"
                "def start():\n"  # 14
                "    query = Query()\n"
                "    return query\n"  # 16: a local: what it holds is not followed
                "\n"
                "\n"
                "def begin():\n"  # 19
                "    return Query()\n"
            ),
            "app.py": (
                "from shop.query import begin, start\n"  # 1
                "begin().where(1).where(2).run()\n"  # 2
                "start().run()\n"  # 3
            ),
            "src/text.ts": (
                "export class Text {\n"  # 1
                "  min(n: number) { return this.add(n); }\n"  # 2
                "  add(n: number) { return new Text(); }\n"  # 3
                "  parse(data: string): string { return data; }\n"  # 4
                "}\n"
                "export const text = () => new Text();\n"  # 6
                "text().min(1).min(2).parse('x');\n"  # 7
            ),
        }
    )
    # return Query(), return self._copy(): calling them gives a Query; a function
    # returning its own local gives nothing known.
    assert sites(root, "Query.run") == {("app.py", 2, "call")}
    assert {line for _, line, _ in sites(root, "Query.where")} == {2}
    # this.add() gives what add gives; an arrow's expression is what it returns.
    assert sites(root, "Text.parse") == {("src/text.ts", 7, "call")}


def test_columns_count_code_units_as_scip_does(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/util.ts": "export function join(values: string[]): string { return ''; }\n",
            "src/say.ts": (
                "import * as util from './util';\n"
                "export const said = `Ключ ${util.join([])}`;\n"  # 2
            ),
            "say.py": "def join(values):\n    return ''\n\n\nSAID = f'Ключ 😀 {join([])}'\n",
        }
    )
    found = call(root, "scip_references", symbol="join", exact=True)["results"]
    columns = {(r["file_path"], r["line"], r["column"]) for r in found}
    # After "Ключ " (5 characters, 9 bytes) and an emoji (two UTF-16 units, 4 bytes):
    # the column is counted in UTF-16 code units, as SCIP's indexers and editors count.
    assert ("src/say.ts", 2, 33) in columns  # 37 in bytes
    assert ("say.py", 5, 18) in columns  # 24 in bytes


def test_a_value_sharing_a_types_name(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/core.ts": (
                "export class Maker<T> {\n"  # 1
                "  init(inst: T): void {}\n"  # 2
                "}\n"
                "export interface Thing {\n"  # 4
                "  size: number;\n"
                "}\n"
                "export const Thing: Maker<Thing> = new Maker();\n"  # 7
            ),
            "src/use.ts": (
                "import { Thing } from './core';\n"  # 1
                "export function build(inst: Thing): void {\n"  # 2
                "  Thing.init(inst);\n"  # 3
                "}\n"
            ),
        }
    )
    # Thing is an interface and a constant: Thing.init is the constant's (a Maker's).
    assert sites(root, "Maker.init") == {("src/use.ts", 3, "call")}


def test_an_object_types_members(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/types.ts": (
                "export class Options {\n"  # 1
                "  get prefix(): string { return ''; }\n"  # 2
                "}\n"
                "export interface Defaults {\n"  # 4
                "  options: Options;\n"
                "}\n"
                "export type Client = {\n"  # 7
                "  defaults: Defaults;\n"
                "  make: () => Options;\n"
                "  extend(more: string): Client;\n"  # 10
                "} & Record<string, string>;\n"
            ),
            "src/use.ts": (
                "import type { Client } from './types';\n"  # 1
                "export function read(client: Client): string {\n"  # 2
                "  const other = client.extend('x');\n"  # 3
                "  client.make().prefix;\n"  # 4
                "  return other.defaults.options.prefix;\n"  # 5
                "}\n"
            ),
        }
    )
    # An interface's or an object type's typed members are followed, a method written
    # in an object type is the alias's.
    assert sites(root, "Options.prefix") == {
        ("src/use.ts", 4, "reference"),
        ("src/use.ts", 5, "reference"),
    }
    assert sites(root, "Client.extend") == {("src/use.ts", 3, "call")}


def test_an_alias_in_an_import_or_export_names_its_target(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(
        {
            "src/errors.ts": "export class TimeoutError extends Error {}\n",
            "src/index.ts": (
                "import { TimeoutError as Timeout } from './errors';\n"  # 1
                "export { TimeoutError as Expired } from './errors';\n"  # 2
                "export const made = new Timeout();\n"  # 3
            ),
        }
    )
    found = call(root, "scip_references", symbol="TimeoutError", exact=True)["results"]
    columns = {(r["line"], r["column"], r["relationship"]) for r in found}
    # Both the name and its alias are references, as scip-typescript counts them.
    assert columns == {
        (1, 9, "import"),
        (1, 25, "import"),
        (2, 9, "import"),
        (2, 25, "export"),
        (3, 24, "call"),
    }


def test_a_value_made_when_another_is_missing(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/request.ts": (
                "export class Request {\n"  # 1
                "  flush(): void {}\n"  # 2
                "}\n"
                "export function start(first?: Request): void {\n"  # 4
                "  const request = first ?? new Request();\n"  # 5
                "  request.flush();\n"  # 6
                "}\n"
            ),
        }
    )
    # a ?? new C(): a C either way.
    assert sites(root, "Request.flush") == {("src/request.ts", 6, "call")}


def test_a_class_decorated_by_hand_stays_the_class(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "app.py": (
                "def add_repr(cls, **options):\n"  # 1
                "    return cls\n"
                "\n"
                "\n"
                "def test_repr():\n"  # 5
                "    class C:\n"  # 6
                "        def show(self):\n"  # 7
                "            return 1\n"
                "\n"
                "    C = add_repr(C, ns='x')\n"  # 10
                "    C().show()\n"  # 11
                "    value = 2\n"
                "    value = add_repr(value)\n"  # 13: not a definition: a new value
            ),
        }
    )
    # C = add_repr(C): the name still stands for the class (its target is a reference).
    assert {line for _, line, _ in sites(root, "test_repr.C")} == {10, 11}
    assert sites(root, "test_repr.C.show") == {("app.py", 11, "call")}


def test_an_overloads_name_and_a_methods_class_cell(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "api.py": (
                "from typing import overload\n"  # 1
                "\n"
                "\n"
                "@overload\n"
                "def fetch(key: int) -> int: ...\n"  # 5
                "@overload\n"
                "def fetch(key: str) -> str: ...\n"  # 7
                "def fetch(key):\n"  # 8
                "    return key\n"
                "\n"
                "\n"
                "class Node:\n"  # 12
                "    def kind(self):\n"  # 13
                "        return __class__\n"  # 14
            ),
        }
    )
    # Each declaration after the first names the function it declares again.
    assert sites(root, "fetch") == {("api.py", 7, "reference"), ("api.py", 8, "reference")}
    # __class__ in a method is the class it is written in.
    assert ("api.py", 14, "reference") in sites(root, "Node")


def test_cls_in_a_script_is_a_name_like_any_other(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/shop.ts": (
                "export class Other {\n"  # 1
                "  static build(): Other { return new Other(); }\n"  # 2
                "  run(): void {}\n"  # 3
                "}\n"
                "export class Shop {\n"  # 5
                "  static build(): Shop { return new Shop(); }\n"  # 6
                "  run(): void {}\n"  # 7
                "  pick(cls: typeof Other) { return cls.build(); }\n"  # 8
                "}\n"
                "new Shop().pick(Other).run();\n"  # 10
            ),
        }
    )
    # A parameter named cls is no receiver in TypeScript: pick gives nothing known, and
    # certainly not a Shop.
    assert ("src/shop.ts", 10, "call") not in sites(root, "Shop.run")
