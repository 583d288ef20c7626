// The GNU obstack C API (<strata/obstack.h>) over ObstackHeap. struct obstack holds an
// ObstackHeap whose parent is UserChunkHeap, a top heap that calls the chunk functions the
// program named (obstack_chunk_alloc / obstack_chunk_free). Only the strata_obstack_* names
// are exported (the library is built with hidden visibility).
#include <cstdio>
#include <cstdlib>
#include <new>

#pragma GCC visibility push(default)
#include "strata/obstack.h"
#pragma GCC visibility pop

#include "strata/special/obstack_heap.hpp"

namespace {

// A top heap over the program's chunk functions, with or without their extra argument.
// The functions are assumed to return malloc-aligned memory, as glibc assumes.
class UserChunkHeap {
 public:
  static constexpr std::size_t Alignment = alignof(std::max_align_t);

  UserChunkHeap(void* (*alloc)(std::size_t), void (*release)(void*)) noexcept
      : alloc_(alloc), release_(release) {}
  UserChunkHeap(void* (*alloc)(void*, std::size_t), void (*release)(void*, void*),
                void* arg) noexcept
      : allocArg_(alloc), releaseArg_(release), arg_(arg) {}

  void* malloc(std::size_t n) noexcept {
    return allocArg_ != nullptr ? allocArg_(arg_, n) : alloc_(n);
  }
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (releaseArg_ != nullptr) {
      releaseArg_(arg_, p);
    } else {
      release_(p);
    }
  }

 private:
  void* (*alloc_)(std::size_t) = nullptr;
  void (*release_)(void*) = nullptr;
  void* (*allocArg_)(void*, std::size_t) = nullptr;
  void (*releaseArg_)(void*, void*) = nullptr;
  void* arg_ = nullptr;
};

// glibc's default chunk size: 4096 less malloc's bookkeeping.
using Impl = strata::ObstackHeap<4064, UserChunkHeap>;
static_assert(sizeof(Impl) <= STRATA_OBSTACK_IMPL_BYTES);
static_assert(alignof(Impl) <= alignof(decltype(obstack::strata_impl)));

Impl& impl(struct obstack* h) noexcept {
  return *std::launder(reinterpret_cast<Impl*>(h->strata_impl.strata_bytes));
}
const Impl& impl(const struct obstack* h) noexcept {
  return *std::launder(reinterpret_cast<const Impl*>(h->strata_impl.strata_bytes));
}

// The heap, told of any change the program made to the public chunk_size / alignment_mask.
Impl& sync(struct obstack* h) noexcept {
  Impl& o = impl(h);
  o.setChunkSize(h->chunk_size > 0 ? static_cast<std::size_t>(h->chunk_size) : 0);
  o.setAlignment(static_cast<std::size_t>(static_cast<unsigned>(h->alignment_mask)) + 1);
  return o;
}

// What the glibc default handler does: say so and exit.
void printAndExit() {
  std::fputs("memory exhausted\n", stderr);
  std::exit(strata_obstack_exit_failure);
}

// Out of memory: the handler (which should not return).
void failed() noexcept { strata_obstack_alloc_failed_handler(); }

// Records the settings in the public fields and takes the first chunk, as glibc does.
int start(struct obstack* h, Impl* o, std::size_t size, std::size_t alignment) noexcept {
  o->setChunkSize(size);
  o->setAlignment(alignment == 0 ? Impl::Alignment : alignment);
  h->chunk_size = static_cast<long>(o->chunkSize());
  h->alignment_mask = static_cast<int>(o->alignment() - 1);
  if (!o->makeRoom(0)) {
    failed();
    return 0;
  }
  return 1;
}

}  // namespace

extern "C" {

void (*strata_obstack_alloc_failed_handler)(void) = printAndExit;
int strata_obstack_exit_failure = EXIT_FAILURE;

int strata_obstack_begin(struct obstack* h, size_t size, size_t alignment,
                         void* (*chunkfun)(size_t), void (*freefun)(void*)) {
  return start(h, new (h->strata_impl.strata_bytes) Impl(chunkfun, freefun), size, alignment);
}

int strata_obstack_begin_1(struct obstack* h, size_t size, size_t alignment,
                           void* (*chunkfun)(void*, size_t), void (*freefun)(void*, void*),
                           void* arg) {
  return start(h, new (h->strata_impl.strata_bytes) Impl(chunkfun, freefun, arg), size,
               alignment);
}

void strata_obstack_grow(struct obstack* h, const void* data, size_t n) {
  if (!sync(h).grow(data, n)) failed();
}

void strata_obstack_grow0(struct obstack* h, const void* data, size_t n) {
  Impl& o = sync(h);
  if (n == SIZE_MAX || !o.makeRoom(n + 1)) {
    failed();
    return;
  }
  o.grow(data, n);
  o.grow1(0);
}

void strata_obstack_1grow(struct obstack* h, int c) {
  if (!sync(h).grow1(static_cast<unsigned char>(c))) failed();
}

void strata_obstack_ptr_grow(struct obstack* h, const void* p) {
  if (!sync(h).grow(&p, sizeof p)) failed();
}

void strata_obstack_int_grow(struct obstack* h, int v) {
  if (!sync(h).grow(&v, sizeof v)) failed();
}

void strata_obstack_blank(struct obstack* h, ptrdiff_t n) {
  Impl& o = sync(h);
  if (n < 0) {
    o.shrink(static_cast<std::size_t>(-(n + 1)) + 1);
  } else if (!o.blank(static_cast<std::size_t>(n))) {
    failed();
  }
}

void strata_obstack_make_room(struct obstack* h, size_t n) {
  if (!sync(h).makeRoom(n)) failed();
}

void* strata_obstack_finish(struct obstack* h) {
  void* p = sync(h).finish();
  if (p == nullptr) failed();
  return p;
}

void* strata_obstack_alloc(struct obstack* h, size_t n) {
  void* p = sync(h).malloc(n);
  if (p == nullptr) failed();
  return p;
}

void* strata_obstack_copy(struct obstack* h, const void* data, size_t n) {
  Impl& o = sync(h);
  if (!o.grow(data, n)) {
    failed();
    return nullptr;
  }
  return o.finish();
}

void* strata_obstack_copy0(struct obstack* h, const void* data, size_t n) {
  strata_obstack_grow0(h, data, n);
  return strata_obstack_finish(h);
}

void strata_obstack_free(struct obstack* h, void* obj) {
  Impl& o = impl(h);
  if (obj == nullptr) {
    o.~Impl();
    return;
  }
  if (!o.freeTo(obj)) {
    std::fprintf(stderr, "obstack_free: %p was not allocated in obstack %p\n", obj,
                 static_cast<void*>(h));
    std::abort();
  }
}

size_t strata_obstack_object_size(const struct obstack* h) { return impl(h).objectSize(); }
size_t strata_obstack_room(const struct obstack* h) { return impl(h).room(); }
void* strata_obstack_base(const struct obstack* h) { return impl(h).base(); }
char* strata_obstack_next_free(const struct obstack* h) {
  return static_cast<char*>(impl(h).nextFree());
}
size_t strata_obstack_memory_used(const struct obstack* h) { return impl(h).memoryUsed(); }
int strata_obstack_empty_p(const struct obstack* h) { return impl(h).empty() ? 1 : 0; }

}  // extern "C"
