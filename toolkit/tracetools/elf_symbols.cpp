// ElfSymbols: walks an ELF file's section headers for its symbol tables and build-id note
// (elf_symbols.hpp). Every offset and size from the file is checked against the file's length
// before it is used.
#include "tracetools/elf_symbols.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace strata::tracetools {
namespace {

// Whether [off, off + len) lies within a file of `size` bytes.
bool within(std::uint64_t off, std::uint64_t len, std::size_t size) {
  return off <= size && len <= size - off;
}

// "ns::f(int)" for "_ZN2ns1fEi"; the name itself when it is not a C++ name.
std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (d == nullptr) return name;
  std::string out = d;
  std::free(d);
  return out;
}

}  // namespace

ElfSymbols::ElfSymbols(const std::string& path) {
  // O_NONBLOCK: a path taken from a trace or a recording may name a FIFO, whose open would
  // otherwise wait for a writer; it is then refused as not a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error_ = std::string("cannot open: ") + std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 64) {
    ::close(fd);
    error_ = "not a regular ELF file";
    return;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    error_ = std::string("cannot map: ") + std::strerror(errno);
    return;
  }
  read(static_cast<const unsigned char*>(map), size);
  ::munmap(map, size);
}

void ElfSymbols::read(const unsigned char* data, std::size_t size) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !within(eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr), size)) {
    error_ = "not a 64-bit little-endian ELF file";
    return;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), data + eh.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_type == SHT_NOTE && within(sh.sh_offset, sh.sh_size, size)) {
      // Notes: namesz, descsz, type, then name and desc, each padded to 4 bytes.
      std::uint64_t at = sh.sh_offset;
      const std::uint64_t end = sh.sh_offset + sh.sh_size;
      while (end - at >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        std::memcpy(&nh, data + at, sizeof nh);
        const std::uint64_t name = at + sizeof nh;
        const std::uint64_t desc = name + ((nh.n_namesz + 3ull) & ~3ull);
        if (desc > end || nh.n_descsz > end - desc) break;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            std::memcmp(data + name, "GNU", 4) == 0)
          buildId_.assign(reinterpret_cast<const char*>(data + desc), nh.n_descsz);
        at = desc + ((nh.n_descsz + 3ull) & ~3ull);
      }
      continue;
    }
    if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_link >= sections.size() ||
        sh.sh_entsize != sizeof(Elf64_Sym) || !within(sh.sh_offset, sh.sh_size, size))
      continue;
    const Elf64_Shdr& str = sections[sh.sh_link];
    if (!within(str.sh_offset, str.sh_size, size) || str.sh_size == 0) continue;
    const char* strings = reinterpret_cast<const char*>(data + str.sh_offset);
    for (std::uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, data + sh.sh_offset + k * sizeof sym, sizeof sym);
      const unsigned type = ELF64_ST_TYPE(sym.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
          sym.st_value == 0 || sym.st_name >= str.sh_size)
        continue;
      const char* name = strings + sym.st_name;
      const std::size_t len = strnlen(name, str.sh_size - sym.st_name);
      if (len == 0 || len == str.sh_size - sym.st_name) continue;  // empty or unterminated
      symbols_.push_back(Symbol{sym.st_value, sym.st_size, demangle(name)});
    }
  }
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    return a.value != b.value ? a.value < b.value : a.size > b.size;
  });
}

std::string ElfSymbols::functionAt(std::uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](std::uint64_t v, const Symbol& s) { return v < s.value; });
  if (it == symbols_.begin()) return {};
  const auto next = it;
  --it;
  // Several symbols may share an address (aliases): the sort put the largest first.
  while (it != symbols_.begin() && std::prev(it)->value == it->value) --it;
  if (it->size != 0 ? vaddr - it->value < it->size
                    : (next == symbols_.end() || vaddr < next->value))
    return it->name;
  return {};
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> ElfSymbols::rangesNamed(
    const std::string& name) const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const Symbol& s : symbols_)
    if (s.name == name) out.emplace_back(s.value, s.value + (s.size == 0 ? 1 : s.size));
  return out;
}

}  // namespace strata::tracetools
