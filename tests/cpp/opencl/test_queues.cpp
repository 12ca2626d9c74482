// Streams are in-order queues; events order work across them and time it.
#include <string>
#include <vector>

#include "test_support.h"

namespace dctest {
namespace {

class Event {
 public:
  Event() {
    dc_status st = plugin()->event_create(0, &e_);
    EXPECT_EQ(st, DC_OK) << describe(st);
  }
  ~Event() { plugin()->event_destroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  dc_event get() const { return e_; }

 private:
  dc_event e_ = nullptr;
};

constexpr int64_t kItems = 1024;

void enqueue_spin(const Stream& s, const DeviceBuffer& x, int32_t iters) {
  dc_kernel_arg args[] = {buffer_arg(x.get()), scalar_arg(iters)};
  dc_launch_config cfg = launch_config({kItems});
  dc_status st = plugin()->launch(s.get(), test_module().kernel("spin"), &cfg, args, 2);
  ASSERT_EQ(st, DC_OK) << describe(st);
}

TEST(OpenCLQueues, WorkInOneStreamRunsInOrder) {
  Stream s;
  DeviceBuffer x(kItems * 4), y(kItems * 4);
  std::vector<float> ones(kItems, 1.0f);
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), x.get(), 0, ones.data(), kItems * 4));
  enqueue_spin(s, x, 5000);
  DC_ASSERT_OK(plugin()->memcpy_d2d(s.get(), y.get(), 0, x.get(), 0, kItems * 4));
  std::vector<float> hx(kItems), hy(kItems);
  DC_ASSERT_OK(plugin()->memcpy_d2h(s.get(), hy.data(), y.get(), 0, kItems * 4));
  DC_ASSERT_OK(plugin()->memcpy_d2h(s.get(), hx.data(), x.get(), 0, kItems * 4));
  s.sync();
  EXPECT_GT(hx[0], 100.0f);  // the spin ran before the copies
  EXPECT_EQ(hx, hy);
}

TEST(OpenCLQueues, StreamWaitEventOrdersAcrossStreams) {
  Stream producer;
  Stream consumer;
  DeviceBuffer x(kItems * 4), y(kItems * 4);
  std::vector<float> ones(kItems, 1.0f);
  DC_ASSERT_OK(plugin()->memcpy_h2d(producer.get(), x.get(), 0, ones.data(), kItems * 4));
  enqueue_spin(producer, x, 20000);
  Event done;
  DC_ASSERT_OK(plugin()->event_record(done.get(), producer.get()));
  DC_ASSERT_OK(plugin()->stream_wait_event(consumer.get(), done.get()));
  DC_ASSERT_OK(plugin()->memcpy_d2d(consumer.get(), y.get(), 0, x.get(), 0, kItems * 4));
  std::vector<float> hy(kItems);
  DC_ASSERT_OK(plugin()->memcpy_d2h(consumer.get(), hy.data(), y.get(), 0, kItems * 4));
  consumer.sync();
  int32_t finished = 0;
  DC_ASSERT_OK(plugin()->event_query(done.get(), &finished));
  EXPECT_EQ(finished, 1);  // the consumer could only finish after the producer's event
  producer.sync();
  std::vector<float> hx(kItems);
  DC_ASSERT_OK(plugin()->memcpy_d2h(producer.get(), hx.data(), x.get(), 0, kItems * 4));
  producer.sync();
  EXPECT_EQ(hx, hy);
  EXPECT_GT(hy[0], 100.0f);
}

TEST(OpenCLQueues, EventsTimeTheWorkBetweenThem) {
  Stream s;
  DeviceBuffer x(kItems * 4);
  DC_ASSERT_OK(plugin()->memset_d8(s.get(), x.get(), 0, 0, kItems * 4));
  Event e0, e1, e2;
  DC_ASSERT_OK(plugin()->event_record(e0.get(), s.get()));
  enqueue_spin(s, x, 20000);
  DC_ASSERT_OK(plugin()->event_record(e1.get(), s.get()));
  DC_ASSERT_OK(plugin()->event_record(e2.get(), s.get()));
  DC_ASSERT_OK(plugin()->event_synchronize(e2.get()));
  int32_t finished = 0;
  DC_ASSERT_OK(plugin()->event_query(e1.get(), &finished));
  EXPECT_EQ(finished, 1);
  double spin_ms = -1, empty_ms = -1, total_ms = -1;
  DC_ASSERT_OK(plugin()->event_elapsed_ms(e0.get(), e1.get(), &spin_ms));
  DC_ASSERT_OK(plugin()->event_elapsed_ms(e1.get(), e2.get(), &empty_ms));
  DC_ASSERT_OK(plugin()->event_elapsed_ms(e0.get(), e2.get(), &total_ms));
  EXPECT_GT(spin_ms, 0.0);
  EXPECT_GE(empty_ms, 0.0);
  EXPECT_LT(empty_ms, spin_ms);  // nothing ran between e1 and e2
  EXPECT_NEAR(total_ms, spin_ms + empty_ms, 1e-6);
}

TEST(OpenCLQueues, UnrecordedEventsAreCompleteAndCannotBeTimed) {
  Event e, f;
  int32_t finished = 0;
  DC_ASSERT_OK(plugin()->event_query(e.get(), &finished));
  EXPECT_EQ(finished, 1);
  DC_ASSERT_OK(plugin()->event_synchronize(e.get()));
  Stream s;
  DC_ASSERT_OK(plugin()->stream_wait_event(s.get(), e.get()));
  double ms = 0;
  EXPECT_EQ(plugin()->event_elapsed_ms(e.get(), f.get(), &ms), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(plugin()->last_error()).find("recorded"), std::string::npos);
}

TEST(OpenCLQueues, ReRecordingMovesTheEvent) {
  Stream s;
  DeviceBuffer x(kItems * 4);
  DC_ASSERT_OK(plugin()->memset_d8(s.get(), x.get(), 0, 0, kItems * 4));
  Event start, end;
  DC_ASSERT_OK(plugin()->event_record(start.get(), s.get()));
  DC_ASSERT_OK(plugin()->event_record(end.get(), s.get()));
  DC_ASSERT_OK(plugin()->event_record(start.get(), s.get()));  // now after `end`
  s.sync();
  double ms = 0;
  DC_ASSERT_OK(plugin()->event_elapsed_ms(start.get(), end.get(), &ms));
  EXPECT_LE(ms, 0.0);
}

}  // namespace
}  // namespace dctest
