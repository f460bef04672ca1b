"""What the command-line test scripts share: the arguments CMake passes them, and a
checker that counts and reports failures without stopping at the first one."""
import argparse
import os


def script_args(description, name):
    """(the parsed --flopline/--corpus/--data/--tmp, this script's own scratch folder)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    tmp = os.path.join(a.tmp, name)
    os.makedirs(tmp, exist_ok=True)
    return a, tmp


SKIP = 77  # ctest's SKIP_RETURN_CODE for these scripts


def corpus_present(corpus):
    """Whether the corpus of other tools' traces is there (a clone without ../shared
    has none): the scripts that read it exit SKIP, saying where they looked."""
    return os.path.isfile(os.path.join(corpus, "SOURCES.md"))


def require_corpus(corpus):
    if not corpus_present(corpus):
        print(f"skipped: no corpus at {corpus} (configure with -DFLOPLINE_CORPUS_DIR=DIR)")
        raise SystemExit(SKIP)


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what, flush=True)
        return cond
