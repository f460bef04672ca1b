"""Running a command so that a run past its time ends whole.

A command's process group is not all it starts: torchrun's ranks run in sessions of
their own, so killing the group a harness started leaves them running, and a rank
left behind (hung in a collective, or simply not told) keeps the GPU's performance
monitors, so that every later counted run on that GPU reports
CUPTI_ERROR_HARDWARE_BUSY. run_whole() kills every descendant, found through /proc,
whatever its session.

Used by the GPU checks (bench/counters_default_vs_all.py, tests/gpu/ranks/check_ranks.py,
tests/gpu/nccl/check_collectives.py); tested by tests/tools/test_process_tree.py.
"""
import os
import signal
import subprocess


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
