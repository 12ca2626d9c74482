#include <sstream>
#include <vector>

#include "plugin_fixture.hpp"

namespace dctest {
namespace {

using StreamTest = CudaPlugin;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST_F(StreamTest, StreamsAreNonBlocking) {
  dc_stream s = nullptr;
  ASSERT_EQ(b.stream_create(0, &s), DC_OK);
  EXPECT_NE(std::string(dbl.op_log()).find("flags=1"), std::string::npos) << dbl.op_log();
  EXPECT_EQ(b.stream_destroy(s), DC_OK);
}

TEST_F(StreamTest, OperationsKeepTheirStreamAndOrderAndEventsTime) {
  dc_stream s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(b.stream_create(0, &s1), DC_OK);
  ASSERT_EQ(b.stream_create(0, &s2), DC_OK);
  dc_event e1 = nullptr, e2 = nullptr;
  ASSERT_EQ(b.event_create(0, &e1), DC_OK);
  ASSERT_EQ(b.event_create(0, &e2), DC_OK);
  dc_devptr p = 0;
  ASSERT_EQ(b.mem_alloc(0, 1600, &p), DC_OK);
  std::vector<char> host(1600, 1);

  ASSERT_EQ(b.event_record(e1, s1), DC_OK);
  ASSERT_EQ(b.memcpy_h2d(s1, p, 0, host.data(), host.size()), DC_OK);
  ASSERT_EQ(b.event_record(e2, s1), DC_OK);
  ASSERT_EQ(b.stream_wait_event(s2, e2), DC_OK) << error();
  ASSERT_EQ(b.memcpy_d2h(s2, host.data(), p, 0, host.size()), DC_OK);
  ASSERT_EQ(b.stream_synchronize(s2), DC_OK);

  auto log = lines(dbl.op_log());
  // Drop the two "create" lines; the rest is exactly the issued work, in order.
  ASSERT_GE(log.size(), 7u) << dbl.op_log();
  std::vector<std::string> work(log.begin() + 2, log.end());
  ASSERT_EQ(work.size(), 6u) << dbl.op_log();
  EXPECT_EQ(work[0].rfind("record event=", 0), 0u) << work[0];
  EXPECT_EQ(work[1].rfind("htod stream=", 0), 0u) << work[1];
  EXPECT_NE(work[1].find("bytes=1600"), std::string::npos);
  EXPECT_EQ(work[2].rfind("record event=", 0), 0u) << work[2];
  EXPECT_EQ(work[3].rfind("wait stream=", 0), 0u) << work[3];
  EXPECT_EQ(work[4].rfind("dtoh stream=", 0), 0u) << work[4];
  EXPECT_EQ(work[5].rfind("sync stream=", 0), 0u) << work[5];
  // The h2d and the first record are on s1; the wait and the d2h on s2, a different stream.
  const std::string s1_tag = work[1].substr(work[1].find("stream="), work[1].find(' ', 5) - work[1].find("stream="));
  EXPECT_NE(work[0].find(s1_tag), std::string::npos) << work[0] << " vs " << s1_tag;
  EXPECT_NE(work[2].find(s1_tag), std::string::npos);
  EXPECT_EQ(work[3].find(s1_tag + " "), std::string::npos) << work[3];

  int32_t done = 0;
  ASSERT_EQ(b.event_query(e2, &done), DC_OK);
  EXPECT_EQ(done, 1);
  ASSERT_EQ(b.event_synchronize(e2), DC_OK);
  double ms = 0;
  ASSERT_EQ(b.event_elapsed_ms(e1, e2, &ms), DC_OK) << error();
  // The double's clock: 1 us per operation plus bytes/16 ns -> the copy (1.1 us) and the record (1 us).
  EXPECT_NEAR(ms, 0.0021, 1e-6);
  double back = 0;
  ASSERT_EQ(b.event_elapsed_ms(e2, e1, &back), DC_OK);
  EXPECT_LT(back, 0.0);

  EXPECT_EQ(b.mem_free(0, p), DC_OK);
  EXPECT_EQ(b.event_destroy(e1), DC_OK);
  EXPECT_EQ(b.event_destroy(e2), DC_OK);
  EXPECT_EQ(b.stream_destroy(s1), DC_OK);
  EXPECT_EQ(b.stream_destroy(s2), DC_OK);
}

TEST_F(StreamTest, ElapsedOfAnUnrecordedEventIsAnError) {
  dc_event e1 = nullptr, e2 = nullptr;
  ASSERT_EQ(b.event_create(0, &e1), DC_OK);
  ASSERT_EQ(b.event_create(0, &e2), DC_OK);
  ASSERT_EQ(b.event_record(e1, nullptr), DC_OK);
  double ms = 0;
  EXPECT_EQ(b.event_elapsed_ms(e1, e2, &ms), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("cuEventElapsedTime"), std::string::npos) << error();
  EXPECT_EQ(b.event_destroy(e1), DC_OK);
  EXPECT_EQ(b.event_destroy(e2), DC_OK);
}

TEST_F(StreamTest, SynchronizeFailureIsReportedAsLaunchError) {
  dc_stream s = nullptr;
  ASSERT_EQ(b.stream_create(0, &s), DC_OK);
  // An asynchronous kernel fault surfaces at the next synchronisation.
  dbl.fail_next("cuStreamSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(b.stream_synchronize(s), DC_ERROR_LAUNCH);
  EXPECT_NE(error().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << error();
  EXPECT_EQ(b.stream_destroy(s), DC_OK);
}

}  // namespace
}  // namespace dctest
