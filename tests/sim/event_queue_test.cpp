#include <gtest/gtest.h>

#include <vector>

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

using namespace schedlab::sim;

TEST(EventQueue, RunsInTimeThenInsertionOrder) {
  EventQueue q;
  std::vector<int> order;
  q.at(Time::ns(10), [&] { order.push_back(1); });
  q.at(Time::ns(5), [&] { order.push_back(2); });
  q.at(Time::ns(10), [&] { order.push_back(3); });
  q.at(Time::ns(5), [&] { order.push_back(4); });
  q.run();
  EXPECT_EQ(order, (std::vector<int>{2, 4, 1, 3}));
  EXPECT_EQ(q.now(), Time::ns(10));
}

TEST(EventQueue, CancelledEventsDoNotRun) {
  EventQueue q;
  int ran = 0;
  auto id = q.at(Time::ns(3), [&] { ran += 1; });
  q.at(Time::ns(4), [&] { ran += 10; });
  EXPECT_TRUE(q.pending(id));
  q.cancel(id);
  EXPECT_FALSE(q.pending(id));
  q.run();
  EXPECT_EQ(ran, 10);
}

TEST(EventQueue, StaleHandleDoesNotCancelReusedSlot) {
  EventQueue q;
  int ran = 0;
  auto a = q.at(Time::ns(1), [&] { ran += 1; });
  q.run();
  EventId stale = a;
  q.at(Time::ns(2), [&] { ran += 100; });  // likely reuses a's slot
  q.cancel(stale);
  q.run();
  EXPECT_EQ(ran, 101);
}

TEST(Rng, SameSeedSameSequenceAndSplitsDiffer) {
  Rng a(42), b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  Rng c = Rng(42).split("kernel"), d = Rng(42).split("workload");
  EXPECT_NE(c.next(), d.next());
  Rng e(1);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(e.below(7), 7u);
}
