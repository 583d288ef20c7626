// Tests for allocation sites in the trace format (toolkit/trace/include/strata/trace/sites.hpp, the SITES
// flag and the sites and modules chunks of docs/toolkit/trace-format.md): writer -> reader round
// trips, chunk order, and every new error with the byte offset of its chunk.
// links: strata_trace
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "strata/trace/reader.hpp"
#include "strata/trace/writer.hpp"
#include "toolkit/replay/trace_builder.hpp"

namespace {

using namespace strata::trace;
using strata::test::Bytes;
using strata::test::VectorSink;

// A writer of a trace with sites into a vector, with buffers of the given sizes.
struct SitesTrace {
  explicit SitesTrace(std::size_t events = 4096, std::size_t sites = 4096)
      : buf(events), sbuf(sites),
        w(buf.data(), buf.size(), VectorSink{&out}, SiteBuffer{sbuf.data(), sbuf.size()}) {}
  Bytes out;
  Bytes buf, sbuf;
  TraceWriter<VectorSink> w;
};

Event malloc(std::uint64_t size, std::uint64_t site, std::uint64_t t = 0) {
  Event e;
  e.op = Op::Malloc;
  e.size = size;
  e.site = site;
  e.timeNs = t;
  return e;
}

Event freeOf(std::uint64_t id) {
  Event e;
  e.op = Op::Free;
  e.object = id;
  return e;
}

// Reads every event; returns the error (kind None when the trace read to its end).
TraceError readAll(const Bytes& b, std::vector<Event>* events = nullptr) {
  TraceReader<MemorySource> r(MemorySource{b.data(), b.size()});
  Event e;
  ReadStatus s;
  while ((s = r.next(e)) == ReadStatus::Event)
    if (events != nullptr) events->push_back(e);
  return s == ReadStatus::Error ? r.error() : TraceError{};
}

// Appends a chunk with this magic, count and payload (a correct CRC) to b.
void addChunk(Bytes& b, std::uint32_t magic, std::uint32_t count, const Bytes& payload) {
  unsigned char h[kChunkHeaderSize];
  putU32(h, magic);
  putU32(h + 4, static_cast<std::uint32_t>(payload.size()));
  putU32(h + 8, count);
  putU32(h + 12, crc32(payload.data(), payload.size()));
  b.insert(b.end(), h, h + sizeof h);
  b.insert(b.end(), payload.begin(), payload.end());
}

// A file header with these flags.
Bytes header(std::uint16_t flags) {
  Bytes b(kFileHeaderSize, 0);
  std::memcpy(b.data(), kFileMagic, sizeof kFileMagic);
  putU16(b.data() + 8, kFormatVersion);
  putU16(b.data() + 10, flags);
  return b;
}

TEST(TraceSites, SitesModulesAndEventsRoundTrip) {
  SitesTrace t;
  const std::uint64_t a[] = {0x55550000'1234, 0x55550000'1000, 0x7f00'0000'2000};
  const std::uint64_t b[] = {0x55550000'4444};
  const std::string lib = "/usr/lib/libfoo.so";
  const unsigned char id[] = {0xde, 0xad, 0xbe, 0xef};
  const ModuleInfo mods[] = {{0x55550000'0000, 0x55550001'0000, 0x55550000'0000, "/bin/prog", 9,
                              nullptr, 0},
                             {0x7f00'0000'0000, 0x7f00'0010'0000, 0x7f00'0000'0000, lib.data(),
                              lib.size(), id, sizeof id}};
  ASSERT_TRUE(t.w.addModules(mods, 2));
  const std::uint64_t s1 = t.w.defineSite(a, 3);
  const std::uint64_t s2 = t.w.defineSite(b, 1);
  EXPECT_EQ(s1, 1u);
  EXPECT_EQ(s2, 2u);
  EXPECT_EQ(t.w.append(malloc(10, s1, 5)), 0u);
  EXPECT_EQ(t.w.append(malloc(20, kNoSite, 6)), 1u);
  EXPECT_EQ(t.w.append(malloc(30, s2, 7)), 2u);
  EXPECT_EQ(t.w.append(freeOf(0)), kNoObject);
  EXPECT_EQ(t.w.append(malloc(1, 3)), TraceWriter<VectorSink>::kRejected);  // not defined
  ASSERT_TRUE(t.w.finish());

  TraceReader<MemorySource> r(MemorySource{t.out.data(), t.out.size()});
  std::vector<Event> ev;
  Event e;
  while (r.next(e) == ReadStatus::Event) ev.push_back(e);
  ASSERT_TRUE(r.complete()) << r.error().message();
  EXPECT_TRUE(r.hasSites());
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].site, 1u);
  EXPECT_EQ(ev[1].site, kNoSite);
  EXPECT_EQ(ev[2].site, 2u);
  EXPECT_EQ(ev[3].site, kNoSite);  // a free carries none
  EXPECT_EQ(ev[2].size, 30u);
  ASSERT_EQ(r.sites().siteCount(), 2u);
  const auto f1 = r.sites().frames(1);
  EXPECT_EQ(std::vector<std::uint64_t>(f1.begin(), f1.end()),
            std::vector<std::uint64_t>(a, a + 3));
  EXPECT_EQ(r.sites().frames(2).size(), 1u);
  EXPECT_EQ(r.sites().frames(2)[0], b[0]);
  EXPECT_TRUE(r.sites().frames(3).empty());
  ASSERT_EQ(r.sites().moduleCount(), 2u);
  const ModuleInfo m = r.sites().module(1);
  EXPECT_EQ(m.start, mods[1].start);
  EXPECT_EQ(m.end, mods[1].end);
  EXPECT_EQ(m.bias, mods[1].bias);
  EXPECT_EQ(std::string_view(m.path, m.pathLength), lib);
  ASSERT_EQ(m.buildIdLength, sizeof id);
  EXPECT_EQ(std::memcmp(m.buildId, id, sizeof id), 0);
  EXPECT_EQ(std::string_view(r.sites().module(0).path, r.sites().module(0).pathLength), "/bin/prog");
}

