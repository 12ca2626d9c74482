// KernelCache: keys, the two levels, atomic and checked entries, LRU eviction
// and concurrent writers in several processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>
#include <fstream>
#include <iterator>

#include "dotcompute/kernel_cache.hpp"
#include "test_helpers.hpp"

using namespace dotcompute;

namespace {

std::vector<uint8_t> payload(const std::string& seed, size_t n) {
  std::vector<uint8_t> v(n);
  uint32_t x = 2166136261u;
  for (char c : seed) x = (x ^ uint8_t(c)) * 16777619u;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = uint8_t(x >> 24);
  }
  return v;
}

Blob blob(const std::vector<uint8_t>& v) { return std::make_shared<const std::vector<uint8_t>>(v); }

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
  }
  return out;
}

off_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

void set_mtime(const std::string& path, time_t seconds) {
  struct timespec t[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), t, 0), 0);
}

std::string key_of(const std::string& source) {
  CacheKeyInput in;
  in.backend = "cpu";
  in.source = source;
  return KernelCache::key(in);
}

}  // namespace

TEST(KernelCache, KeyCoversEveryInputAndNothingRunsTogether) {
  CacheKeyInput base;
  base.backend = "cpu";
  base.source = "src";
  base.options = "-O3";
  base.compiler_identity = "g++ 12.2";
  base.abi_version = 1;
  base.arch = "x86_64 avx2";
  const std::string k = KernelCache::key(base);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, KernelCache::key(base)) << "deterministic";
  auto differs = [&](auto mutate) {
    CacheKeyInput c = base;
    mutate(c);
    return KernelCache::key(c) != k;
  };
  EXPECT_TRUE(differs([](CacheKeyInput& c) { c.backend = "opencl"; }));
  EXPECT_TRUE(differs([](CacheKeyInput& c) { c.source += " "; }));
  EXPECT_TRUE(differs([](CacheKeyInput& c) { c.options = "-O2"; }));
  EXPECT_TRUE(differs([](CacheKeyInput& c) { c.compiler_identity = "g++ 13.1"; }));
  EXPECT_TRUE(differs([](CacheKeyInput& c) { c.abi_version = 2; }));
  EXPECT_TRUE(differs([](CacheKeyInput& c) { c.arch = "x86_64 avx512f"; }));
  CacheKeyInput a = base, b = base;
  a.source = "ab";
  a.options = "c";
  b.source = "a";
  b.options = "bc";
  EXPECT_NE(KernelCache::key(a), KernelCache::key(b));
}

TEST(KernelCache, MemoryThenDiskHits) {
  dctest::TempDir dir;
  const std::string key = key_of("k1");
  const auto data = payload("k1", 1000);
  {
    KernelCache cache(dir.path());
    EXPECT_EQ(cache.get(key), nullptr);
    int builds = 0;
    Blob b = cache.get_or_build(key, [&] {
      ++builds;
      return data;
    });
    Blob again = cache.get_or_build(key, [&] {
      ++builds;
      return data;
    });
    EXPECT_EQ(builds, 1);
    EXPECT_EQ(*again, data);
    CacheStats s = cache.stats();
    EXPECT_EQ(s.misses, 2u);  // the plain get() and the first get_or_build()
    EXPECT_EQ(s.memory_hits, 1u);
    EXPECT_EQ(s.entries, 1u);
    EXPECT_GT(s.bytes, data.size());
  }
  KernelCache fresh(dir.path());  // a new process, in effect
  Blob b = fresh.get(key);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b, data);
  EXPECT_EQ(fresh.stats().disk_hits, 1u);
  fresh.get(key);
  EXPECT_EQ(fresh.stats().memory_hits, 1u);
}

TEST(KernelCache, WritesLeaveNoTemporaryFiles) {
  dctest::TempDir dir;
  KernelCache cache(dir.path() + "/nested/cache");  // created on demand
  for (int i = 0; i < 5; ++i) cache.put(key_of("w" + std::to_string(i)), blob(payload("w", 100 + i)));
  auto files = files_in(dir.path() + "/nested/cache");
  EXPECT_EQ(files.size(), 5u);
  for (const auto& f : files) EXPECT_EQ(f.rfind(".tmp", 0), std::string::npos) << f;
}

TEST(KernelCache, FailedBuildStoresNothing) {
  dctest::TempDir dir;
  KernelCache cache(dir.path());
  const std::string key = key_of("bad");
  EXPECT_THROW(cache.get_or_build(key, []() -> std::vector<uint8_t> { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.get(key), nullptr);
}

TEST(KernelCache, CorruptEntryIsDiscardedAndRebuilt) {
  dctest::TempDir dir;
  const std::string key = key_of("c");
  const auto data = payload("c", 4096);
  KernelCache(dir.path()).put(key, blob(data));
  const std::string path = KernelCache(dir.path()).entry_path(key);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-100, std::ios::end);
    f.put('\x5a' ^ static_cast<char>(data[data.size() - 100]));
  }
  KernelCache cache(dir.path());
  EXPECT_EQ(cache.get(key), nullptr) << "a checksum mismatch must not be returned";
  EXPECT_EQ(file_size(path), -1) << "the corrupt entry is removed";
  int builds = 0;
  Blob b = cache.get_or_build(key, [&] {
    ++builds;
    return data;
  });
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(*KernelCache(dir.path()).get(key), data);
}

