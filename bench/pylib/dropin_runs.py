"""One run of one drop-in workload under one allocator, checked by its output."""
from __future__ import annotations

import re
from pathlib import Path

from pylib.dropin_checks import check_c_output
from pylib.dropin_redis import run_redis
from pylib.dropin_runner import Runner


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
