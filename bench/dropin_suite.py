#!/usr/bin/env python3
"""The drop-in suite: whole malloc libraries judged by LD_PRELOAD (bench/README.md).

Runs a set of programs -- the C workloads of bench/dropin/ and real programs from Debian
(python3, perl, sqlite3, g++, redis-server) -- once per round under each allocator that
`strata allocators --paths` lists (glibc = nothing preloaded), every run a fresh process
started through dropin_launch (which reports the child's own peak RSS), and prints per
workload the median wall time, its paired ratios to glibc and to mimalloc, the median peak
RSS and its paired ratio to glibc; then a summary: per allocator the geometric mean of each
ratio over the workloads, the worst time ratio to the fastest peer (glibc, jemalloc,
mimalloc, tcmalloc) and the worst RSS ratio to glibc. A run that fails, times out, prints
the wrong output or did not get the preloaded malloc is an error in the table.

    bench/dropin_suite.py [--build DIR] [--allocators a,b] [--workloads a,b] [--rounds N]
                          [--quick] [--timeout S] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIDELITY = REPO / "bench" / "fidelity"
MIB = 1024.0 * 1024.0
PEERS = ("glibc", "jemalloc", "mimalloc", "tcmalloc")
TINY_REPEAT = 50
REDIS_TESTS = "set,get,lpush,lpop,sadd,hset"


# ---------------------------------------------------------------------------------------
# Workloads


def c_workload(name: str, what: str, full: list[str], quick: list[str], pattern: str,
               repeat: tuple[int, int] = (1, 1)) -> dict:
    """A bench/dropin program: dropin_<name> ARGS, checked by its result line and by the
    `malloc FILE` line it prints (which object defines malloc in it)."""
    return {"kind": "c", "program": "dropin_" + name, "what": what, "full": full,
            "quick": quick, "pattern": pattern, "repeat": repeat}


def workloads() -> dict[str, dict]:
    """Every workload of the suite by name, in the order the tables are printed."""
    w = {
        "large": c_workload("large", "64 KiB..32 MiB blocks: pool churn and realloc growth",
                            ["1500"], ["40"], r"large steps=\d+ chains=\d+ checksum="),
    }
    for t in (2, 4, 8):
        w[f"handoff-{t}"] = c_workload(
            "handoff", f"{t} threads hand batches round a ring; threads replaced every 40 batches",
            ["150000", str(t)], ["3000", str(t)], r"handoff batches=\d+ threads=\d+ checksum=")
    w.update({
        "larson": c_workload("larson", "larson server: 4 threads replace objects in shared slots",
                             ["15000000", "4"], ["200000", "4"], r"larson ops=\d+ threads=4 checksum="),
        "quiet-threads": c_workload("quiet_threads", "16 threads take turns: 10 MiB each, "
                                    "freed, then idle until all are done",
                                    ["10", "16"], ["1", "16"], r"quiet_threads mib=\d+ threads=16 checksum="),
        "tiny": c_workload("tiny", f"a tiny program (< 100 KiB of mallocs); time = "
                           f"{TINY_REPEAT} fresh executions", [], [],
                           r"tiny words=\d+ distinct=\d+ checksum=", repeat=(TINY_REPEAT, 5)),
        "compiler": c_workload("compiler", "compiler-like: node trees per function, symbol tables "
                               "grown by realloc, calloc'ed arrays", ["400"], ["10"],
                               r"compiler units=\d+ symbols=\d+ kept=\d+ checksum="),
        "calloc-sparse": c_workload("calloc_sparse", "20,000 callocs of 4..64 KiB, 64 bytes of "
                                    "each written, all live", ["20000"], ["500"],
                                    r"calloc_sparse count=\d+ checksum="),
        "python3": {"kind": "real", "what": "python3: dict/list/str work (fidelity/workload.py)",
                    "argv": ["/usr/bin/python3", str(FIDELITY / "workload.py")],
                    "quick_args": ["5000"], "pattern": r"python words=\d+ checksum=",
                    "probe": ["/usr/bin/python3", "-c", "pass"], "process": "python3"},
        "perl": {"kind": "real", "what": "perl: hash/array/string work (fidelity/workload.pl)",
                 "argv": ["/usr/bin/perl", str(FIDELITY / "workload.pl")],
                 "quick_args": ["5000"], "pattern": r"perl words=\d+ checksum=",
                 "probe": ["/usr/bin/perl", "-e", "1"], "process": "perl"},
        "sqlite3": {"kind": "real", "what": "sqlite3: 200,000 rows in memory, indexes, "
                    "grouping and joins (fidelity/workload.sql)",
                    "argv": ["/usr/bin/sqlite3", ":memory:", ".read " + str(FIDELITY / "workload.sql")],
                    "quick_args": [], "pattern": r"^\d+\|\d+",
                    "probe": ["/usr/bin/sqlite3", ":memory:", "select 1"], "process": "sqlite3"},
        "g++": {"kind": "gxx", "what": "g++ -O2 -c of a generated C++ file (std containers, "
                "templates); cc1plus under the preload", "process": "cc1plus"},
        "redis": {"kind": "redis", "what": "redis-server on loopback, driven by redis-benchmark "
                  f"(-t {REDIS_TESTS} -P 16); time = the benchmark's, RSS = the server's",
                  "process": "redis-server"},
    })
    return w


def gxx_source(path: Path, functions: int) -> None:
    """Writes the C++ file the g++ workload compiles: many standard headers and `functions`
    functions each instantiating map, unordered_map, set, deque, vector, sort, variant,
    function and streams for a type of its own (about 2.5 s at -O2 for 3)."""
    headers = ["algorithm", "map", "unordered_map", "vector", "string", "set", "deque", "list",
               "memory", "functional", "sstream", "iostream", "variant", "optional", "tuple",
               "numeric", "chrono", "random", "iomanip"]
    out = [f"#include <{h}>" for h in headers]
    for i in range(functions):
        out.append(f"""
