"""Checking that a drop-in run got the preloaded malloc: the C programs' own report, and the
dynamic linker's bindings for the real programs."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from pylib.dropin_runner import Runner


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
