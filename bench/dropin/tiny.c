/* dropin_tiny [WORDS]: a short-lived tiny program, the kind a shell script runs hundreds of
 * times: a few hundred small mallocs (WORDS strings of 4..24 bytes, default 400), a small
 * chained hash table counting them, a sorted copy of the distinct words; under 100 KiB
 * allocated in all. It prints a count and exits. What it measures is the allocator's
 * start-up cost and footprint: peak RSS, and the time of many fresh executions. */
#include "dropin_common.h"

#define BUCKETS 128

/* A hash-table entry: a word and how often it was seen. */
typedef struct Entry {
  struct Entry* next;
  char* word;
  int count;
} Entry;

/* FNV-1a of a string. */
static uint64_t hash_str(const char* s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

/* A random word from a small alphabet of syllables (so that some repeat). */
static char* make_word(uint64_t* rng) {
  static const char* syl[] = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi"};
  const int parts = (int)splitmix_range(rng, 2, 5);
  char* w = di_check(malloc((size_t)parts * 2 + 1), "word");
  for (int i = 0; i < parts; ++i) memcpy(w + 2 * i, syl[splitmix_next(rng) % 8], 2);
  w[parts * 2] = '\0';
  return w;
}

/* Counts `word` in the table (taking ownership of it); returns 1 if it was new. */
static int count_word(Entry** table, char* word) {
  Entry** b = &table[hash_str(word) % BUCKETS];
  for (Entry* e = *b; e; e = e->next)
    if (strcmp(e->word, word) == 0) {
      e->count++;
      free(word);
      return 0;
    }
  Entry* e = di_check(malloc(sizeof *e), "entry");
  e->word = word;
  e->count = 1;
  e->next = *b;
  *b = e;
  return 1;
}

/* qsort's comparison of two entries by word. */
static int by_word(const void* a, const void* b) {
  return strcmp((*(Entry* const*)a)->word, (*(Entry* const*)b)->word);
}

/* Counts the words, sorts the distinct ones, frees everything and prints the result. */
int main(int argc, char** argv) {
  const long words = di_arg(argc, argv, 1, 400, "[WORDS]");
  Entry** table = di_check(calloc(BUCKETS, sizeof *table), "table");
  uint64_t rng = 7;
  int distinct = 0;
  for (long i = 0; i < words; ++i) distinct += count_word(table, make_word(&rng));
  Entry** sorted = di_check(malloc((size_t)distinct * sizeof *sorted), "sorted");
  int n = 0;
  for (int b = 0; b < BUCKETS; ++b)
    for (Entry* e = table[b]; e; e = e->next) sorted[n++] = e;
  qsort(sorted, (size_t)n, sizeof *sorted, by_word);
  uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    sum = sum * 31 + hash_str(sorted[i]->word) + (uint64_t)sorted[i]->count;
    free(sorted[i]->word);
    free(sorted[i]);
  }
  free(sorted);
  free(table);
  printf("tiny words=%ld distinct=%d checksum=%016llx\n", words, distinct,
         (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