struct Rec{i} {{ int id; std::string name; double w; std::vector<int> v;
  bool operator<(const Rec{i}& o) const {{ return std::tie(id, name) < std::tie(o.id, o.name); }} }};
std::string work{i}(int n) {{
  std::map<std::string, Rec{i}> m; std::unordered_map<int, std::vector<Rec{i}>> u;
  std::set<Rec{i}> s; std::deque<Rec{i}> d; std::ostringstream os;
  for (int k = 0; k < n; ++k) {{
    Rec{i} r{{k, std::to_string(k * {i + 3}), k * 0.5, {{k, k + 1}}}};
    m.emplace(r.name, r); u[k % 7].push_back(r); s.insert(r); d.push_front(r);
  }}
  std::vector<Rec{i}> all(s.begin(), s.end());
  std::sort(all.begin(), all.end(), [](const Rec{i}& a, const Rec{i}& b) {{ return a.w > b.w; }});
  std::variant<int, std::string, Rec{i}> var = all.empty() ? Rec{i}{{}} : all.front();
  std::visit([&](auto&& x) {{ os << sizeof(x); }}, var);
  std::function<int(int)> f = [&](int x) {{ return x + (int)m.size(); }};
  os << std::accumulate(all.begin(), all.end(), 0, [&](int a, const Rec{i}& r) {{ return a + f(r.id); }});
  return os.str();
}}""")
    calls = " ".join(f"r += work{i}(10);" for i in range(functions))
    out.append(f"int main() {{ std::string r; {calls} std::cout << r.size() << '\\n'; }}")
    path.write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------------
# Running one command


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


# ---------------------------------------------------------------------------------------
# Checking the preload


def malloc_owner_ok(owner: str, lib: str | None) -> bool:
    """Whether the file that defines malloc is the allocator's library (libc for glibc)."""
    base = os.path.basename(owner)
    return base.startswith("libc.so") if lib is None else base == os.path.basename(lib)


