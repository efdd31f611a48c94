"""Writes the Python package's API reference (docs/python-api.md) from its
docstrings and signatures, as the installed package has them.

    python python/tools/api_reference.py -o docs/python-api.md   # regenerate
    python python/tools/api_reference.py --check docs/python-api.md

--check exits 1, saying how to regenerate, when the file differs from what
the package's docstrings give (ctest's PythonApiReference runs it).
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any, List

import tessera

HEADER = """# The Python package's API

Generated from the docstrings and signatures of the `tessera` package by
`python/tools/api_reference.py` (do not edit by hand; `make test` checks that it is
current). The guide with examples is python/README.md.
"""


def annotation(value: Any) -> str:
    text = value if isinstance(value, str) else inspect.formatannotation(value)
    return text.strip("'\"")


def signature(obj: Any, name: str) -> str:
    """`name(params) -> result`, annotations as written, without self or cls."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    params = []
    star = False
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.kind is p.VAR_POSITIONAL:
            star = True
        if p.annotation is not p.empty:
            text += ": " + annotation(p.annotation)
        if p.default is not p.empty:
            text += " = " + repr(p.default)
        params.append(text)
        if p.kind is p.POSITIONAL_ONLY:
            nxt = list(sig.parameters.values())
            if nxt[-1] is not p and nxt[nxt.index(p) + 1].kind is not p.POSITIONAL_ONLY:
                params.append("/")
    result = ""
    if sig.return_annotation is not sig.empty:
        result = " -> " + annotation(sig.return_annotation)
    return f"{name}({', '.join(params)}){result}"


def doc(obj: Any) -> str:
    return (inspect.getdoc(obj) or "").strip()


def entry(title: str, text: str) -> str:
    return f"### `{title}`\n\n{text}\n" if text else f"### `{title}`\n"


def members(cls: type) -> List[str]:
    out: List[str] = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            out.append(entry(f"{cls.__name__}.{name}", doc(member)))
        elif isinstance(member, (classmethod, staticmethod)):
            fn = member.__func__
            out.append(entry(f"{cls.__name__}.{signature(fn, name)}", doc(fn)))
        elif inspect.isfunction(member):
            out.append(entry(f"{cls.__name__}.{signature(member, name)}", doc(member)))
    return out


def reference() -> str:
    parts = [HEADER]
    for name in tessera.__all__:
        obj = getattr(tessera, name)
        if inspect.isclass(obj):
            kind = "exception" if issubclass(obj, BaseException) else "class"
            title = signature(obj, name) if hasattr(obj, "__dataclass_fields__") else name
            parts.append(f"## `{title}` ({kind})\n")
            if doc(obj):
                parts.append(doc(obj) + "\n")
            parts.extend(members(obj))
        else:
            parts.append(f"## `{signature(obj, name)}`\n")
            if doc(obj):
                parts.append(doc(obj) + "\n")
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("-o", "--output", type=Path, help="write the reference to FILE")
    group.add_argument("--check", type=Path, help="exit 1 when FILE is not current")
    args = parser.parse_args()
    text = reference()
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        return 0
    current = args.check.read_text(encoding="utf-8") if args.check.exists() else ""
    if current != text:
        print(f"api_reference: {args.check} is not current; regenerate it with\n"
              f"  python python/tools/api_reference.py -o {args.check}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
