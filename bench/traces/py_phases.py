#!/usr/bin/env python3
"""An interpreter building and dropping large structures in phases, for bench/traces.

Run under PYTHONMALLOC=malloc, so that every Python object (not only the large ones pymalloc
passes on) is a malloc and free the recorder sees. Each phase builds a structure of a
different shape (dicts of strings, lists of lists, a binary tree of small objects, big joined
strings, bytearrays grown in place), then drops most of it while keeping a scattered
survivor set alive, so the next phase has to fit its objects around the survivors: the
pattern that leaves a heap holding much more than the program's live data.

Deterministic (seeded PRNG); prints one line `py_phases k=v ... checksum=N` at the end.
    PYTHONMALLOC=malloc /usr/bin/python3 bench/traces/py_phases.py [ROUNDS]
"""
import random
import sys

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
rng = random.Random(20261128)
survivors = []


def keep_some(items, every):
    """Keep every `every`-th item alive until the end: the holes between them fragment."""
    survivors.extend(items[::every])


def phase_dicts(n):
    """A dict of string keys to lists of short strings of random lengths."""
    d = {}
    for i in range(n):
        d["key-%d-%s" % (i, "x" * rng.randrange(1, 40))] = [
            "v" * rng.randrange(8, 200) for _ in range(rng.randrange(1, 6))]
    keep_some(list(d.values()), 97)
    return sum(len(v) for v in d.values())


def phase_lists(n):
    """Lists of lists of ints and floats, of growing then shrinking lengths."""
    outer = [[rng.random() for _ in range(rng.randrange(1, 64))] for _ in range(n)]
    for row in outer[::3]:
        del row[len(row) // 2:]
    keep_some(outer, 61)
    return sum(len(r) for r in outer)


class Node:
    __slots__ = ("key", "left", "right", "label")

    def __init__(self, key):
        self.key, self.left, self.right = key, None, None
        self.label = "n%d" % key


def phase_tree(n):
    """An unbalanced binary search tree of small objects, walked, then half unlinked."""
    root = Node(rng.randrange(1 << 30))
    nodes = [root]
    for _ in range(n):
        k, cur = rng.randrange(1 << 30), root
        while True:
            side = "left" if k < cur.key else "right"
            nxt = getattr(cur, side)
            if nxt is None:
                node = Node(k)
                setattr(cur, side, node)
                nodes.append(node)
                break
            cur = nxt
    total = sum(node.key & 0xFF for node in nodes)
    for node in nodes[1::2]:
        node.left = None
    keep_some(nodes, 211)
    return total


def phase_strings(n):
    """Big strings made by joins and slicing, a few of them kept."""
    parts = ["%08x" % rng.randrange(1 << 32) for _ in range(n)]
    big = []
    for i in range(0, n, 500):
        s = "-".join(parts[i:i + 500])
        big.append(s[rng.randrange(0, 64):])
    keep_some(big, 7)
    return sum(len(s) for s in big)


def phase_buffers(n):
    """bytearrays grown by appends (realloc) to random final sizes."""
    bufs = []
    for _ in range(n):
        b = bytearray()
        for _ in range(rng.randrange(1, 40)):
            b += bytes(rng.randrange(16, 600))
        bufs.append(b)
    keep_some(bufs, 13)
    return sum(len(b) for b in bufs)


def main():
    checksum = 0
    for rnd in range(ROUNDS):
        checksum += phase_dicts(10000)
        checksum += phase_lists(5000)
        checksum += phase_tree(10000)
        checksum += phase_strings(40000)
        checksum += phase_buffers(1500)
        # Drop a third of the survivors between rounds, so the next round's holes differ.
        del survivors[::3]
        checksum = (checksum + len(survivors) * (rnd + 1)) & 0xFFFFFFFF
    print("py_phases rounds=%d survivors=%d checksum=%d" % (ROUNDS, len(survivors), checksum))


main()