// Many sites through small buffers: sites chunks interleave with event chunks, each before the
// first event naming its sites, and every event reads back with its site.
TEST(TraceSites, ManySitesThroughSmallBuffersStayInOrder) {
  SitesTrace t(kMinWriterBuffer, kMinSiteBuffer);
  std::vector<std::uint64_t> want;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    std::uint64_t frames[kMaxSiteDepth];
    const std::size_t depth = 1 + i % kMaxSiteDepth;
    for (std::size_t k = 0; k < depth; ++k) frames[k] = 0x400000 + i * 977 + k * 0x10000 - k * k;
    std::uint64_t site = i % 3 == 0 ? t.w.defineSite(frames, depth) : (i % 3 == 1 ? i / 3 + 1 : 0);
    ASSERT_NE(t.w.append(malloc(i, site, i)), TraceWriter<VectorSink>::kRejected);
    want.push_back(site);
  }
  ASSERT_TRUE(t.w.finish());
  std::vector<Event> ev;
  TraceReader<MemorySource> r(MemorySource{t.out.data(), t.out.size()});
  Event e;
  while (r.next(e) == ReadStatus::Event) ev.push_back(e);
  ASSERT_TRUE(r.complete()) << r.error().message();
  ASSERT_EQ(ev.size(), want.size());
  for (std::size_t i = 0; i < ev.size(); ++i) ASSERT_EQ(ev[i].site, want[i]) << i;
  ASSERT_EQ(r.sites().siteCount(), 1000u);
  const auto f = r.sites().frames(1000);  // event 2997's site, depth 1 + 2997 % 64
  ASSERT_EQ(f.size(), 1 + 2997 % kMaxSiteDepth);
  EXPECT_EQ(f.back(), 0x400000 + 2997 * 977 + (f.size() - 1) * 0x10000 - (f.size() - 1) * (f.size() - 1));
  EXPECT_GT(r.chunksRead(), 10u);
}

TEST(TraceSites, WithoutTheFlagNothingChanges) {
  Bytes out, buf(1024);
  TraceWriter<VectorSink> w(buf.data(), buf.size(), VectorSink{&out});
  const std::uint64_t f[] = {1};
  EXPECT_EQ(w.defineSite(f, 1), kNoSite);
  const ModuleInfo m{1, 2, 0, "x", 1, nullptr, 0};
  EXPECT_FALSE(w.addModules(&m, 1));
  ASSERT_EQ(w.append(malloc(16, 7)), 0u);  // the site is ignored
  ASSERT_TRUE(w.finish());
  EXPECT_EQ(getU16(out.data() + 10), 0u);
  // op byte, thread, time, size: no site varint.
  EXPECT_EQ(out.size(), kFileHeaderSize + kChunkHeaderSize + 5 + kChunkHeaderSize + 3);
  std::vector<Event> ev;
  EXPECT_EQ(readAll(out, &ev).kind, ErrorKind::None);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].site, kNoSite);
}

