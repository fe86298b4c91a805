#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# hostile-inputs.py: writes the broken binaries and records of tests/hostile-input.sh, and a manifest of what each must get.
#
# Usage: hostile-inputs.py OUTDIR SCHEMA RECORDS BINARY...
# Prints one manifest line per case, and writes the records cases into
# OUTDIR (a broken binary is described, not written: 450 copies of two
# binaries would take a GiB):
#   records <tab> MUST <tab> NAME <tab> FILE
#   elf <tab> MUST <tab> NAME <tab> BINARY <tab> SIZE <tab> OFFSET:HEX
# An elf case is BINARY cut to SIZE bytes ("-": whole), with the bytes HEX
# written at OFFSET ("-": none).
# MUST: the front ends that must say the input is wrong, comma-separated
# ("check,addr2line,uprobe", "convert"), "-" when none must (a flipped bit
# a reader cannot tell from a real value; only no crash is asked), or "ok"
# (records the schema allows: convert must take them).
# Records are judged by the published schema (Debian's python3-jsonschema),
# not by what convert does: the two must agree.
import json
import os
import random
import struct
import sys

import jsonschema

ALL = "check,addr2line,uprobe"


class Elf:
    """The section and program headers of one ELF64 little-endian file."""

    def __init__(self, data):
        self.data = bytes(data)
        (self.phoff, self.shoff) = struct.unpack_from("<QQ", data, 0x20)
        (self.phentsize, self.phnum, self.shentsize, self.shnum,
         self.shstrndx) = struct.unpack_from("<HHHHH", data, 0x36)
        strtab = self.shdr(self.shstrndx)
        self.names = {}
        for i in range(self.shnum):
            name = self.shdr(i)[0]
            end = data.index(b"\0", strtab[4] + name)
            self.names[data[strtab[4] + name:end].decode()] = i

    def shdr(self, i):
        # name, type, flags, addr, offset, size, link, info, align, entsize
        return struct.unpack_from("<IIQQQQIIQQ", self.data, self.shoff + i * self.shentsize)

    def loads(self):
        """(type, offset, file size) of each PT_LOAD."""
        for i in range(self.phnum):
            t, _, off, _, _, filesz = struct.unpack_from("<IIQQQQ", self.data, self.phoff + i * self.phentsize)
            if t == 1:
                yield t, off, filesz

    def shdr_at(self, i):
        return self.shoff + i * self.shentsize

    def section(self, name):
        i = self.names.get(name)
        return None if i is None else self.shdr(i)


def put(data, at, fmt, value):
    """The patch that writes VALUE at AT: (size, offset, bytes)."""
    return None, at, struct.pack(fmt, value)


def flip(data, at, bit):
    return None, at, bytes([data[at] ^ (1 << bit)])


def cut(n):
    return n, None, b""


