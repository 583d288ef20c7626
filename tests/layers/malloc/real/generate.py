# Input generator for real_programs.sh. Deterministic: the same arguments always write the
# same bytes, so runs on two allocators see identical inputs.
#
#   generate.py c OUT.c          a C program of a few thousand lines (tables, structs, qsort,
#                                string hashing, a small interpreter) that prints its results
#   generate.py tree DIR         ~200 text files in nested directories
#   generate.py tree-edit DIR    edits that tree: changes some files, deletes some, adds some
#   generate.py sql OUT.sql      an SQLite workload: tables, ~20k rows inserted in
#                                transactions, indexes, joins, group by, printed results
import os
import random
import sys

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega heap layer arena chunk page span slab").split()


def gen_c(path):
    rng = random.Random(1)
    out = ["#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>", ""]
    nfuncs = 150
    for i in range(nfuncs):
        a, b, c = rng.randrange(1, 97), rng.randrange(1, 89), rng.randrange(3, 31)
        table = ", ".join(str(rng.randrange(-1000, 1000)) for _ in range(32))
        out += [
            f"static const int table_{i}[32] = {{{table}}};",
            f"static long fn_{i}(long x) {{",
            f"  long acc = {a};",
            f"  for (int k = 0; k < {c}; ++k) {{",
            f"    acc = (acc * {b} + table_{i}[(x + k) & 31] + (x >> (k % 7))) % 1000003;",
            f"    if ((acc ^ x) & 1) acc += table_{i}[k & 31]; else acc -= {a};",
            "  }",
            "  return acc;",
            "}",
            "",
        ]
    out += ["typedef long (*fn_t)(long);", "static const fn_t fns[] = {"]
    out += [f"  fn_{i}," for i in range(nfuncs)]
    out += ["};", ""]
    out += [
        "struct item { char name[24]; long key; double weight; };",
        "static int by_key(const void* a, const void* b) {",
        "  const struct item* x = a; const struct item* y = b;",
        "  if (x->key != y->key) return x->key < y->key ? -1 : 1;",
        "  return strcmp(x->name, y->name);",
        "}",
        "static unsigned long hash_str(const char* s) {",
        "  unsigned long h = 5381;",
        "  while (*s) h = h * 33 + (unsigned char)*s++;",
        "  return h;",
        "}",
        "int main(void) {",
        "  long total = 0;",
        f"  for (long x = 0; x < 2000; ++x) total = (total + fns[x % {nfuncs}](x)) % 1000000007;",
        '  printf("total %ld\\n", total);',
        "  int n = 50000;",
        "  struct item* items = malloc(sizeof *items * (size_t)n);",
        "  if (!items) return 1;",
        "  for (int i = 0; i < n; ++i) {",
        '    snprintf(items[i].name, sizeof items[i].name, "item-%d-%ld", i,',
        "             fns[i % 17](i) % 1000);",
        "    items[i].key = fns[(i * 7) % 31](i) % 5000;",
        "    items[i].weight = (double)(i % 97) / 7.0;",
        "  }",
        "  qsort(items, (size_t)n, sizeof *items, by_key);",
        "  unsigned long h = 0; double w = 0;",
        "  for (int i = 0; i < n; ++i) {",
        "    h = h * 31 + hash_str(items[i].name);",
        "    w += items[i].weight;",
        "  }",
        '  printf("first %s last %s hash %lu weight %.3f\\n", items[0].name, items[n - 1].name,',
        "         h, w);",
        "  free(items);",
        "  return 0;",
        "}",
    ]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def text(rng, lines):
    return "".join(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 14))) + "\n"
                   for _ in range(lines))


def gen_tree(root):
    rng = random.Random(2)
    for i in range(200):
        d = os.path.join(root, f"dir{i % 7}", f"sub{i % 5}")
        os.makedirs(d, exist_ok=True)
        lines = rng.randrange(1, 400 if rng.random() < 0.9 else 3000)
        with open(os.path.join(d, f"file{i:03d}.txt"), "w") as f:
            f.write(text(rng, lines))


