"""No change to any figure unless meant: `flopline stats --json` of every bundled trace
(samples/traces) and every corpus trace, by name, by operator and by category, against
the outputs kept in tests/data/stats_golden.json.gz. Integers and strings must be equal;
other numbers equal to 1e-12 (compilers may round a division differently). The file
names in the output are left out (they depend on where the repository is). A corpus
that is not there is skipped, the bundled traces are still checked.

When a change is meant to change figures, regenerate the file and say why in the commit:
  python3 tests/cli/test_stats_golden.py --flopline build/profiler/flopline \\
      --corpus ../shared/corpus/traces --data tests/data --tmp /tmp --update
"""
import glob
import gzip
import json
import os
import subprocess
import sys

from cli_checker import Checker, corpus_present, script_args

GROUPINGS = ("name", "op", "category")
GOLDEN = "stats_golden.json.gz"


def traces(a):
    """(key prefix, path) of every trace checked: the bundled ones, then the corpus's."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(a.data)))
    out = [("samples/" + os.path.basename(p), p)
           for p in sorted(glob.glob(os.path.join(root, "samples", "traces", "*.json*")))]
    if corpus_present(a.corpus):
        out += [("corpus/" + os.path.basename(p), p)
                for p in sorted(glob.glob(os.path.join(a.corpus, "*.json*")))]
    return out


def stats(flopline, path, by):
    """What `flopline stats --json` says, without the file names; {"exit": N} when it
    fails (a trace with nothing of that grouping)."""
    r = subprocess.run([flopline, "stats", path, "--by", by, "--json"], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        return {"exit": r.returncode}
    out = json.loads(r.stdout)
    out.pop("files", None)
    return out


def differences(want, got, where, out, limit=8):
    """Paths where `got` differs from `want`, at most `limit`."""
    if len(out) >= limit:
        return
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got)):
            if k not in want or k not in got:
                out.append(f"{where}.{k}: {'missing' if k not in got else 'new'}")
            else:
                differences(want[k], got[k], f"{where}.{k}", out, limit)
    elif isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            out.append(f"{where}: {len(got)} entries, kept {len(want)}")
            return
        for i, (w, g) in enumerate(zip(want, got)):
            label = w.get("name", i) if isinstance(w, dict) else i
            differences(w, g, f"{where}[{label}]", out, limit)
    elif isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, (int, float)) or not isinstance(want, (int, float)) or \
                abs(got - want) > 1e-12 * max(abs(want), abs(got), 1e-300):
            out.append(f"{where}: {got!r}, kept {want!r}")
    elif want != got:
        out.append(f"{where}: {got!r}, kept {want!r}")


def main():
    update = "--update" in sys.argv
    if update:
        sys.argv.remove("--update")
    a, _ = script_args(__doc__, "stats_golden")
    golden_path = os.path.join(a.data, GOLDEN)
    now = {f"{key}|{by}": stats(a.flopline, path, by)
           for key, path in traces(a) for by in GROUPINGS}
    if update:
        with gzip.open(golden_path, "wt") as f:
            json.dump(now, f, sort_keys=True, separators=(",", ":"))
        print(f"wrote {golden_path}: {len(now)} outputs")
        return 0
    with gzip.open(golden_path, "rt") as f:
        kept = json.load(f)
    c = Checker()
    for name, got in now.items():
        if name not in kept:
            c.check(False, f"{name}: no kept output (a new trace? run with --update)")
            continue
        diffs = []
        differences(kept[name], got, name, diffs)
        c.check(not diffs, "\n  ".join([f"{name} changed:"] + diffs))
    if not corpus_present(a.corpus):
        print(f"corpus not found at {a.corpus}: only the bundled traces were compared")
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
