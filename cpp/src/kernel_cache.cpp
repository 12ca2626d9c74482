#include "dotcompute/kernel_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <thread>

#include "sha256.hpp"
#include "string_util.hpp"

namespace dotcompute {

using detail::ends_with;

namespace {

// Entry file layout (little-endian):
//   magic "DCKCACHE" (8) | format u32 | key length u32 | key | payload length u64 | sha256(payload) (32) | payload
constexpr char kMagic[8] = {'D', 'C', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr uint32_t kFormat = 1;
constexpr const char* kSuffix = ".dck";
// The largest entry read from disk: a compiled kernel is kilobytes to a few megabytes.
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;
// Temporary files older than this belong to a writer that died.
constexpr int64_t kStaleTmpSeconds = 3600;

// Parents are created 0755 like any folder; the cache folder itself is private (0700): its
// entries are native code that this process will dlopen.
void make_dirs(const std::string& dir) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    cur = dir.substr(0, pos);
    if (!cur.empty()) ::mkdir(cur.c_str(), pos == std::string::npos ? 0700 : 0755);
  }
}

// Why `dir` must not hold code this process loads ("" when it may): it must be a folder owned by
// this user that no other user can write (otherwise anyone could plant a binary in it).
std::string untrusted_reason(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return std::string("it cannot be created or read (") + std::strerror(errno) + ")";
  if (!S_ISDIR(st.st_mode)) return "it is not a folder";
  if (st.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "0o%03o", static_cast<unsigned>(st.st_mode & 0777));
    return std::string("other users can write it (mode ") + mode + ")";
  }
  return "";
}

// Identity of a file, for compare-and-delete.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

// What read_file found at a path.
enum class ReadResult {
  kMissing,   // no file, a symlink, or not readable
  kRefused,   // not this user's private regular file (a FIFO, a device, others can write it)
  kTooLarge,  // a regular file larger than the bound: no entry is ever that large, so it is corrupt
  kRead,
};

// O_NONBLOCK: a FIFO (or device) put where an entry belongs opens at once instead of blocking
// until a writer appears; fstat then refuses it before a byte is read. The size is checked
// before the buffer is allocated (a huge sparse file would otherwise be a bad_alloc), and the
// read stops at the bound even if the file grows meanwhile.
ReadResult read_file(const std::string& path, uint64_t max_bytes, std::vector<uint8_t>* out, FileId* id = nullptr) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return ReadResult::kMissing;
  struct stat st;
  // Only this user's regular files that no one else can write are read as cache entries.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    ::close(fd);
    return ReadResult::kRefused;
  }
  if (id != nullptr) *id = {st.st_dev, st.st_ino};
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return ReadResult::kTooLarge;
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out->size()) {
    ssize_t r = ::read(fd, out->data() + got, out->size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  // One byte more than fstat said means the file grew after it: not an entry we wrote.
  uint8_t extra = 0;
  ssize_t more;
  do {
    more = ::read(fd, &extra, 1);
  } while (more < 0 && errno == EINTR);
  ::close(fd);
  if (more > 0) return ReadResult::kTooLarge;
  out->resize(got);
  return ReadResult::kRead;
}

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t w = ::write(fd, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    size -= static_cast<size_t>(w);
  }
  return true;
}

struct DiskEntry {
  std::string path;
  uint64_t size;
  int64_t mtime_ns;
};

