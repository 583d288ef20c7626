/* dropin_cfrac [STEPS]: the allocation pattern of continued-fraction factoring. For each of
 * two fixed odd numbers N (128 and 384 bits), STEPS steps (default 600000) of the continued
 * fraction of sqrt(N): P, Q, the partial quotient a and the convergent A mod N, with
 * A^2 = +-Q (mod N) checked whenever Q is kept. Each Q is trial-divided by a factor base of
 * small primes (with an early abort); smooth ones, and those with one large prime left,
 * are kept as relations to the end, and large primes seen twice are counted as pairs.
 * Bignums are heap arrays of 32-bit digits (16..128 bytes) made new for every intermediate
 * of every add, multiply, divide and square root, and freed at once: models arbitrary
 * precision arithmetic, a very high rate of tiny, very short-lived allocations. */
#include "dropin_common.h"

#define SEAL_MIX 0x5bd1e995u
#define FB_PRIMES 3000 /* the factor base: primes below this with N a square mod p */
#define EARLY 40       /* primes tried before the early abort */

/* A bignum: n digits, least significant first, d[n-1] != 0 (zero has n = 0); seal is set
 * when its value is final and checked before it is freed. */
typedef struct {
  uint32_t n, seal;
  uint32_t d[];
} Bn;

static uint32_t seal_of(const Bn* a) {
  return a->n == 0 ? SEAL_MIX : (a->n * SEAL_MIX) ^ a->d[0] ^ (a->d[a->n - 1] << 7);
}

static Bn* bn_alloc(uint32_t n) {
  Bn* a = di_check(malloc(sizeof(Bn) + (n < 2 ? 2 : n) * sizeof(uint32_t)), "bignum");
  a->n = n;
  memset(a->d, 0, n * sizeof(uint32_t));
  return a;
}

/* Strips leading zero digits and seals the value. */
static Bn* bn_done(Bn* a) {
  while (a->n > 0 && a->d[a->n - 1] == 0) --a->n;
  a->seal = seal_of(a);
  return a;
}

static void bn_free(Bn* a) {
  if (a->seal != seal_of(a)) di_fail("bignum changed before free", a->n);
  free(a);
}

static Bn* bn_u64(uint64_t v) {
  Bn* a = bn_alloc(2);
  a->d[0] = (uint32_t)v, a->d[1] = (uint32_t)(v >> 32);
  return bn_done(a);
}

static Bn* bn_copy(const Bn* a) {
  Bn* c = bn_alloc(a->n);
  memcpy(c->d, a->d, a->n * sizeof(uint32_t));
  return bn_done(c);
}

static int bn_cmp(const Bn* a, const Bn* b) {
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  for (uint32_t i = a->n; i-- > 0;)
    if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
  return 0;
}

static Bn* bn_add(const Bn* a, const Bn* b) {
  if (a->n < b->n) return bn_add(b, a);
  Bn* c = bn_alloc(a->n + 1);
  uint64_t carry = 0;
  for (uint32_t i = 0; i < a->n; ++i, carry >>= 32)
    c->d[i] = (uint32_t)(carry += (uint64_t)a->d[i] + (i < b->n ? b->d[i] : 0));
  c->d[a->n] = (uint32_t)carry;
  return bn_done(c);
}

/* a - b, for a >= b. */
static Bn* bn_sub(const Bn* a, const Bn* b) {
  Bn* c = bn_alloc(a->n);
  int64_t borrow = 0;
  for (uint32_t i = 0; i < a->n; ++i) {
    const int64_t t = (int64_t)a->d[i] - (i < b->n ? b->d[i] : 0) - borrow;
    c->d[i] = (uint32_t)t;
    borrow = t < 0;
  }
  if (borrow) di_fail("bignum subtraction below zero", a->n);
  return bn_done(c);
}

