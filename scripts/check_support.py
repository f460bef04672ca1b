"""What flopline's Python checks and benchmarks share, defined once: reading a trace,
counting the GPUs a check may use, and running a command so that a run past its time
ends whole.

A command's process group is not all it starts: torchrun's ranks run in sessions of
their own, so killing the group a harness started leaves them running, and a rank
left behind (hung in a collective, or simply not told) keeps the GPU's performance
monitors, so that every later counted run on that GPU reports
CUPTI_ERROR_HARDWARE_BUSY. run_whole() kills every descendant, found through /proc,
whatever its session.

Imported by the GPU checks and the counters benchmarks (they put scripts/ on sys.path);
tested by tests/tools/test_check_support.py.
"""
import gzip
import json
import os
import signal
import subprocess


def read_trace(path):
    """A trace file's document as json.load gives it: a dict with traceEvents (flopline's
    and Kineto's files) or a bare list of events. Gzipped when the name ends in .gz."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f)


def trace_events(doc):
    """The events of a document read_trace() gave."""
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def visible_gpus():
    """How many GPUs a check may use: those nvidia-smi lists (0 without a driver), no more
    than CUDA_VISIBLE_DEVICES names where it is set."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        listed = sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
    except (OSError, subprocess.SubprocessError):
        return 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return listed
    return min(listed, len([d for d in visible.split(",") if d.strip()]))


def parents():
    """Each live process's parent, from /proc/<pid>/stat."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        # The name (field 2) is in parentheses and may hold spaces: split after it.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1:
            out[int(entry)] = int(fields[1])
    return out


def descendants(root):
    """Every live process below `root`, children first found first."""
    children = {}
    for pid, ppid in parents().items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(root):
    """SIGKILLs `root` and everything below it. Stops them first, so that none starts
    another process or is reparented between finding and killing."""
    seen = set()
    for _ in range(3):  # a process forked while the first round was stopping the rest
        tree = [p for p in [root] + descendants(root) if p not in seen]
        if not tree:
            break
        for pid in tree:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        seen.update(tree)
    for pid in seen:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run_whole(cmd, log, timeout, env=None):
    """Runs `cmd` with stdout and stderr into the open file `log`. Its exit status, or
    "timeout" when it ran past `timeout` seconds and everything it started was killed."""
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                         start_new_session=True)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(p.pid)
        p.wait()
        return "timeout"
