#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# recipes.py: every jq recipe the user is shown (--help, the man page's EXAMPLES, the README), run on a recording.
#
# Usage: recipes.py CTXPROF MANPAGE README DIR TRACE
# DIR holds the recording under each name the recipes read (cpu.jsonl,
# prof.jsonl, w.jsonl) and check.json; TRACE is a trace ID in it, for $T.
# A recipe is a jq command, as printed, up to its input file (what it is
# piped into is left out); it passes when jq exits 0 and says nothing on
# stderr (a recipe whose selection is empty here prints [] or nothing).
# One TAP line each, then the plan.
import re
import subprocess
import sys

ctxprof, manpage, readme, workdir, trace = sys.argv[1:6]
failed = 0
count = 0


def verdict(ok, what):
    global failed, count
    count += 1
    if not ok:
        failed += 1
    print(("ok - " if ok else "not ok - ") + what)


def balanced(cmd):
    """Are the single quotes of CMD closed (a shell command complete)?"""
    return cmd.count("'") % 2 == 0


def commands(lines):
    """The jq commands in LINES, each joined from its lines until its quotes close."""
    out, cur = [], None
    for line in lines:
        s = line.strip()
        if cur is None:
            if s.startswith("jq "):
                cur = s
            else:
                continue
        else:
            cur += " " + s
        if balanced(cur):
            # the jq part only: what follows its input file is another command
            out.append(re.sub(r"\s*\|\|?\s*$", "", cur))
            cur = None
    return out


def from_help():
    text = subprocess.run([ctxprof, "--help"], capture_output=True, text=True).stdout
    text += subprocess.run([ctxprof, "convert", "--help"], capture_output=True, text=True).stdout
    # the examples, indented; not prose that begins with the word
    return [("--help", c) for c in commands(l for l in text.splitlines() if l.startswith("  "))]


def unroff(line):
    return line.replace("\\-", "-").replace("\\(aq", "'").replace("\\e", "\\").replace("\\(dq", '"')


def from_manpage():
    lines, found, block, in_examples = open(manpage, encoding="utf-8").read().splitlines(), [], [], False
    for line in lines:
        if line.startswith(".SH"):
            in_examples = line.strip() == ".SH EXAMPLES"
        if not in_examples:
            continue
        if line.startswith(".EX"):
            block = []
        elif line.startswith(".EE"):
            found += [("man page", c) for c in commands(block)]
        else:
            block.append(unroff(line))
    return found


def from_readme():
    found, block, code = [], [], False
    for line in open(readme, encoding="utf-8").read().splitlines():
        if line.startswith("```"):
            if code:
                found += [("README", c) for c in commands(block)]
            code, block = not code, []
        elif code:
            block.append(line)
    return found


recipes = from_help() + from_manpage() + from_readme()
verdict(len(recipes) >= 10, "%d jq recipes found: %d in --help, %d in the man page, %d in the README" % (
    len(recipes), sum(1 for w, _ in recipes if w == "--help"), sum(1 for w, _ in recipes if w == "man page"),
    sum(1 for w, _ in recipes if w == "README")))
for where, cmd in recipes:
    r = subprocess.run(["bash", "-c", cmd], cwd=workdir, capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "T": trace})
    ok = r.returncode == 0 and not r.stderr.strip()
    verdict(ok, "%s: %s: exit %d, %d lines out%s" % (
        where, cmd if len(cmd) < 160 else cmd[:157] + "...", r.returncode, len(r.stdout.splitlines()),
        (": " + r.stderr.strip().splitlines()[0]) if r.stderr.strip() else ""))
print("1..%d" % count)
sys.exit(1 if failed else 0)
