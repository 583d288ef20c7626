"""Running one command of the drop-in suite through dropin_launch and reading its report."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


class Runner:
    """Runs commands through dropin_launch with a timeout; owns the scratch directory."""

    def __init__(self, launcher: Path, scratch: Path, timeout: float):
        """Runs go through `launcher`, keep their files in `scratch`, get `timeout` seconds;
        the environment is the caller's without its LD_PRELOAD (the launcher sets it)."""
        self.launcher, self.scratch, self.timeout = launcher, scratch, timeout
        self.env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

    def start(self, argv: list[str], preload: str | None, repeat: int = 1,
              cwd: Path | None = None) -> dict:
        """Starts `argv` (repeat times in a row) under the launcher in its own session; the
        returned handle names the files its report and output go to."""
        tag = f"{time.monotonic_ns()}"
        h = {"report": self.scratch / f"report.{tag}", "out": self.scratch / f"out.{tag}",
             "err": self.scratch / f"err.{tag}"}
        cmd = [str(self.launcher), str(h["report"]), str(repeat), preload or "-", *argv]
        with open(h["out"], "wb") as out, open(h["err"], "wb") as err:
            h["proc"] = subprocess.Popen(cmd, cwd=cwd or self.scratch, env=self.env,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         start_new_session=True)
        return h

    def finish(self, h: dict, timeout: float | None = None) -> dict:
        """Waits (os.wait4, polling) up to the timeout for a started command, killing its
        whole process group if it runs over; returns what the run gave."""
        proc = h["proc"]
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        status = None
        while status is None:
            pid, st, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                status = st
            elif time.monotonic() > deadline:
                kill_group(proc.pid)
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                self.cleanup(h)
                return {"ok": False, "error": f"timed out after {self.timeout:g} s"}
            else:
                time.sleep(0.005)
        proc.returncode = os.waitstatus_to_exitcode(status)
        result = read_report(h)
        self.cleanup(h)
        return result

    def run(self, argv: list[str], preload: str | None, repeat: int = 1,
            cwd: Path | None = None) -> dict:
        """Starts and waits for one command."""
        return self.finish(self.start(argv, preload, repeat, cwd))

    @staticmethod
    def cleanup(h: dict) -> None:
        """Removes a run's report and output files."""
        for key in ("report", "out", "err"):
            Path(h[key]).unlink(missing_ok=True)


def kill_group(pid: int) -> None:
    """SIGKILLs a session started by Runner.start (the launcher and all it started)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def read_report(h: dict) -> dict:
    """The launcher's report line and the run's stdout as a result: ok, wall seconds, peak
    RSS in bytes, stdout; or the reason the run failed."""
    stdout = Path(h["out"]).read_text(errors="replace")
    stderr = Path(h["err"]).read_text(errors="replace").strip()
    try:
        words = Path(h["report"]).read_text().split()
        rep = dict(zip(words[::2], words[1::2]))
        status = int(rep["status"])
    except (OSError, KeyError, ValueError):
        return {"ok": False, "error": "no report from dropin_launch " + stderr[-200:]}
    if status != 0:
        return {"ok": False, "error": describe_status(status) + (": " + stderr.splitlines()[-1]
                                                                  if stderr else "")}
    return {"ok": True, "wall": float(rep["wall_s"]), "rss": int(rep["maxrss_kib"]) * 1024,
            "stdout": stdout}


def describe_status(status: int) -> str:
    """'exit status 3' or 'killed by SIGSEGV' for a wait status."""
    if os.WIFSIGNALED(status):
        return "killed by " + signal.Signals(os.WTERMSIG(status)).name
    return f"exit status {os.WEXITSTATUS(status)}"