static Bn* bn_mul(const Bn* a, const Bn* b) {
  Bn* c = bn_alloc(a->n + b->n);
  for (uint32_t i = 0; i < a->n; ++i) {
    uint64_t carry = 0;
    for (uint32_t j = 0; j < b->n; ++j, carry >>= 32)
      c->d[i + j] = (uint32_t)(carry += (uint64_t)a->d[i] * b->d[j] + c->d[i + j]);
    c->d[i + b->n] = (uint32_t)carry;
  }
  return bn_done(c);
}

/* a mod p and, if q is not NULL, *q = a / p, for a one-digit p. */
static uint32_t bn_divsmall(const Bn* a, uint32_t p, Bn** q) {
  Bn* c = q ? bn_alloc(a->n) : NULL;
  uint64_t r = 0;
  for (uint32_t i = a->n; i-- > 0;) {
    r = r << 32 | a->d[i];
    if (c) c->d[i] = (uint32_t)(r / p);
    r %= p;
  }
  if (q) *q = bn_done(c);
  return (uint32_t)r;
}

/* Long division (Knuth's algorithm D): *q = u / v and *r = u mod v, both new; the
 * normalized copies of u and v are temporaries of their own. */
static void bn_divmod(const Bn* u, const Bn* v, Bn** q, Bn** r) {
  if (v->n == 0) di_fail("bignum division by zero", 0);
  if (bn_cmp(u, v) < 0) { /* q = 0, r = u */
    *q = bn_done(bn_alloc(0)), *r = bn_copy(u);
    return;
  }
  if (v->n == 1) return (void)(*r = bn_u64(bn_divsmall(u, v->d[0], q)));
  const uint32_t m = u->n, n = v->n;
  const int s = __builtin_clz(v->d[n - 1]);
  Bn *vn = bn_alloc(n), *un = bn_alloc(m + 1);
  for (uint32_t i = 0; i <= m; ++i) {
    const uint64_t hi = i < m ? u->d[i] : 0, lo = i ? u->d[i - 1] : 0;
    un->d[i] = (uint32_t)(hi << s | lo >> (32 - s));
    if (i < n) vn->d[i] = (uint32_t)((uint64_t)v->d[i] << s | (i ? (uint64_t)v->d[i - 1] : 0) >> (32 - s));
  }
  Bn* qq = bn_alloc(m - n + 1);
  for (uint32_t j = m - n + 1; j-- > 0;) {
    const uint64_t num = (uint64_t)un->d[j + n] << 32 | un->d[j + n - 1];
    uint64_t qhat = num / vn->d[n - 1], rhat = num % vn->d[n - 1];
    while (qhat >> 32 || qhat * vn->d[n - 2] > (rhat << 32 | un->d[j + n - 2])) {
      --qhat;
      rhat += vn->d[n - 1];
      if (rhat >> 32) break;
    }
    int64_t k = 0, t;
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t p = qhat * vn->d[i];
      t = (int64_t)un->d[i + j] - k - (int64_t)(p & 0xffffffffu);
      un->d[i + j] = (uint32_t)t;
      k = (int64_t)(p >> 32) - (t >> 32);
    }
    t = (int64_t)un->d[j + n] - k;
    un->d[j + n] = (uint32_t)t;
    if (t < 0) { /* qhat was one too large: add v back */
      --qhat;
      uint64_t c = 0;
      for (uint32_t i = 0; i < n; ++i, c >>= 32) un->d[i + j] = (uint32_t)(c += (uint64_t)un->d[i + j] + vn->d[i]);
      un->d[j + n] += (uint32_t)c;
    }
    qq->d[j] = (uint32_t)qhat;
  }
  Bn* rr = bn_alloc(n);
  for (uint32_t i = 0; i < n; ++i)
    rr->d[i] = (uint32_t)((uint64_t)un->d[i] >> s | (uint64_t)un->d[i + 1] << (32 - s));
  bn_free(bn_done(vn)), bn_free(bn_done(un));
  *q = bn_done(qq);
  *r = bn_done(rr);
}

