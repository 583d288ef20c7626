/* dropin_espresso [PROBLEMS]: the allocation pattern of a two-level logic minimizer. For each
 * of PROBLEMS problems (default 1000): a multiple-output function of 4..13 binary inputs and
 * 1..1500 outputs, as an ON-set cover F and a disjoint OFF-set cover R of cubes in positional
 * notation (2 bits per input, 1 per output: bit vectors of 8..200 bytes, each its own
 * malloc); covers are arrays of cube pointers grown by realloc. Three expand / irredundant /
 * reduce passes minimize F: expand raises literals while the cube stays disjoint from R
 * (a temporary cube per intersection test), irredundant drops cubes contained in others,
 * reduce shrinks a cube when half of it is covered by the rest (a recursive tautology check
 * on cofactor covers, made and freed in LIFO order). F's cubes live across the passes and
 * one final cube in 8 is kept to the end. Models small-object, single-threaded programs with
 * very many short-lived temporaries freed soon after allocation, mostly in LIFO order. */
#include "dropin_common.h"

#define MAGIC 0xe5u
#define TAUT_BUDGET 4000

/* A cube: word 0 is MAGIC << 24 | its number of bits, then the bits, unused ones zero. */
typedef uint32_t* Cube;

/* A cover: an array of cubes grown by realloc. */
typedef struct {
  Cube* cube;
  size_t n, cap;
} Cover;

static int nin, nout, nbits, nwords; /* the current problem's shape */

static Cube cube_new(void) {
  Cube c = di_check(calloc((size_t)nwords + 1, sizeof *c), "cube");
  c[0] = MAGIC << 24 | (uint32_t)nbits;
  return c;
}

/* Checks a cube's header and unused bits, then frees it. */
static void cube_free(Cube c) {
  const uint32_t bits = c[0] & 0xffffff, words = (bits + 31) / 32;
  if (c[0] >> 24 != MAGIC || (bits % 32 != 0 && c[words] >> (bits % 32) != 0))
    di_fail("cube header or padding changed before free", bits);
  free(c);
}

static int bit(const Cube c, int i) { return (int)(c[1 + i / 32] >> (i % 32)) & 1; }
static void set_bit(Cube c, int i) { c[1 + i / 32] |= 1u << (i % 32); }
static void clear_bit(Cube c, int i) { c[1 + i / 32] &= ~(1u << (i % 32)); }
static int is_dc(const Cube c, int v) { return bit(c, 2 * v) && bit(c, 2 * v + 1); }

static Cube cube_copy(const Cube a) {
  Cube c = cube_new();
  memcpy(c + 1, a + 1, (size_t)nwords * sizeof *c);
  return c;
}

/* Whether a cube is empty: an input with neither value, or no output. The inputs (at most
 * 13) all sit in word 1. */
static int cube_empty(const Cube c) {
  const uint32_t pairs = (uint32_t)((1ull << (2 * nin)) - 1) & 0x55555555u;
  if (((c[1] | c[1] >> 1) & pairs) != pairs) return 1;
  if (c[1] >> (2 * nin) != 0) return 0;
  for (int w = 2; w <= nwords; ++w)
    if (c[w]) return 0;
  return 1;
}

/* Whether a cube has every bit set. */
static int cube_full(const Cube c) {
  for (int w = 1; w <= nwords; ++w) {
    const int used = w < nwords || nbits % 32 == 0 ? 32 : nbits % 32;
    if (c[w] != (uint32_t)((1ull << used) - 1)) return 0;
  }
  return 1;
}

/* Whether a and b intersect, through a temporary cube a & b, as the minimizer does. */
static int intersects(const Cube a, const Cube b) {
  Cube t = cube_new();
  for (int w = 1; w <= nwords; ++w) t[w] = a[w] & b[w];
  const int r = !cube_empty(t);
  cube_free(t);
  return r;
}

/* Whether a contains b. */
static int contains(const Cube a, const Cube b) {
  for (int w = 1; w <= nwords; ++w)
    if (b[w] & ~a[w]) return 0;
  return 1;
}

