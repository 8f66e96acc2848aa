// The distributed tune's messages (src/distributed/tune_protocol.h): every message survives a
// round trip, and every malformed one is a ProtocolError with a reason, never a crash or a
// silently wrong cost. Also the rank check and MeasureSlots, none of which needs MPI.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "distributed/distributed_tune.h"
#include "distributed/measure_slots.h"
#include "distributed/tune_protocol.h"

using namespace tessera;
using namespace tessera::distributed;

namespace {

std::string decode_error(const std::string& text) {
  try {
    decode(text);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "(decoded)";
}

Hello hello(int rank) {
  return Hello{rank, "host" + std::to_string(rank), "AMD EPYC/isa-0011aabb", "measure/1/abc", 1, 2, 40, "d1g3"};
}

}  // namespace

TEST_CASE("messages survive encode/decode") {
  Message h = decode(encode(hello(3)));
  REQUIRE(std::holds_alternative<Hello>(h));
  CHECK(std::get<Hello>(h).host == "host3");
  CHECK(std::get<Hello>(h).slots == 2);
  CHECK(std::get<Hello>(h).requests == 40);

  Message j = decode(encode(Job{7, 12, "00ff00ff00ff00ff", "onednn"}));
  REQUIRE(std::holds_alternative<Job>(j));
  CHECK(std::get<Job>(j).request == 12);
  CHECK(std::get<Job>(j).backend == "onednn");

  for (const CostEntry& e : {CostEntry{Cost::value(1.25e-5), 3.0e-7, 50}, CostEntry{Cost::invalid("crashed: signal 11\ttab \"q\""), 0.0, 0},
                             CostEntry{Cost::unknown(), 0.0, 0},
                             CostEntry{Cost::value(6.0e-6), 1.0e-7, 20, 2.25e-3}}) {   // a bf16 measurement's error
    Message r = decode(encode(Result{9, e}));
    REQUIRE(std::holds_alternative<Result>(r));
    CHECK(std::get<Result>(r).id == 9);
    CHECK(std::get<Result>(r).entry == e);
  }
  CHECK(std::get<Stop>(decode(encode(Stop{"done"}))).why == "done");
  CHECK(std::get<Failure>(decode(encode(Failure{"rank 2: no"}))).what == "rank 2: no");
  CHECK(std::string(type_name(Message{Stop{}})) == "stop");
}

TEST_CASE("malformed messages are refused with a reason") {
  CHECK(decode_error("") == "message is not a JSON object");
  CHECK(decode_error("{\"t\":\"job\",\"id\":1") == "message is not a JSON object");
  CHECK(decode_error("[1,2]") == "message is not a JSON object");
  CHECK(decode_error("{\"id\":1}") == "message has no type (field 't')");
  CHECK(decode_error("{\"t\":\"gossip\"}") == "unknown message type 'gossip'");
  CHECK(decode_error("{\"t\":\"job\",\"id\":1,\"req\":2,\"h\":\"ab\"}") == "message 'job': missing field 'b'");
  CHECK(decode_error("{\"t\":\"job\",\"id\":-1,\"req\":2,\"h\":\"ab\",\"b\":\"ref\"}") ==
        "message 'job': field 'id' is not a non-negative integer");
  CHECK(decode_error("{\"t\":\"job\",\"id\":1.5,\"req\":2,\"h\":\"ab\",\"b\":\"ref\"}") ==
        "message 'job': field 'id' is not a non-negative integer");
  CHECK(decode_error("{\"t\":\"job\",\"id\":1,\"req\":2,\"h\":7,\"b\":\"ref\"}") == "message 'job': field 'h' is not a string");
  CHECK(decode_error("{\"t\":\"result\",\"id\":1,\"c\":\"fast\",\"s\":0,\"n\":1}") ==
        "message 'result': field 'c' = 'fast' is not a cost");
  CHECK(decode_error("{\"t\":\"result\",\"id\":1,\"c\":\"1e-3\",\"s\":-1,\"n\":1}") == "message 'result': field 's' is negative");
  CHECK(decode_error("{\"t\":\"result\",\"id\":1,\"c\":\"1e-3\",\"s\":\"x\",\"n\":1}") ==
        "message 'result': field 's' is not a number");
  CHECK(decode_error("{\"t\":\"result\",\"id\":1,\"c\":\"inf\",\"s\":0,\"n\":1}") ==
        "message 'result': field 'c' = 'inf' is not a cost");
  CHECK(decode_error("{\"t\":\"result\",\"id\":1,\"c\":\"1e-3\",\"s\":0,\"n\":9223372036854775808}") ==
        "message 'result': field 'n' = 9223372036854775808 is out of range");
  CHECK(decode_error("{\"t\":\"result\",\"id\":1,\"c\":\"1e-3\",\"s\":1e400,\"n\":1}") == "message is not a JSON object");
  std::string h = encode(hello(1));
  CHECK(decode_error(h.substr(0, h.size() - 1)) == "message is not a JSON object");
  std::string bad_rank = h;
  bad_rank.replace(bad_rank.find("\"rank\":1"), 8, "\"rank\":0");
  CHECK(decode_error(bad_rank) == "message 'hello': field 'rank' = 0 is out of range");
  CHECK(decode_error(std::string(kMaxMessageBytes + 1, ' ')).find("is too long") != std::string::npos);
  CHECK(decode_error(std::string("{\"t\":\"stop\",\"why\":\"\xff\"}")) == "message is not a JSON object");
}

TEST_CASE("ranks share a plan only on the same machine, libraries, threads and requests") {
  Hello a = hello(0), b = hello(2);
  CHECK_FALSE(rank_mismatch(a, b));
  b.host = "other-host";   // another host of the same kind is fine
  CHECK_FALSE(rank_mismatch(a, b));
  Hello m = b;
  m.machine = "Intel Xeon/isa-99999999";
  REQUIRE(rank_mismatch(a, m));
  CHECK(*rank_mismatch(a, m) ==
        "rank 2 on host other-host is machine 'Intel Xeon/isa-99999999', rank 0 on host host0 is 'AMD EPYC/isa-0011aabb'");
  Hello v = b;
  v.measure = "measure/1/def";
  CHECK(rank_mismatch(a, v)->find("backend libraries measure/1/def") != std::string::npos);
  Hello t = b;
  t.threads = 4;
  CHECK(rank_mismatch(a, t)->find("4 threads") != std::string::npos);
  Hello d = b;
  d.digest = "other";
  CHECK(rank_mismatch(a, d)->find("other model files or another tessera build") != std::string::npos);
}

TEST_CASE("MeasureSlots runs at most N at once and returns every result") {
  std::atomic<int> running{0}, peak{0};
  MeasureSlots slots(2, [&](uint64_t request) {
    int now = ++running;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
    if (request == 3) throw std::runtime_error("boom");
    return CostEntry{Cost::value(static_cast<double>(request)), 0.0, 1};
  });
  CHECK(slots.free() == 2);
  CHECK(slots.idle());
  std::vector<MeasureSlots::Done> done;
  uint64_t next = 0;
  while (done.size() < 5) {
    while (next < 5 && slots.free() > 0) {
      slots.push(next * 10, next);
      ++next;
    }
    for (auto& d : slots.take_results()) done.push_back(d);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(peak.load() <= 2);
  CHECK(slots.idle());
  for (const auto& d : done) {
    if (d.job == 30) {
      CHECK(d.entry.cost.is_invalid());
      CHECK(d.entry.cost.reason() == "measurement failed: boom");
    } else {
      CHECK(d.entry.cost == Cost::value(static_cast<double>(d.job / 10)));
    }
  }
}
