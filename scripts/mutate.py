#!/usr/bin/env python3
"""One-line mutations of Cove, each run against the tests that name its rule.

    python3 scripts/mutate.py [--build DIR] [--list FILE] [--only NAME...] [--no-baseline]

For each mutation of the list (tests/mutations.ini; its header says the
format): the line is changed in place, the mutation's targets are rebuilt
in DIR (default build), its tests are run, and the line is put back. A
mutation is caught when one of its tests fails. Then one table: caught,
NOT CAUGHT, skipped (a target or test this build lacks), build failed, or
baseline failed (a named test fails without the mutation, so it proves
nothing). The exit status is 0 only when every mutation that ran was caught.

The source tree is never left mutated: the original bytes are put back
after each mutation, on any error, on Ctrl-C and on SIGTERM; a run killed
outright (SIGKILL) leaves DIR/mutate/journal.json, from which the next run
puts them back before anything else. Rebuilding after the last mutation
leaves DIR built from the unmutated tree (ccache makes that quick).
Logs: DIR/mutate/NAME.log; the table: DIR/mutate/report.md.
"""
import argparse
import configparser
import fnmatch
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = {"area", "file", "from", "to", "build", "tests", "occurrence"}
TEST_TIMEOUT_S = 900  # a hung test is a failure, reported as such


class Stop(Exception):
    pass


def on_signal(signum, _frame):
    raise Stop(f"stopped by signal {signum}")