static void cover_add(Cover* f, Cube c) {
  if (f->n == f->cap) {
    f->cap = f->cap ? f->cap * 2 : 4;
    f->cube = di_check(realloc(f->cube, f->cap * sizeof *f->cube), "cover");
  }
  f->cube[f->n++] = c;
}

static void cover_free(Cover* f) {
  for (size_t i = f->n; i-- > 0;) cube_free(f->cube[i]);
  free(f->cube);
  f->cube = NULL;
  f->n = f->cap = 0;
}

/* A random cube: each input don't-care with probability 1/dc, else a random value; 1..4
 * random outputs. */
static Cube random_cube(uint64_t* rng, uint64_t dc) {
  Cube c = cube_new();
  for (int v = 0; v < nin; ++v) {
    const uint64_t r = splitmix_next(rng);
    if (r % dc == 0) set_bit(c, 2 * v), set_bit(c, 2 * v + 1);
    else set_bit(c, 2 * v + (int)((r >> 32) & 1));
  }
  for (int k = (int)splitmix_range(rng, 1, 4); k > 0; --k)
    set_bit(c, 2 * nin + (int)splitmix_range(rng, 0, (uint64_t)nout - 1));
  return c;
}

/* Raises each specified input of each cube of F, and a few outputs, while it stays
 * disjoint from every cube of R. */
static void expand(Cover* f, const Cover* r, uint64_t* rng) {
  for (size_t i = 0; i < f->n; ++i) {
    for (int t = 0; t < nin + 3; ++t) {
      const int out = t >= nin;
      if (!out && is_dc(f->cube[i], t)) continue;
      Cube c = cube_copy(f->cube[i]);
      if (out) set_bit(c, 2 * nin + (int)splitmix_range(rng, 0, (uint64_t)nout - 1));
      else set_bit(c, 2 * t), set_bit(c, 2 * t + 1);
      size_t j = 0;
      while (j < r->n && !intersects(c, r->cube[j])) ++j;
      if (j == r->n) {
        cube_free(f->cube[i]);
        f->cube[i] = c;
      } else {
        cube_free(c);
      }
    }
  }
}

/* Drops every cube contained in another (of two equal cubes, the later one); the kept
 * cubes move to a new array grown by realloc. */
static void irredundant(Cover* f) {
  Cover kept = {0};
  for (size_t i = 0; i < f->n; ++i) {
    size_t j = 0;
    for (; j < f->n; ++j)
      if (j != i && f->cube[j] != NULL && contains(f->cube[j], f->cube[i]) &&
          (j < i || !contains(f->cube[i], f->cube[j])))
        break;
    if (j < f->n) {
      cube_free(f->cube[i]);
      f->cube[i] = NULL;
    } else {
      cover_add(&kept, f->cube[i]);
    }
  }
  free(f->cube);
  *f = kept;
}

/* Whether a cover is a tautology (covers every minterm), by Shannon expansion on the most
 * specified input; *budget bounds the recursion (exhausted: answers no). */
static int tautology(const Cover* g, int* budget) {
  if (g->n == 0 || --*budget < 0) return 0;
  Cube all = cube_new();
  int best = -1, best_n = 0;
  for (size_t i = 0; i < g->n; ++i)
    for (int w = 1; w <= nwords; ++w) all[w] |= g->cube[i][w];
  for (int v = 0; v < nin; ++v) {
    int n = 0;
    for (size_t i = 0; i < g->n; ++i) n += !is_dc(g->cube[i], v);
    if (n > best_n) best = v, best_n = n;
  }
  const int full = cube_full(all);
  cube_free(all);
  if (!full || best < 0) return full; /* a value nobody covers, or all inputs don't-care */
  for (int val = 0; val < 2; ++val) {
    Cover h = {0};
    for (size_t i = 0; i < g->n; ++i)
      if (bit(g->cube[i], 2 * best + val)) {
        Cube c = cube_copy(g->cube[i]);
        set_bit(c, 2 * best + 1 - val);
        cover_add(&h, c);
      }
    const int t = tautology(&h, budget);
    cover_free(&h);
    if (!t) return 0;
  }
  return 1;
}

