#!/usr/bin/env python3
"""Run the mutants gremlins could not kill against other packages' tests.

gremlins (v0.6.0) runs a package's mutants against that package's own tests
only; its integration mode runs every test of the module per mutant. This
script takes a gremlins JSON report (`gremlins unleash -o REPORT.json PKG`),
applies each mutant that lived, was not covered or timed out, one at a time,
runs the given test command, and restores the file. A mutant is killed when
the command fails, not viable when it does not build.

    scripts/mutate-across.py REPORT.json [--timeout S] [--from N] -- go test -short ./ledger ./cmd

A command of several steps goes through sh -c; `go test A && go test B`
builds B only when A did not kill the mutant.

It prints one line per mutant and a summary; the source is restored after
each mutant and on interrupt.
"""

import argparse
import json
import re
import signal
import subprocess
import sys

# gremlins' token mutations (internal/engine/mappings.go, v0.6.0).
SWAPS = {
    "ARITHMETIC_BASE": {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
    "CONDITIONALS_BOUNDARY": {">=": ">", ">": ">=", "<=": "<", "<": "<="},
    "CONDITIONALS_NEGATION": {"==": "!=", "!=": "==", ">=": "<", ">": "<=",
                              "<=": ">", "<": ">="},
    "INCREMENT_DECREMENT": {"++": "--", "--": "++"},
    "INVERT_NEGATIVES": {"-": "+"},
}
OPERATORS = ["++", "--", "==", "!=", ">=", "<=", "+", "-", "*", "/", "%", "<", ">"]
WANTED = {"LIVED", "NOT COVERED", "TIMED OUT"}


def token_at(line, col):
    """The operator that starts at 1-based byte column col of line."""
    rest = line[col - 1:]
    for op in OPERATORS:
        if rest.startswith(op):
            return op
    raise ValueError("no operator at column %d of %r" % (col, line))


def mutate(text, line_no, col, kind):
    """text with the mutant applied, and a short description of it."""
    lines = text.split(b"\n")
    line = lines[line_no - 1].decode()
    op = token_at(line, col)
    new = SWAPS[kind][op]
    lines[line_no - 1] = (line[:col - 1] + new + line[col - 1 + len(op):]).encode()
    return b"\n".join(lines), "%s -> %s" % (op, new)


def run(cmd, timeout):
    """KILLED, LIVED, NOT VIABLE or TIMED OUT for one run of cmd."""
    try:
        out = subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "TIMED OUT", ""
    text = (out.stdout + out.stderr).decode(errors="replace")
    if out.returncode == 0:
        return "LIVED", ""
    if "[build failed]" in text or "[setup failed]" in text:
        return "NOT VIABLE", ""
    if "panic: test timed out" in text:
        return "TIMED OUT", ""
    failed = sorted(set(re.findall(r"--- FAIL: (\w+)", text)))
    return "KILLED", " ".join(failed[:3])


def main():
    if "--" not in sys.argv:
        sys.exit("mutate-across: give the test command after --")
    cut = sys.argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--from", dest="first", type=int, default=1, help="start at the Nth mutant")
    args = ap.parse_args(sys.argv[1:cut])
    cmd = sys.argv[cut + 1:]
    if not cmd:
        sys.exit("mutate-across: give the test command after --")
    with open(args.report) as f:
        report = json.load(f)
    mutants = [(f["file_name"], m) for f in report["files"]
               for m in f["mutations"] if m["status"] in WANTED]
    counts = {}
    for n, (path, m) in enumerate(mutants, 1):
        if n < args.first:
            continue
        with open(path, "rb") as f:
            original = f.read()
        signal.signal(signal.SIGINT, lambda *_: restore_and_exit(path, original))
        signal.signal(signal.SIGTERM, lambda *_: restore_and_exit(path, original))
        try:
            text, what = mutate(original, m["line"], m["column"], m["type"])
            with open(path, "wb") as f:
                f.write(text)
            status, tests = run(cmd, args.timeout)
        finally:
            with open(path, "wb") as f:
                f.write(original)
        counts[status] = counts.get(status, 0) + 1
        print("%d/%d %s:%d:%d %s (%s, was %s): %s %s" % (
            n, len(mutants), path, m["line"], m["column"], m["type"], what,
            m["status"], status, tests), flush=True)
    killed, lived = counts.get("KILLED", 0), counts.get("LIVED", 0)
    print("summary:", ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    if killed + lived:
        print("killed of viable, not timed out: %.1f %%" % (100.0 * killed / (killed + lived)))


def restore_and_exit(path, original):
    with open(path, "wb") as f:
        f.write(original)
    sys.exit(130)


if __name__ == "__main__":
    main()