TEST(KernelCache, TruncatedEntryIsDiscarded) {
  dctest::TempDir dir;
  const std::string key = key_of("t");
  KernelCache(dir.path()).put(key, blob(payload("t", 5000)));
  const std::string path = KernelCache(dir.path()).entry_path(key);
  for (off_t cut : {off_t(4000), off_t(60), off_t(3), off_t(0)}) {
    KernelCache(dir.path()).put(key, blob(payload("t", 5000)));
    ASSERT_EQ(truncate(path.c_str(), cut), 0);
    EXPECT_EQ(KernelCache(dir.path()).get(key), nullptr) << "cut at " << cut;
    EXPECT_EQ(file_size(path), -1);
  }
}

// A FIFO where an entry belongs used to block the reader forever (open() waits for a writer).
// The read runs in a child process so that a regression fails the test instead of hanging it.
TEST(KernelCache, FifoInPlaceOfAnEntryIsAMissAndIsReplaced) {
  dctest::TempDir dir;
  const std::string key = key_of("fifo");
  const std::string path = KernelCache(dir.path()).entry_path(key);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const auto data = payload("fifo", 700);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);  // a blocked open ends the child with SIGALRM
    KernelCache cache(dir.path());
    int builds = 0;
    Blob b = cache.get_or_build(key, [&] {
      ++builds;
      return data;
    });
    _exit(builds == 1 && *b == data ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the reader was killed (signal " << WTERMSIG(status) << "): it blocked on the FIFO";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the rebuilt entry replaces the FIFO";
  EXPECT_EQ(*KernelCache(dir.path()).get(key), data);
}

// A 50 GiB sparse file in place of an entry used to be read whole (std::bad_alloc); its size is
// now checked before anything is allocated, and it is discarded like any corrupt entry.
TEST(KernelCache, HugeSparseEntryIsDiscardedWithoutReadingIt) {
  dctest::TempDir dir;
  const std::string key = key_of("huge");
  const std::string path = KernelCache(dir.path()).entry_path(key);
  {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t(50) << 30), 0);
    close(fd);
  }
  KernelCache cache(dir.path(), uint64_t(1) << 40);  // a bound above the file: the entry limit still holds
  EXPECT_EQ(cache.get(key), nullptr);
  EXPECT_EQ(file_size(path), -1) << "the oversized entry is removed";
  const auto data = payload("huge", 900);
  int builds = 0;
  cache.get_or_build(key, [&] {
    ++builds;
    return data;
  });
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(*KernelCache(dir.path()).get(key), data);
}

TEST(KernelCache, EntryUnderAnotherKeyIsDiscarded) {
  dctest::TempDir dir;
  const std::string k1 = key_of("one"), k2 = key_of("two");
  KernelCache writer(dir.path());
  writer.put(k1, blob(payload("one", 300)));
  ASSERT_EQ(rename(writer.entry_path(k1).c_str(), writer.entry_path(k2).c_str()), 0);
  EXPECT_EQ(KernelCache(dir.path()).get(k2), nullptr);
}

TEST(KernelCache, EvictsLeastRecentlyUsedUnderTheBound) {
  dctest::TempDir dir;
  const size_t n = 10000;
  KernelCache cache(dir.path(), 1u << 30);
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) {
    keys.push_back(key_of("e" + std::to_string(i)));
    cache.put(keys.back(), blob(payload(keys.back(), n)));
    set_mtime(cache.entry_path(keys.back()), 1000000 + i * 10);  // entry 0 oldest
  }
  const uint64_t entry_bytes = static_cast<uint64_t>(file_size(cache.entry_path(keys[0])));
  // Using entry 0 makes entry 1 the least recently used.
  ASSERT_NE(KernelCache(dir.path()).get(keys[0]), nullptr);
  cache.set_max_bytes(3 * entry_bytes);
  EXPECT_EQ(file_size(cache.entry_path(keys[1])), -1) << "least recently used goes first";
  EXPECT_NE(file_size(cache.entry_path(keys[0])), -1);
  EXPECT_NE(file_size(cache.entry_path(keys[2])), -1);
  EXPECT_NE(file_size(cache.entry_path(keys[3])), -1);
  // A new entry pushes out the next oldest (entry 2).
  const std::string k4 = key_of("e4");
  cache.put(k4, blob(payload(k4, n)));
  CacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 3u);
  EXPECT_LE(s.bytes, 3 * entry_bytes);
  EXPECT_EQ(file_size(cache.entry_path(keys[2])), -1);
  EXPECT_NE(file_size(cache.entry_path(k4)), -1);
}

