"""The drop-in suite's workloads (bench/dropin_suite.py): the bench/dropin programs, the real
programs from Debian, and the C++ file the g++ workload compiles."""
from __future__ import annotations

from pathlib import Path

FIDELITY = Path(__file__).resolve().parent.parent / "fidelity"
TINY_REPEAT = 50
REDIS_TESTS = "set,get,lpush,lpop,sadd,hset"


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
        "espresso": c_workload("espresso", "espresso-like logic minimizer: 8..200 B cubes, covers "
                               "grown by realloc, very many LIFO temporaries", ["1000"], ["15"],
                               r"espresso problems=\d+ cubes=\d+ kept=\d+ checksum="),
        "cfrac": c_workload("cfrac", "cfrac-like continued-fraction factoring: a new 16..128 B "
                            "bignum for every intermediate", ["600000"], ["8000"],
                            r"cfrac steps=\d+ full=\d+ partial=\d+ pairs=\d+ checksum="),
        "thread-churn": c_workload("thread_churn", "waves of 8 short-lived threads allocating "
                                   "16 B..64 KiB; a quarter handed to the next wave",
                                   ["1500", "8"], ["10", "8"],
                                   r"thread_churn waves=\d+ threads=8 handed=\d+ checksum="),
        "web-proxy": c_workload("web_proxy", "web proxy cache run live: 48 MiB of heavy-tailed "
                                "objects (200 B..1 MiB), one replaced per request",
                                ["400000", "48"], ["3000", "8"],
                                r"web_proxy steps=\d+ objects=\d+ live_end_kib=\d+ "
                                r"live_peak_kib=\d+ checksum="),
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