def check_c_output(stdout: str, pattern: str, repeat: int, lib: str | None) -> tuple[str, str]:
    """(result line, error) of a bench/dropin program's output: each of the `repeat` runs
    must print a line matching `pattern` and `malloc FILE` naming the preloaded library."""
    results = [l for l in stdout.splitlines() if re.match(pattern, l)]
    owners = [l[7:] for l in stdout.splitlines() if l.startswith("malloc ")]
    if len(results) != repeat or len(owners) != repeat:
        return "", f"expected output missing ({len(results)} of {repeat} result lines)"
    bad = [o for o in owners if not malloc_owner_ok(o, lib)]
    if bad:
        return "", "preload did not take: malloc came from " + bad[0]
    if len(set(results)) != 1:
        return "", "runs printed different results"
    return results[0], ""


def binding_probe(runner: Runner, argv: list[str], lib: str | None, process: str,
                  cwd: Path | None = None) -> str:
    """Runs `argv` once with the dynamic linker reporting its symbol bindings (LD_DEBUG,
    every symbol bound at start) and checks that in every process it started each binding
    of malloc, free, calloc and realloc goes to the allocator's library, and that a process
    of `process` (e.g. cc1plus under g++) was among them. Returns an error or ''.

    A binding to an executable (not a .so) is skipped: a non-PIE program that takes the
    address of malloc defines a PLT entry that libraries bind to, and that entry is itself
    bound, in the program's own line, to the library that really defines malloc."""
    logdir = Path(tempfile.mkdtemp(dir=runner.scratch))
    saved = dict(runner.env)
    runner.env.update(LD_DEBUG="bindings", LD_BIND_NOW="1", LD_DEBUG_OUTPUT=str(logdir / "ld"))
    try:
        r = runner.run(argv, lib, cwd=cwd)
    finally:
        runner.env = saved
    wanted = os.path.basename(lib) if lib else "libc.so.6"
    seen_process, bound, wrong = False, 0, ""
    sym = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol "
                     r"`(malloc|free|calloc|realloc)'")
    for f in logdir.iterdir():
        text = f.read_text(errors="replace")
        if "dropin_launch" in text:
            continue  # the launcher's own process, which is not preloaded
        for m in sym.finditer(text):
            if ".so" not in os.path.basename(m.group(2)):
                continue  # an executable's canonical PLT entry, itself bound to a library
            seen_process = seen_process or process in os.path.basename(m.group(1))
            bound += 1
            if os.path.basename(m.group(2)) != wanted and not wrong:
                wrong = f"{m.group(1)} gets {m.group(3)} from {m.group(2)}"
    shutil.rmtree(logdir, ignore_errors=True)
    if not r["ok"]:
        return "probe run failed: " + r["error"]
    if not seen_process:
        return f"no {process} process seen by the probe (LD_PRELOAD did not reach it?)"
    if wrong or bound == 0:
        return "preload did not take: " + (wrong or "no malloc binding seen")
    return ""


# ---------------------------------------------------------------------------------------
# Running one workload once


def run_c(runner: Runner, bindir: Path, w: dict, lib: str | None, quick: bool) -> dict:
    """One run of a bench/dropin program; checked by its output."""
    repeat = w["repeat"][1 if quick else 0]
    r = runner.run([str(bindir / w["program"]), *(w["quick"] if quick else w["full"])], lib,
                   repeat=repeat)
    if r["ok"]:
        r["result"], err = check_c_output(r.pop("stdout"), w["pattern"], repeat, lib)
        if err:
            r = {"ok": False, "error": err}
    return r


def run_real(runner: Runner, w: dict, lib: str | None, quick: bool) -> dict:
    """One run of a real program; checked by its output's first line."""
    r = runner.run(w["argv"] + (w["quick_args"] if quick else []), lib)
    if r["ok"]:
        out = r.pop("stdout").strip()
        if not re.search(w["pattern"], out, re.M):
            return {"ok": False, "error": "unexpected output: " + out[:80]}
        r["result"] = out
    return r


def run_gxx(runner: Runner, w: dict, lib: str | None, quick: bool) -> dict:
    """One g++ -O2 -c of the generated file (written once per suite run); checked by the
    object file it writes."""
    obj = runner.scratch / "gxx_tu.o"
    obj.unlink(missing_ok=True)
    r = runner.run(["g++", "-std=c++17", "-O2" if not quick else "-O0", "-c",
                    str(runner.scratch / "gxx_tu.cpp"), "-o", str(obj)], lib)
    if r["ok"]:
        r.pop("stdout")
        if not obj.exists() or obj.stat().st_size == 0:
            return {"ok": False, "error": "no object file written"}
        r["result"] = "object file written"
    return r


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


