// Every copy path: host->device, device->host, device->device, fill; with offsets.
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "test_support.h"

namespace dctest {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

std::vector<uint8_t> read_back(const Stream& s, const DeviceBuffer& b, uint64_t offset, size_t n) {
  std::vector<uint8_t> out(n, 0xEE);
  dc_status st = plugin()->memcpy_d2h(s.get(), out.data(), b.get(), offset, n);
  EXPECT_EQ(st, DC_OK) << describe(st);
  s.sync();
  return out;
}

TEST(OpenCLMemory, HostToDeviceAndBack) {
  Stream s;
  DeviceBuffer b(4096);
  std::vector<uint8_t> src = pattern(4096, 3);
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), b.get(), 0, src.data(), src.size()));
  EXPECT_EQ(read_back(s, b, 0, 4096), src);
}

TEST(OpenCLMemory, OffsetsApplyOnBothSides) {
  Stream s;
  DeviceBuffer b(1024);
  std::vector<uint8_t> zeros(1024, 0);
  std::vector<uint8_t> src = pattern(100, 11);
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), b.get(), 0, zeros.data(), zeros.size()));
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), b.get(), 300, src.data(), src.size()));
  std::vector<uint8_t> all = read_back(s, b, 0, 1024);
  for (size_t i = 0; i < 1024; ++i) {
    uint8_t expected = (i >= 300 && i < 400) ? src[i - 300] : 0;
    ASSERT_EQ(all[i], expected) << "byte " << i;
  }
  EXPECT_EQ(read_back(s, b, 300, 100), src);
}

TEST(OpenCLMemory, DeviceToDeviceWithOffsets) {
  Stream s;
  DeviceBuffer a(512);
  DeviceBuffer c(512);
  std::vector<uint8_t> src = pattern(512, 5);
  std::vector<uint8_t> zeros(512, 0);
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), a.get(), 0, src.data(), src.size()));
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), c.get(), 0, zeros.data(), zeros.size()));
  DC_ASSERT_OK(plugin()->memcpy_d2d(s.get(), c.get(), 64, a.get(), 128, 200));
  std::vector<uint8_t> out = read_back(s, c, 0, 512);
  for (size_t i = 0; i < 512; ++i) {
    uint8_t expected = (i >= 64 && i < 264) ? src[i - 64 + 128] : 0;
    ASSERT_EQ(out[i], expected) << "byte " << i;
  }
}

TEST(OpenCLMemory, FillSetsExactlyTheRange) {
  Stream s;
  DeviceBuffer b(300);
  DC_ASSERT_OK(plugin()->memset_d8(s.get(), b.get(), 0, 0x11, 300));
  DC_ASSERT_OK(plugin()->memset_d8(s.get(), b.get(), 17, 0xAB, 101));
  std::vector<uint8_t> out = read_back(s, b, 0, 300);
  for (size_t i = 0; i < 300; ++i) ASSERT_EQ(out[i], (i >= 17 && i < 118) ? 0xAB : 0x11) << "byte " << i;
}

TEST(OpenCLMemory, ZeroByteOperationsDoNothing) {
  Stream s;
  DeviceBuffer b(16);
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), b.get(), 0, nullptr, 0));
  DC_ASSERT_OK(plugin()->memcpy_d2h(s.get(), nullptr, b.get(), 0, 0));
  DC_ASSERT_OK(plugin()->memset_d8(s.get(), b.get(), 0, 0, 0));
  dc_devptr empty = 0;
  DC_ASSERT_OK(plugin()->mem_alloc(0, 0, &empty));
  EXPECT_NE(empty, 0u);
  DC_ASSERT_OK(plugin()->mem_free(0, empty));
}

TEST(OpenCLMemory, CopyPastTheEndNamesTheCall) {
  Stream s;
  DeviceBuffer b(64);
  std::vector<uint8_t> src(128, 1);
  dc_status st = plugin()->memcpy_h2d(s.get(), b.get(), 0, src.data(), src.size());
  EXPECT_NE(st, DC_OK);
  std::string msg = plugin()->last_error();
  EXPECT_NE(msg.find("clEnqueueWriteBuffer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CL_INVALID_VALUE"), std::string::npos) << msg;
}

TEST(OpenCLMemory, HugeAllocationIsOutOfMemory) {
  dc_devptr p = 0;
  EXPECT_EQ(plugin()->mem_alloc(0, 1ull << 52, &p), DC_ERROR_OUT_OF_MEMORY);
  std::string msg = plugin()->last_error();
  EXPECT_NE(msg.find(std::to_string(1ull << 52)), std::string::npos) << msg;
  EXPECT_NE(msg.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << msg;
}

TEST(OpenCLMemory, NullStreamIsRejected) {
  DeviceBuffer b(16);
  uint8_t byte = 0;
  EXPECT_EQ(plugin()->memcpy_h2d(nullptr, b.get(), 0, &byte, 1), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(plugin()->last_error()).find("stream"), std::string::npos);
}

}  // namespace
}  // namespace dctest
