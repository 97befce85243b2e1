#!/usr/bin/env python3
"""Prints the kernel modules to load, dependencies first, for the named modules.

Debian's linux-image packages ship no modules.dep (depmod runs in postinst) and the build host
may lack kmod, so the dependencies are read from each .ko's ".modinfo" ELF section
("depends=a,b"), the same field depmod itself reads.

Usage: modules.py MODULE_DIR NAME... -> one path per line, relative to MODULE_DIR.
"""
import os
import struct
import sys


def modinfo(path):
    """Returns the key=value pairs of a module's .modinfo section (ELF64 little-endian)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit(f"modules.py: {path}: not an ELF64 little-endian object")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def section(i):
        base = shoff + i * shentsize
        name, _type, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, base)
        return name, off, size
    _, stroff, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] == b".modinfo":
            fields = {}
            for entry in data[off:off + size].split(b"\0"):
                if b"=" in entry:
                    k, v = entry.decode(errors="replace").split("=", 1)
                    fields.setdefault(k, v)
            return fields
    return {}


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    root, wanted = sys.argv[1], sys.argv[2:]
    index = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            for ext in (".ko", ".ko.xz", ".ko.zst"):
                if f.endswith(ext):
                    # Module names use '_' where file names may use '-'.
                    index[f[: -len(ext)].replace("-", "_")] = os.path.join(dirpath, f)
    order, seen = [], set()

    def visit(name, chain):
        name = name.replace("-", "_")
        if name in seen:
            return
        if name in chain:
            raise SystemExit(f"modules.py: dependency cycle: {' -> '.join(chain + [name])}")
        path = index.get(name)
        if path is None:
            raise SystemExit(f"modules.py: module '{name}' not found under {root}"
                             f" (needed by {chain[-1] if chain else 'the command line'})")
        if not path.endswith(".ko"):
            raise SystemExit(f"modules.py: {path}: compressed modules are not supported")
        deps = [d for d in modinfo(path).get("depends", "").split(",") if d]
        for d in deps:
            visit(d, chain + [name])
        seen.add(name)
        order.append(os.path.relpath(path, root))

    for w in wanted:
        visit(w, [])
    print("\n".join(order))


if __name__ == "__main__":
    main()
