#include "runtime/throughput.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocols/check.h"
#include "protocols/tuple.h"
#include "runtime/run_clock.h"
#include "runtime/transport.h"

namespace hapair {
namespace {

constexpr std::size_t kRecordBytes = 40;  // id, ts, key, value, lineage: 5 x 8 bytes

void put_u64(std::uint8_t* out, std::uint64_t v) { std::memcpy(out, &v, 8); }
std::uint64_t get_u64(const std::uint8_t* in) {
  std::uint64_t v;
  std::memcpy(&v, in, 8);
  return v;
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void finish_rate(ThroughputMeasurement& m, TimeUs elapsed_us) {
  m.seconds = static_cast<double>(std::max<TimeUs>(elapsed_us, 1)) / 1e6;
  if (m.completed) m.tuples_per_s = static_cast<double>(m.tuples) / m.seconds;
}

}  // namespace

ThroughputMeasurement measure_raw_push_pull(std::int64_t tuples, std::int64_t batch_tuples, double timeout_s,
                                            const CurveKeys& curve) {
  HAPAIR_CHECK_MSG(tuples > 0 && batch_tuples > 0, "tuples=" << tuples << " batch_tuples=" << batch_tuples);
  ThroughputMeasurement m;
  zmq::context_t context(1);
  std::unique_ptr<CurveGate> gate = curve.on() ? std::make_unique<CurveGate>(context, curve) : nullptr;
  zmq::socket_t pull(context, zmq::socket_type::pull);
  pull.set(zmq::sockopt::linger, 0);
  make_curve_server(pull, curve);
  if (gate) {
    gate->watch(pull);
    gate->start();
  }
  pull.bind("tcp://127.0.0.1:*");
  const std::string endpoint = pull.get(zmq::sockopt::last_endpoint);

  std::atomic<bool> stop{false};
  const double process_before = process_cpu_s();
  const double receiver_before = thread_cpu_s();
  const RunClock clock = RunClock::starting_now();
  std::thread sender([&] {
    const double sender_before = thread_cpu_s();
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::linger, 0);
    push.set(zmq::sockopt::sndtimeo, 100);  // so that `stop` is seen while ZeroMQ pushes back
    make_curve_client(push, curve);
    push.connect(endpoint);
    std::vector<std::uint8_t> buffer(static_cast<std::size_t>(batch_tuples) * kRecordBytes);
    for (std::int64_t first = 1; first <= tuples && !stop; first += batch_tuples) {
      const std::int64_t n = std::min(batch_tuples, tuples - first + 1);
      for (std::int64_t i = 0; i < n; ++i) {
        const auto id = static_cast<std::uint64_t>(first + i);
        std::uint8_t* record = buffer.data() + static_cast<std::size_t>(i) * kRecordBytes;
        put_u64(record, id);
        put_u64(record + 8, id * 10);
        put_u64(record + 16, id % 8);
        put_u64(record + 24, mix64(id) >> 40);
        put_u64(record + 32, mix64(id));
      }
      zmq::message_t frame(buffer.data(), static_cast<std::size_t>(n) * kRecordBytes);
      while (!stop && !push.send(frame, zmq::send_flags::none)) {
      }
    }
    m.sender_cpu_s = thread_cpu_s() - sender_before;
    // Closing the socket (linger 0) would discard what is still queued: wait for the receiver.
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });

