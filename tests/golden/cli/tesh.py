#!/usr/bin/env python3
"""Golden CLI tests in the manner of SimGrid's tesh: a .tesh file holds command lines and the
stdout, stderr and exit status each must produce, byte for byte.

    # a comment (kept by --update)
    $ schedlab machines --bogus          a command line, run by bash in a fresh directory
    < a line of stdin                    (optional; none: stdin is /dev/null)
    > a line of the expected stdout      ('>' alone: an empty line)
    2> a line of the expected stderr
    ! exit 2                             the expected exit status (default 0)

A case is a `$` line and the lines below it, up to the next `$` line. `schedlab` is the binary
under test: its directory comes first in PATH. Every command of a file runs in one temporary
directory (removed at the end), which holds symbolic links to the source tree's tests/,
profiles/, published/, examples/, scripts/ and Makefile so that relative paths work and what a command writes stays
there; the source tree's path is written $SRCDIR in the output; HOME points at it (no host profile is found), LC_ALL=C, and the SCHEDLAB_* variables
are unset.

Usage: tesh.py --binary PATH [--update] FILE.tesh...
--update rewrites each file's expected output and status from what the binary does now (for a
change that is meant to change the output: review the diff before committing it).
"""
import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LINKED = ("tests", "profiles", "published", "examples", "scripts", "Makefile")
CASE_TIMEOUT_S = 20    # a Release build's limit per case; --slow-factor scales it
case_timeout_s = CASE_TIMEOUT_S


class Case:
    def __init__(self, command, line):
        self.command = command
        self.line = line        # line number of the `$` line
        self.stdin = []
        self.stdout = []
        self.stderr = []
        self.status = 0
        self.comments = []      # comment / blank lines that follow the case (kept by --update)


def parse(path):
    """The file's leading comment lines and its cases."""
    head, cases = [], []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            where = f"{path}:{n}"
            if line.startswith("$ "):
                cases.append(Case(line[2:], n))
                continue
            if line.startswith("#") or not line.strip():
                (cases[-1].comments if cases else head).append(line)
                continue
            if not cases:
                raise SystemExit(f"{where}: expected a `$ command` line before '{line}'")
            c = cases[-1]
            if c.comments:
                raise SystemExit(f"{where}: a comment or blank line inside a case (put it before the `$` line)")
            if line == ">" or line.startswith("> "):
                c.stdout.append(line[2:])
            elif line == "2>" or line.startswith("2> "):
                c.stderr.append(line[3:])
            elif line == "<" or line.startswith("< "):
                c.stdin.append(line[2:])
            elif line.startswith("! exit "):
                try:
                    c.status = int(line[len("! exit "):])
                except ValueError:
                    raise SystemExit(f"{where}: '! exit' takes a number")
            else:
                raise SystemExit(f"{where}: unknown line '{line}' (lines start with $, <, >, 2>, ! exit or #)")
    return head, cases


def text(lines):
    return "".join(l + "\n" for l in lines)


def split(out):
    """Output text as lines, the source tree's path written $SRCDIR; output without a final
    newline is marked (a .tesh file cannot write it)."""
    out = out.replace(SOURCE_ROOT, "$SRCDIR")
    if out and not out.endswith("\n"):
        out += "\n[no newline at the end]\n"
    return out.splitlines()


def run(case, binary, workdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_")}
    env.update(PATH=os.path.dirname(os.path.abspath(binary)) + os.pathsep + env.get("PATH", ""),
               HOME=workdir, LC_ALL="C", TZ="UTC")
    for k in ("XDG_CONFIG_HOME", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"):  # (ctest may run under make)
        env.pop(k, None)
    p = subprocess.run(["bash", "-c", case.command], cwd=workdir, env=env,
                       input=text(case.stdin).encode() if case.stdin else None,
                       stdin=None if case.stdin else subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=case_timeout_s)
    return (split(p.stdout.decode("utf-8", "backslashreplace")),
            split(p.stderr.decode("utf-8", "backslashreplace")), p.returncode)


def write(path, head, cases):
    with open(path, "w", encoding="utf-8") as f:
        for l in head:
            f.write(l + "\n")
        for c in cases:
            f.write(f"$ {c.command}\n")
            for l in c.stdin:
                f.write("<\n" if not l else f"< {l}\n")
            for l in c.stdout:
                f.write(">\n" if not l else f"> {l}\n")
            for l in c.stderr:
                f.write("2>\n" if not l else f"2> {l}\n")
            if c.status != 0:
                f.write(f"! exit {c.status}\n")
            for l in c.comments:
                f.write(l + "\n")


def check_file(path, binary, update):
    head, cases = parse(path)
    if not cases:
        print(f"{path}: no cases")
        return 1
    failed = 0
    workdir = tempfile.mkdtemp(prefix="schedlab_tesh_")
    try:
        for name in LINKED:
            os.symlink(os.path.join(SOURCE_ROOT, name), os.path.join(workdir, name))
        for c in cases:
            try:
                t0 = time.monotonic()
                out, err, status = run(c, binary, workdir)
                if os.environ.get("TESH_TIMES"):
                    print(f"{time.monotonic() - t0:6.3f} s  {c.command[:100]}")
            except subprocess.TimeoutExpired:
                print(f"{path}:{c.line}: $ {c.command}\n  did not finish in {case_timeout_s} s")
                failed += 1
                continue
            if update:
                c.stdout, c.stderr, c.status = out, err, status
                continue
            problems = []
            if status != c.status:
                problems.append(f"  exit status {status}, expected {c.status}")
            for what, got, want in (("stdout", out, c.stdout), ("stderr", err, c.stderr)):
                if got != want:
                    diff = difflib.unified_diff(want, got, f"expected {what}", f"actual {what}", lineterm="")
                    problems.append("\n".join("  " + d for d in diff))
            if problems:
                failed += 1
                print(f"{path}:{c.line}: $ {c.command}")
                print("\n".join(problems))
        if update:
            write(path, head, cases)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    verb = "updated" if update else "passed"
    print(f"{os.path.basename(path)}: {len(cases) - failed} of {len(cases)} cases {verb}")
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--slow-factor", type=int, default=1, choices=range(1, 101), metavar="N",
                    help="the binary runs up to N times slower than a Release build (ASan: 10)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    global case_timeout_s
    case_timeout_s = CASE_TIMEOUT_S * a.slow_factor
    failed = sum(check_file(f, a.binary, a.update) for f in a.files)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