def run_once(runner: Runner, bindir: Path, w: dict, name: str, lib: str | None,
             quick: bool) -> dict:
    """One run of workload w under allocator `name` (library `lib`, None = nothing)."""
    kind = w["kind"]
    if kind == "c":
        return run_c(runner, bindir, w, lib, quick)
    if kind == "real":
        return run_real(runner, w, lib, quick)
    if kind == "gxx":
        return run_gxx(runner, w, lib, quick)
    return run_redis(runner, w, lib, name, quick)


# ---------------------------------------------------------------------------------------
# Statistics and tables


def paired(a: list[dict], base: list[dict], field: str) -> float | None:
    """Median over the rounds where both ran of a[round][field] / base[round][field]."""
    ratios = [x[field] / y[field] for x, y in zip(a, base) if x["ok"] and y["ok"] and y[field] > 0]
    return statistics.median(ratios) if ratios else None


def to_fastest_peer(samples: dict[str, list[dict]], name: str) -> float | None:
    """Median over the rounds of this allocator's time / the fastest peer's in that round."""
    peers = [p for p in PEERS if p in samples]
    ratios = []
    for i, s in enumerate(samples[name]):
        times = [samples[p][i]["wall"] for p in peers if samples[p][i]["ok"]]
        if s["ok"] and times:
            ratios.append(s["wall"] / min(times))
    return statistics.median(ratios) if ratios else None


def geomean(values: list[float | None]) -> float | None:
    """Geometric mean of the values present."""
    v = [x for x in values if x]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def fmt(x: float | None, spec: str = ".2f") -> str:
    """A number, or '-' when there is none."""
    return "-" if x is None else format(x, spec)


def mark_odd_results(samples: dict[str, list[dict]]) -> None:
    """Turns a successful run whose result differs from the majority's into an error: the
    programs are deterministic, so a different result means a different program ran."""
    results = [s["result"] for runs in samples.values() for s in runs if s["ok"]]
    if not results:
        return
    common = statistics.mode(results)
    for runs in samples.values():
        for s in runs:
            if s["ok"] and s["result"] != common:
                s.update(ok=False, error="result differs from the other runs: " + s["result"][:60])


def workload_table(name: str, w: dict, samples: dict[str, list[dict]]) -> dict:
    """Prints one workload's table and returns its figures per allocator."""
    print(f"\n{name} — {w['what']}")
    print(f"{'allocator':<16} {'time ms':>9} {'/glibc':>7} {'/mimalloc':>9} {'RSS MiB':>8} "
          f"{'RSS/glibc':>9}  status")
    rows = {}
    for a, runs in samples.items():
        ok = [s for s in runs if s["ok"]]
        errors = [s["error"] for s in runs if not s["ok"]]
        row = {"time_ms": statistics.median(s["wall"] for s in ok) * 1000 if ok else None,
               "rss_mib": statistics.median(s["rss"] for s in ok) / MIB if ok else None,
               "time_to_glibc": paired(runs, samples["glibc"], "wall") if "glibc" in samples else None,
               "time_to_mimalloc": paired(runs, samples["mimalloc"], "wall") if "mimalloc" in samples else None,
               "rss_to_glibc": paired(runs, samples["glibc"], "rss") if "glibc" in samples else None,
               "time_to_fastest_peer": to_fastest_peer(samples, a),
               "failed_runs": len(errors), "errors": errors}
        rows[a] = row
        status = "ok" if not errors else (f"ERROR in all {len(runs)} runs: " if not ok else
                                          f"ERROR in {len(errors)} runs: ") + errors[0]
        print(f"{a:<16} {fmt(row['time_ms'], '.1f'):>9} {fmt(row['time_to_glibc']):>7} "
              f"{fmt(row['time_to_mimalloc']):>9} {fmt(row['rss_mib'], '.1f'):>8} "
              f"{fmt(row['rss_to_glibc']):>9}  {status}")
    sys.stdout.flush()
    return rows


