"""``[code]``: cuedeck-code's config section, registered by its plugin."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting


@attrs.frozen
class CodeSettings:
    """``[code]``: which source files cuedeck-code indexes (on top of ``[index]``)."""

    enabled: bool = setting(True, "Index source files (false: markdown only).")
    languages: list[str] = setting(
        [],
        "Languages to index (python, javascript, typescript, tsx, go, rust, java, c, cpp, "
        "ruby); empty: all of them.",
    )
    git_tracked: bool = setting(
        True,
        "In a git repository, index only the source files git tracks (outside one, or in "
        "one that tracks nothing yet, what .gitignore allows).",
    )
    exclude: list[str] = setting(
        [
            "vendor/",
            "vendored/",
            "third_party/",
            "third-party/",
            "thirdparty/",
            "external/",
            "node_modules/",
            "bower_components/",
            "Pods/",
            "*.min.js",
            "*.min.mjs",
            "*.bundle.js",
            "*_pb2.py",
            "*_pb2_grpc.py",
            "*_pb2.pyi",
            "*.pb.go",
            "*.pb.cc",
            "*.pb.h",
            "*.generated.*",
            "*_generated.*",
        ],
        "Globs (gitignore syntax) of vendored and generated source files never indexed.",
    )
    scene_graph: bool = setting(
        True,
        "Scenes add the callers and callees of the code a card cites, and the callers of "
        "its traceback's frames (from the code graph).",
    )
    graph_background_files: int = setting(
        250,
        "`cue index` builds the code graph in a background process when it has more "
        "code files than this to read (about a second of work); fewer are read at once.",
        minimum=0,
    )
    max_file_kb: int = setting(1024, "Source files larger than this are not indexed.", minimum=1)
    skip_generated: bool = setting(
        True,
        "Leave out files that say they are generated in their first lines (`Code generated "
        "... DO NOT EDIT`, `@generated`, `auto-generated`).",
    )
    max_average_line: int = setting(
        200,
        "Leave out files whose lines average more characters than this (minified); 0 keeps them.",
        minimum=0,
    )
