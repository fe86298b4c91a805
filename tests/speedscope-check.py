#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# speedscope-check.py: a `convert --speedscope` file against speedscope's own schema and against the JSON lines it came from.
#
# Usage: speedscope-check.py SCHEMA FILE RECORDS.jsonl NAMES_OUT MAX_TRACES
# Prints TAP verdicts; writes to NAMES_OUT the profile names the file must
# have, in order, computed from the records alone (for the check in
# speedscope itself).
import json
import sys

import jsonschema

schema_file, file, jsonl, names_out, max_traces = sys.argv[1:6]
max_traces = int(max_traces)
failed = 0


def verdict(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + what)
    failed |= not cond


doc = json.load(open(file, encoding="utf-8"))
schema = json.load(open(schema_file, encoding="utf-8"))
errors = list(jsonschema.Draft7Validator(schema).iter_errors(doc))
verdict(not errors, "speedscope file: valid against speedscope's file-format-schema.json (draft-07)"
        + (": " + errors[0].message[:200] if errors else ""))

# the records, per trace: CPU and wall time, allocated bytes (--alloc), samples, and how many carry their time
INHERITED = "inherited, request ended"
traces = {}
order = []
for line in open(jsonl, encoding="utf-8"):
    if not line.strip():
        continue
    r = json.loads(line)
    if r["origin"] not in ("sampling", "wall", "alloc"):
        continue
    # time a goroutine spent after its request ended is no trace's: a profile of its own
    key = r["trace_id"] if r["trace_id"] is not None or not r.get("inherited_trace_id") else INHERITED
    t = traces.get(key)
    if t is None:
        t = traces[key] = {"cpu": 0, "wall": 0, "alloc": 0, "first": r["start"], "cpu_samples": 0, "cpu_timed": 0,
                           "allocators": set()}
        order.append(key)
    t["first"] = min(t["first"], r["start"])
    if r["origin"] == "sampling":
        t["cpu"] += r["cpu_ns"]
        t["cpu_samples"] += r["samples"]
        t["cpu_timed"] += sum(len(s.get("times_us", [])) for s in r["stacks"])
    elif r["origin"] == "alloc":
        t["alloc"] += r["alloc_bytes"]
        # the function each stack starts at: an allocation profile's leaves
        t["allocators"] |= {s["frames"][0]["func"] for s in r["stacks"] if s["frames"]}
    else:
        t["wall"] += r["wall_ns"]


def name(tid):
    return tid if tid is not None else "no trace ID"


# the costliest traces (CPU plus wall time); among equals, the most allocated bytes, then the earliest
ranked = sorted(order, key=lambda k: (-(traces[k]["cpu"] + traces[k]["wall"]), -traces[k]["alloc"], traces[k]["first"],
                                      order.index(k)))
want = {}
names = []
allocators = {}
KINDS = (("cpu", "CPU"), ("wall", "goroutine time"), ("alloc", "allocated bytes"))
for kind, what in KINDS:
    total = sum(t[kind] for t in traces.values())
    if total:
        names.append("whole run · " + what)
        want[names[-1]] = total
for k in ranked[:max_traces]:
    for kind, what in KINDS:
        if traces[k][kind]:
            names.append(name(k) + " · " + what)
            want[names[-1]] = traces[k][kind]
    allocators[name(k) + " · allocated bytes"] = traces[k]["allocators"]
json.dump(names, open(names_out, "w", encoding="utf-8"))

got = [p["name"] for p in doc["profiles"]]
verdict(got == names, "speedscope file: %d profiles, named and ordered as the records' traces rank (%s)"
        % (len(got), "; ".join(got[:3]) + ("; …" if len(got) > 3 else "")))

frames = doc["shared"]["frames"]


def evented_total(p):
    """Nanoseconds under the root, and whether every close matches the open frame on top."""
    stack, total, start, last, nested = [], 0, None, None, True
    for e in p["events"]:
        if last is not None and e["at"] < last:
            nested = False
        last = e["at"]
        if e["type"] == "O":
            if not stack:
                start = e["at"]
            stack.append(e["frame"])
        else:
            if not stack or stack[-1] != e["frame"]:
                nested = False
                break
            stack.pop()
            if not stack:
                total += e["at"] - start
    return total, nested and not stack


for p in doc["profiles"]:
    if p["name"] not in want:
        continue
    if p["type"] == "evented":
        total, nested = evented_total(p)
        verdict(nested, "speedscope file: %s: events in time order, each closing the frame it opened" % p["name"])
    else:
        total = sum(p["weights"])
        leaves = {frames[s[-1]]["name"].startswith("[") for s in p["samples"] if s}
        if "goroutine time" in p["name"]:
            verdict(leaves == {True}, "speedscope file: %s: every sample ends in its wait, [chan receive]" % p["name"])
    unit = "bytes" if p["name"].endswith(" · allocated bytes") else "nanoseconds"
    verdict(total == want[p["name"]] and p["unit"] == unit, "speedscope file: %s: %d %s in all, the records' %d"
            % (p["name"], total, p["unit"], want[p["name"]]))
    if p["name"] in allocators:
        leaves = {frames[s[-1]]["name"] for s in p["samples"] if s}
        verdict(leaves == allocators[p["name"]], "speedscope file: %s: each sample's leaf its allocating function (%s)"
                % (p["name"], ", ".join(sorted(leaves))))
    if p["name"].endswith(" · CPU") and not p["name"].startswith("whole run"):
        t = traces[None if p["name"].startswith("no trace ID") else INHERITED if p["name"].startswith(INHERITED)
                   else p["name"].split(" ")[0]]
        timed = t["cpu_timed"] == t["cpu_samples"]
        verdict((p["type"] == "evented") == timed, "speedscope file: %s is %s: %d of %d samples have their time"
                % (p["name"], p["type"], t["cpu_timed"], t["cpu_samples"]))
sys.exit(1 if failed else 0)
