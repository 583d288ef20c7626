"""The redis workload of the drop-in suite: a server under the preload, driven by
redis-benchmark over loopback."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from pylib.dropin_runner import Runner, kill_group
from pylib.dropin_workloads import REDIS_TESTS


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_call(port: int, *args: str, timeout: float = 10) -> str:
    """One redis-cli command against the server; its output ('' on failure)."""
    try:
        return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                              text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return ""


def wait_for_redis(port: int, seconds: float = 15) -> bool:
    """Waits until the server answers PING."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if redis_call(port, "ping", timeout=2).strip() == "PONG":
            return True
        time.sleep(0.05)
    return False


def redis_takeover(info: str, name: str) -> str:
    """Checks from INFO memory that the preload took over the server's malloc. Debian's
    redis-server is linked with libjemalloc.so.2 and asks jemalloc (mallctl) for its
    statistics: jemalloc's allocator_allocated is about used_memory when jemalloc does the
    allocating, and a few KiB when another library took malloc over. '' or an error."""
    fields = dict(l.split(":", 1) for l in info.splitlines() if ":" in l)
    try:
        used = int(fields["used_memory"])
        jem = int(fields["allocator_allocated"])
    except (KeyError, ValueError):
        return "INFO memory unreadable"
    if name == "jemalloc":
        return "" if jem > used / 2 else "jemalloc is not allocating"
    return "" if jem < used / 10 else f"jemalloc still allocates ({jem} of {used} bytes)"


def run_redis(runner: Runner, w: dict, lib: str | None, name: str, quick: bool) -> dict:
    """One redis run: the server started under the preload, redis-benchmark timed against
    it, a SET/GET checked, the takeover checked, the server shut down; the peak RSS is the
    server's. The server is killed whatever happens."""
    port = free_port()
    data = Path(tempfile.mkdtemp(dir=runner.scratch))
    server = runner.start(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                           "--save", "", "--appendonly", "no", "--dir", str(data)], lib)
    try:
        if not wait_for_redis(port):
            return {"ok": False, "error": "redis-server did not answer"}
        bench = ["redis-benchmark", "-p", str(port), "-n", "5000" if quick else "200000",
                 "-c", "50", "-d", "256", "-P", "16", "-r", "100000", "-t", REDIS_TESTS, "-q"]
        start = time.perf_counter()
        done = subprocess.run(bench, capture_output=True, text=True, timeout=runner.timeout)
        wall = time.perf_counter() - start
        lines = [l for l in done.stdout.replace("\r", "\n").splitlines() if "requests per second" in l]
        if done.returncode != 0 or len(lines) != len(REDIS_TESTS.split(",")):
            return {"ok": False, "error": f"redis-benchmark failed (exit {done.returncode})"}
        redis_call(port, "set", "dropin:check", "value-123")
        if redis_call(port, "get", "dropin:check").strip() != "value-123":
            return {"ok": False, "error": "SET/GET check failed"}
        info = redis_call(port, "info", "memory")
        takeover = redis_takeover(info, name)
        if takeover:
            return {"ok": False, "error": "preload did not take: " + takeover}
        memory = {k: v.strip() for k, v in (l.split(":", 1) for l in info.splitlines() if ":" in l)
                  if k in ("used_memory", "allocator_allocated", "mem_allocator")}
        redis_call(port, "shutdown", "nosave")
        r = runner.finish(server, timeout=30)
        if r["ok"]:
            r.pop("stdout")
            r.update(wall=wall, result="benchmark done", info_memory=memory)
        return r
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"redis-benchmark timed out after {runner.timeout:g} s"}
    finally:
        if server["proc"].returncode is None:
            kill_group(server["proc"].pid)
            os.wait4(server["proc"].pid, 0)
            server["proc"].returncode = -9
            runner.cleanup(server)
        shutil.rmtree(data, ignore_errors=True)
