#!/usr/bin/env python3
"""Unpacks a ttar text archive (the fixture format of prometheus/procfs) into a directory.

Usage: ttar.py ARCHIVE DEST

Drops the first path component ("fixtures/sys/class/..." -> DEST/sys/class/...), as the C++
unpacker in tests/support/fixtures.cpp does, so scripts (integration tests, benchmarks) can use
the same fixture trees without building fabscope. Exits 1 naming the archive line on bad input.
"""
import os
import sys


def fail(archive, lineno, why):
    sys.exit(f"ttar.py: {archive}:{lineno}: {why}")


def target(dest, path, archive, lineno):
    parts = path.split("/", 1)
    if len(parts) < 2 or not parts[1] or ".." in parts[1].split("/"):
        fail(archive, lineno, f"path outside the archive root: {path!r}")
    return os.path.join(dest, parts[1])


def unpack(archive, dest):
    with open(archive, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    i = 0
    path = None
    while i < len(lines):
        line = lines[i]
        n = i + 1
        i += 1
        if line == "" or line.startswith("# ttar"):
            path = None
        elif line.startswith("Directory: "):
            os.makedirs(target(dest, line[len("Directory: "):], archive, n), exist_ok=True)
        elif line.startswith("Path: "):
            path = target(dest, line[len("Path: "):], archive, n)
        elif line.startswith("SymlinkTo: "):
            if path is None:
                fail(archive, n, "SymlinkTo without Path")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.lexists(path):
                os.remove(path)
            os.symlink(line[len("SymlinkTo: "):], path)
        elif line.startswith("Lines: "):
            if path is None:
                fail(archive, n, "Lines without Path")
            try:
                count = int(line[len("Lines: "):])
            except ValueError:
                fail(archive, n, f"not a line count: {line!r}")
            if count < 0 or i + count > len(lines):
                fail(archive, n, f"line count past the end: {count}")
            body = lines[i:i + count]
            i += count
            text = "".join(l.replace("NULLBYTE", "\0") + "\n" for l in body)
            if text.endswith("EOF\n"):
                text = text[:-4]  # "EOF" marks a file without a final newline
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
                out.write(text)
        elif line.startswith("Mode: "):
            if path is not None and os.path.isfile(path) and not os.path.islink(path):
                os.chmod(path, int(line[len("Mode: "):], 8))
        else:
            fail(archive, n, f"unexpected line: {line[:60]!r}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    unpack(sys.argv[1], sys.argv[2])