def load(path):
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",), comment_prefixes=("#",),
                                       inline_comment_prefixes=None, strict=True, empty_lines_in_values=False)
    parser.optionxform = str
    with open(path) as f:
        parser.read_file(f)
    mutations = []
    for name in parser.sections():
        m = dict(parser[name])
        unknown = set(m) - KEYS
        missing = {"area", "file", "from", "to", "build", "tests"} - set(m)
        if unknown or missing:
            sys.exit(f"{path}: [{name}]: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
        m["name"] = name
        m["build"] = m["build"].split()
        m["tests"] = [t.strip() for t in m["tests"].splitlines() if t.strip()]
        for t in m["tests"]:
            if not (t.startswith("ctest:") or t.startswith("gtest:")):
                sys.exit(f"{path}: [{name}]: test '{t}' is neither ctest:REGEX nor gtest:FILTER")
        m["occurrence"] = int(m.get("occurrence", "0"))
        mutations.append(m)
    return mutations


def mutated_text(m, text):
    """The file's text with the mutation applied; raises ValueError naming what is wrong."""
    count = text.count(m["from"])
    if count == 0:
        raise ValueError(f"'{m['from']}' is not in {m['file']} (the list is stale)")
    if "\n" in m["from"] or "\n" in m["to"]:
        raise ValueError("from and to must be on one line")
    k = m["occurrence"]
    if k == 0 and count > 1:
        raise ValueError(f"'{m['from']}' occurs {count} times in {m['file']}: say which (occurrence = N)")
    if k > count:
        raise ValueError(f"occurrence = {k}, but '{m['from']}' occurs {count} times in {m['file']}")
    at = -1
    for _ in range(max(k, 1)):
        at = text.index(m["from"], at + 1)
    return text[:at] + m["to"] + text[at + len(m["from"]):]


class Tree:
    """Applies a mutation in place and always puts the original back (see the journal)."""

    def __init__(self, journal):
        self.journal = journal
        self.saved = {}  # path -> original bytes

    def recover(self):
        if not os.path.exists(self.journal):
            return
        with open(self.journal) as f:
            saved = json.load(f)
        for path, original in saved.items():
            with open(path, "wb") as out:
                out.write(original.encode("latin-1"))
            print(f"put back {os.path.relpath(path, ROOT)}, left mutated by an earlier run that was killed")
        os.remove(self.journal)

    def apply(self, m):
        path = os.path.join(ROOT, m["file"])
        with open(path, "rb") as f:
            original = f.read()
        text = mutated_text(m, original.decode("latin-1"))
        self.saved[path] = original
        self._write_journal()
        with open(path, "wb") as f:
            f.write(text.encode("latin-1"))

    def restore(self):
        for path, original in self.saved.items():
            with open(path, "wb") as f:
                f.write(original)
        self.saved.clear()
        if os.path.exists(self.journal):
            os.remove(self.journal)

    def _write_journal(self):
        tmp = self.journal + ".tmp"
        with open(tmp, "w") as f:
            json.dump({p: b.decode("latin-1") for p, b in self.saved.items()}, f)
        os.replace(tmp, self.journal)


def run(cmd, log, timeout=None, env=None):
    """Runs cmd with its output appended to the log; its exit status (124 on timeout)."""
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env,
                                start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the test and what it started
            proc.wait()
            out.write(f"\n(timed out after {timeout} s)\n")
            return 124
        except BaseException:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            raise


class Build:
    def __init__(self, path, jobs):
        self.path = path
        self.jobs = jobs
        out = subprocess.run(["ninja", "-C", path, "-t", "targets", "all"], capture_output=True, text=True, check=True)
        self.targets = {line.split(":", 1)[0] for line in out.stdout.splitlines()}
        out = subprocess.run(["ctest", "--test-dir", path, "-N"], capture_output=True, text=True, check=True)
        self.tests = [line.split(":", 1)[1].strip() for line in out.stdout.splitlines()
                      if line.strip().startswith("Test") and "#" in line]
        self.unit_tests = os.path.join(path, "tests", "cove-unit-tests")

    def missing(self, m):
        """Why this build cannot run the mutation, or None."""
        lacking = [t for t in m["build"] if t not in self.targets]
        if lacking:
            return f"not built here: {' '.join(lacking)}"
        for t in m["tests"]:
            kind, what = t.split(":", 1)
            if kind == "ctest":
                if not any(re.search(what, name) for name in self.tests):
                    return f"no test matches {what} in this build"
            elif "cove-unit-tests" not in self.targets:
                return "cove-unit-tests is not built here"
        return None

    def gtest_matches(self, t):
        """Whether a gtest filter names at least one test (cove-unit-tests must be built)."""
        what = t.split(":", 1)[1]
        out = subprocess.run([self.unit_tests, "--gtest_list_tests", f"--gtest_filter={what}"], capture_output=True,
                             text=True)
        return out.returncode == 0 and any(line.startswith("  ") for line in out.stdout.splitlines())

    def build(self, targets, log):
        cmd = ["nice", "-n", "19", "cmake", "--build", self.path, "--target", *targets]
        if self.jobs:
            cmd += ["-j", str(self.jobs)]
        return run(cmd, log) == 0

    def test(self, t, log):
        """True when the test passed."""
        kind, what = t.split(":", 1)
        if kind == "ctest":
            cmd = ["ctest", "--test-dir", self.path, "-R", what, "--output-on-failure", "--no-tests=error"]
        else:
            cmd = [self.unit_tests, f"--gtest_filter={what}"]
        return run(cmd, log, timeout=TEST_TIMEOUT_S) == 0


def table(rows):
    lines = ["| mutation | rule broken | file | tests | result |", "| --- | --- | --- | --- | --- |"]
    for m, result in rows:
        tests = ", ".join(t.split(":", 1)[1] for t in m["tests"])
        lines.append(f"| `{m['name']}` | {m['area']} | `{m['file']}` | `{tests}` | {result} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the configured build folder (default: build)")
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutations.ini"), help="the mutations")
    ap.add_argument("--only", nargs="*", default=[], help="names (or shell patterns) of the mutations to run")
    ap.add_argument("--no-baseline", action="store_true", help="do not first run the named tests without mutations")
    ap.add_argument("--jobs", type=int, default=0, help="build jobs (default: the build tool's)")
    ap.add_argument("--check", action="store_true", help="only check that every mutation applies, and exit")
    args = ap.parse_args()

    build_dir = os.path.abspath(args.build)
    work = os.path.join(build_dir, "mutate")
    os.makedirs(work, exist_ok=True)
    tree = Tree(os.path.join(work, "journal.json"))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    tree.recover()

    mutations = load(args.list)
    if args.only:
        mutations = [m for m in mutations if any(fnmatch.fnmatch(m["name"], p) for p in args.only)]
        if not mutations:
            sys.exit(f"no mutation in {args.list} matches {' '.join(args.only)}")
    stale = []
    for m in mutations:
        try:
            with open(os.path.join(ROOT, m["file"]), encoding="latin-1") as f:
                mutated_text(m, f.read())
        except (OSError, ValueError) as e:
            stale.append(f"[{m['name']}]: {e}")
    if stale:
        sys.exit("mutations that do not apply:\n  " + "\n  ".join(stale))
    if args.check:
        print(f"all {len(mutations)} mutations apply")
        return 0
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        sys.exit(f"{build_dir} is not a configured Ninja build (make build, or cmake -S . -B {args.build} -G Ninja)")

    build = Build(build_dir, args.jobs)
    results = {}
    runnable = []
    for m in mutations:
        why = build.missing(m)
        if why:
            results[m["name"]] = f"skipped ({why})"
        else:
            runnable.append(m)

    touched = sorted({t for m in runnable for t in m["build"]})
    try:
        if runnable:
            log = os.path.join(work, "baseline.log")
            open(log, "w").close()
            print(f"building {' '.join(touched)} without mutations", flush=True)
            if not build.build(touched, log):
                sys.exit(f"the unmutated tree does not build: see {log}")
            failing = set()
            for t in sorted({t for m in runnable for t in m["tests"] if t.startswith("gtest:")}):
                if not build.gtest_matches(t):
                    sys.exit(f"{t}: the filter names no test of {build.unit_tests} (the list is stale)")
            if not args.no_baseline:
                for t in sorted({t for m in runnable for t in m["tests"]}):
                    print(f"baseline: {t}", flush=True)
                    if not build.test(t, log):
                        failing.add(t)
                        print(f"  fails without any mutation (see {log})", flush=True)
            for i, m in enumerate(runnable, 1):
                log = os.path.join(work, m["name"] + ".log")
                open(log, "w").close()
                bad = [t for t in m["tests"] if t in failing]
                if bad:
                    results[m["name"]] = f"baseline failed ({', '.join(bad)})"
                    continue
                began = time.monotonic()
                print(f"[{i}/{len(runnable)}] {m['name']}: {m['file']}", flush=True)
                try:
                    tree.apply(m)
                    if not build.build(m["build"], log):
                        results[m["name"]] = "build failed"
                    else:
                        caught_by = []
                        for t in m["tests"]:
                            if not build.test(t, log):
                                caught_by.append(t.split(":", 1)[1])
                                break  # one failing test is enough
                        results[m["name"]] = f"caught ({caught_by[0]})" if caught_by else "NOT CAUGHT"
                finally:
                    tree.restore()
                print(f"  {results[m['name']]} ({time.monotonic() - began:.0f} s; log {log})", flush=True)
    except Stop as e:
        tree.restore()
        print(f"\n{e}: the tree is as it was; rebuilding {' '.join(touched)}", flush=True)
        build.build(touched, os.path.join(work, "restore.log"))
        return 130
    finally:
        tree.restore()
    if runnable:
        print(f"rebuilding {' '.join(touched)} from the unmutated tree", flush=True)
        build.build(touched, os.path.join(work, "restore.log"))

    rows = [(m, results.get(m["name"], "not run")) for m in load(args.list)
            if m["name"] in results]
    report = table(rows)
    with open(os.path.join(work, "report.md"), "w") as f:
        f.write(report + "\n")
    print()
    print(report)
    counts = {}
    for _, r in rows:
        key = r.split(" (")[0]
        counts[key] = counts.get(key, 0) + 1
    print("\n" + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 0 if all(r.startswith("caught") or r.startswith("skipped") for _, r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
