#!/usr/bin/env python3
"""The layering check fails on wrong includes and passes on right ones.

Builds small source trees in a temporary folder and runs
scripts/check_layers.py on each: an include going down the layers passes;
one going up, one between server and client, and one from an unknown
folder each fail, naming the file and the include.
"""
import pathlib
import subprocess
import sys
import tempfile

CHECK = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_layers.py"


def run(files: dict) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)


def expect(files: dict, status: int, mention: str = "") -> None:
    r = run(files)
    assert r.returncode == status, f"{files}: exit {r.returncode}, expected {status}\n{r.stdout}{r.stderr}"
    assert mention in r.stdout, f"{files}: output does not mention {mention!r}:\n{r.stdout}"


def main() -> int:
    good = {
        "src/core/box.cpp": '#include "core/fail.hpp"\n#include <cove/box.hpp>\n',
        "src/server/handlers.cpp": '#include "store/store.hpp"\n#include "net/protocol.hpp"\n#include "common/log.hpp"\n',
        "src/client/client.cpp": '#include "common/shard_map.hpp"\n#include "local.hpp"\n',
    }
    expect(good, 0, "every include goes one way")
    expect({**good, "src/core/copy.cpp": '#include "server/server.hpp"\n'}, 1,
           'src/core/copy.cpp: line 1: includes "server/server.hpp"')
    expect({**good, "src/store/store.cpp": '\n#include "client/client.hpp"\n'}, 1, "line 2")
    expect({**good, "src/server/x.cpp": '#include "client/client.hpp"\n'}, 1, "server/ (layer 4) may not depend on client/")
    expect({**good, "src/net/ucx.cpp": '#  include "store/store.hpp"\n'}, 1, "net/ (layer 2)")
    expect({**good, "src/misc/x.cpp": "\n"}, 1, "src/misc/ is not a known layer")
    print("check_layers: catches every wrong include it was shown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