TEST(KernelCache, ConcurrentWritersInSeveralProcesses) {
  dctest::TempDir dir;
  constexpr int kProcs = 4, kKeys = 12;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Every process builds, writes and reads every key, in a different order.
      int bad = 0;
      for (int round = 0; round < 3; ++round) {
        KernelCache cache(dir.path(), 1u << 30);
        for (int i = 0; i < kKeys; ++i) {
          int k = (i * (p + 1) + round) % kKeys;
          std::string key = key_of("cc" + std::to_string(k));
          auto expect = payload(key, 20000 + 1000 * k);
          Blob b = cache.get_or_build(key, [&] { return expect; });
          Blob disk = KernelCache(dir.path(), 1u << 30).get(key);
          if (*b != expect || (disk && *disk != expect)) ++bad;
        }
      }
      _exit(bad == 0 ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer saw a wrong or partial entry";
  }
  KernelCache cache(dir.path());
  EXPECT_EQ(cache.stats().entries, static_cast<uint64_t>(kKeys));
  for (int k = 0; k < kKeys; ++k) {
    std::string key = key_of("cc" + std::to_string(k));
    Blob b = cache.get(key);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(*b, payload(key, 20000 + 1000 * k));
  }
  for (const auto& f : files_in(dir.path())) EXPECT_EQ(f.rfind(".tmp", 0), std::string::npos) << f;
}

TEST(KernelCache, ClearRemovesEverything) {
  dctest::TempDir dir;
  KernelCache cache(dir.path());
  const std::string key = key_of("x");
  cache.put(key, blob(payload("x", 10)));
  cache.clear();
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.get(key), nullptr);
}

TEST(KernelCache, MemoryOnlyWhenNoFolder) {
  KernelCache cache("");
  const std::string key = key_of("m");
  cache.put(key, blob(payload("m", 10)));
  EXPECT_NE(cache.get(key), nullptr);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(KernelCache, DefaultFolderFollowsTheEnvironment) {
  std::string saved = getenv("DOTCOMPUTE_CACHE_DIR") ? getenv("DOTCOMPUTE_CACHE_DIR") : "";
  setenv("DOTCOMPUTE_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(KernelCache::default_dir(), "/some/where");
  unsetenv("DOTCOMPUTE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(KernelCache::default_dir(), "/xdg/dotcompute");
  unsetenv("XDG_CACHE_HOME");
  if (getenv("HOME")) {
    EXPECT_EQ(KernelCache::default_dir(), std::string(getenv("HOME")) + "/.cache/dotcompute");
  }
  if (!saved.empty()) setenv("DOTCOMPUTE_CACHE_DIR", saved.c_str(), 1);
}

// Issue 8: single flight across processes, stale locks, and a folder others can write.
TEST(KernelCache, StaleLockFilesAndDeadHoldersDoNotBlock) {
  dctest::TempDir dir;
  const std::string key = key_of("stale");
  const std::string lock = dir.path() + "/.lock." + key;
  {
    std::ofstream(lock) << "left behind by a crashed process";  // a file nobody holds
  }
  // a holder that dies while holding the lock: the kernel releases its flock
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int fd = ::open(lock.c_str(), O_RDWR);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) _exit(2);
    ::pause();  // killed below, still holding it
    _exit(0);
  }
  ::usleep(100 * 1000);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  KernelCache cache(dir.path());
  cache.set_lock_wait(std::chrono::seconds(600));  // it must not need the timeout
  int builds = 0;
  Blob b = cache.get_or_build(key, [&] {
    ++builds;
    return payload("stale", 100);
  });
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(*b, payload("stale", 100));
  EXPECT_NE(::access(lock.c_str(), F_OK), 0) << "the builder removes its lock file";
}

TEST(KernelCache, ALiveHolderMakesOthersWaitAndReadItsEntry) {
  dctest::TempDir dir;
  const std::string key = key_of("flight");
  const auto data = payload("flight", 500);
  std::atomic<int> builds{0};
  std::vector<std::thread> threads;
  std::vector<Blob> got(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      KernelCache cache(dir.path());  // one cache each, as separate processes would have
      got[t] = cache.get_or_build(key, [&] {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a slow compiler
        return data;
      });
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(builds.load(), 1);
  for (const Blob& b : got) EXPECT_EQ(*b, data);
}

TEST(KernelCache, AFolderOthersCanWriteIsNotUsed) {
  dctest::TempDir dir;
  const std::string shared = dir.path() + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  KernelCache cache(shared);
  EXPECT_NE(cache.dir(), shared);
  EXPECT_NE(cache.warning().find("mode 0o777"), std::string::npos) << cache.warning();
  struct stat st;
  ASSERT_EQ(::stat(cache.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  KernelCache mine(dir.path() + "/mine");
  EXPECT_EQ(mine.dir(), dir.path() + "/mine");
  EXPECT_EQ(mine.warning(), "");
}
