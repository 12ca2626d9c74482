// The two small internal parsers/hashes the loader and cache rely on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "dotcompute/errors.hpp"
#include "manifest.hpp"
#include "sha256.hpp"
#include "test_helpers.hpp"

using namespace dotcompute;
using detail::parse_manifest;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(detail::sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail::sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(detail::sha256_hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string million(1000000, 'a');
  EXPECT_EQ(detail::sha256_hex(million.data(), million.size()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string data(1000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 7);
  for (size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 999u}) {
    detail::Sha256 h;
    h.update(data.data(), split);
    h.update(data.data() + split, data.size() - split);
    EXPECT_EQ(h.hex(), detail::sha256_hex(data.data(), data.size())) << split;
  }
}

TEST(Manifest, ReadsTheFields) {
  auto m = parse_manifest(
      R"({"name": "opencl", "version": "0.1.0", "abi_version": 1, "library": "libdotcompute_opencl.so",
          "requires": ["libOpenCL.so.1", "lib\"q\".so"], "extra": {"ignored": [1, 2]}})",
      "/p/opencl.plugin.json");
  EXPECT_EQ(m.name, "opencl");
  EXPECT_EQ(m.version, "0.1.0");
  EXPECT_EQ(m.abi_version, 1u);
  EXPECT_EQ(m.library, "/p/libdotcompute_opencl.so") << "relative to the manifest";
  EXPECT_EQ(m.requires_, (std::vector<std::string>{"libOpenCL.so.1", "lib\"q\".so"}));
  auto abs = parse_manifest(R"({"name":"x","library":"/opt/x.so","requires":[]})", "/p/x.plugin.json");
  EXPECT_EQ(abs.library, "/opt/x.so");
  EXPECT_EQ(abs.abi_version, 0u);
}

TEST(Manifest, RejectsBrokenFilesNamingThem) {
  const char* bad[] = {
      "",
      "{",
      R"({"name": "x"})",
      R"({"library": "x.so"})",
      R"({"name": 3, "library": "x.so"})",
      R"({"name": "x", "library": "x.so", "requires": "liba.so"})",
      R"({"name": "x", "library": "x.so"} trailing)",
      R"({"name": "x" "library": "x.so"})",
      R"({"name": "x", "library": "x.so", "abi_version": -1})",
  };
  for (const char* text : bad) {
    try {
      parse_manifest(text, "/p/bad.plugin.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const PluginError& e) {
      EXPECT_NE(std::string(e.what()).find("/p/bad.plugin.json"), std::string::npos) << e.what();
    }
  }
}

// A FIFO or an oversized file where a manifest belongs is refused at once, naming the file (a FIFO
// used to block the runtime's start until some writer appeared).
TEST(Manifest, FifoAndHugeFilesAreRefusedWithoutBlocking) {
  dctest::TempDir dir;
  const std::string fifo = dir.path() + "/fifo.plugin.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  alarm(60);  // a regression blocks in open(): SIGALRM ends the test binary instead of a hang
  try {
    detail::read_manifest(fifo);
    ADD_FAILURE() << "a FIFO was read as a manifest";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  alarm(0);
  const std::string huge = dir.path() + "/huge.plugin.json";
  int fd = open(huge.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t(8) << 30), 0);  // sparse: no disk used
  close(fd);
  try {
    detail::read_manifest(huge);
    ADD_FAILURE() << "an 8 GiB manifest was read";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("over the limit"), std::string::npos) << e.what();
  }
  const std::string good = dir.path() + "/ok.plugin.json";
  std::ofstream(good) << R"({"name": "ok", "library": "libok.so"})";
  EXPECT_EQ(detail::read_manifest(good).name, "ok");
}