def summary(table: dict[str, dict], names: list[str]) -> dict:
    """Prints and returns, per allocator, the geometric means of the ratios over the
    workloads, the worst time ratio to the fastest peer and the worst RSS/glibc."""
    print(f"\nsummary — geometric mean over the {len(table)} workloads of the per-workload "
          "ratios; worst = the workload where the allocator does worst")
    print(f"{'allocator':<16} {'time/glibc':>10} {'time/mimalloc':>13} {'RSS/glibc':>9}  "
          f"{'worst time/fastest peer':<32} {'worst RSS/glibc':<28} errors")
    out = {}
    for a in names:
        rows = {w: t[a] for w, t in table.items() if a in t}
        worst_t = max(((r["time_to_fastest_peer"], w) for w, r in rows.items()
                       if r["time_to_fastest_peer"]), default=(None, "-"))
        worst_r = max(((r["rss_to_glibc"], w) for w, r in rows.items() if r["rss_to_glibc"]),
                      default=(None, "-"))
        failed = sum(r["failed_runs"] for r in rows.values())
        s = {"time_to_glibc": geomean([r["time_to_glibc"] for r in rows.values()]),
             "time_to_mimalloc": geomean([r["time_to_mimalloc"] for r in rows.values()]),
             "rss_to_glibc": geomean([r["rss_to_glibc"] for r in rows.values()]),
             "worst_time_to_fastest_peer": {"ratio": worst_t[0], "workload": worst_t[1]},
             "worst_rss_to_glibc": {"ratio": worst_r[0], "workload": worst_r[1]},
             "failed_runs": failed}
        out[a] = s
        print(f"{a:<16} {fmt(s['time_to_glibc']):>10} {fmt(s['time_to_mimalloc']):>13} "
              f"{fmt(s['rss_to_glibc']):>9}  {fmt(worst_t[0]) + ' ' + worst_t[1]:<32} "
              f"{fmt(worst_r[0]) + ' ' + worst_r[1]:<28} {failed or ''}")
    return out


# ---------------------------------------------------------------------------------------
# Driver


def allocators(strata: Path) -> dict[str, str | None]:
    """name -> library (None = nothing preloaded) from `strata allocators --paths`."""
    out = subprocess.run([str(strata), "allocators", "--paths"], capture_output=True,
                         text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        name, _, lib = line.partition("\t")
        if name:
            found[name] = lib or None
    return found


def libc_path(runner: Runner, bindir: Path) -> str:
    """The C library's path, as dladdr names it in a program with nothing preloaded."""
    r = runner.run([str(bindir / "dropin_tiny")], None)
    for line in (r.get("stdout") or "").splitlines():
        if line.startswith("malloc "):
            return line[7:]
    raise SystemExit("dropin_suite: cannot find the C library (dropin_tiny did not run)")


def preload_for(w: dict, name: str, lib: str | None, libc: str) -> str | None:
    """What to preload for this allocator on this workload. Nothing for glibc, except for
    redis: Debian's redis-server is linked with libjemalloc, so with nothing preloaded it
    runs on jemalloc; preloading libc.so.6 puts glibc's malloc first."""
    if name == "glibc" and w["kind"] == "redis":
        return libc
    return lib


def missing_tool(w: dict) -> str:
    """Why a workload cannot run here ('' if it can)."""
    need = {"real": [w.get("argv", [""])[0]], "gxx": ["g++"],
            "redis": ["redis-server", "redis-benchmark", "redis-cli"]}.get(w["kind"], [])
    for tool in need:
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    return ""


def probe_all(runner: Runner, w: dict, libs: dict[str, str | None], libc: str) -> dict[str, str]:
    """Per allocator: '' if its library took over malloc in this real program, else why
    not. The C programs report it themselves on every run."""
    argv = {"real": w.get("probe"), "gxx": ["g++", "-O0", "-c", str(runner.scratch / "probe.cpp"),
                                            "-o", str(runner.scratch / "probe.o")],
            "redis": ["redis-server", "--version"]}.get(w["kind"])
    if argv is None:
        return {}
    (runner.scratch / "probe.cpp").write_text("#include <string>\nstd::string f() { return \"x\"; }\n")
    return {a: binding_probe(runner, argv, preload_for(w, a, lib, libc), w["process"])
            for a, lib in libs.items()}


def run_workload(runner: Runner, bindir: Path, w: dict, libs: dict[str, str | None],
                 libc: str, rounds: int, quick: bool,
                 probe: dict[str, str]) -> dict[str, list[dict]]:
    """Every allocator once per round, the first one rotating; allocators whose preload
    probe (run by the caller: `probe`, allocator -> error or '') failed get that error
    instead of runs."""
    names = list(libs)
    samples: dict[str, list[dict]] = {a: [] for a in names}
    for rnd in range(rounds):
        for k in range(len(names)):
            a = names[(k + rnd) % len(names)]
            if probe.get(a):
                samples[a].append({"ok": False, "error": probe[a]})
                continue
            samples[a].append(run_once(runner, bindir, w, a, preload_for(w, a, libs[a], libc), quick))
    mark_odd_results(samples)
    return samples


def parse_args() -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="the CMake build directory (default build)")
    ap.add_argument("--allocators", default="", help="comma-separated (default: all available)")
    ap.add_argument("--workloads", default="", help="comma-separated (default: all)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 5; 2 with --quick)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per run (default 120)")
    ap.add_argument("--json", default="", help="write everything measured to this file")
    return ap.parse_args()