TEST(TraceSites, WriterRefusesBadSitesAndModules) {
  SitesTrace t;
  const std::uint64_t f[kMaxSiteDepth + 1] = {};
  EXPECT_EQ(t.w.defineSite(f, 0), kNoSite);
  EXPECT_EQ(t.w.defineSite(f, kMaxSiteDepth + 1), kNoSite);
  EXPECT_EQ(t.w.defineSite(f, kMaxSiteDepth), 1u);
  const ModuleInfo empty{5, 5, 0, "x", 1, nullptr, 0};
  EXPECT_FALSE(t.w.addModules(&empty, 1));
  Bytes buf(1024), sbuf(kMinSiteBuffer - 1), out;
  TraceWriter<VectorSink> small(buf.data(), buf.size(), VectorSink{&out},
                                SiteBuffer{sbuf.data(), sbuf.size()});
  EXPECT_FALSE(small.ok());
  // The program chunk must come first: not after a site or a module.
  EXPECT_FALSE(t.w.program(1, 0, "/bin/prog"));
  SitesTrace m;
  const ModuleInfo one{5, 6, 0, "x", 1, nullptr, 0};
  ASSERT_TRUE(m.w.addModules(&one, 1));
  EXPECT_FALSE(m.w.program(1, 0, "/bin/prog"));
  SitesTrace p;
  EXPECT_TRUE(p.w.program(1, 0, "/bin/prog"));
}

TEST(TraceSites, UnknownFlagsAndSitesChunksWithoutTheFlagAreRefused) {
  Bytes b = header(0x0002);
  TraceError err = readAll(b);
  EXPECT_EQ(err.kind, ErrorKind::BadFileFlags);
  EXPECT_EQ(err.offset, 10u);
  b = header(kFileFlagSites);
  putU16(b.data() + 8, 1);  // version 1 knows no flags
  EXPECT_EQ(readAll(b).kind, ErrorKind::BadFileFlags);

  for (const std::uint32_t magic : {kSitesChunkMagic, kModulesChunkMagic}) {
    b = header(0);
    addChunk(b, kEventChunkMagic, 1, {0, 0x00, 0, 0, 8});  // malloc(8), no site varint
    const std::size_t at = b.size();
    addChunk(b, magic, 0, {0});
    err = readAll(b);
    EXPECT_EQ(err.kind, ErrorKind::BadChunkMagic);
    EXPECT_EQ(err.offset, at);
    EXPECT_NE(err.message().find("without the SITES flag"), std::string::npos) << err.message();
  }
}

TEST(TraceSites, EventNamingAnUndefinedSiteIsABadEvent) {
  Bytes b = header(kFileFlagSites);
  addChunk(b, kSitesChunkMagic, 1, {0, 1, 0x90, 0x03});  // site 1: one frame
  const std::size_t at = b.size();
  addChunk(b, kEventChunkMagic, 2, {0, 0x00, 0, 0, 8, 1, 0x00, 0, 0, 8, 2});  // sites 1, 2
  std::vector<Event> ev;
  const TraceError err = readAll(b, &ev);
  EXPECT_EQ(err.kind, ErrorKind::BadEvent);
  EXPECT_EQ(err.offset, at);
  EXPECT_NE(err.message().find("site not yet defined"), std::string::npos);
  ASSERT_EQ(ev.size(), 1u);  // the event before the bad one was read
  EXPECT_EQ(ev[0].site, 1u);
}

