#!/usr/bin/env python3
"""tests/check_docs.py ROOT — the documents hold together: every relative link (and #anchor,
as GitHub makes heading anchors) in README.md and docs/*.md leads somewhere; every
"docs/design.md §N" a source file cites names a section docs/design.md has, and none cites
a design document outside the repository; the README stays under 200 lines."""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
os.chdir(root)
problems = []


def slug(heading):
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.replace("`", ""))
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def lines_outside_fences(path):
    fence = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence:
            yield number, line


def anchors(path):
    found, seen = set(), {}
    for _, line in lines_outside_fences(path):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else f"{s}-{n}")
    return found


pages = ["README.md"] + sorted(glob.glob("docs/*.md"))
for page in pages:
    for number, line in lines_outside_fences(page):
        for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", re.sub(r"`[^`]*`", "", line)):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(full):
                problems.append(f"{page}:{number}: {target}: no such file")
            elif fragment and (not full.endswith(".md") or fragment not in anchors(full)):
                problems.append(f"{page}:{number}: {target}: no such heading")

sections = {m.group(1) for _, line in lines_outside_fences("docs/design.md")
            for m in [re.match(r"^## (\d+)\.", line)] if m}
sources = [f for pattern in ("src/**/*", "codelets/*", "graph/*", "kernels/**/*", "drivers/*", "tests/*", "bench/*",
                             "examples/**/*", "scripts/*", "cmake/*", "CMakeLists.txt")
           for f in glob.glob(pattern, recursive=True) if os.path.isfile(f) and f != "tests/check_docs.py"]
for source in sources + pages:
    try:
        text = open(source, encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    for number, line in enumerate(text.splitlines(), 1):
        if re.search(r"\bDESIGN(\.md)? ?§", line):
            problems.append(f"{source}:{number}: cites a design document outside the repository")
        for m in re.finditer(r"design\.md §(\d+)((?:, ?§?\d+)*)", line):
            for n in [m.group(1)] + re.findall(r"\d+", m.group(2)):
                if n not in sections:
                    problems.append(f"{source}:{number}: docs/design.md has no section {n}")

readme_lines = sum(1 for _ in open("README.md", encoding="utf-8"))
if readme_lines > 200:
    problems.append(f"README.md: {readme_lines} lines, more than 200")

for p in problems:
    print(p)
print(f"{len(problems)} problem(s) in {len(pages)} pages and {len(sources)} source files")
sys.exit(1 if problems else 0)
