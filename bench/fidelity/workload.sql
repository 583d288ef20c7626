-- A SQLite workload for bench/fidelity.py: builds a table of 200,000 rows in memory with a
-- recursive CTE, indexes it and runs grouping and join queries. Run as
--   sqlite3 :memory: ".read workload.sql"
PRAGMA cache_size = -65536;
CREATE TABLE items(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, value REAL);
WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < 200000)
INSERT INTO items SELECT i, (i * 7919) % 1000, printf('item-%08d-%s', i, hex(i * 31)),
                         ((i * 104729) % 100000) / 100.0 FROM seq;
CREATE INDEX items_grp ON items(grp);
CREATE INDEX items_name ON items(name);
CREATE TABLE groups AS SELECT grp, count(*) AS n, sum(value) AS total, max(name) AS last
  FROM items GROUP BY grp;
SELECT count(*), sum(n), printf('%.2f', sum(total)) FROM groups;
SELECT count(*), printf('%.2f', avg(i.value)) FROM items i JOIN groups g ON i.grp = g.grp
  WHERE i.value > g.total / g.n;
SELECT grp, count(DISTINCT substr(name, 1, 10)) FROM items GROUP BY grp ORDER BY 2 DESC, 1 LIMIT 3;
UPDATE items SET name = name || '-x' WHERE id % 3 = 0;
DELETE FROM items WHERE id % 5 = 0;
SELECT count(*), sum(length(name)) FROM items;