  // The receiver reads every record back into a Tuple and checks the ids are consecutive, the
  // least a consumer of tuples does.
  const auto timeout_us = static_cast<TimeUs>(timeout_s * 1e6);
  std::uint64_t expected_id = 1;
  TimeUs last_arrival_us = 0;
  while (m.tuples < tuples && clock.now_us() < timeout_us) {
    zmq::pollitem_t item{pull.handle(), 0, ZMQ_POLLIN, 0};
    if (poll_sockets(&item, 1, 100'000) == 0) continue;
    zmq::message_t frame;
    while (m.tuples < tuples && pull.recv(frame, zmq::recv_flags::dontwait)) {
      const auto* data = static_cast<const std::uint8_t*>(frame.data());
      const std::size_t records = frame.size() / kRecordBytes;
      for (std::size_t r = 0; r < records; ++r) {
        const std::uint8_t* record = data + r * kRecordBytes;
        Tuple t{get_u64(record), static_cast<TimeUs>(get_u64(record + 8)), static_cast<std::int64_t>(get_u64(record + 16)),
                static_cast<double>(get_u64(record + 24)), get_u64(record + 32)};
        if (t.id != expected_id) {
          m.error = "raw receiver got tuple " + std::to_string(t.id) + " where " + std::to_string(expected_id) + " was due";
          stop = true;
          sender.join();
          return m;
        }
        ++expected_id;
      }
      m.tuples += static_cast<std::int64_t>(records);
      m.messages += 1;
      m.bytes += static_cast<std::int64_t>(frame.size());
      last_arrival_us = clock.now_us();
    }
  }
  m.receiver_cpu_s = thread_cpu_s() - receiver_before;
  stop = true;
  sender.join();
  m.process_cpu_s = process_cpu_s() - process_before;
  m.completed = m.tuples == tuples;
  if (!m.completed) m.error = "raw ZeroMQ: only " + std::to_string(m.tuples) + " of " + std::to_string(tuples) + " tuples arrived in time";
  finish_rate(m, last_arrival_us);
  return m;
}

ThroughputMeasurement measure_one_hop(std::shared_ptr<const Plan> plan, NodeId producer, NodeId consumer,
                                      const CoreFactory& factory, double timeout_s, const CurveKeys& curve) {
  HAPAIR_CHECK_MSG(plan && plan->nodes.size() == 2 && producer < 2 && consumer < 2 && producer != consumer,
                   "measure_one_hop needs a plan of exactly the two nodes it hosts");
  ThroughputMeasurement m;
  zmq::context_t context(1);
  std::unique_ptr<CurveGate> gate = curve.on() ? std::make_unique<CurveGate>(context, curve) : nullptr;
  TransportConfig producer_config;
  producer_config.log_name = plan->nodes[producer].name;
  producer_config.curve = curve;
  TransportConfig consumer_config;
  consumer_config.log_name = plan->nodes[consumer].name;
  consumer_config.curve = curve;
  Transport producer_transport(context, producer_config);
  Transport consumer_transport(context, consumer_config);
  if (gate) {
    gate->watch(producer_transport.inbox());
    gate->watch(consumer_transport.inbox());
    gate->start();
  }
  for (Transport* t : {&producer_transport, &consumer_transport}) {
    t->set_peer(producer, producer_transport.endpoint());
    t->set_peer(consumer, consumer_transport.endpoint());
  }
  std::unique_ptr<NodeCore> producer_core = factory(plan, producer);
  std::unique_ptr<NodeCore> consumer_core = factory(plan, consumer);

  std::atomic<bool> stop{false};
  std::string producer_error;
  const double process_before = process_cpu_s();
  const double consumer_before = thread_cpu_s();
  std::atomic<double> producer_cpu_at_finish{0.0};
  const RunClock clock = RunClock::starting_now();
  std::thread producer_thread([&] {
    const double producer_before = thread_cpu_s();
    try {
      CoreRunner runner(*producer_core, producer_transport, producer, clock);
      CoreOutput out;
      runner.start(out);
      while (!stop && out.fatal_error.empty()) {
        runner.turn(out, nullptr, 5'000);
        out.deliveries.clear();
        out.traces.clear();
        producer_cpu_at_finish = thread_cpu_s() - producer_before;
      }
      producer_error = out.fatal_error;
    } catch (const std::exception& e) {
      producer_error = e.what();
    }
  });

  const auto timeout_us = static_cast<TimeUs>(timeout_s * 1e6);
  TimeUs last_delivery_us = 0;
  try {
    CoreRunner runner(*consumer_core, consumer_transport, consumer, clock);
    CoreOutput out;
    runner.start(out);
    while (!out.finished && out.fatal_error.empty() && clock.now_us() < timeout_us) {
      runner.turn(out, nullptr, 5'000);
      if (!out.deliveries.empty()) {
        m.tuples += static_cast<std::int64_t>(out.deliveries.size());
        last_delivery_us = out.deliveries.back().at_us;
        out.deliveries.clear();
      }
      out.traces.clear();
    }
    m.receiver_cpu_s = thread_cpu_s() - consumer_before;
    m.process_cpu_s = process_cpu_s() - process_before;
    m.sender_cpu_s = producer_cpu_at_finish;
    m.completed = out.finished && out.fatal_error.empty();
    if (!out.fatal_error.empty()) m.error = plan->nodes[consumer].name + ": " + out.fatal_error;
    else if (!out.finished) m.error = "hapair: the consumer did not finish within " + std::to_string(timeout_s) + " s";
  } catch (const std::exception& e) {
    m.error = e.what();
  }
  stop = true;
  producer_thread.join();
  if (!producer_error.empty()) {
    m.completed = false;
    m.error = plan->nodes[producer].name + ": " + producer_error;
  }
  m.messages = producer_transport.counters().messages_sent[kKindOf<TupleBatch>];
  m.bytes = producer_transport.counters().bytes_sent[kKindOf<TupleBatch>];
  finish_rate(m, last_delivery_us);
  return m;
}

}  // namespace hapair
