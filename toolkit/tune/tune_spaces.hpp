// The settings `strata tune` searches, read from one data file (data/tune-spaces.conf in the
// source tree, share/strata/tune-spaces.conf when installed): per allocator, how settings
// reach it (GLIBC_TUNABLES, MALLOC_CONF, one variable per option) and the values of each
// option; and the compositions `--compositions` builds. No allocator's options live in code.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace strata::tune {

// How an allocator's settings become environment variables.
enum class Style {
  Tunables,  // VAR=PREFIX<name>=<value>:PREFIX<name>=<value> (glibc's GLIBC_TUNABLES)
  Conf,      // VAR=<name>:<value>,<name>:<value> (jemalloc's MALLOC_CONF)
  Env,       // PREFIX<NAME>=<value>, one variable per option (mimalloc, tcmalloc, strata)
};

struct Option {
  std::string name;                 // as the allocator spells it ("arena_max", "narenas")
  std::vector<std::string> values;  // the values searched (the default is "not set")
  int line = 0;                     // where the data file defines it
};

struct Space {
  std::string allocator;  // the registry's name: glibc, jemalloc, mimalloc, tcmalloc, strata...
  Style style = Style::Env;
  std::string variable;   // Tunables and Conf: the one variable
  std::string prefix;     // Tunables: each name's prefix; Env: each variable's prefix
  std::vector<Option> options;
  // NAME=VALUE set only while checking the values (mimalloc names a bad value only when
  // asked to show errors).
  std::vector<std::string> checkEnvironment;
  int line = 0;
};

struct Composition {
  std::string name;  // one word, the label of its library
  std::string type;  // the C++ heap type, built with `strata build`
  int line = 0;
};

struct Spaces {
  std::string path;
  std::vector<Space> allocators;
  std::vector<Composition> compositions;
};

// Reads the data file. Throws support::Error "FILE:LINE: what is wrong" (exit status 2) for
// a file that cannot be read or a line that does not parse.
Spaces loadSpaces(const std::string& path);

// Where the data file is: $STRATA_TUNE_SPACES, else <exe dir>/../share/strata/tune-spaces.conf.
std::string defaultSpacesPath();

// One choice per option of a space: -1 keeps the allocator's default, else an index into
// the option's values.
using Setting = std::vector<int>;

// The environment entries (NAME=VALUE) a setting puts in the child; empty for the default.
std::vector<std::string> environmentFor(const Space& space, const Setting& setting);

// The setting in words: "arena_max=2 mmap_threshold=65536", or "default".
std::string describe(const Space& space, const Setting& setting);

// The allocator spec text for `strata run --allocator`: "glibc:GLIBC_TUNABLES=...".
std::string specFor(const Space& space, const Setting& setting);

}  // namespace strata::tune
