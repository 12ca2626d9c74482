// The two small internal parsers/hashes the loader and cache rely on.
#include <gtest/gtest.h>

#include <string>

#include "dotcompute/errors.hpp"
#include "manifest.hpp"
#include "sha256.hpp"

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
