/* dropin_compiler [UNITS]: a compiler-like mix. For each of UNITS translation units (default
 * 400): 200 "functions", each parsing into an expression tree of 24..128 B nodes and a list
 * of statements, folded and dropped at the function's end; a per-unit symbol table (a
 * string per symbol, in an array grown by realloc doubling) and per-function calloc'ed
 * arrays (register maps); one node in 64 is copied into a long-lived list kept to the end,
 * and a global symbol table grows by realloc across the units. The per-unit part is freed
 * at the end of each unit. Models compilers, interpreters and other tree builders. */
#include "dropin_common.h"

/* A tree node: 24..128 bytes, the tail being payload (constant data, names). */
typedef struct Node {
  struct Node* left;
  struct Node* right;
  uint32_t op;
  uint32_t size;
  uint64_t value;
} Node;

/* A growable array of pointers (symbol tables): grown by realloc, doubling. */
typedef struct {
  char** item;
  size_t n, cap;
} Table;

/* Appends to a table, doubling its array when full. */
static void table_add(Table* t, char* s) {
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 16;
    t->item = di_check(realloc(t->item, t->cap * sizeof *t->item), "symbol table");
  }
  t->item[t->n++] = s;
}

/* Frees a table's strings and array. */
static void table_free(Table* t) {
  for (size_t i = 0; i < t->n; ++i) free(t->item[i]);
  free(t->item);
  t->item = NULL;
  t->n = t->cap = 0;
}

/* A new node of 24..128 B with its payload filled from its value. */
static Node* new_node(uint64_t* rng, uint32_t op, Node* l, Node* r) {
  const uint32_t size = (uint32_t)splitmix_range(rng, 32, 128);
  Node* n = di_check(malloc(size), "node");
  n->left = l;
  n->right = r;
  n->op = op;
  n->size = size;
  n->value = splitmix_next(rng) & 0xffff;
  memset(n + 1, (int)(n->value & 0xff), size - sizeof *n);
  return n;
}

/* A random expression tree of the given depth. */
static Node* parse(uint64_t* rng, int depth) {
  if (depth == 0 || splitmix_range(rng, 0, 3) == 0) return new_node(rng, 0, NULL, NULL);
  Node* l = parse(rng, depth - 1);
  Node* r = parse(rng, depth - 1);
  return new_node(rng, (uint32_t)splitmix_range(rng, 1, 3), l, r);
}

/* Folds a tree to a value and frees it, checking each node's payload first. */
static uint64_t fold(Node* n) {
  if (n == NULL) return 0;
  const unsigned char* tail = (const unsigned char*)(n + 1);
  const size_t tail_n = n->size - sizeof *n;
  if (tail_n > 0 && (tail[0] != (n->value & 0xff) || tail[tail_n - 1] != (n->value & 0xff)))
    di_fail("node payload changed", n->value);
  const uint64_t a = fold(n->left), b = fold(n->right);
  const uint64_t v = n->op == 0 ? n->value : n->op == 1 ? a + b : n->op == 2 ? a * 3 + b : a ^ b;
  free(n);
  return v;
}

/* A symbol name of 8..40 characters. */
static char* symbol(uint64_t* rng, uint64_t id) {
  const size_t n = splitmix_range(rng, 8, 40);
  char* s = di_check(malloc(n + 1), "symbol");
  snprintf(s, n + 1, "sym_%llu_%0*d", (unsigned long long)id, (int)n, 0);
  return s;
}

/* One function: statements (trees) parsed, folded and dropped, a register map calloc'ed,
 * symbols added to the unit's table, one node in 64 kept in the long-lived list. */
static uint64_t function(uint64_t* rng, Table* unit_syms, Node** keep, uint64_t id) {
  const size_t regs = splitmix_range(rng, 64, 2048);
  uint32_t* regmap = di_check(calloc(regs, sizeof *regmap), "register map");
  uint64_t sum = 0;
  const int stmts = (int)splitmix_range(rng, 4, 16);
  for (int s = 0; s < stmts; ++s) {
    Node* tree = parse(rng, (int)splitmix_range(rng, 3, 7));
    if ((splitmix_next(rng) & 63) == 0) *keep = new_node(rng, 0, *keep, NULL);
    const uint64_t v = fold(tree);
    regmap[v % regs] += 1;
    sum += v;
    table_add(unit_syms, symbol(rng, id * 32 + (uint64_t)s));
  }
  for (size_t r = 0; r < regs; ++r) sum += regmap[r] * r;
  free(regmap);
  return sum;
}

/* Runs the units, then drops the long-lived list and the global table; prints the result. */
int main(int argc, char** argv) {
  const long units = di_arg(argc, argv, 1, 400, "[UNITS]");
  uint64_t rng = 2024, sum = 0;
  Table global = {0};
  Node* keep = NULL;
  for (long u = 0; u < units; ++u) {
    Table unit_syms = {0};
    for (int f = 0; f < 200; ++f) sum += function(&rng, &unit_syms, &keep, (uint64_t)u * 200 + (uint64_t)f);
    for (size_t i = 0; i < unit_syms.n; i += 8) /* the exported symbols outlive the unit */
      table_add(&global, strdup(unit_syms.item[i]));
    table_free(&unit_syms);
  }
  size_t kept = 0;
  while (keep) {
    Node* next = keep->left;
    keep->left = NULL;
    sum += fold(keep);
    keep = next;
    ++kept;
  }
  printf("compiler units=%ld symbols=%zu kept=%zu checksum=%016llx\n", units, global.n, kept,
         (unsigned long long)sum);
  table_free(&global);
  di_report_malloc();
  return 0;
}
