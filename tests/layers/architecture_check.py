#!/usr/bin/env python3
"""The layer picture in docs/ARCHITECTURE.md is the tree: run by CTest (tests/CMakeLists.txt).

    architecture_check.py <source dir> <build dir>/layers.txt

docs/ARCHITECTURE.md holds the layers as a table after the line `<!-- layers -->`, bottom-up,
one row per folder of src/: | `folder` | links | what it holds |. This check holds it against
- the folders of src/ (every folder with a CMakeLists.txt; src/wasm, a build of its own, is
  named in the table with links `(own build)`),
- what each folder's CMakeLists.txt declares it links (hapair_layer(... LINKS ...), written by
  the configure step to layers.txt),
- the order: a folder links only folders in rows above it,
- README.md's "Layout", which names every folder as src/<folder>/.
Prints every difference and exits 1 when there is one.
"""
import pathlib
import re
import sys


def table_rows(text):
    lines = text.splitlines()
    try:
        start = lines.index("<!-- layers -->")
    except ValueError:
        return None
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            if rows:
                break
            continue
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or set(cells[0]) <= set("-: ") or cells[0].lower() == "folder":
            continue
        folder = cells[0].strip("`")
        links = cells[1]
        rows.append((folder, links))
    return rows


def main():
    src_dir = pathlib.Path(sys.argv[1])
    layers_txt = pathlib.Path(sys.argv[2])
    problems = []
    arch = (src_dir / "docs" / "ARCHITECTURE.md").read_text()
    rows = table_rows(arch)
    if rows is None:
        print("docs/ARCHITECTURE.md has no '<!-- layers -->' table")
        return 1
    declared = {}
    order = []
    for line in layers_txt.read_text().splitlines():
        if not line.strip():
            continue
        folder, _, links = line.partition(":")
        declared[folder.strip()] = links.split()
        order.append(folder.strip())
    folders = sorted(p.name for p in (src_dir / "src").iterdir() if (p / "CMakeLists.txt").exists())
    in_table = [f for f, _ in rows]
    for f in folders:
        if f not in in_table:
            problems.append(f"src/{f}/ is not in docs/ARCHITECTURE.md's layer table")
    for f in in_table:
        if f not in folders:
            problems.append(f"docs/ARCHITECTURE.md's layer table names {f}, which is not a folder of src/")
    seen = set()
    for folder, links_cell in rows:
        if links_cell == "(own build)":
            if folder in declared:
                problems.append(f"{folder}: the table says it is a build of its own, but CMake declares it a layer")
            seen.add(folder)
            continue
        links = [] if links_cell in ("", "—", "-") else [l.strip("` ") for l in links_cell.split(",")]
        if folder not in declared:
            problems.append(f"{folder}: in the table, but no hapair_layer({folder} ...) in its CMakeLists.txt")
        elif sorted(links) != sorted(declared[folder]):
            problems.append(f"{folder}: the table says it links {', '.join(links) or 'nothing'}, "
                            f"its CMakeLists.txt says {', '.join(declared[folder]) or 'nothing'}")
        for l in links:
            if l not in seen:
                problems.append(f"{folder}: links {l}, which is not in a row above it (the table goes bottom-up)")
        seen.add(folder)
    readme = (src_dir / "README.md").read_text()
    layout = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
    if not layout:
        problems.append("README.md has no '## Layout' section")
    else:
        for f in folders:
            if f"src/{f}/" not in layout.group(1):
                problems.append(f"README.md's Layout does not name src/{f}/")
    for p in problems:
        print(p)
    if not problems:
        print(f"docs/ARCHITECTURE.md, README.md and src/ agree on {len(rows)} layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
