# Python workload for real_programs.sh: builds and drops dicts, lists, strings and JSON from a
# seeded generator and prints digests of the results, so that two runs on different
# allocators must print exactly the same lines. Run with PYTHONMALLOC=malloc so that every
# object goes through the allocator under test, not only pymalloc's arenas.
import hashlib
import json
import random


def make_record(rng, depth):
    """A nested dict of random strings, numbers, lists and sub-records."""
    rec = {
        "id": rng.randrange(1 << 40),
        "name": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ")
                        for _ in range(rng.randrange(1, 60))),
        "score": round(rng.random() * 1000, 6),
        "tags": [f"t{rng.randrange(1000)}" for _ in range(rng.randrange(8))],
        "blob": "x" * rng.randrange(0, 4000 if rng.random() < 0.05 else 100),
    }
    if depth > 0:
        rec["children"] = [make_record(rng, depth - 1) for _ in range(rng.randrange(4))]
    return rec


def main():
    rng = random.Random(20261121)
    digest = hashlib.sha256()
    # Rounds of build / serialise / parse / drop, keeping a sliding window of live data.
    window = []
    for rnd in range(6):
        data = [make_record(rng, 3) for _ in range(400)]
        text = json.dumps(data, sort_keys=True)
        back = json.loads(text)
        assert back == data
        digest.update(text.encode())
        window.append(back)
        if len(window) > 3:
            window.pop(0)
        # Dicts: word counts over the generated names, then a big dict dropped at once.
        counts = {}
        for rec in data:
            for word in rec["name"].split():
                counts[word] = counts.get(word, 0) + 1
        big = {i: str(i) * (i % 7) for i in range(50000)}
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        print(f"round {rnd}: {len(text)} bytes of JSON, {len(counts)} words, top {top}, {len(big)}")
        del big
        # Strings: joins, splits, replaces and formatting of growing size.
        s = "|".join(f"{rec['id']:x}:{rec['score']:.3f}" for rec in data)
        s = s.replace("|", "\n").upper()
        digest.update(hashlib.md5(s.encode()).digest())
    print("live window records:", sum(len(w) for w in window))
    print("sha256:", digest.hexdigest())


main()
