// ParallelReader: TraceReader's events, in the same order and with the same error at the same
// place, decoded on a second thread. A worker thread reads, checks, decompresses and decodes
// the trace into batches of events while the caller consumes the batch before, so a pass
// whose own work per event is about the decoder's runs up to twice as fast on two cores.
// Memory: one TraceReader (one chunk) and kSlots batches of kBatchEvents events.
//
// For analysis passes. Not for a replayer that measures an allocator: the worker allocates
// from the process heap (its TraceReader's buffers and its thread), and its decoding would
// run inside the timed window.
#pragma once
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "strata/trace/reader.hpp"

namespace strata::trace {

template <class Source>
class ParallelReader {
 public:
  static constexpr std::size_t kBatchEvents = 8192;
  static constexpr std::size_t kSlots = 3;

  // Starts the worker, unless the machine has one core (then next() decodes in the caller's
  // thread, as TraceReader does).
  explicit ParallelReader(Source source) : reader_(std::move(source)) {
    for (Batch& b : slots_) b.events.resize(kBatchEvents);
    if (std::thread::hardware_concurrency() > 1) worker_ = std::thread([this] { run(); });
  }
  ~ParallelReader() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  ParallelReader(const ParallelReader&) = delete;
  ParallelReader& operator=(const ParallelReader&) = delete;

  // As TraceReader::next: the same events, then the same End or Error. An exception the
  // decoding threw (out of memory) is thrown here, after the events before it.
  ReadStatus next(Event& out) {
    if (pos_ == count_ && !advance()) return finalStatus();
    out = current_->events[pos_++];
    ++consumed_;
    return ReadStatus::Event;
  }

  // The same, a batch at a time (no copy): Event with `out` the next events (at least one,
  // valid until the next call), or End or Error with `out` empty. Mixes with next().
  ReadStatus nextBatch(std::span<const Event>& out) {
    if (pos_ == count_ && !advance()) {
      out = {};
      return finalStatus();
    }
    out = std::span<const Event>(current_->events.data() + pos_, count_ - pos_);
    consumed_ += count_ - pos_;
    pos_ = count_;
    return ReadStatus::Event;
  }

  std::uint64_t eventsRead() const noexcept { return consumed_; }  // returned so far
  // Valid after the first next(), as TraceReader's.
  std::uint16_t version() const noexcept { return reader_.version(); }
  const ProgramInfo& program() const noexcept { return reader_.program(); }
  bool hasSites() const noexcept { return reader_.hasSites(); }
  // Valid once next() returned End or Error (the worker has then stopped).
  const TraceError& error() const noexcept { return reader_.error(); }
  bool complete() const noexcept { return reader_.complete(); }
  TraceTotals totals() const noexcept { return reader_.totals(); }
  std::uint64_t objects() const noexcept { return reader_.objects(); }
  std::uint64_t threads() const noexcept { return reader_.threads(); }
  std::uint64_t chunksRead() const noexcept { return reader_.chunksRead(); }
  std::uint64_t bytesRead() const noexcept { return reader_.bytesRead(); }
  const SiteTable<>& sites() const noexcept { return reader_.sites(); }

 private:
  struct Batch {
    std::vector<Event> events;
    std::size_t count = 0;
    ReadStatus last = ReadStatus::Event;  // End or Error: the reader's last batch
    std::exception_ptr thrown;            // what decoding threw, after the events
    bool full = false;                    // filled, not yet consumed (under mutex_)
  };

  // Decodes up to kBatchEvents events into b; b.last says whether the trace went on.
  void fill(Batch& b) {
    b.count = 0;
    b.last = ReadStatus::Event;
    try {
      while (b.count < kBatchEvents) {
        const ReadStatus s = reader_.next(b.events[b.count]);
        if (s != ReadStatus::Event) {
          b.last = s;
          return;
        }
        ++b.count;
      }
    } catch (...) {
      b.thrown = std::current_exception();
      b.last = ReadStatus::Error;
    }
  }

  // The worker: fills the slots in turn, waiting for the caller to free each, until the
  // reader's last batch or the destructor.
  void run() {
    for (std::size_t i = 0;; i = (i + 1) % kSlots) {
      Batch& b = slots_[i];
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !b.full; });
        if (stop_) return;
      }
      fill(b);
      const bool last = b.last != ReadStatus::Event;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        b.full = true;
      }
      changed_.notify_all();
      if (last) return;
    }
  }

  // Moves to the next batch, handing the current one back to the worker. False when the
  // current batch was the last.
  bool advance() {
    if (current_ != nullptr) {
      if (current_->last != ReadStatus::Event) return false;
      release(*current_);
    }
    Batch& b = slots_[next_];
    next_ = (next_ + 1) % kSlots;
    if (worker_.joinable()) {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return b.full; });
    } else {
      fill(b);
    }
    current_ = &b;
    pos_ = 0;
    count_ = b.count;
    if (count_ != 0) return true;
    return b.last == ReadStatus::Event ? advance() : false;
  }

  void release(Batch& b) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      b.full = false;
    }
    changed_.notify_all();
  }

  ReadStatus finalStatus() {
    if (current_->thrown) std::rethrow_exception(std::exchange(current_->thrown, nullptr));
    return current_->last;
  }

  TraceReader<Source> reader_;  // the worker's until the last batch, then the caller's
  std::array<Batch, kSlots> slots_;
  Batch* current_ = nullptr;    // the caller's batch
  std::size_t pos_ = 0, count_ = 0, next_ = 0;
  std::uint64_t consumed_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::thread worker_;  // last: started once everything above is built
};

}  // namespace strata::trace
