#!/usr/bin/env python3
"""`flopline start` and `flopline stop` (docs/CAPTURE.md, "On demand") against fake run
directories, without a GPU: this script writes what `flopline launch` and the recording
processes would (the `run` file, `proc-PID` files, answers in `acks`), with sleeping
child processes standing in for flopline launch and a rank.

Checked: the errors (no run, several live runs, an unknown id or pid, an ended run, a
run of another capture range, already started or stopped, too many arguments); the
command line written to `commands` (sequence number, verb, the sender's pid); each
process's answer printed; no answer within --wait; a command every process refused
(exit 1); the help of launch, start and stop.
"""
import os
import subprocess
import sys
import time

from cli_checker import Checker, script_args


def start_ticks(pid):
    """Field 22 of /proc/PID/stat, counted after the parenthesised name."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return int(text[text.rindex(")") + 2:].split()[19])


class FakeRun:
    def __init__(self, runs, run_id, how="launch", capture_range="ondemand", started=1):
        self.launcher = subprocess.Popen(["sleep", "300"])
        self.id = run_id
        self.dir = os.path.join(runs, run_id)
        os.makedirs(self.dir)
        with open(os.path.join(self.dir, "run"), "w") as f:
            f.write(f"id\t{run_id}\npid\t{self.launcher.pid}\n"
                    f"start ticks\t{start_ticks(self.launcher.pid)}\nhow\t{how}\n"
                    f"capture range\t{capture_range}\nstarted ns\t{started}\n"
                    f"command\tpython3 train.py\n")
        self.ranks = []

    def add_rank(self, rank):
        p = subprocess.Popen(["sleep", "300"])
        with open(os.path.join(self.dir, f"proc-{p.pid}"), "w") as f:
            f.write(f"{p.pid}\t{start_ticks(p.pid)}\t{rank}\n")
        self.ranks.append(p)
        return p.pid

    def commands(self):
        path = os.path.join(self.dir, "commands")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [line.rstrip("\n").split("\t") for line in f]

    def ack(self, pid, seq, result, detail):
        with open(os.path.join(self.dir, "acks"), "a") as f:
            f.write(f"{pid}\t{seq}\t{result}\t{detail}\n")

    def end(self):
        open(os.path.join(self.dir, "ended"), "w").close()

    def kill(self):
        for p in [self.launcher, *self.ranks]:
            p.kill()
            p.wait()


def flopline(binary, env, *args, timeout=60):
    r = subprocess.run([binary, *args], capture_output=True, text=True, env=env, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def answer_when_asked(run, seq, answers, timeout=10):
    """Plays the recording processes: waits for command `seq`, then answers it."""
    end = time.time() + timeout
    while time.time() < end:
        if any(c[0] == str(seq) for c in run.commands()):
            for pid, result, detail in answers:
                run.ack(pid, seq, result, detail)
            return True
        time.sleep(0.02)
    return False


def main():
    a, tmp = script_args(__doc__, "control_commands")
    c = Checker()
    runs = os.path.join(tmp, f"runs-{os.getpid()}")
    env = dict(os.environ, FLOPLINE_RUNS_DIR=runs)
    fl = a.flopline

    for cmd in ("launch", "start", "stop"):
        rc, out, _ = flopline(fl, env, cmd, "--help")
        c.check(rc == 0 and out.startswith(f"usage: flopline {cmd} "), f"{cmd} --help: {rc} {out[:80]!r}")
    rc, _, err = flopline(fl, env, "launch", "--capture-range=cudaProfilerApi", "--", "true")
    c.check(rc == 2 and "flopline run takes the other capture ranges" in err, f"launch range: {rc} {err!r}")
    rc, _, err = flopline(fl, env, "start", "a", "b")
    c.check(rc == 2 and "one run at a time" in err, f"two selectors: {rc} {err!r}")
    rc, _, err = flopline(fl, env, "stop", "--wait", "soon")
    c.check(rc == 2 and "--wait" in err, f"bad --wait: {rc} {err!r}")

    rc, _, err = flopline(fl, env, "start")
    c.check(rc == 1 and f"no flopline run or launch is running (none under {runs}" in err,
            f"no runs: {rc} {err!r}")

    fakes = []
    try:
        launch = FakeRun(runs, "18c0aa-1", started=2)
        fakes.append(launch)
        rank0 = launch.add_rank("0")
        rank1 = launch.add_rank("1")

        rc, _, err = flopline(fl, env, "stop")
        c.check(rc == 1 and "run 18c0aa-1 is already stopped (flopline launch waits for "
                "flopline start)" in err, f"stop before start: {rc} {err!r}")
        c.check(launch.commands() == [], f"a refused stop wrote {launch.commands()}")

        # The only live run, no selector: both ranks answer.
        p = subprocess.Popen([fl, "start", "--wait", "10"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        c.check(answer_when_asked(launch, 1, [(rank0, "applied", "window 1 opened"),
                                              (rank1, "applied", "window 1 opened")]),
                "flopline start wrote no command 1")
        out, err = p.communicate(timeout=30)
        c.check(p.returncode == 0, f"start: exit {p.returncode} {err!r}")
        cmds = launch.commands()
        c.check(len(cmds) == 1 and cmds[0][0] == "1" and cmds[0][1] == "start" and
                cmds[0][3] == str(p.pid) and int(cmds[0][2]) > 0, f"command line {cmds}")
        c.check(f"flopline start: run 18c0aa-1 (launch, pid {launch.launcher.pid}): recording on"
                in out, f"start output {out!r}")
        c.check(f"process {rank0} (rank 0): window 1 opened" in out and
                f"process {rank1} (rank 1): window 1 opened" in out, f"answers {out!r}")

        rc, _, err = flopline(fl, env, "start", "18c0aa-1")
        c.check(rc == 1 and "run 18c0aa-1 is already started; flopline stop first" in err,
                f"second start: {rc} {err!r}")

        # By a rank's pid; nobody answers within --wait.
        t0 = time.time()
        rc, out, err = flopline(fl, env, "stop", str(rank1), "--wait", "300ms")
        c.check(rc == 0 and f"process {rank0} (rank 0): no answer yet" in out,
                f"stop without answers: {rc} {out!r} {err!r}")
        c.check(time.time() - t0 < 10, f"--wait 300ms took {time.time() - t0:.1f} s")
        cmds = launch.commands()
        c.check(len(cmds) == 2 and cmds[1][:2] == ["2", "stop"], f"commands after stop {cmds}")

        # A start that every process refuses (the windows of --capture-range-end are used up).
        p = subprocess.Popen([fl, "start", str(launch.launcher.pid)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        answer_when_asked(launch, 3, [(rank0, "no more windows", "no more windows (stop)"),
                                      (rank1, "no more windows", "no more windows (stop)")])
        out, err = p.communicate(timeout=30)
        c.check(p.returncode == 1 and "no process of run 18c0aa-1 took the command" in err,
                f"refused start: {p.returncode} {out!r} {err!r}")

        # A second live run: no selector is ambiguous; a prefix and pids still work.
        plain = FakeRun(runs, "18c0bb-2", how="run", capture_range="none", started=3)
        fakes.append(plain)
        rc, _, err = flopline(fl, env, "stop")
        c.check(rc == 1 and "2 runs are live" in err and "18c0bb-2 (run, pid" in err,
                f"two live runs: {rc} {err!r}")
        rc, _, err = flopline(fl, env, "stop", "18c0")
        c.check(rc == 1 and "starts the ids of 2 runs" in err, f"ambiguous prefix: {rc} {err!r}")
        rc, out, err = flopline(fl, env, "start", "18c0bb")
        c.check(rc == 1 and "already started (flopline run records from the start)" in err,
                f"start a plain run: {rc} {err!r}")
        rc, out, err = flopline(fl, env, "stop", "18c0bb", "--wait", "0")
        c.check(rc == 0 and "no process of the run records yet" in out,
                f"stop a plain run with no process: {rc} {out!r} {err!r}")
        c.check([x[1] for x in plain.commands()] == ["stop"], f"plain run commands {plain.commands()}")

        api = FakeRun(runs, "18c0cc-3", how="run", capture_range="cudaProfilerApi", started=4)
        fakes.append(api)
        rc, _, err = flopline(fl, env, "start", "18c0cc-3")
        c.check(rc == 1 and "records cudaProfilerApi windows" in err, f"cudaProfilerApi run: {rc} {err!r}")
        c.check(api.commands() == [], "a refused command was written")

        rc, _, err = flopline(fl, env, "start", "999999999")
        c.check(rc == 1 and "no flopline run holds process 999999999" in err, f"unknown pid: {rc} {err!r}")
        rc, _, err = flopline(fl, env, "start", "nosuchrun")
        c.check(rc == 1 and "no run has the id 'nosuchrun'" in err, f"unknown id: {rc} {err!r}")

        # Ended: by the marker flopline launch leaves, and by its process being gone.
        plain.end()
        rc, _, err = flopline(fl, env, "start", "18c0bb-2")
        c.check(rc == 1 and "run 18c0bb-2 has ended" in err, f"ended run: {rc} {err!r}")
        launch.launcher.kill()
        launch.launcher.wait()
        rc, _, err = flopline(fl, env, "stop", str(rank0))
        c.check(rc == 1 and "run 18c0aa-1 has ended" in err, f"launcher gone: {rc} {err!r}")
    finally:
        for f in fakes:
            f.kill()

    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
