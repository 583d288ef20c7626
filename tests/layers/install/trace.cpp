// The installed trace format (strata::trace): writes a two-event trace into memory and reads
// it back. Exit status 0 when the reader returns both events as written and the trailer.
#include <cstdio>
#include <vector>

#include "strata/trace/reader.hpp"
#include "strata/trace/writer.hpp"

int main() {
  std::vector<unsigned char> bytes;
  auto sink = [&bytes](const unsigned char* data, std::size_t len) {
    bytes.insert(bytes.end(), data, data + len);
    return true;
  };
  std::vector<unsigned char> buffer(4096);
  strata::trace::TraceWriter writer(buffer.data(), buffer.size(), sink);
  strata::trace::Event made;
  made.op = strata::trace::Op::Malloc;
  made.size = 100;
  const auto id = writer.append(made);
  strata::trace::Event freed;
  freed.op = strata::trace::Op::Free;
  freed.object = id;
  writer.append(freed);
  if (!writer.finish()) return std::puts("writer failed"), 1;

  strata::trace::TraceReader reader(strata::trace::MemorySource{bytes.data(), bytes.size()});
  strata::trace::Event e;
  if (reader.next(e) != strata::trace::ReadStatus::Event || e.op != made.op || e.size != 100)
    return std::puts("first event wrong"), 1;
  if (reader.next(e) != strata::trace::ReadStatus::Event || e.op != freed.op || e.object != id)
    return std::puts("second event wrong"), 1;
  if (reader.next(e) != strata::trace::ReadStatus::End || !reader.complete())
    return std::puts("no clean end"), 1;
  std::puts("trace: 2 events written and read back");
  return 0;
}
