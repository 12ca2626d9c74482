// The CUDA extension table: pinned and managed memory, peer copies, graphs, native handles.
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "plugin_fixture.hpp"

namespace dctest {
namespace {

class ExtensionTest : public CudaPlugin {
 protected:
  const dc_cuda_ext& x = extension();
  std::string ops() const { return dbl.op_log(); }
};

TEST_F(ExtensionTest, TableIsVersioned) {
  EXPECT_EQ(x.struct_size, sizeof(dc_cuda_ext));
  EXPECT_EQ(x.version, DC_CUDA_EXT_VERSION);
}

TEST_F(ExtensionTest, PinnedHostMemoryCarriesTransfers) {
  void* pinned = nullptr;
  ASSERT_EQ(x.host_alloc(256, &pinned), DC_OK) << error();
  std::memset(pinned, 0x5A, 256);
  dc_devptr p = 0;
  ASSERT_EQ(b.mem_alloc(0, 256, &p), DC_OK);
  ASSERT_EQ(b.memcpy_h2d(nullptr, p, 0, pinned, 256), DC_OK);
  std::vector<unsigned char> back(256);
  ASSERT_EQ(b.memcpy_d2h(nullptr, back.data(), p, 0, 256), DC_OK);
  EXPECT_EQ(back[255], 0x5A);
  EXPECT_EQ(x.host_free(pinned), DC_OK);
  EXPECT_EQ(x.host_free(pinned), DC_ERROR_INVALID_ARGUMENT);  // the driver knows it is gone
  EXPECT_EQ(b.mem_free(0, p), DC_OK);
}

TEST_F(ExtensionTest, ManagedMemoryAndItsOutOfMemory) {
  dc_devptr p = 0;
  ASSERT_EQ(x.mem_alloc_managed(0, 64, &p), DC_OK) << error();
  EXPECT_NE(ops().find("managed bytes=64"), std::string::npos) << ops();
  EXPECT_EQ(b.mem_free(0, p), DC_OK);
  dbl.fail_next("cuMemAllocManaged", CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(x.mem_alloc_managed(0, 64, &p), DC_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(error().find("managed bytes"), std::string::npos) << error();
}

class PeerTest : public ExtensionTest {
 protected:
  void SetUp() override {
    ExtensionTest::SetUp();
    dbl.set_device_count(3);  // 0 and 1 are peers; 2 is alone
    restart();
  }
  // The buffers go back before the next test: later tests count the double's live allocations.
  void TearDown() override {
    for (const auto& [device, p] : buffers_) EXPECT_EQ(b.mem_free(device, p), DC_OK) << error();
    buffers_.clear();
    ExtensionTest::TearDown();
  }
  // A buffer on `device` filled with `byte`.
  dc_devptr filled(int device, unsigned char byte, uint64_t n) {
    dc_devptr p = 0;
    EXPECT_EQ(b.mem_alloc(device, n, &p), DC_OK) << error();
    EXPECT_EQ(b.memset_d8(nullptr, p, 0, byte, n), DC_OK) << error();
    buffers_.emplace_back(device, p);
    return p;
  }

 private:
  std::vector<std::pair<int, dc_devptr>> buffers_;
};

TEST_F(PeerTest, PeerAccessIsEnabledWherePossible) {
  int32_t on = -1;
  ASSERT_EQ(x.enable_peer_access(0, 1, &on), DC_OK) << error();
  EXPECT_EQ(on, 1);
  ASSERT_EQ(x.enable_peer_access(0, 1, &on), DC_OK) << error();  // already on is fine
  EXPECT_EQ(on, 1);
  ASSERT_EQ(x.enable_peer_access(0, 2, &on), DC_OK) << error();
  EXPECT_EQ(on, 0);
  EXPECT_EQ(x.enable_peer_access(0, 3, &on), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ops().find("peer enable 0->1"), std::string::npos) << ops();
}

TEST_F(PeerTest, CopyBetweenPeersIsAPeerCopy) {
  int32_t on = 0;
  ASSERT_EQ(x.enable_peer_access(1, 0, &on), DC_OK);
  ASSERT_EQ(on, 1);
  const dc_devptr src = filled(0, 0x11, 64), dst = filled(1, 0, 64);
  ASSERT_EQ(x.memcpy_peer(nullptr, 1, dst, 8, 0, src, 0, 32), DC_OK) << error();
  EXPECT_NE(ops().find("peer 0->1 stream=0 bytes=32"), std::string::npos) << ops();
  std::vector<unsigned char> back(64);
  ASSERT_EQ(b.memcpy_d2h(nullptr, back.data(), dst, 0, 64), DC_OK);
  EXPECT_EQ(back[7], 0);
  EXPECT_EQ(back[8], 0x11);
  EXPECT_EQ(back[39], 0x11);
  EXPECT_EQ(back[40], 0);
}

TEST_F(PeerTest, CopyWithoutPeerAccessIsStagedThroughTheHost) {
  const dc_devptr src = filled(0, 0x22, 100), dst = filled(2, 0, 100);
  dc_stream s = nullptr;
  ASSERT_EQ(b.stream_create(2, &s), DC_OK);
  ASSERT_EQ(x.memcpy_peer(s, 2, dst, 0, 0, src, 0, 100), DC_OK) << error();
  const std::string log = ops();
  EXPECT_EQ(log.find("peer 0->2"), std::string::npos) << log;
  const auto staged_out = log.find("dtoh stream=0 bytes=100"), staged_in = log.find("htod stream=0 bytes=100");
  EXPECT_NE(staged_out, std::string::npos) << log;
  EXPECT_NE(staged_in, std::string::npos) << log;
  EXPECT_LT(staged_out, staged_in);
  std::vector<unsigned char> back(100);
  ASSERT_EQ(b.memcpy_d2h(nullptr, back.data(), dst, 0, 100), DC_OK);
  EXPECT_EQ(back[0], 0x22);
  EXPECT_EQ(back[99], 0x22);
  EXPECT_EQ(b.stream_destroy(s), DC_OK);
}

TEST_F(ExtensionTest, GraphCapturesWorkAndReplaysIt) {
  const std::string image = fake_ptx("k");
  dc_module m = nullptr;
  ASSERT_EQ(b.module_load(0, image.c_str(), image.size() + 1, &m), DC_OK);
  const size_t sizes[] = {8, 4};
  dbl.set_param_sizes("k", sizes, 2);
  dc_kernel k = nullptr;
  ASSERT_EQ(b.kernel_get(m, "k", &k), DC_OK);
  dc_stream s = nullptr;
  ASSERT_EQ(b.stream_create(0, &s), DC_OK);
  dc_devptr buf = 0;
  ASSERT_EQ(b.mem_alloc(0, 16, &buf), DC_OK);
  ASSERT_EQ(b.memset_d8(s, buf, 0, 0, 16), DC_OK);

  std::vector<unsigned char> host(16, 1);
  int32_t scale = 5;
  dc_kernel_arg args[2] = {};
  args[0].kind = DC_ARG_BUFFER;
  args[0].size = 8;
  args[0].value.buffer = buf;
  args[1].kind = DC_ARG_SCALAR;
  args[1].size = 4;
  args[1].value.scalar = &scale;
  dc_launch_config c{};
  c.struct_size = sizeof c;
  c.dims = 1;
  c.global_size[0] = 64;
  c.global_size[1] = c.global_size[2] = 1;

  EXPECT_EQ(x.graph_begin(nullptr), DC_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(x.graph_begin(s), DC_OK) << error();
  ASSERT_EQ(b.memcpy_h2d(s, buf, 0, host.data(), 16), DC_OK);
  ASSERT_EQ(b.launch(s, k, &c, args, 2), DC_OK) << error();
  EXPECT_EQ(b.stream_synchronize(s), DC_ERROR_UNSUPPORTED);  // not while capturing
  dc_cuda_graph g = nullptr;
  ASSERT_EQ(x.graph_end(s, &g), DC_OK) << error();

  // Captured, not run.
  int launches = 0;
  dbl.launch_log(&launches);
  EXPECT_EQ(launches, 0);
  std::vector<unsigned char> back(16, 0xFF);
  ASSERT_EQ(b.memcpy_d2h(s, back.data(), buf, 0, 16), DC_OK);
  EXPECT_EQ(back[0], 0);

  // Replays read the host memory when they run; kernel parameters were fixed at capture.
  std::fill(host.begin(), host.end(), 9);
  scale = 7;
  ASSERT_EQ(x.graph_launch(g, s), DC_OK) << error();
  ASSERT_EQ(x.graph_launch(g, s), DC_OK);
  ASSERT_EQ(b.stream_synchronize(s), DC_OK);
  const double_launch* log = dbl.launch_log(&launches);
  ASSERT_EQ(launches, 2);
  int32_t captured_scale = 0;
  std::memcpy(&captured_scale, log[1].param_bytes[1], 4);
  EXPECT_EQ(captured_scale, 5);
  ASSERT_EQ(b.memcpy_d2h(s, back.data(), buf, 0, 16), DC_OK);
  EXPECT_EQ(back[15], 9);
  EXPECT_NE(ops().find("graph launch"), std::string::npos);

  EXPECT_EQ(x.graph_destroy(g), DC_OK);
  EXPECT_EQ(b.mem_free(0, buf), DC_OK);
  EXPECT_EQ(b.stream_destroy(s), DC_OK);
  EXPECT_EQ(b.module_unload(m), DC_OK);
}

TEST_F(ExtensionTest, NativeStreamHandles) {
  dc_stream s = nullptr;
  ASSERT_EQ(b.stream_create(0, &s), DC_OK);
  uint64_t h = 0;
  ASSERT_EQ(x.stream_native(s, &h), DC_OK);
  EXPECT_NE(h, 0u);
  // The handle is the driver's own CUstream: the double knows it as the stream it created.
  const uint64_t id = dbl.stream_id(reinterpret_cast<void*>(static_cast<uintptr_t>(h)));
  EXPECT_NE(ops().find("create stream=" + std::to_string(id) + " "), std::string::npos) << ops();
  ASSERT_EQ(x.stream_native(nullptr, &h), DC_OK);
  EXPECT_EQ(h, 0u);
  EXPECT_EQ(b.stream_destroy(s), DC_OK);
}

}  // namespace
}  // namespace dctest
