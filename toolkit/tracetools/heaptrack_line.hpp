// One line of a heaptrack recording, split into its fields (for the heaptrack importer,
// heaptrack.hpp). heaptrack 1.4 (Debian 12) writes, after heaptrack_interpret, one record a
// line: a type character, a space, then lower-case hex numbers separated by spaces:
//   v HEAPTRACK_VERSION FILE_VERSION   first line (1.4.0: "v 10400 3")
//   X COMMAND LINE                     the program run (text)
//   S SUPPRESSION                      a leak suppression the program embeds (text)
//   I PAGE_SIZE PHYS_PAGES             system information
//   A                                  heaptrack attached to a running process
//   s LENGTH TEXT                      a string (file version 3; before it: "s TEXT"); ids 1, 2, ...
//   i IP MODULE [FN [FILE LINE [FN FILE LINE]...]]   an instruction pointer, ids 1, 2, ...;
//                                      MODULE, FN, FILE are string ids (0: unknown), the extra
//                                      triples its inlined callers
//   t IP PARENT                        a trace (call-tree node), ids 1, 2, ...; PARENT 0: root
//   a SIZE TRACE                       an allocation info, ids 0, 1, ...
//   + INFO                             an allocation (file version >= 1; 0: "+ SIZE TRACE PTR")
//   - INFO                             a deallocation (file version >= 1; 0: "- PTR")
//   c MILLISECONDS                     time since the start, every 10 ms
//   R PAGES                            resident set size
//   # ...                              comment
// heaptrack's raw recordings (`heaptrack --raw`, before heaptrack_interpret) also have 'x' and
// 'm' lines and addresses in '+' and '-'; the importer refuses them (heaptrack.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::tracetools {

struct HeaptrackLine {
  char type = 0;
  std::vector<std::uint64_t> numbers;  // the hex fields, in order
  std::string_view text;               // 's': the string; 'X', 'S': the rest of the line
};

// Parses `line` (without its newline) into `out`; `fileVersion` says how strings are written.
// Returns "" when the line is well-formed, else why not ("unknown line type 'Q'", "'t' takes
// 2 numbers, got 1", "bad hex number 'zz'"). Empty lines and comments come back as type '#'.
std::string parseHeaptrackLine(std::string_view line, unsigned fileVersion, HeaptrackLine& out);

}  // namespace strata::tracetools
