// The buffer accounting and writer-wake rules of each channel kind (workload/channel.hpp):
// pipes as fs/pipe.c keeps them (page slots, merging, one writer woken per read of a full pipe),
// AF_UNIX stream sockets as net/unix does (skb truesize against sk_sndbuf, writers woken at a
// quarter), and the plain byte stream.
#include <gtest/gtest.h>

#include "../common/fixture.hpp"
#include "run_helper.hpp"
#include "workload/channel.hpp"

using schedlab::wltest::run_workload;
using schedlab::workload::Channel;
using schedlab::workload::ChannelKind;

namespace {

// Writes one message of `size` bytes if it fits (reserve + publish, as a writer does).
bool put(Channel& ch, int64_t size) {
  if (!ch.can_write(size)) return false;
  ch.reserve(size);
  ch.publish(size, 0);
  return true;
}

// Reads one message; returns the wake decision its release makes.
Channel::Wake get(Channel& ch) {
  const bool was_full = ch.kind == ChannelKind::Pipe && ch.pipe_full();
  int from = -1;
  return ch.release(ch.take(from), was_full);
}

}  // namespace

// 100-byte writes merge into the last page while it has room: 40 to a 4 KiB page, so a
// 16-page pipe holds 640 of them, and the 641st waits.
TEST(Channel, PipeMergesSmallWritesIntoPages) {
  Channel ch;
  ch.make_pipe(65536, 4096);
  EXPECT_EQ(ch.slots, 16);
  int n = 0;
  while (put(ch, 100)) ++n;
  EXPECT_EQ(n, 640);
  EXPECT_TRUE(ch.pipe_full());
  EXPECT_EQ(ch.pages.size(), 16u);
}

// A slot comes free only when its page has been read to the end: 39 reads of a full pipe leave
// it full, the 40th frees one page (room for 40 more messages).
TEST(Channel, PipeFreesASlotOnlyWhenAPageIsReadToTheEnd) {
  Channel ch;
  ch.make_pipe(65536, 4096);
  while (put(ch, 100)) {
  }
  for (int i = 0; i < 39; ++i) get(ch);
  EXPECT_TRUE(ch.pipe_full());
  EXPECT_FALSE(ch.can_write(100));
  get(ch);
  EXPECT_FALSE(ch.pipe_full());
  int n = 0;
  while (put(ch, 100)) ++n;
  EXPECT_EQ(n, 40);
}

// Every read that begins on a full pipe wakes one writer (whether or not it frees a slot); a
// read of a pipe that is not full wakes none.
TEST(Channel, PipeReadOfAFullPipeWakesOneWriter) {
  Channel ch;
  ch.make_pipe(8192, 4096);
  while (put(ch, 100)) {
  }
  Channel::Wake w = get(ch);
  EXPECT_TRUE(w.any);
  EXPECT_FALSE(w.all);
  for (int i = 0; i < 39; ++i) get(ch);  // the first page read to its end: not full now
  w = get(ch);
  EXPECT_FALSE(w.any);
}

// The kernel's read holds pipe->mutex, so a writer cannot fill the pipe during it; here one can
// (during the read's copy), and then the read counts as a read of a full pipe.
TEST(Channel, PipeFilledDuringAReadCountsAsFull) {
  Channel ch;
  ch.make_pipe(8192, 4096);
  ASSERT_TRUE(put(ch, 100));
  const bool was_full = ch.pipe_full();
  ASSERT_FALSE(was_full);
  int from = -1;
  int64_t bytes = ch.take(from);  // the read begins
  while (put(ch, 100)) {      // writers fill the pipe during its copy
  }
  Channel::Wake w = ch.release(bytes, was_full);
  EXPECT_TRUE(w.any);
}

// A send waits while the skbs charged to the socket reach sk_sndbuf; freed skbs wake every
// waiting sender only once the charge is down to a quarter of it (unix_writable()).
TEST(Channel, UnixSendBufferWakesWritersAtAQuarter) {
  Channel ch;
  ch.make_unix(212992, 896);
  int n = 0;
  while (put(ch, 100)) ++n;
  EXPECT_EQ(n, (212992 + 895) / 896);  // the last send starts below the limit and passes it
  int reads = 0;
  Channel::Wake w;
  do {
    w = get(ch);
    ++reads;
  } while (!w.any);
  EXPECT_TRUE(w.all);
  EXPECT_LE(ch.wmem * 4, ch.sndbuf);
  EXPECT_GT((ch.wmem + ch.truesize) * 4, ch.sndbuf);
  EXPECT_EQ(reads, n - 212992 / 4 / 896);
}

// A stream channel (loopback TCP) wakes every writer on every freed message, as before.
TEST(Channel, StreamWakesAllWritersOnEveryRelease) {
  Channel ch;
  ch.cap_msgs = 2;
  ASSERT_TRUE(put(ch, 10));
  ASSERT_TRUE(put(ch, 10));
  EXPECT_FALSE(put(ch, 10));
  Channel::Wake w = get(ch);
  EXPECT_TRUE(w.any);
  EXPECT_TRUE(w.all);
}

// The rules end to end: hackbench over pipes and over sockets on a two-CPU machine finishes at
// every seed (a writer left asleep on a drained pipe would hang it), and its senders do block.
TEST(Channel, HackbenchOnTwoCpusFinishesAtEverySeed) {
  auto m = schedlab::fixture::test_machine(1, 2, 1, 2);
  for (const char* mode : {"-p", "-T"})
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      auto r = run_workload(m, {"hackbench", mode, "-g", "1", "-l", "200"}, "", seed);
      ASSERT_TRUE(r.w->finished()) << mode << " seed " << seed;
      EXPECT_GT(r.k->total().workload_nvcsw, 40) << mode << " seed " << seed;
    }
}

// The slot costs' counts (PIPE-SLOT, docs/model.md): a write into an empty pipe needs a new
// slot, one that fits the last page merges (none), one that does not fit takes another; a read
// frees a slot only when it reaches its page's end.
TEST(Channel, PipeCountsTheSlotsAWriteTakesAndAReadFrees) {
  Channel ch;
  ch.make_pipe(65536, 4096);
  EXPECT_EQ(ch.pipe_new_pages(100), 1);  // empty: no page to merge into
  put(ch, 100);
  EXPECT_EQ(ch.pipe_new_pages(100), 0);  // merges
  EXPECT_EQ(ch.pipe_new_pages(4000), 1);  // 100 + 4000 > 4096
  EXPECT_EQ(ch.pipe_freed_pages(100), 1);  // the only message: the page's end
  put(ch, 100);
  EXPECT_EQ(ch.pipe_freed_pages(100), 0);  // the page holds another 100 bytes
  get(ch);
  EXPECT_EQ(ch.pipe_freed_pages(100), 1);
  get(ch);
  EXPECT_TRUE(ch.pages.empty());
  EXPECT_EQ(ch.pipe_new_pages(100), 1);
}
