#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# parked-callers.py: do wall stacks parked at a stack-growth check name the true caller? Checked against the machine code.
#
# Usage: parked-callers.py OBJDUMP.txt RECORDS.jsonl PID
# OBJDUMP.txt is `go tool objdump` of the target's binary (any build of
# the same code: a stripped twin has the same text). A goroutine stopped by
# the check at a function's entry resumes after that function's call to
# runtime.morestack*, so its leaf's address (one byte back) lies in that
# call. Its caller is true when the next frame's address lies in a call
# instruction whose target is the leaf's function, or in an indirect call
# (a closure's, through a register), which may be. Prints
# "PARKED|TRUE|EXAMPLE": wall samples parked so, those whose caller is
# true, and the commonest stack that is not.
import bisect
import collections
import json
import re
import sys

INDIRECT = '(indirect)'
CALL = re.compile(r'^\s*\S+\s+0x([0-9a-f]+)\s+([0-9a-f]+)\s+(?:CALL|BL)\s+(\S+)')


def calls(path):
    starts, rows = [], []
    with open(path, errors='replace') as f:
        for line in f:
            m = CALL.match(line)
            if not m:
                continue
            start = int(m.group(1), 16)
            # an operand without (SB) names no function: an indirect call
            target = (re.sub(r'(\.abi0)?\(SB\)$', '', m.group(3))
                      if m.group(3).endswith('(SB)') else INDIRECT)
            rows.append((start, start + len(m.group(2)) // 2, target))
    rows.sort()
    starts = [r[0] for r in rows]
    return starts, rows


def call_at(table, addr):
    starts, rows = table
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and rows[i][0] <= addr < rows[i][1]:
        return rows[i][2]
    return None


def main():
    table = calls(sys.argv[1])
    pid = int(sys.argv[3])
    parked = true = 0
    wrong = collections.Counter()
    with open(sys.argv[2]) as f:
        for line in f:
            r = json.loads(line)
            if r.get('origin') != 'wall' or r.get('pid') != pid:
                continue
            for st in r['stacks']:
                fr = st['frames']
                if not fr or 'addr' not in fr[0]:
                    continue
                leaf = int(fr[0]['addr'], 16)
                target = call_at(table, leaf)
                if not target or not target.startswith('runtime.morestack'):
                    continue
                parked += st['samples']
                # the leaf's own function: the last frame at its address
                i = 0
                while i + 1 < len(fr) and fr[i + 1].get('addr') == fr[0]['addr']:
                    i += 1
                callee = fr[i]['func']
                nxt = fr[i + 1] if i + 1 < len(fr) else None
                if nxt and 'addr' in nxt and call_at(table, int(nxt['addr'], 16)) in (callee, INDIRECT):
                    true += st['samples']
                else:
                    wrong[' < '.join(x['func'] for x in fr[:4])] += st['samples']
    example = wrong.most_common(1)[0][0] if wrong else ''
    print(f'{parked}|{true}|{example}')


if __name__ == '__main__':
    main()