def edit_tree(root):
    rng = random.Random(3)
    files = sorted(os.path.join(dp, f)
                   for dp, _, fs in os.walk(root) if ".git" not in dp for f in fs)
    for path in files[::5]:
        with open(path, "a") as f:
            f.write(text(rng, rng.randrange(1, 50)))
    for path in files[3::17]:
        os.remove(path)
    os.makedirs(os.path.join(root, "added"), exist_ok=True)
    for i in range(10):
        with open(os.path.join(root, "added", f"new{i}.txt"), "w") as f:
            f.write(text(rng, rng.randrange(1, 100)))


def gen_sql(path):
    rng = random.Random(4)
    out = [
        "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, since INTEGER);",
        "CREATE TABLE product(id INTEGER PRIMARY KEY, title TEXT, price REAL, category TEXT);",
        "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER,"
        " qty INTEGER, note TEXT);",
    ]
    cities = ["Paris", "Oslo", "Lima", "Pune", "Kyiv", "Rome", "Baku", "Doha"]
    out.append("BEGIN;")
    for i in range(2000):
        name = " ".join(rng.choice(WORDS) for _ in range(2)).title()
        out.append(f"INSERT INTO customer VALUES({i}, '{name}', '{rng.choice(cities)}', "
                   f"{2000 + rng.randrange(26)});")
    for i in range(500):
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4)))
        price = rng.randrange(100, 100000) / 100
        out.append(f"INSERT INTO product VALUES({i}, '{title}', {price}, "
                   f"'{rng.choice(WORDS[:6])}');")
    out.append("COMMIT;")
    for batch in range(18):
        out.append("BEGIN;")
        for j in range(1000):
            i = batch * 1000 + j
            note = "x" * rng.randrange(0, 200) if rng.random() < 0.3 else ""
            who, what = rng.randrange(2000), rng.randrange(500)
            out.append(f"INSERT INTO orders VALUES({i}, {who}, {what}, "
                       f"{1 + rng.randrange(9)}, '{note}');")
        out.append("COMMIT;")
    out += [
        "CREATE INDEX orders_customer ON orders(customer);",
        "CREATE INDEX orders_product ON orders(product);",
        "CREATE INDEX customer_city ON customer(city);",
        "SELECT count(*), sum(qty), sum(length(note)) FROM orders;",
        "SELECT c.city, count(*), round(sum(o.qty * p.price), 2) FROM orders o"
        " JOIN customer c ON c.id = o.customer JOIN product p ON p.id = o.product"
        " GROUP BY c.city ORDER BY c.city;",
        "SELECT p.category, count(DISTINCT o.customer), max(o.qty) FROM orders o"
        " JOIN product p ON p.id = o.product GROUP BY p.category ORDER BY 2 DESC, 1;",
        "SELECT c.name, round(sum(o.qty * p.price), 2) AS spent FROM customer c"
        " JOIN orders o ON o.customer = c.id JOIN product p ON p.id = o.product"
        " GROUP BY c.id ORDER BY spent DESC, c.id LIMIT 10;",
        "SELECT since, count(*) FROM customer WHERE id IN"
        " (SELECT customer FROM orders WHERE qty > 7) GROUP BY since ORDER BY since;",
        "BEGIN;",
        "DELETE FROM orders WHERE qty < 3;",
        "UPDATE orders SET note = note || '-updated' WHERE id % 10 = 0;",
        "COMMIT;",
        "SELECT count(*), sum(length(note)) FROM orders;",
        "SELECT group_concat(title, ';') FROM"
        " (SELECT title FROM product ORDER BY price DESC, id LIMIT 20);",
        "PRAGMA integrity_check;",
    ]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: generate.py c|tree|tree-edit|sql PATH")
    kind, path = sys.argv[1], sys.argv[2]
    {"c": gen_c, "tree": gen_tree, "tree-edit": edit_tree, "sql": gen_sql}[kind](path)


main()