/* Divides and keeps one of the results: the quotient (rem 0) or the remainder (rem 1). */
static Bn* bn_div(const Bn* u, const Bn* v, int rem) {
  Bn* qr[2];
  bn_divmod(u, v, &qr[0], &qr[1]);
  bn_free(qr[!rem]);
  return qr[rem];
}

/* floor(sqrt(a)) by Newton's iteration from above. */
static Bn* bn_sqrt(const Bn* a) {
  Bn* x = bn_copy(a);
  Bn* two = bn_u64(2);
  for (;;) {
    Bn *t = bn_div(a, x, 0), *s = bn_add(x, t), *h = bn_div(s, two, 0);
    bn_free(t), bn_free(s);
    if (bn_cmp(h, x) >= 0) {
      bn_free(h), bn_free(two);
      return x;
    }
    bn_free(x);
    x = h;
  }
}

static uint32_t bn_bits(const Bn* a) {
  return a->n == 0 ? 0 : a->n * 32 - (uint32_t)__builtin_clz(a->d[a->n - 1]);
}

static uint64_t bn_hash(const Bn* a) {
  uint64_t h = a->n;
  for (uint32_t i = 0; i < a->n; ++i) h = di_hash(h ^ a->d[i]);
  return h;
}

/* The factor base: 2 and the odd primes p < FB_PRIMES with N a nonzero square mod p. */
static int factor_base(const Bn* n, uint32_t* fb) {
  int k = 0;
  fb[k++] = 2;
  for (uint32_t p = 3; p < FB_PRIMES; p += 2) {
    int prime = 1;
    for (uint32_t d = 3; d * d <= p && prime; d += 2) prime = p % d != 0;
    if (!prime) continue;
    uint64_t r = 1, b = bn_divsmall(n, p, NULL);
    for (uint32_t e = (p - 1) / 2; e; e >>= 1, b = b * b % p)
      if (e & 1) r = r * b % p;
    if (r == 1) fb[k++] = p;
  }
  return k;
}

/* Trial division of q by the factor base, abandoned if less than a third of its bits have
 * come off after the first EARLY primes. Returns the cofactor left (0: abandoned or too
 * large for one prime above the factor base). */
static uint32_t smooth(const Bn* q, const uint32_t* fb, int nfb) {
  Bn *c = bn_copy(q), *d;
  for (int i = 0; i < nfb; ++i) {
    while (bn_divsmall(c, fb[i], NULL) == 0) {
      bn_divsmall(c, fb[i], &d);
      bn_free(c);
      c = d;
    }
    if (i == EARLY && bn_bits(c) * 3 > bn_bits(q) * 2) return bn_free(c), 0; /* early abort */
  }
  const uint64_t left = c->n == 1 ? c->d[0] : UINT64_MAX;
  bn_free(c);
  return left < (uint64_t)FB_PRIMES * FB_PRIMES ? (uint32_t)left : 0;
}

/* Checks that a^2 = +-q (mod n), the sign by the step's parity. */
static void check_relation(const Bn* n, const Bn* a, const Bn* q, long step) {
  Bn* sq = bn_mul(a, a);
  Bn* r = bn_div(sq, n, 1);
  Bn* want = step % 2 ? bn_sub(n, q) : bn_copy(q);
  if (bn_cmp(r, want) != 0) di_fail("continued fraction relation does not hold", (uint64_t)step);
  bn_free(sq), bn_free(r), bn_free(want);
}

/* What the expansions found: relations (A and Q with A^2 = +-Q mod N, in an array grown by
 * realloc); how many were full, partial (one large prime left), and pairs of partial ones
 * with the same large prime (which cfrac combines into a full one). */
static Bn** rel;
static size_t nrel, relcap;
static long full, partial, pairs;

static int cmp_u32(const void* x, const void* y) {
  return *(const uint32_t*)x < *(const uint32_t*)y ? -1 : *(const uint32_t*)x > *(const uint32_t*)y;
}

/* Keeps a relation (A, Q) whose Q left `left` after trial division; appends a partial
 * relation's large prime to large[0..*nlarge) (grown by realloc, one at a time). */
