"""Every source file a reference doc names exists, so docs/ARCHITECTURE.md cannot drift
from the tree unnoticed.

    check_doc_paths.py --root REPO DOC [DOC ...]

A name in backquotes that ends like a source or doc file counts: with a folder it must
exist under one of the doc's bases (the repository, profiler/ and kernels/ with their
include/ folders, viewer/), bare it must
be the name of some file in the repository. Exit 1 names every one that does not.
"""
import argparse
import os
import re
import sys

SUFFIXES = (".cc", ".h", ".cu", ".cuh", ".md", ".py", ".sh", ".cmake")
BASES = ("", "profiler", "profiler/include", "profiler/src", "kernels", "kernels/include", "viewer")
SKIP = {"build", ".git"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("docs", nargs="+")
    a = ap.parse_args()
    names = set()
    for d, dirs, files in os.walk(a.root):
        dirs[:] = [x for x in dirs if x not in SKIP and not x.startswith("build")]
        names.update(files)
    missing, checked = [], 0
    for doc in a.docs:
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        for token in re.findall(r"`([^`\s]+)`", text):
            path = token.split("(")[0]
            if not path.endswith(SUFFIXES) or path.startswith(".") or "*" in path or "PATH" in path:
                continue
            checked += 1
            if "/" in path:
                ok = any(os.path.exists(os.path.join(a.root, b, path)) for b in BASES)
            else:
                ok = path in names
            if not ok:
                missing.append(f"{os.path.basename(doc)}: `{token}` names no file")
    for m in missing:
        print(m)
    print(f"{checked} file names checked, {len(missing)} missing")
    return 1 if missing or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
