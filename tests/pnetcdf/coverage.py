#!/usr/bin/env python3
"""Checks that libcove-pnetcdf defines every entry point of pnetcdf.h that
takes an ncid (so no call on a coupled file can reach the real library
with Cove's ncid), plus create, open and delete (which name a path),
copy_att (whose first parameter is ncid_in), DTF's three calls and the C
library's unlink and remove (a coupled file deleted by path), and exports
nothing else.

    coverage.py PNETCDF_H LIBRARY
"""
import re
import subprocess
import sys


def main():
    header, library = sys.argv[1:]
    protos = re.findall(r"extern\s+int\s+(ncmpi_\w+)\s*\(([^;]*?)\)\s*;", open(header).read(), re.S)
    wanted = {name for name, args in protos if re.findall(r"\w+", args.split(",")[0])[-1:] == ["ncid"]}
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.split()[-2:-1] == ["T"]}
    missing = sorted(wanted - exported)
    extra = sorted(e for e in exported - wanted if not re.match(r"^(ncmpi_(create|open|delete|copy_att)|dtf_(init|transfer|finalize)|unlink|remove)$", e))
    for name in missing:
        print(f"not interposed: {name}")
    for name in extra:
        print(f"exported but not a PnetCDF ncid call: {name}")
    print(f"{len(wanted)} ncid entry points in {header}; {len(wanted & exported)} interposed")
    return 1 if missing or extra or len(wanted) < 800 else 0


if __name__ == "__main__":
    sys.exit(main())