static void keep(const Bn* a, const Bn* q, uint32_t left, uint32_t** large, size_t* nlarge) {
  if (nrel == relcap) {
    relcap = relcap ? relcap * 2 : 16;
    rel = di_check(realloc(rel, relcap * sizeof *rel), "relations");
  }
  rel[nrel++] = bn_copy(a), rel[nrel++] = bn_copy(q);
  if (left == 1) return (void)++full;
  *large = di_check(realloc(*large, (*nlarge + 1) * sizeof **large), "large primes");
  (*large)[(*nlarge)++] = left;
  ++partial;
}

/* Steps of the expansion for N; keeps its relations and counts its pairs. */
static uint64_t expand(const Bn* n, long steps) {
  uint32_t fb[FB_PRIMES], *large = NULL;
  const int nfb = factor_base(n, fb);
  size_t nlarge = 0;
  Bn* m = bn_sqrt(n);
  Bn *p = bn_u64(0), *q = bn_u64(1), *a = bn_copy(m), *acur = bn_u64(1), *aprev = bn_u64(0);
  uint64_t sum = bn_hash(m);
  for (long i = 0; i < steps; ++i) {
    Bn *t = bn_mul(a, acur), *u = bn_add(t, aprev), *anew = bn_div(u, n, 1); /* A_i */
    bn_free(t), bn_free(u), bn_free(aprev);
    aprev = acur, acur = anew;
    t = bn_mul(a, q);
    Bn* pn = bn_sub(t, p); /* P_{i+1} = a_i Q_i - P_i */
    bn_free(t);
    t = bn_mul(pn, pn), u = bn_sub(n, t);
    Bn* qn = bn_div(u, q, 0); /* Q_{i+1} = (N - P_{i+1}^2) / Q_i */
    bn_free(t), bn_free(u);
    if (qn->n == 0) di_fail("N is a square", 0);
    t = bn_add(m, pn);
    Bn* an = bn_div(t, qn, 0); /* a_{i+1} = floor((m + P_{i+1}) / Q_{i+1}) */
    bn_free(t), bn_free(p), bn_free(q), bn_free(a);
    p = pn, q = qn, a = an;
    sum = sum * 31 + bn_hash(a);
    const uint32_t left = smooth(q, fb, nfb);
    if (left == 0) continue;
    check_relation(n, acur, q, i + 1); /* A_i^2 = (-1)^(i+1) Q_{i+1} */
    keep(acur, q, left, &large, &nlarge);
  }
  if (nlarge > 0) qsort(large, nlarge, sizeof *large, cmp_u32);
  for (size_t i = 1; i < nlarge; ++i) pairs += large[i] == large[i - 1];
  free(large);
  bn_free(m), bn_free(p), bn_free(q), bn_free(a), bn_free(acur), bn_free(aprev);
  return sum;
}

/* Expands for two fixed odd N of 4 and 12 digits (from the PRNG, top bit set), then drops
 * the relations. */
int main(int argc, char** argv) {
  const long steps = di_arg(argc, argv, 1, 600000, "[STEPS]");
  uint64_t rng = 1975, sum = 0;
  for (uint32_t digits = 4; digits <= 12; digits += 8) {
    Bn* n = bn_alloc(digits);
    for (uint32_t i = 0; i < digits; ++i) n->d[i] = (uint32_t)splitmix_next(&rng);
    n->d[0] |= 1, n->d[digits - 1] |= 0x80000000u;
    sum = sum * 0x9e3779b97f4a7c15ull + expand(bn_done(n), steps);
    bn_free(n);
  }
  for (size_t i = 0; i < nrel; ++i) {
    sum += di_hash(bn_hash(rel[i]) + i);
    bn_free(rel[i]);
  }
  free(rel);
  printf("cfrac steps=%ld full=%ld partial=%ld pairs=%ld checksum=%016llx\n", steps, full,
         partial, pairs, (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
