/* fidelity_small [REPEAT [FILE]]: a small program. Parses a text (FILE, or a built-in
 * paragraph) REPEAT times (default 30000) into a word-count hash table of malloc'ed
 * strings, which it frees after each pass, and prints a summary. Its peak live memory is
 * well under 1 MiB, so an allocator's own start-up memory (arenas, caches, metadata) is a
 * large part of its peak RSS: the part a replay of the trace alone does not see. */
#include <ctype.h>
#include <string.h>

#include "fidelity_common.h"

static const char kBuiltin[] =
    "It is a truth universally acknowledged, that a single man in possession of a good\n"
    "fortune, must be in want of a wife. However little known the feelings or views of\n"
    "such a man may be on his first entering a neighbourhood, this truth is so well fixed\n"
    "in the minds of the surrounding families, that he is considered the rightful property\n"
    "of some one or other of their daughters. My dear Mr. Bennet, said his lady to him one\n"
    "day, have you heard that Netherfield Park is let at last? Mr. Bennet replied that he\n"
    "had not. But it is, returned she; for Mrs. Long has just been here, and she told me\n"
    "all about it. Mr. Bennet made no answer. Do you not want to know who has taken it?\n";

struct entry {
  char* word;
  long count;
  struct entry* next;
};

enum { kBuckets = 509 };

static uint64_t hash_word(const char* s, size_t n) { return fid_mix(0xcbf29ce484222325ull, s, n); }

/* One pass: count the words of `text` in a fresh table, fold the counts into `sum`, free. */
static uint64_t one_pass(const char* text, size_t len, uint64_t sum, long* words, long* distinct) {
  struct entry** table = fid_check(calloc(kBuckets, sizeof(struct entry*)), "table");
  *words = *distinct = 0;
  size_t i = 0;
  while (i < len) {
    while (i < len && !isalpha((unsigned char)text[i])) ++i;
    const size_t start = i;
    while (i < len && isalpha((unsigned char)text[i])) ++i;
    if (i == start) break;
    const size_t n = i - start;
    char* w = fid_check(malloc(n + 1), "word");
    for (size_t k = 0; k < n; ++k) w[k] = (char)tolower((unsigned char)text[start + k]);
    w[n] = '\0';
    const uint64_t h = hash_word(w, n) % kBuckets;
    struct entry* e = table[h];
    while (e != NULL && strcmp(e->word, w) != 0) e = e->next;
    if (e != NULL) {
      ++e->count;
      free(w);
    } else {
      e = fid_check(malloc(sizeof *e), "entry");
      e->word = w;
      e->count = 1;
      e->next = table[h];
      table[h] = e;
      ++*distinct;
    }
    ++*words;
  }
  for (int b = 0; b < kBuckets; ++b) {
    for (struct entry* e = table[b]; e != NULL;) {
      struct entry* next = e->next;
      sum += hash_word(e->word, strlen(e->word)) * (uint64_t)e->count; /* order-free */
      free(e->word);
      free(e);
      e = next;
    }
  }
  free(table);
  return sum;
}

int main(int argc, char** argv) {
  const long repeat = fid_size_arg(argc, argv, 30000, "REPEAT [FILE]");
  const char* text = kBuiltin;
  size_t len = sizeof kBuiltin - 1;
  char* owned = NULL;
  if (argc > 2) {
    FILE* f = fopen(argv[2], "rb");
    if (f == NULL) {
      fprintf(stderr, "fidelity_small: cannot open %s\n", argv[2]);
      return 2;
    }
    size_t cap = 4096;
    owned = fid_check(malloc(cap), "file");
    len = 0;
    size_t got;
    while ((got = fread(owned + len, 1, cap - len, f)) > 0) {
      len += got;
      if (len == cap) owned = fid_check(realloc(owned, cap *= 2), "file");
    }
    fclose(f);
    text = owned;
  }
  uint64_t sum = 0;
  long words = 0, distinct = 0;
  for (long r = 0; r < repeat; ++r) sum = one_pass(text, len, sum, &words, &distinct);
  printf("small repeat=%ld words=%ld distinct=%ld checksum=%016llx\n", repeat, words, distinct,
         (unsigned long long)sum);
  free(owned);
  return 0;
}
