/* malloc_soak's command line (soak.c describes the options). */
#include "soak.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char* prog, const char* why, int status) {
  fprintf(status ? stderr : stdout,
          "%s: %s\nusage: %s [--seconds N] [--threads N] [--churn-ops N] [--fork-ms MS]\n"
          "       %*s [--rss FILE] [--malloc-stats] [--pressure [--limit-mib MIB]]\n",
          prog, why, prog, (int)strlen(prog), "");
  exit(status);
}

/* A whole number in [lo, hi] from a command-line argument, or the usage message. */
static long number(const char* prog, const char* opt, const char* text, long lo, long hi) {
  char* end;
  errno = 0;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || errno || *end || end == text || v < lo || v > hi) {
    char why[128];
    snprintf(why, sizeof why, "%s wants a number from %ld to %ld", opt, lo, hi);
    usage(prog, why, 2);
  }
  return v;
}

void soak_parse_options(int argc, char** argv, struct soak_options* o) {
  *o = (struct soak_options){.seconds = 60, .churn_ops = 200000, .fork_ms = 1000,
                             .limit_mib = 96, .threads = 8};
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strcmp(a, "--seconds")) o->seconds = number(argv[0], a, argv[++i < argc ? i : 0], 1, 1L << 30);
    else if (!strcmp(a, "--threads")) o->threads = (int)number(argv[0], a, argv[++i < argc ? i : 0], 1, SOAK_MAX_THREADS);
    else if (!strcmp(a, "--churn-ops")) o->churn_ops = number(argv[0], a, argv[++i < argc ? i : 0], 0, 1L << 40);
    else if (!strcmp(a, "--fork-ms")) o->fork_ms = number(argv[0], a, argv[++i < argc ? i : 0], 0, 1L << 30);
    else if (!strcmp(a, "--limit-mib")) o->limit_mib = number(argv[0], a, argv[++i < argc ? i : 0], 1, 1L << 30);
    else if (!strcmp(a, "--rss") && i + 1 < argc) o->rss_path = argv[++i];
    else if (!strcmp(a, "--pressure")) o->pressure = 1;
    else if (!strcmp(a, "--malloc-stats")) o->malloc_stats = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(argv[0], "a soak run of malloc (see bench/README.md)", 0);
    else usage(argv[0], "unknown argument", 2);
  }
}