/* Whether cube d is covered by F without its cube `skip`: F's cofactor by d is a tautology. */
static int covered(const Cover* f, size_t skip, const Cube d) {
  Cover g = {0};
  for (size_t j = 0; j < f->n; ++j) {
    if (j == skip || !intersects(f->cube[j], d)) continue;
    Cube c = cube_copy(f->cube[j]);
    for (int w = 1; w <= nwords; ++w) c[w] |= ~d[w];
    if (nbits % 32) c[nwords] &= (1u << (nbits % 32)) - 1;
    cover_add(&g, c);
  }
  int budget = TAUT_BUDGET;
  const int r = tautology(&g, &budget);
  cover_free(&g);
  return r;
}

/* Shrinks each cube to one half of a don't-care input when the other half is covered by
 * the rest of F. */
static void reduce(Cover* f, int pass) {
  for (size_t i = 0; i < f->n; ++i) {
    int v = 0;
    while (v < nin && !is_dc(f->cube[i], (v + pass + (int)i) % nin)) ++v;
    if (v == nin) continue;
    v = (v + pass + (int)i) % nin;
    for (int val = 0; val < 2; ++val) {
      Cube half = cube_copy(f->cube[i]), rest = cube_copy(f->cube[i]);
      clear_bit(half, 2 * v + 1 - val);
      clear_bit(rest, 2 * v + val);
      const int drop = covered(f, i, half);
      cube_free(half);
      if (drop) {
        cube_free(f->cube[i]);
        f->cube[i] = rest;
        break;
      }
      cube_free(rest);
    }
  }
}

/* One problem: its covers made, F minimized, its result hashed; one cube in 8 joins `keep`. */
static uint64_t problem(uint64_t* rng, Cover* keep, size_t* cubes) {
  nin = (int)splitmix_range(rng, 4, 13);
  nout = (int)di_log_uniform(rng, 1, 1500);
  nbits = 2 * nin + nout;
  nwords = (nbits + 31) / 32;
  Cover f = {0}, r = {0};
  for (int i = (int)splitmix_range(rng, 20, 60); i > 0; --i) cover_add(&f, random_cube(rng, 3));
  for (int i = (int)splitmix_range(rng, 40, 120); i > 0; --i) {
    Cube c = random_cube(rng, 6);
    size_t j = 0;
    while (j < f.n && !intersects(c, f.cube[j])) ++j;
    if (j == f.n) cover_add(&r, c); else cube_free(c);
  }
  for (int pass = 0; pass < 3; ++pass) {
    expand(&f, &r, rng);
    irredundant(&f);
    reduce(&f, pass);
  }
  expand(&f, &r, rng);
  irredundant(&f);
  uint64_t sum = (uint64_t)nbits * 0x100000001b3ull + r.n;
  for (size_t i = 0; i < f.n; ++i) {
    for (int w = 1; w <= nwords; ++w) sum = sum * 31 + di_hash(f.cube[i][w] ^ (uint64_t)w << 32);
    if ((i & 7) == 0) cover_add(keep, cube_copy(f.cube[i]));
  }
  *cubes += f.n;
  cover_free(&f);
  cover_free(&r);
  return sum;
}

int main(int argc, char** argv) {
  const long problems = di_arg(argc, argv, 1, 1000, "[PROBLEMS]");
  uint64_t rng = 1987, sum = 0;
  size_t cubes = 0;
  Cover keep = {0};
  for (long p = 0; p < problems; ++p) sum = sum * 0x9e3779b97f4a7c15ull + problem(&rng, &keep, &cubes);
  for (size_t i = 0; i < keep.n; ++i) sum += di_hash(keep.cube[i][0] + keep.cube[i][1]);
  printf("espresso problems=%ld cubes=%zu kept=%zu checksum=%016llx\n", problems, cubes, keep.n,
         (unsigned long long)sum);
  cover_free(&keep);
  di_report_malloc();
  return 0;
}
