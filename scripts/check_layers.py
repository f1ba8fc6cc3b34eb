#!/usr/bin/env python3
"""Checks that includes between Cove's source folders go one way only.

The layers, lowest first (docs/architecture.md):

    core <- common <- net <- store, gpu <- server, client <- capi, front ends <- tools, bench, examples

A file in src/<folder>/ may include the public headers (include/cove.h,
include/cove/...), its own folder, and folders of lower layers; server and
client sit side by side and never include each other. Exits 1 and names
every wrong include, 0 when there is none.

    check_layers.py [ROOT]     ROOT: the repository (default: this script's parent folder)
"""
import pathlib
import re
import sys

# Folder under src/ -> layer. Folders of the same layer may not include each other.
LAYERS = {
    "core": 0,
    "common": 1,
    "net": 2,
    "store": 3,
    "gpu": 3,
    "server": 4,
    "client": 4,
    "capi": 5,
    "h5vol": 5,
    "pnetcdf": 5,
    "python": 5,
    "fortran": 5,
    "kokkos": 5,
}
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
SOURCES = (".hpp", ".h", ".cpp", ".c", ".cu", ".cuh")


def wrong_includes(root: pathlib.Path):
    src = root / "src"
    for path in sorted(src.rglob("*")):
        if path.suffix not in SOURCES:
            continue
        folder = path.relative_to(src).parts[0]
        if folder not in LAYERS:
            yield path, f"src/{folder}/ is not a known layer (add it to {pathlib.Path(__file__).name})"
            continue
        for lineno, target in includes(path):
            top = target.split("/")[0]
            if top not in LAYERS or top == folder:
                continue  # a public header, a header beside this file, or one of its own folder
            if LAYERS[top] >= LAYERS[folder]:
                yield path, (f"line {lineno}: includes \"{target}\": {folder}/ (layer {LAYERS[folder]}) "
                             f"may not depend on {top}/ (layer {LAYERS[top]})")


def includes(path: pathlib.Path):
    text = path.read_text(errors="replace")
    for m in INCLUDE.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    bad = list(wrong_includes(root))
    for path, why in bad:
        print(f"{path.relative_to(root)}: {why}")
    if bad:
        print(f"check_layers: {len(bad)} include(s) go the wrong way")
        return 1
    print("check_layers: every include goes one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