TEST(TraceSites, BadDepthTrailingBytesAndBadModulesAreBadSites) {
  struct Case {
    std::uint32_t magic, count;
    Bytes payload;
    const char* what;
  };
  const Case cases[] = {
      {kSitesChunkMagic, 1, {0, 0, 1}, "depth"},                  // depth 0
      {kSitesChunkMagic, 1, {0, 65, 1}, "depth"},                 // depth over 64
      {kSitesChunkMagic, 1, {0, 2, 1}, "frame"},                  // a frame missing
      {kSitesChunkMagic, 1, {0, 1, 1, 7}, "after the last site"},  // trailing byte
      {kSitesChunkMagic, 9, {0, 1, 1}, "count"},                  // more sites than bytes
      {kSitesChunkMagic, 1, {}, "base"},                          // no base-site
      {kModulesChunkMagic, 1, {1, 0, 0, 0, 0}, "range"},          // empty range
      {kModulesChunkMagic, 1, {1, 1, 0, 9, 'a', 0}, "path"},      // path past the payload
      {kModulesChunkMagic, 1, {1, 1, 0, 0, 65}, "build id"},      // build id over 64
      {kModulesChunkMagic, 1, {1, 1, 0, 0, 0, 0}, "after the last module"},
  };
  for (const Case& c : cases) {
    Bytes b = header(kFileFlagSites);
    const std::size_t at = b.size();
    addChunk(b, c.magic, c.count, c.payload);
    const TraceError err = readAll(b);
    EXPECT_EQ(err.kind, ErrorKind::BadSites) << c.what << ": " << err.message();
    EXPECT_EQ(err.offset, at) << c.what;
    EXPECT_NE(err.message().find(c.what), std::string::npos) << err.message();
  }
}

TEST(TraceSites, AMissingOrRepeatedSitesChunkIsADiscontinuity) {
  SitesTrace t(kMinWriterBuffer, kMinSiteBuffer);
  std::uint64_t frames[kMaxSiteDepth];
  for (std::size_t k = 0; k < kMaxSiteDepth; ++k) frames[k] = std::uint64_t{1} << 60 >> k;
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t s = t.w.defineSite(frames, kMaxSiteDepth);
    ASSERT_NE(t.w.append(malloc(8, s)), TraceWriter<VectorSink>::kRejected);
  }
  ASSERT_TRUE(t.w.finish());
  // Each sites chunk holds one site here, followed by the events chunk naming it. Drop the
  // second sites chunk and its events: the third sites chunk then starts at the wrong site.
  std::vector<std::size_t> sites;
  for (std::size_t at = kFileHeaderSize; at < t.out.size();
       at += kChunkHeaderSize + getU32(t.out.data() + at + 4))
    if (getU32(t.out.data() + at) == kSitesChunkMagic) sites.push_back(at);
  ASSERT_GE(sites.size(), 3u);
  Bytes cut(t.out.begin(), t.out.begin() + static_cast<std::ptrdiff_t>(sites[1]));
  cut.insert(cut.end(), t.out.begin() + static_cast<std::ptrdiff_t>(sites[2]), t.out.end());
  const TraceError err = readAll(cut);
  EXPECT_EQ(err.kind, ErrorKind::Discontinuity) << err.message();
  EXPECT_EQ(err.offset, sites[1]);

  // A sites chunk repeated is a discontinuity at the copy.
  Bytes twice(t.out.begin(), t.out.begin() + static_cast<std::ptrdiff_t>(sites[1]));
  const std::size_t first = kChunkHeaderSize + getU32(t.out.data() + sites[0] + 4);
  twice.insert(twice.end(), t.out.begin() + static_cast<std::ptrdiff_t>(sites[0]),
               t.out.begin() + static_cast<std::ptrdiff_t>(sites[0] + first));
  const TraceError again = readAll(twice);
  EXPECT_EQ(again.kind, ErrorKind::Discontinuity) << again.message();
  EXPECT_EQ(again.offset, sites[1]);
}

TEST(TraceSites, TruncationInsideASitesChunkNamesIt) {
  SitesTrace t;
  const std::uint64_t f[] = {0x401000, 0x402000};
  const std::uint64_t s = t.w.defineSite(f, 2);
  ASSERT_NE(t.w.append(malloc(8, s)), TraceWriter<VectorSink>::kRejected);
  ASSERT_TRUE(t.w.finish());
  ASSERT_EQ(getU32(t.out.data() + kFileHeaderSize), kSitesChunkMagic);
  for (std::size_t n = kFileHeaderSize + 1; n < kFileHeaderSize + kChunkHeaderSize + 4; ++n) {
    const Bytes cut(t.out.begin(), t.out.begin() + static_cast<std::ptrdiff_t>(n));
    const TraceError err = readAll(cut);
    EXPECT_EQ(err.kind, ErrorKind::TruncatedChunk) << n;
    EXPECT_EQ(err.offset, kFileHeaderSize) << n;
  }
}

}  // namespace
