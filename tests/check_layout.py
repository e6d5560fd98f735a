#!/usr/bin/env python3
"""The code's layout holds (docs/design.md §1): each folder includes only the folders below
it, the core library (src/base … src/plot) holds no StarPU or MPI, no source file passes 600
lines (no test source 800), no function of the product's code (kernels, graph, codelets, src,
drivers, python) passes 80 (each reads as named steps), every repository file a comment names exists, and no unit
includes (or imports) itself through others. Usage: check_layout.py REPO_ROOT"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
CORE = ["src/base", "src/model", "src/safety", "src/memory", "src/numerics", "src/synthetic", "src/io", "src/plot"]
# What each folder may include besides itself.
ALLOWED = {
    "kernels": set(),
    "graph": {"kernels"},
    "codelets": {"kernels", "graph"},
    "src/base": set(),
    "src/model": {"src/base"},
    "src/safety": {"src/base"},
    "src/memory": {"src/base", "kernels"},
    "src/optim": {"src/base"},
    "src/numerics": {"src/base", "src/model", "kernels"},
    "src/synthetic": {"src/base", "src/model", "src/numerics", "src/memory", "src/safety"},
    "src/io": {"src/base", "src/model", "src/safety", "src/memory"},
    "src/plot": {"src/base", "src/safety", "src/memory"},
    "src/runtime": {"src/base", "src/memory", "src/safety", "codelets", "graph", "kernels"},
    "src/workflows": set(CORE) | {"src/runtime", "src/optim", "codelets", "graph", "kernels"},
    "drivers": set(CORE) | {"src/runtime", "src/workflows", "src/optim", "codelets", "graph", "kernels"},
    "python": set(CORE) | {"src/runtime", "src/workflows", "src/optim", "codelets", "graph", "kernels"},
}
MAX_LINES = 600
MAX_TEST_LINES = 800
MAX_FUNCTION_LINES = 80
# Where a function must read as named steps: every folder of the product's code.
STEPS = tuple(ALLOWED)


def long_functions(text):
    """(first line, lines, header) of each outermost function body longer than the limit: a
    brace that closes a line ending in `)` (const, noexcept, a trailing return type allowed) and
    not a control statement or a lambda; comments, strings and characters are blanked first."""
    found, stack = [], []
    for i, line in enumerate(text.split("\n")):
        code = re.sub(r"//.*", "", line)
        code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
        code = re.sub(r"'(\\.|[^'\\])'", "''", code)
        for ch in code:
            if ch == "{":
                is_function = (re.search(r"\)\s*(const)?\s*(noexcept)?\s*(->\s*[\w:<>]+)?\s*\{\s*$", code)
                               and not re.search(r"\b(if|for|while|switch|catch)\b", code)
                               and not re.search(r"\]\s*\(", code))
                stack.append((i, bool(is_function), line.strip()))
            elif ch == "}" and stack:
                start, is_function, header = stack.pop()
                inside_function = any(f for _, f, _ in stack)
                if is_function and not inside_function and i - start + 1 > MAX_FUNCTION_LINES:
                    found.append((start + 1, i - start + 1, header))
    return found


def folder(path):
    parts = pathlib.PurePosixPath(path).parts
    return "/".join(parts[:2]) if parts[0] == "src" else parts[0]


# A repository path a comment names, with a file's extension: it must exist (a file moved or
# renamed leaves its old name in comments).
COMMENT_PATH = re.compile(r"(?<![\w./-])((?:src|kernels|codelets|graph|drivers|python|docs|scripts|tests|bench|cmake)/"
                          r"[\w./-]*\.(?:hpp|cpp|cu|h|c|py|md|sh|pl|txt|cmake))\b")


def comments(text, python):
    """The comment part of each line (// … or, in Python, # …; a /* block's lines whole)."""
    for i, line in enumerate(text.split("\n"), 1):
        mark = "#" if python else "//"
        if mark in line:
            yield i, line.split(mark, 1)[1]
        elif not python and line.strip().startswith(("/*", "*")):
            yield i, line


problems = []
for top in ["kernels", "graph", "codelets", "src", "drivers", "python"]:
    for f in sorted((root / top).rglob("*.py")):
        for i, comment in comments(f.read_text(encoding="utf-8"), True):
            for m in COMMENT_PATH.finditer(comment):
                if not (root / m.group(1)).exists():
                    problems.append(f"{f.relative_to(root).as_posix()}:{i}: a comment names {m.group(1)}, "
                                    "which does not exist")
    for f in sorted((root / top).rglob("*")):
        if f.suffix not in (".cpp", ".hpp", ".cu", ".h"):
            continue
        rel = f.relative_to(root).as_posix()
        here = folder(rel)
        text = f.read_text(encoding="utf-8")
        lines = text.count("\n")
        for i, comment in comments(text, False):
            for m in COMMENT_PATH.finditer(comment):
                if not (root / m.group(1)).exists():
                    problems.append(f"{rel}:{i}: a comment names {m.group(1)}, which does not exist")
        if lines > MAX_LINES:
            problems.append(f"{rel}: {lines} lines, more than {MAX_LINES}: split it by subject")
        if here in STEPS:
            for first, length, header in long_functions(text):
                problems.append(f"{rel}:{first}: a function of {length} lines, more than {MAX_FUNCTION_LINES}: "
                                f"name its steps ({header[:60]})")
        for m in re.finditer(r'^#include "([^"]+)"', text, re.M):
            target = m.group(1)
            if "/" not in target:
                continue  # generated headers (starwave_version.hpp)
            there = folder(target)
            if there != here and there not in ALLOWED.get(here, set()):
                problems.append(f"{rel}: includes {target}: {here}/ may not use {there}/ (docs/design.md §1)")
        if here in CORE:
            for m in re.finditer(r"^#include <((starpu|mpi|cuda)[^>]*)>", text, re.M):
                problems.append(f"{rel}: includes <{m.group(1)}>: the core library runs without StarPU, MPI or CUDA")

# No include circle: a unit (x.hpp with x.cpp, or a Python module) that needs another which
# needs it back is one unit cut in two, or a layer inside a folder turned upside down.
units = {}
for top in ["kernels", "graph", "codelets", "src", "drivers", "python"]:
    for f in sorted((root / top).rglob("*")):
        rel = f.relative_to(root).as_posix()
        if f.suffix in (".cpp", ".hpp", ".cu", ".h"):
            unit = rel.rsplit(".", 1)[0]
            for m in re.finditer(r'^#include "([^"]+)"', f.read_text(encoding="utf-8"), re.M):
                if "/" in m.group(1) and m.group(1).rsplit(".", 1)[0] != unit:
                    units.setdefault(unit, set()).add(m.group(1).rsplit(".", 1)[0])
        elif f.suffix == ".py":
            unit = rel[:-3]
            for m in re.finditer(r"^\s*from \.(\w+) import", f.read_text(encoding="utf-8"), re.M):
                units.setdefault(unit, set()).add(f"{f.parent.relative_to(root).as_posix()}/{m.group(1)}")


def circle_from(start):
    """A path of includes from `start` back to it, or None."""
    seen, stack = set(), [(start, [start])]
    while stack:
        node, path = stack.pop()
        for nxt in sorted(units.get(node, ())):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


reported = set()
for unit in sorted(units):
    path = circle_from(unit)
    if path and frozenset(path) not in reported:
        reported.add(frozenset(path))
        problems.append("an include circle: " + " → ".join(path))

# Test sources: a file a reader can hold (a long suite splits into sources of one executable).
for f in sorted((root / "tests").glob("*")):
    if f.suffix in (".cpp", ".hpp") and f.read_text(encoding="utf-8").count("\n") > MAX_TEST_LINES:
        problems.append(f"{f.relative_to(root).as_posix()}: more than {MAX_TEST_LINES} lines: split it into sources "
                        "of the same test program (a fixture header beside them)")

for p in problems:
    print(p)
if problems:
    sys.exit(1)
print("layout holds:", ", ".join(sorted(ALLOWED)))
