#!/usr/bin/env python3
"""scripts/layout_check.py on the trees of tests/layout_fixtures/: each hides a loop of files (or a
long function) in its own way, and the checker must name it and fail; the clean tree must pass.
Prints one ok/FAIL line per tree."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

FIXTURES = os.path.join(HERE, "layout_fixtures")
# tree: (what hides the problem, the line the checker must print; None: it must pass)
EXPECTED = {
    "weak": ("a weak reference", "loop: firmware/fx_a.c firmware/fx_b.c"),
    "alias": ("an alias of a file's static data", "loop: app/fx_a.c app/fx_b.c"),
    "inline": ("a header's static inline function", "loop: profile/fx_grow.c profile/fx_user.c"),
    "config": ("the firmware's histogram build only", "loop: firmware/fx_a.c firmware/fx_b.c   (firmware, histogram"),
    "importlib": ("importlib, between tests/ and scripts/", "loop: scripts/fx_beta.py tests/fx_alpha.py"),
    "struct_length": ("a function returning a struct, 165 lines", "over:  165 report/fx_long.c:6 fx_long"),
    "base": ("a base header that includes a project header", 'base: base/fx_grow.h includes "../app/fx_b.h"'),
    "clean": ("nothing: uses one way only, and a base header", None),
}


def run(tree, env=None):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "layout_check.py"), "--root",
                        os.path.join(FIXTURES, tree), "--allow-loops", "0", "--max-lines", "150"],
                       capture_output=True, text=True, env=env)
    return r, [s.strip() for s in r.stdout.splitlines() if s.strip().startswith(("loop:", "over:", "base:"))]


def main():
    trees = sorted(d for d in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, d)))
    check("every fixture tree has an expectation", set(trees) == set(EXPECTED), str(trees))
    for tree in trees:
        how, line = EXPECTED.get(tree, ("?", "?"))
        r, said = run(tree)
        if line is None:
            check("layout_check passes %s (%s)" % (tree, how), r.returncode == 0 and not said,
                  "exit %d: %s %s" % (r.returncode, said, r.stderr.strip()[-300:]))
        else:
            check("layout_check fails %s: %s" % (tree, how),
                  r.returncode == 1 and any(s.startswith(line.strip()) for s in said),
                  "exit %d: %s %s" % (r.returncode, said, r.stderr.strip()[-300:]))
    # without universal-ctags, the scan that replaces it must see the same long function
    r, said = run("struct_length", dict(os.environ, LAYOUT_NO_CTAGS="1"))
    check("layout_check without ctags fails struct_length too", r.returncode == 1 and "by scan" in r.stdout and
          any(s.startswith(EXPECTED["struct_length"][1]) for s in said), "exit %d: %s" % (r.returncode, said))
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
