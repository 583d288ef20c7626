"""A Python workload for bench/fidelity.py: dict, list and string work (about a second).

Builds an index of generated words, sorts and groups records, joins and splits strings;
prints one deterministic checksum line. Argument: the size (default 150000 records).
"""
import sys


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150000
    state = 12345

    def rand() -> int:
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        return state >> 33

    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "xe", "zu"]
    records = []
    index: dict[str, list[int]] = {}
    for i in range(n):
        word = "".join(syllables[rand() % 10] for _ in range(2 + rand() % 4))
        rec = {"id": i, "word": word, "value": rand() % 1000, "tags": [word[:2], word[-2:]]}
        records.append(rec)
        index.setdefault(word, []).append(i)
    # Group, sort and summarise: the dicts and lists churn.
    groups = {w: sum(records[i]["value"] for i in ids) for w, ids in index.items()}
    top = sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    text = ",".join(f"{r['word']}:{r['value']}" for r in records[: n // 2])
    parts = text.split(",")
    lengths = {}
    for p in parts:
        lengths[len(p)] = lengths.get(len(p), 0) + 1
    del records[::2]
    checksum = 0
    for w, v in top:
        checksum = (checksum * 31 + v + len(w)) % (2**61 - 1)
    for k in sorted(lengths):
        checksum = (checksum * 31 + k * lengths[k]) % (2**61 - 1)
    checksum = (checksum * 31 + len(records) + len(index)) % (2**61 - 1)
    print(f"python words={len(index)} checksum={checksum:016x}")


main()
