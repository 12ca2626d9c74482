// Compiled binaries, cached in memory (per process) and on disk.
//
// Disk entries live in DOTCOMPUTE_CACHE_DIR (default $XDG_CACHE_HOME/dotcompute
// or ~/.cache/dotcompute), one file per key. Each file starts with a header
// (magic, format version, the key, payload length and payload checksum), so a
// truncated or corrupt entry is detected, discarded and rebuilt. Writes go to
// a unique temporary file that is renamed into place, so concurrent processes
// never see a partial entry. The directory is kept under a size bound by
// evicting the least recently used entries (file mtime is the recency; a hit
// touches it).
//
// Entries are native code that backends dlopen, so the folder must be trusted:
// owned by this user and writable by no one else. Otherwise it is not used: the
// cache falls back to /tmp/dotcompute-cache-<uid> (made 0700, checked the same
// way) or a fresh mkdtemp folder, and warning() says why. Entries are read only
// if they are this user's regular files, and their payload's SHA-256 is checked
// before any backend sees them. A miss takes a per-key lock file (flock) so
// concurrent processes compile a kernel once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dotcompute/export.hpp"

namespace dotcompute {

using Blob = std::shared_ptr<const std::vector<uint8_t>>;

struct CacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t misses = 0;
  uint64_t entries = 0;  // entries on disk
  uint64_t bytes = 0;    // bytes on disk
};

// Everything that changes a binary, and nothing else.
struct CacheKeyInput {
  std::string backend;
  std::string source;
  std::string options;
  std::string compiler_identity;  // compiler name + version
  uint32_t abi_version = 0;
  std::string arch;  // device architecture / ISA flags
};

class DOTCOMPUTE_API KernelCache {
 public:
  static constexpr uint64_t kDefaultMaxBytes = 512ull << 20;

  // An empty `dir` keeps the cache in memory only.
  explicit KernelCache(std::string dir, uint64_t max_bytes = kDefaultMaxBytes);
  // DOTCOMPUTE_CACHE_DIR, else $XDG_CACHE_HOME/dotcompute, else ~/.cache/dotcompute.
  static std::string default_dir();

  // The hex SHA-256 of all inputs (length-prefixed, so fields cannot run together).
  static std::string key(const CacheKeyInput& input);

  // The cached binary for `key`, or nullptr.
  Blob get(const std::string& key);
  // Stores a binary (memory + disk; disk failures are not fatal).
  void put(const std::string& key, Blob blob);
  // get(), else build() and put(). build() may throw; nothing is stored then.
  Blob get_or_build(const std::string& key, const std::function<std::vector<uint8_t>()>& build);

  CacheStats stats();
  // Removes every entry, in memory and on disk.
  void clear();
  // Evicts least-recently-used disk entries until the total is <= max_bytes().
  void evict();
  const std::string& dir() const noexcept { return dir_; }
  uint64_t max_bytes() const noexcept { return max_bytes_; }
  void set_max_bytes(uint64_t bytes);
  // The file an entry lives in (exists or not).
  std::string entry_path(const std::string& key) const;
  // Why the requested folder was refused and what is used instead ("" when it was used).
  const std::string& warning() const noexcept { return warning_; }
  // How long a miss waits for another process building the same key before building itself.
  void set_lock_wait(std::chrono::seconds wait) noexcept { lock_wait_ = wait; }
  // /tmp/dotcompute-cache-<uid> when it is private, else a fresh private folder ("" if none).
  static std::string private_fallback_dir();

 private:
  Blob read_disk(const std::string& key);
  void write_disk(const std::string& key, const std::vector<uint8_t>& payload);

  std::string dir_;
  std::string warning_;
  std::chrono::seconds lock_wait_{600};
  uint64_t max_bytes_;
  std::mutex mutex_;
  std::unordered_map<std::string, Blob> memory_;
  uint64_t memory_hits_ = 0;
  uint64_t disk_hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace dotcompute
