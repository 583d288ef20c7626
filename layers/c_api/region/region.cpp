// The region emulator behind <strata/region.h>: each object is its own call to the C
// library's malloc (whatever malloc the process has), recorded out of band in a growable
// pointer array so clear and destroy can free every one. Child regions hang off their parent
// in an intrusive doubly linked list, so a child is unlinked in O(1) when destroyed alone.
// Only malloc/free/memcpy/memset are used: no C++ runtime, so C programs link it plainly.
#include <strata/region.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

struct strata_region {
  strata_region* parent;
  strata_region* first_child;
  strata_region* prev_sibling;
  strata_region* next_sibling;
  void** objects;        // out-of-band record: every live object's pointer
  std::size_t count;     // used entries of objects
  std::size_t capacity;  // entries allocated for objects
  std::size_t live_bytes;
};

namespace {

constexpr std::size_t kInitialCapacity = 16;
// The largest object malloc can be asked for: sizes beyond PTRDIFF_MAX are refused up front,
// as glibc does, so no allocator under test ever sees them.
constexpr std::size_t kMaxObject = static_cast<std::size_t>(PTRDIFF_MAX);

void* fail(int err) noexcept {
  errno = err;
  return nullptr;
}

// Makes room for one more record entry, doubling the array: amortised O(1). On failure the
// region is untouched. Returns false (errno = ENOMEM) when the array cannot grow.
bool reserveOne(strata_region* r) noexcept {
  if (r->count < r->capacity) return true;
  std::size_t cap = r->capacity ? r->capacity * 2 : kInitialCapacity;
  if (cap > SIZE_MAX / sizeof(void*)) {
    errno = ENOMEM;
    return false;
  }
  void* grown = std::realloc(r->objects, cap * sizeof(void*));
  if (!grown) {
    errno = ENOMEM;
    return false;
  }
  r->objects = static_cast<void**>(grown);
  r->capacity = cap;
  return true;
}

// Frees every recorded object of r (newest first) and forgets them; keeps the array.
void freeObjects(strata_region* r) noexcept {
  for (std::size_t i = r->count; i > 0; --i) std::free(r->objects[i - 1]);
  r->count = 0;
  r->live_bytes = 0;
}

// Takes r out of its parent's child list (no-op for a root).
void unlink(strata_region* r) noexcept {
  if (r->prev_sibling)
    r->prev_sibling->next_sibling = r->next_sibling;
  else if (r->parent)
    r->parent->first_child = r->next_sibling;
  if (r->next_sibling) r->next_sibling->prev_sibling = r->prev_sibling;
  r->parent = r->prev_sibling = r->next_sibling = nullptr;
}

// Destroys every descendant of r, deepest first, without recursion (so nesting depth is
// bounded only by memory, never by the stack). Leaves r itself with no children.
void destroyDescendants(strata_region* r) noexcept {
  strata_region* node = r->first_child;
  while (node) {
    while (node->first_child) node = node->first_child;
    strata_region* up = node->parent;
    unlink(node);
    freeObjects(node);
    std::free(node->objects);
    std::free(node);
    node = (up == r) ? r->first_child : up;
  }
}

// Allocates size bytes with malloc and records them in r; the shared path of every
// allocating call. Cost: one malloc plus, now and then, one realloc of the record.
void* allocRecorded(strata_region* r, std::size_t size) noexcept {
  if (!r) return fail(EINVAL);
  if (size > kMaxObject) return fail(ENOMEM);
  if (!reserveOne(r)) return nullptr;
  void* p = std::malloc(size ? size : 1);
  if (!p) return fail(ENOMEM);
  r->objects[r->count++] = p;
  r->live_bytes += size;
  return p;
}

}  // namespace

extern "C" {

strata_region* region_create(strata_region* parent) {
  auto* r = static_cast<strata_region*>(std::malloc(sizeof(strata_region)));
  if (!r) return static_cast<strata_region*>(fail(ENOMEM));
  *r = strata_region{parent, nullptr, nullptr, nullptr, nullptr, 0, 0, 0};
  if (parent) {
    r->next_sibling = parent->first_child;
    if (parent->first_child) parent->first_child->prev_sibling = r;
    parent->first_child = r;
  }
  return r;
}

void* region_alloc(strata_region* r, std::size_t size) { return allocRecorded(r, size); }

void* region_calloc(strata_region* r, std::size_t count, std::size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return fail(ENOMEM);
  std::size_t n = count * size;
  void* p = allocRecorded(r, n);
  if (p) std::memset(p, 0, n);
  return p;
}

char* region_strdup(strata_region* r, const char* s) {
  if (!s) return static_cast<char*>(fail(EINVAL));
  std::size_t n = std::strlen(s) + 1;
  void* p = allocRecorded(r, n);
  if (p) std::memcpy(p, s, n);
  return static_cast<char*>(p);
}

void region_clear(strata_region* r) {
  if (!r) return;
  destroyDescendants(r);
  freeObjects(r);
}

void region_destroy(strata_region* r) {
  if (!r) return;
  destroyDescendants(r);
  unlink(r);
  freeObjects(r);
  std::free(r->objects);
  std::free(r);
}

std::size_t region_object_count(const strata_region* r) { return r ? r->count : 0; }

std::size_t region_live_bytes(const strata_region* r) { return r ? r->live_bytes : 0; }

}  // extern "C"