def select(wanted: str, known: dict, what: str) -> list[str]:
    """The comma-separated names asked for (all if none), or exit 2 on an unknown one."""
    names = [x for x in wanted.split(",") if x] or list(known)
    unknown = [x for x in names if x not in known]
    if unknown:
        print(f"dropin_suite: unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})",
              file=sys.stderr)
        sys.exit(2)
    return names


def main() -> int:
    """Runs the chosen workloads on the chosen allocators and prints the tables; exit
    status 1 if any run failed, 2 on bad usage or a missing build."""
    args = parse_args()
    build = Path(args.build).resolve()
    bindir = build / "bin"
    launcher = bindir / "dropin_launch"
    for need in (bindir / "strata", launcher):
        if not need.exists():
            print(f"dropin_suite: {need} not found; build the targets strata_cli, dropin_launch "
                  "and the dropin_* programs", file=sys.stderr)
            return 2
    rounds = args.rounds or (2 if args.quick else 5)
    available = allocators(bindir / "strata")
    libs = {a: available[a] for a in select(args.allocators, available, "allocator")}
    all_workloads = workloads()
    chosen = select(args.workloads, all_workloads, "workload")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dropin-") as tmp:
        runner = Runner(launcher, Path(tmp), args.timeout)
        libc = libc_path(runner, bindir)
        gxx_source(Path(tmp) / "gxx_tu.cpp", 1 if args.quick else 3)
        print(f"Drop-in suite: every run a fresh process under LD_PRELOAD; {rounds} rounds"
              f"{' (--quick: small sizes)' if args.quick else ''}; medians and paired ratios")
        for a, lib in libs.items():
            print(f"  {a:<16} {lib or '(nothing preloaded)'}")
        report = {"rounds": rounds, "quick": args.quick, "allocators": libs, "workloads": {}}
        table = {}
        for name in chosen:
            w = all_workloads[name]
            if w["kind"] == "c" and not (bindir / w["program"]).exists():
                print(f"\n{name}: skipped, {bindir / w['program']} not built")
                continue
            why = missing_tool(w)
            if why:
                print(f"\n{name}: skipped, {why}")
                continue
            probe = probe_all(runner, w, libs, libc)
            samples = run_workload(runner, bindir, w, libs, libc, rounds, args.quick, probe)
            table[name] = workload_table(name, w, samples)
            report["workloads"][name] = {
                "what": w["what"], "runs": samples, "figures": table[name],
                "preload_check": {a: probe.get(a) or ("ok" if probe else "reported by each run")
                                  for a in libs}}
        report["summary"] = summary(table, list(libs))
        report["seconds"] = time.monotonic() - start
        print(f"\n({report['seconds']:.0f} s)")
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1))
    failed = any(r["failed_runs"] for t in table.values() for r in t.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