std::vector<DiskEntry> list_entries(const std::string& dir, std::vector<std::string>* stale_tmp) {
  std::vector<DiskEntry> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    std::string path = dir + "/" + name;
    struct stat st;
    if (ends_with(name, kSuffix) && name[0] != '.') {
      if (::stat(path.c_str(), &st) == 0) {
        out.push_back({path, static_cast<uint64_t>(st.st_size),
                       int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
      }
    } else if (stale_tmp != nullptr && name.rfind(".tmp.", 0) == 0) {
      if (::stat(path.c_str(), &st) == 0 && now - st.st_mtim.tv_sec > kStaleTmpSeconds) stale_tmp->push_back(path);
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace

KernelCache::KernelCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (dir_.empty()) return;
  make_dirs(dir_);
  const std::string reason = untrusted_reason(dir_);
  if (reason.empty()) return;
  const std::string refused = dir_;
  dir_ = private_fallback_dir();
  warning_ = "the kernel cache folder " + refused + " is not used because " + reason + "; kernels are cached in " +
             (dir_.empty() ? std::string("memory only") : dir_) + " instead";
}

std::string KernelCache::private_fallback_dir() {
  const std::string shared = "/tmp/dotcompute-cache-" + std::to_string(::geteuid());
  ::mkdir(shared.c_str(), 0700);
  if (untrusted_reason(shared).empty()) return shared;
  // Someone else owns (or opened up) the usual name: a fresh folder only this process knows.
  std::string tmpl = shared + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) != nullptr) return tmpl;
  return "";
}

std::string KernelCache::default_dir() {
  // Surrounding whitespace is dropped, as the Python package's config.cache_dir() does.
  if (const char* d = std::getenv("DOTCOMPUTE_CACHE_DIR"); d != nullptr) {
    const std::string s(d);
    const char* space = " \t\n\r\f\v";
    const size_t b = s.find_first_not_of(space);
    if (b != std::string::npos) return s.substr(b, s.find_last_not_of(space) - b + 1);
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/dotcompute";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/dotcompute";
  return "/tmp/dotcompute-cache-" + std::to_string(::getuid());
}

std::string KernelCache::key(const CacheKeyInput& in) {
  detail::Sha256 h;
  auto field = [&h](const std::string& s) {
    uint64_t n = s.size();
    h.update(&n, sizeof n);
    h.update(s);
  };
  field("dotcompute-kernel-cache-v1");
  field(in.backend);
  field(in.source);
  field(in.options);
  field(in.compiler_identity);
  field(std::to_string(in.abi_version));
  field(in.arch);
  return h.hex();
}

std::string KernelCache::entry_path(const std::string& key) const { return dir_ + "/" + key + kSuffix; }

Blob KernelCache::read_disk(const std::string& key) {
  if (dir_.empty()) return nullptr;
  const std::string path = entry_path(key);
  std::vector<uint8_t> file;
  FileId id;
  // No entry is larger than the disk bound (a larger one is evicted as soon as it is written),
  // nor than kMaxEntryBytes, whatever the bound.
  const ReadResult found = read_file(path, std::min<uint64_t>(max_bytes_, kMaxEntryBytes), &file, &id);
  auto discard = [&path, &id]() -> Blob {
    // Corrupt or truncated (a crashed writer, a full disk): rebuild instead. Compare and delete:
    // another process may have renamed a good entry into place since we read; that one stays.
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && FileId{st.st_dev, st.st_ino} == id) ::unlink(path.c_str());
    return nullptr;
  };
  // A FIFO, device or foreign file is left alone here: a miss, and the rebuilt entry is renamed
  // over it (rename replaces any file that is not a folder).
  if (found == ReadResult::kMissing || found == ReadResult::kRefused) return nullptr;
  if (found == ReadResult::kTooLarge) return discard();
  size_t off = 0;
  auto take = [&](void* dst, size_t n) {
    if (off + n > file.size()) return false;
    std::memcpy(dst, file.data() + off, n);
    off += n;
    return true;
  };
  char magic[8];
  uint32_t format = 0, key_len = 0;
  if (!take(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return discard();
  if (!take(&format, 4) || format != kFormat) return discard();
  if (!take(&key_len, 4) || key_len != key.size() || off + key_len > file.size()) return discard();
  if (std::memcmp(file.data() + off, key.data(), key_len) != 0) return discard();
  off += key_len;
  uint64_t len = 0;
  uint8_t sum[32];
  if (!take(&len, 8) || !take(sum, 32) || file.size() - off != len) return discard();
  detail::Sha256 h;
  h.update(file.data() + off, len);
  uint8_t actual[32];
  h.finish(actual);
  if (std::memcmp(sum, actual, 32) != 0) return discard();
  // A hit is a use: the mtime is the LRU clock.
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return std::make_shared<const std::vector<uint8_t>>(file.begin() + static_cast<std::ptrdiff_t>(off), file.end());
}

void KernelCache::write_disk(const std::string& key, const std::vector<uint8_t>& payload) {
  if (dir_.empty()) return;
  make_dirs(dir_);
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = dir_ + "/.tmp." + key.substr(0, 16) + "." + std::to_string(::getpid()) + "." +
                          std::to_string(counter.fetch_add(1)) + "." +
                          std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;  // an unwritable cache only costs recompilation
  uint32_t format = kFormat, key_len = static_cast<uint32_t>(key.size());
  uint64_t len = payload.size();
  uint8_t sum[32];
  detail::Sha256 h;
  h.update(payload.data(), payload.size());
  h.finish(sum);
  bool ok = write_all(fd, kMagic, 8) && write_all(fd, &format, 4) && write_all(fd, &key_len, 4) &&
            write_all(fd, key.data(), key.size()) && write_all(fd, &len, 8) && write_all(fd, sum, 32) &&
            write_all(fd, payload.data(), payload.size());
  ok = (::close(fd) == 0) && ok;
  // rename() replaces atomically: readers see the old entry, the new one, or none.
  if (!ok || ::rename(tmp.c_str(), entry_path(key).c_str()) != 0) {
    ::unlink(tmp.c_str());
    return;
  }
  evict();
}

Blob KernelCache::get(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = memory_.find(key);
    if (it != memory_.end()) {
      ++memory_hits_;
      return it->second;
    }
  }
  Blob b = read_disk(key);
  std::lock_guard<std::mutex> lock(mutex_);
  if (b) {
    ++disk_hits_;
    memory_[key] = b;
  } else {
    ++misses_;
  }
  return b;
}

void KernelCache::put(const std::string& key, Blob blob) {
  if (!blob) return;
  write_disk(key, *blob);
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t total = blob->size();
  for (const auto& [k, v] : memory_) total += v->size();
  // The memory level obeys the same bound; dropping it all is simplest and rare.
  if (total > max_bytes_) memory_.clear();
  memory_[key] = std::move(blob);
}

namespace {

// An exclusive flock() on <dir>/.lock.<key>: one builder per key across processes (and threads).
// The kernel drops a flock when its holder dies, so a crashed builder leaves no stale lock; the
// file itself is removed by the holder, and a waiter that locked a removed file tries again.
class KeyLock {
 public:
  KeyLock(const std::string& dir, const std::string& key, std::chrono::seconds max_wait) {
    if (dir.empty()) return;
    path_ = dir + "/.lock." + key;
    const auto deadline = std::chrono::steady_clock::now() + max_wait;
    while (true) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd_ < 0) return;  // an unwritable folder: build without the lock
      if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
        struct stat held, now;
        if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
            held.st_dev == now.st_dev)
          return;  // locked the file that is in place
        ::close(fd_);  // the holder removed it between our open and flock: lock the new one
        fd_ = -1;
        continue;
      }
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      // after the deadline (a builder that hangs) build without the lock rather than wait forever
      if (err != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~KeyLock() {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());
    ::close(fd_);
  }
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

Blob KernelCache::get_or_build(const std::string& key, const std::function<std::vector<uint8_t>()>& build) {
  if (Blob b = get(key)) return b;
  // Single flight: the first process to miss builds; the others wait and then read its entry.
  KeyLock lock(dir_, key, lock_wait_);
  if (!dir_.empty()) {
    if (Blob b = read_disk(key)) {
      std::lock_guard<std::mutex> guard(mutex_);
      ++disk_hits_;
      memory_[key] = b;
      return b;
    }
  }
  Blob built = std::make_shared<const std::vector<uint8_t>>(build());
  put(key, built);
  return built;
}

CacheStats KernelCache::stats() {
  CacheStats s;
  for (const auto& e : list_entries(dir_, nullptr)) {
    ++s.entries;
    s.bytes += e.size;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  s.memory_hits = memory_hits_;
  s.disk_hits = disk_hits_;
  s.misses = misses_;
  return s;
}

void KernelCache::clear() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_.clear();
  }
  if (dir_.empty()) return;
  for (const auto& e : list_entries(dir_, nullptr)) ::unlink(e.path.c_str());
}

void KernelCache::evict() {
  if (dir_.empty()) return;
  std::vector<std::string> stale;
  auto entries = list_entries(dir_, &stale);
  for (const auto& t : stale) ::unlink(t.c_str());
  uint64_t total = 0;
  for (const auto& e : entries) total += e.size;
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(),
            [](const DiskEntry& a, const DiskEntry& b) { return a.mtime_ns < b.mtime_ns; });
  for (const auto& e : entries) {
    if (total <= max_bytes_) break;
    // Another process may have evicted it already; the total only shrinks.
    ::unlink(e.path.c_str());
    total -= e.size;
  }
}

void KernelCache::set_max_bytes(uint64_t bytes) {
  max_bytes_ = bytes;
  evict();
}

}  // namespace dotcompute
