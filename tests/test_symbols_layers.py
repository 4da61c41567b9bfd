#!/usr/bin/env python3
"""symbols/ in layers, calls one way (issue 34): measured as scripts/layout_check.py measures the
code (each C file compiled alone; A uses B when A refers to a symbol only B defines). The table
(storage) calls nothing above it; the loader's warning (loader.c) at most the table; the readers
call only the table, the loader and each other; units.c calls the readers and the table; the
lookups and open.c sit on top. No loop of files inside symbols/, and
every file of symbols/ has its layer here (a new file must be placed)."""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import harness  # noqa: E402
import layout_check  # noqa: E402

LAYERS = [
    ("table", {"table.c"}),
    ("loader", {"loader.c"}),
    ("stage", {"stage.c"}),
    ("readers", {"elf.c", "code.c", "symtab.c", "dwarf.c", "isolate.c", "rawdwarf.c", "rawscopes.c", "rawlines.c",
                 "aranges.c", "frames.c", "exidx.c", "leaf.c"}),
    ("units", {"units.c", "merge.c"}),
    ("lookups", {"lookup.c", "codemap.c", "demangle.c", "samename.c", "open.c"}),
]


def layer_of(path):
    name = os.path.basename(path)
    for k, (_, files) in enumerate(LAYERS):
        if name in files:
            return k
    return None


def main():
    files = sorted(os.path.join("symbols", f) for f in os.listdir(os.path.join(ROOT, "symbols")) if f.endswith(".c"))
    unplaced = [f for f in files if layer_of(f) is None]
    harness.check("every symbols/ file has a layer", not unplaced, " ".join(unplaced))
    with tempfile.TemporaryDirectory() as tmp:
        edges = layout_check.c_edges("cc", layout_check.HOST_FLAGS, files, tmp)
    loops = layout_check.loops(edges)
    harness.check("no loop of files inside symbols/", not loops, "; ".join(" ".join(c) for c in loops))
    upward = []
    for f, used in sorted(edges.items()):
        for g in sorted(used):
            lf, lg = layer_of(f), layer_of(g)
            if lf is not None and lg is not None and lg > lf:
                upward.append(f"{f} ({LAYERS[lf][0]}) -> {g} ({LAYERS[lg][0]})")
    harness.check("no call from a layer up into a higher one", not upward, "; ".join(upward))
    table_uses = sorted(edges.get("symbols/table.c", ()))
    harness.check("table.c calls no other file of symbols/", not table_uses, " ".join(table_uses))
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
