// The kernel checks' engine, independent of CUDA: shadow memory per byte, the hazard rules of
// racecheck, initcheck's written bits, and the finding records they produce, deduplicated. A
// backend (the CUDA simulator's trace build: dcsim_check_cuda.h; any other simulated GPU) feeds
// it accesses described by who made them (thread and group, the barrier interval, the warp and
// its __syncwarp count) and reads the findings back.
//
// Ordering model (what makes two accesses *not* a race): the same thread; the same group and a
// later barrier interval (a group barrier was released between them); or the same group and warp
// and a later warp-barrier count of the second thread (a __syncwarp both passed between them).
// Accesses of different groups are never ordered within one launch.
#pragma once

#include <stdint.h>
#include <string.h>

#include <mutex>
#include <unordered_map>
#include <vector>

namespace dccheck {

enum Check : uint32_t { kMemcheck = 1, kRacecheck = 2, kSynccheck = 4, kInitcheck = 8 };
enum Hazard : int32_t { kNoHazard = 0, kWriteWrite = 1, kReadWrite = 2 };

// Who made an access, compactly (a shadow cell holds three).
struct Who {
  uint32_t thread;     // linear index in its group (block, threadgroup)
  uint32_t group;      // linear group index (low 32 bits)
  uint32_t interval;   // group barriers released in its group before the access
  uint32_t warp_syncs; // warp barriers its thread passed before the access
  uint32_t warp;
  uint32_t site;       // the access' call site (the backend's 32-bit name for it, e.g. an offset in its code)
};

inline bool ordered(const Who& first, const Who& then) {
  if (first.group != then.group) return false;
  if (first.thread == then.thread) return true;
  if (then.interval > first.interval) return true;
  return first.warp == then.warp && then.warp_syncs > first.warp_syncs;
}

struct Cell {
  Who writer;
  Who readers[2];
  uint8_t has_writer;
  uint8_t nreaders;
  uint8_t written;  // initcheck: some thread wrote this byte since the shadow was cleared
};

// A finding, as the host reads it (one per distinct problem: same check, hazard, region and sites).
struct Finding {
  int32_t check;       // a Check bit
  int32_t hazard;      // racecheck: Hazard
  int32_t space;       // the backend's memory space of the region (e.g. global, shared)
  int32_t sync_kind;   // synccheck: the backend's kind of barrier problem
  uint64_t region;     // the backend's name for the region (a device address; 0 for named variables)
  uint64_t region_bytes;
  int64_t offset;      // byte offset of the (first) access from the region's start
  uint32_t bytes;      // the access' width
  uint32_t mask, lanes;
  uint32_t line[2];    // synccheck: the barriers' source lines when the backend knows them
  uint32_t thread[2][3], group[2][3];  // the two parties (memcheck/initcheck: [0] only)
  uint32_t stores;     // bit i: party i's access was a store
  uint64_t site[2];    // the call sites (backend addresses, resolved to lines by the host)
  uint64_t count;      // how many accesses showed this problem
  char name[32];       // a named region (a shared variable)
};

// Shadow memory: one cell per byte, created on first touch, at most kMaxCells of them (about 100 bytes
// each with the map's node): past that, bytes not seen yet are not tracked and full() says so.
class Shadow {
 public:
  static constexpr size_t kMaxCells = size_t(1) << 23;
  void clear() {
    cells_.clear();
    full_ = false;
  }
  Cell* at(uintptr_t a) {
    auto it = cells_.find(a);
    if (it != cells_.end()) return &it->second;
    if (cells_.size() >= kMaxCells) {
      full_ = true;
      return nullptr;
    }
    return &cells_[a];
  }
  bool full() const { return full_; }

 private:
  std::unordered_map<uintptr_t, Cell> cells_;
  bool full_ = false;
};

// Returns the hazard of access `now` (a store when `store`) against the cell's history, and with
// `*other` the earlier access it races with; then records `now` in the cell.
inline int32_t race_step(Cell& c, const Who& now, bool store, Who* other) {
  int32_t hazard = kNoHazard;
  if (c.has_writer && !ordered(c.writer, now)) {
    hazard = store ? kWriteWrite : kReadWrite;
    *other = c.writer;
  }
  if (store) {
    for (unsigned i = 0; i < c.nreaders && hazard == kNoHazard; ++i)
      if (!ordered(c.readers[i], now)) {
        hazard = kReadWrite;
        *other = c.readers[i];
      }
    c.writer = now;
    c.has_writer = 1;
    c.nreaders = 0;
  } else {
    unsigned slot = c.nreaders;
    for (unsigned i = 0; i < c.nreaders; ++i)
      if (c.readers[i].thread == now.thread && c.readers[i].group == now.group) slot = i;
    if (slot == 2) slot = 1;  // two readers are kept: the first one and the latest other
    c.readers[slot] = now;
    if (slot == c.nreaders) ++c.nreaders;
  }
  return hazard;
}

// The findings of one launch, deduplicated and capped; safe to call from several threads.
class Findings {
 public:
  static constexpr size_t kMax = 64;
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    list_.clear();
    dropped_ = 0;
  }
  // Adds f, or counts it on an earlier finding of the same check, hazard, region and sites.
  void add(const Finding& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Finding& g : list_)
      if (g.check == f.check && g.hazard == f.hazard && g.space == f.space && g.region == f.region &&
          g.sync_kind == f.sync_kind && strncmp(g.name, f.name, sizeof g.name) == 0 && g.site[0] == f.site[0] &&
          g.site[1] == f.site[1] && g.line[0] == f.line[0] && g.line[1] == f.line[1]) {
        ++g.count;
        return;
      }
    if (list_.size() >= kMax) {
      ++dropped_;
      return;
    }
    list_.push_back(f);
    list_.back().count = 1;
  }
  std::vector<Finding> snapshot(uint32_t* dropped) {
    std::lock_guard<std::mutex> lock(mutex_);
    *dropped = dropped_;
    return list_;
  }

 private:
  std::mutex mutex_;
  std::vector<Finding> list_;
  uint32_t dropped_ = 0;
};

}  // namespace dccheck