def elf_cases(tag, data, rnd):
    """(MUST, NAME, (size, offset, bytes)) for one Go binary."""
    e = Elf(data)
    size = len(data)
    # the bytes the headers describe: a file cut shorter is broken
    need = max([e.shoff + e.shnum * e.shentsize, e.phoff + e.phnum * e.phentsize] +
               [e.shdr(i)[4] + e.shdr(i)[5] for i in range(e.shnum) if e.shdr(i)[1] != 8] +
               [off + filesz for t, off, filesz in e.loads()])
    for n in sorted({0, 1, 4, 16, 52, 63, 64, 65, 120, 512, 4096, 65536, need - 1, size - 1} |
                    {size * k // 8 for k in range(1, 8)}):
        yield ALL if n < need else "-", f"{tag} truncated to {n} bytes", cut(n)
    yield ALL, f"{tag} section headers past EOF", put(data, 0x28, "<Q", size + 8)
    yield ALL, f"{tag} section headers at 2^63", put(data, 0x28, "<Q", 1 << 63)
    yield ALL, f"{tag} program headers past EOF", put(data, 0x20, "<Q", size)
    yield ALL, f"{tag} 65535 section headers", put(data, 0x3c, "<H", 0xffff)
    yield ALL, f"{tag} 65535 program headers", put(data, 0x38, "<H", 0xffff)
    yield ALL, f"{tag} section header size 16", put(data, 0x3a, "<H", 16)
    yield ALL, f"{tag} section name table index 65520", put(data, 0x3e, "<H", 0xfff0)
    shstr = e.section(".shstrtab")
    yield ALL, f"{tag} section name table past EOF", put(data, e.shdr_at(e.shstrndx) + 0x18, "<Q", size)
    yield ALL, f"{tag} .gopclntab's name past the name table", \
        put(data, e.shdr_at(e.names[".gopclntab"]), "<I", shstr[5] + 100)
    # sections every front end reads: past EOF, or running past it
    for name in (".gopclntab", ".go.buildinfo", ".text", ".noptrdata", ".rodata",
                 ".note.go.buildid", ".symtab", ".strtab", ".debug_info", ".debug_line"):
        if name not in e.names:
            continue
        at = e.shdr_at(e.names[name])
        yield ALL, f"{tag} {name} starts past EOF", put(data, at + 0x18, "<Q", size + 4096)
        yield ALL, f"{tag} {name} runs past EOF", put(data, at + 0x20, "<Q", size - e.shdr(e.names[name])[4] + 1)
        yield ALL, f"{tag} {name} of 2^64-1 bytes", put(data, at + 0x20, "<Q", (1 << 64) - 1)
    for i in range(min(e.phnum, 4)):
        at = e.phoff + i * e.phentsize
        if struct.unpack_from("<I", data, at)[0] != 1:  # PT_LOAD
            continue
        yield ALL, f"{tag} PT_LOAD {i} starts past EOF", put(data, at + 0x08, "<Q", size + 4096)
        off = struct.unpack_from("<Q", data, at + 0x08)[0]
        yield ALL, f"{tag} PT_LOAD {i} runs past EOF", put(data, at + 0x20, "<Q", size - off + 1)
    # .gopclntab: every header byte, one bit each; the magic, quantum,
    # pointer size, function count and table offsets must be refused; the
    # pad bytes, the file count and textStart (which the ELF header gives)
    # are not read
    pcln = e.section(".gopclntab")
    unread = {4, 5} | set(range(16, 24)) | (set(range(24, 32)) if data[pcln[4]] != 0xfa else set())
    for b in range(80):
        must = "check,addr2line" if b < 8 + 8 * (8 if data[pcln[4]] != 0xfa else 7) and b not in unread else "-"
        yield must, f"{tag} .gopclntab header byte {b} bit-flipped", \
            flip(data, pcln[4] + b, rnd.randrange(8))
    for k in range(40):
        at = rnd.randrange(80, pcln[5])
        yield "-", f"{tag} .gopclntab byte {at} bit-flipped", flip(data, pcln[4] + at, rnd.randrange(8))
    # .go.buildinfo: its 14-byte magic must be refused by check
    bi = e.section(".go.buildinfo")
    for b in range(48):
        must = "check" if b < 14 else "-"
        yield must, f"{tag} .go.buildinfo byte {b} bit-flipped", flip(data, bi[4] + b, rnd.randrange(8))


# wrong values for a field, and what they are
WRONG = [(None, "null"), (-1, "-1"), ("x", '"x"'), ([], "[]"), ({}, "{}"), (True, "true"),
         (1.5, "1.5")]


def field_paths(rec):
    """Paths of the fields of REC the schema names: top level, first label, first stack, frame and mapping."""
    for k in rec:
        yield (k,)
    for k in list(rec.get("labels") or {})[:1]:
        yield ("labels", k)
    if rec.get("stacks"):
        for k in rec["stacks"][0]:
            yield ("stacks", 0, k)
        if rec["stacks"][0].get("frames"):
            for k in rec["stacks"][0]["frames"][0]:
                yield ("stacks", 0, "frames", 0, k)
    if rec.get("mappings"):
        for k in rec["mappings"][0]:
            yield ("mappings", 0, k)


def edited(rec, path, value, delete=False):
    rec = json.loads(json.dumps(rec))
    parent = rec
    for p in path[:-1]:
        parent = parent[p]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return rec


def record_cases(records, validator):
    """(MUST, NAME, bytes): each field of each record deleted or given a wrong value."""
    for n, rec in enumerate(records):
        tag = f"record {n + 1} ({rec['origin']})"
        for path in field_paths(rec):
            where = ".".join(map(str, path))
            variants = [(edited(rec, path, None, True), "deleted")]
            variants += [(edited(rec, path, v, False), f"= {s}") for v, s in WRONG
                         if v != rec_get(rec, path)]
            for r, what in variants:
                must = "convert" if any(True for _ in validator.iter_errors(r)) or not whole(r) else "ok"
                yield must, f"{tag}: {where} {what}", (json.dumps(r) + "\n").encode()


def whole(rec):
    """The rules beyond the schema (man page, convert): the stacks' samples add
    up to the record's, and "truncated" names labels of the record."""
    return (sum(s["samples"] for s in rec["stacks"]) == rec["samples"] and
            all(k in rec["labels"] for k in rec["truncated"]))


def rec_get(rec, path):
    for p in path:
        rec = rec[p]
    return rec


def huge_cases(records):
    """(MUST, NAME, bytes): records too big, too deep, not JSON at all."""
    rec = records[0]
    big = 100 << 20
    yield "convert", "a 100 MiB comm", (json.dumps(dict(rec, comm="a" * big)) + "\n").encode()
    yield "convert", "a 100 MiB label value", \
        (json.dumps(dict(rec, labels={"k": "\\" * (big // 2)})) + "\n").encode()
    yield "ok", "a 900 KiB comm", (json.dumps(dict(rec, comm="c" * (900 << 10))) + "\n").encode()
    yield "ok", "a record of 100,000 stacks", \
        (json.dumps(dict(rec, samples=100000, stacks=[dict(rec["stacks"][0], samples=1)] * 100000))
         + "\n").encode()
    yield "ok", "labels with 10,000 keys", \
        (json.dumps(dict(rec, labels={f"k{i}": "v" for i in range(10000)})) + "\n").encode()
    yield "convert", "stacks whose samples do not add up to the record's", \
        (json.dumps(dict(rec, samples=rec["samples"] + 1)) + "\n").encode()
    yield "convert", "truncated naming no label", \
        (json.dumps(dict(rec, truncated=["no-such-label"])) + "\n").encode()
    yield "convert", "arrays nested 1,000,000 deep", b"[" * 1000000 + b"]" * 1000000 + b"\n"
    yield "convert", "1 MiB of NUL bytes", b"\0" * (1 << 20)
    yield "convert", "1 MiB of random bytes", random.Random(7).randbytes(1 << 20)
    yield "convert", "a record cut in the middle of a string", json.dumps(rec).encode()[:200]
    yield "convert", "invalid UTF-8 in comm", \
        json.dumps(dict(rec, comm="x")).encode().replace(b'"comm": "x"', b'"comm": "\xffx"') + b"\n"
    yield "convert", "a lone surrogate escape", \
        (json.dumps(dict(rec, comm="x")).replace('"comm": "x"', '"comm": "\\ud800"') + "\n").encode()
    yield "convert", "samples of 2^64", \
        (json.dumps(rec).replace(f'"samples": {rec["samples"]}', '"samples": 18446744073709551616', 1)
         + "\n").encode()
    yield "convert", "a JSON array, not a record", b"[1, 2, 3]\n"
    yield "convert", "a UTF-8 byte order mark before a record", b"\xef\xbb\xbf" + json.dumps(rec).encode() + b"\n"
    yield "ok", "a label key holding quotes, its value NUL", \
        (json.dumps(dict(rec, labels=dict(rec["labels"], **{'k"\\': 'v"\0\\'}))) + "\n").encode()
    yield "convert", "a label key holding NUL (written as U+FFFD)", \
        (json.dumps(dict(rec, labels=dict(rec["labels"], **{'k\0': 'v'}))) + "\n").encode()


def main():
    outdir, schema_path, records_path = sys.argv[1:4]
    binaries = sys.argv[4:]
    with open(schema_path) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    with open(records_path) as f:
        records = [json.loads(line) for line in f]
    # one record of each origin, the first of each
    seen, firsts = set(), []
    for r in records:
        if r["origin"] not in seen:
            seen.add(r["origin"])
            firsts.append(r)
    rnd = random.Random(20261126)
    n = 0

    def emit(must, name, data):
        nonlocal n
        n += 1
        path = os.path.join(outdir, f"{n:05d}.jsonl")
        with open(path, "wb") as f:
            f.write(data)
        print(f"records\t{must}\t{name}\t{path}")

    for b in binaries:
        with open(b, "rb") as f:
            data = f.read()
        tag = os.path.basename(os.path.dirname(os.path.dirname(b))) + "/" + os.path.basename(os.path.dirname(b))
        for must, name, (size, at, patch) in elf_cases(tag, data, rnd):
            print(f"elf\t{must}\t{name}\t{b}\t{'-' if size is None else size}\t"
                  f"{'-' if at is None else f'{at}:{patch.hex()}'}")
    for must, name, d in record_cases(firsts, validator):
        emit(must, name, d)
    for must, name, d in huge_cases(firsts):
        emit(must, name, d)


if __name__ == "__main__":
    main()
