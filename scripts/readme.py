#!/usr/bin/env python3
"""Regenerates the generated parts of README.md from the real binary and the docs:

- between `<!-- BEGIN trust -->` and `<!-- END trust -->`: how far the model's answers can be
  trusted today, counted from docs/reproduction.md (`k of n in band`) and docs/validation.md
  (the acceptance runs' `N of 10 within 15 % in AMean` lines), with links;
- every fenced block that follows `<!-- example: ... -->` lines: each such line is a command
  (`schedlab ARGS`, run with the built binary, or `!SHELL COMMAND`), optionally followed by
  ` | keep=SPEC`; the block becomes `$ command` and its stdout. SPEC lists what to keep of the
  output: line numbers and ranges (`1-19`, `3`) and `/REGEX/` (lines that match); the lines left
  out are written as one `...` per gap. The commands of one block run in one temporary directory
  that links the source tree's tests/, profiles/ and examples/ (files they write stay there).

    scripts/readme.py [--binary build/schedlab]           rewrite README.md
    scripts/readme.py --check [--binary build/schedlab]   exit 1 (with a diff) if README.md differs

ctest runs --check (readme.Generated): a change to the output of a README command fails it
until this script is rerun and the README change committed.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
EXAMPLE = re.compile(r"^<!-- example: (.*?) -->$")


def trust_section():
    with open(os.path.join(ROOT, "docs", "reproduction.md"), encoding="utf-8") as f:
        rep = f.read()
    m = re.search(r"^(\d+) of (\d+) in band \((\d+) ran: (\d+) in band, (\d+) in band by direction only, (\d+) missed, "
                  r"(\d+) not exercised, (\d+) not converged, (\d+) base off; (\d+) not runnable yet\)$", rep, re.M)
    if not m:
        raise SystemExit("docs/reproduction.md: no 'k of n in band (...)' line")
    inband, total, ran, _, direction, missed, unexercised, unconverged, baseoff, notrun = m.groups()
    with open(os.path.join(ROOT, "docs", "validation.md"), encoding="utf-8") as f:
        val = f.read()
    runs = re.findall(r"^`(validate-\d+\.json)`: started (\d{4}-\d\d-\d\d) [\d:]+ UTC.*?; (\d+) of (\d+) within 15 % in AMean, "
                      r"(\d+) within 2x in CoV, (\d+) both", val, re.M)
    if not runs:
        raise SystemExit("docs/validation.md: no '`validate-*.json`: started ... N of M within 15 % in AMean' line")
    amean = ", ".join(r[2] for r in runs)
    cov = ", ".join(r[4] for r in runs)
    cases = runs[0][3]
    dates = sorted({r[1] for r in runs})
    return (
        "**How far the model's answers can be trusted today** (counted by `scripts/readme.py` from the two\n"
        "reports): against published LKML results, `schedlab reproduce` puts **{inband} of {total}** in their\n"
        "band ({ran} ran: {direction} more in band by direction only, {unexercised} whose change never acted,\n"
        "{unconverged} whose seeds or length cannot call it, {baseoff} on a base more than 2x off the published one,\n"
        "{missed} missed, {notrun} not runnable yet;\n"
        "[docs/reproduction.md](docs/reproduction.md)); against the real kernel of the machine it runs on,\n"
        "`schedlab validate`'s {n} acceptance runs ({dates}, 2-vCPU VMs (another one on 2026-12-06), busy on 2026-12-01 and quiet since 2026-12-03) had **{amean} of {cases}** cases\n"
        "within 15 % in AMean and {cov} within 2x in CoV ([docs/validation.md](docs/validation.md)). Use it\n"
        "to see which kernel paths a change exercises and in which direction, not to predict a real\n"
        "machine's numbers; [docs/model.md](docs/model.md) lists what is modeled and what is not.\n"
    ).format(inband=inband, total=total, ran=ran, direction=direction, unexercised=unexercised, unconverged=unconverged,
             baseoff=baseoff, missed=missed, notrun=notrun, n=len(runs),
             dates=", ".join(dates[:-1]) + (" and " if len(dates) > 1 else "") + dates[-1], amean=amean, cases=cases, cov=cov)


def keep(lines, spec):
    if not spec:
        return lines
    want = set()
    for part in re.findall(r"/(?:[^/\\]|\\.)*/|[^,]+", spec):
        part = part.strip().strip(",")
        if not part:
            continue
        if part.startswith("/"):
            rx = re.compile(part[1:-1])
            want |= {i for i, l in enumerate(lines) if rx.search(l)}
        elif "-" in part:
            a, b = part.split("-")
            want |= set(range(int(a) - 1, min(int(b), len(lines))))
        else:
            want.add(int(part) - 1)
    out, gap = [], False
    for i, l in enumerate(lines):
        if i in want:
            out.append(l)
            gap = False
        elif not gap:
            out.append("...")
            gap = True
    return out


def run_block(commands, binary):
    work = tempfile.mkdtemp(prefix="schedlab_readme_")
    try:
        for name in ("tests", "profiles", "examples"):
            os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_")}
        env.update(PATH=os.path.dirname(os.path.abspath(binary)) + os.pathsep + env.get("PATH", ""),
                   HOME=work, LC_ALL="C")
        out = []
        for spec in commands:
            cmd, _, k = spec.partition(" | keep=")
            shell = cmd[1:] if cmd.startswith("!") else cmd
            p = subprocess.run(["bash", "-c", shell], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=300)
            if p.returncode != 0:
                raise SystemExit(f"README example '{shell}' failed ({p.returncode}):\n{p.stderr.decode()}")
            out.append("$ " + shell)
            out += keep(p.stdout.decode().splitlines(), k)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def render(text, binary):
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line == "<!-- BEGIN trust -->":
            end = lines.index("<!-- END trust -->", i)
            out += [line] + trust_section().rstrip("\n").split("\n") + [lines[end]]
            i = end + 1
            continue
        if EXAMPLE.match(line):
            commands = []
            while i < len(lines) and EXAMPLE.match(lines[i]):
                out.append(lines[i])
                commands.append(EXAMPLE.match(lines[i]).group(1))
                i += 1
            if i >= len(lines) or lines[i] != "```":
                raise SystemExit(f"README.md:{i + 1}: an example's ``` block must follow its <!-- example: --> lines")
            end = lines.index("```", i + 1)
            out += ["```"] + run_block(commands, binary) + ["```"]
            i = end + 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description="Regenerate README.md's generated parts")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "schedlab"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    a = ap.parse_args()
    with open(a.readme, encoding="utf-8") as f:
        text = f.read()
    new = render(text, a.binary)
    if a.check:
        if new != text:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       "README.md", "README.md as generated"))
            print("\nREADME.md is stale: run scripts/readme.py (with the built binary) and commit the result")
            return 1
        print("README.md matches the binary and the docs")
        return 0
    if new != text:
        with open(a.readme, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
