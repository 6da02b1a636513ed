// The docs/benchmarks.md workloads on CAF 0.17: event-based actors returning a `behavior`,
// atoms as message tags, CAF's default work-stealing scheduler with `--threads` workers
// (`scheduler.max-threads`), and a `scoped_actor` as the driver. Where the driver waits for
// one answer it uses `request(...).receive(...)`; where it collects many reports it is itself
// their receiver (`receive_for`), as a blocking CAF actor naturally is.

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace peer {

using caf::actor;
using caf::behavior;
using caf::event_based_actor;
using caf::infinite;
using caf::result;
using caf::scoped_actor;
using caf::stateful_actor;
using caf::typed_response_promise;

// ------------------------------------------------------------------------------ workloads

enum class bench { pingpong, counting, threadring, fjthrput, fjcreate, fib, chameneos, big, executor };

const bench all_benches[] = {bench::pingpong, bench::counting, bench::threadring,
                             bench::fjthrput, bench::fjcreate, bench::fib,
                             bench::chameneos, bench::big};

const char* name(bench b) {
  switch (b) {
    case bench::pingpong: return "pingpong";
    case bench::counting: return "counting";
    case bench::threadring: return "threadring";
    case bench::fjthrput: return "fjthrput";
    case bench::fjcreate: return "fjcreate";
    case bench::fib: return "fib";
    case bench::chameneos: return "chameneos";
    case bench::big: return "big";
    case bench::executor: return "cforall-executor";
  }
  return "?";
}

// Named on the command line but not part of `all` (the eight Savina workloads every peer has):
// Cforall's executor, which only this peer implements (Cforall compares its executor with CAF).
const bench named_only[] = {bench::executor};

// Members per group of the executor (S in docs/benchmarks.md).
const uint64_t executor_group = 100;

// The parameters of one workload at the chosen size (table in docs/benchmarks.md): `a` is the
// actor count (A, C, W) where the workload has one, `n` the other parameter (N, R, M).
struct workload {
  bench which;
  uint64_t a;
  uint64_t n;
};

workload make_workload(bench b, bool quick) {
  auto pick = [quick](uint64_t q, uint64_t f) { return quick ? q : f; };
  switch (b) {
    case bench::pingpong: return {b, 0, pick(1800000, 2000000)};
    case bench::counting: return {b, 0, pick(5000000, 10000000)};
    case bench::threadring: return {b, pick(100, 1200), pick(2000000, 1200000)};
    case bench::fjthrput: return {b, pick(60, 360), pick(60000, 60000)};
    case bench::fjcreate: return {b, 0, pick(400000, 4000000)};
    case bench::fib: return {b, 0, pick(27, 34)};
    case bench::chameneos: return {b, pick(100, 4000), pick(400000, 800000)};
    case bench::big: return {b, pick(60, 360), pick(25000, 60000)};
    case bench::executor: return {b, pick(2000, 40000), pick(20, 400)};
  }
  return {b, 0, 0};
}

// fib(n) with fib(1) = fib(2) = 1.
uint64_t fib(uint64_t n) {
  uint64_t a = 0, b = 1;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t next = a + b;
    a = b;
    b = next;
  }
  return a;
}

// The `messages` column of docs/benchmarks.md.
uint64_t messages(const workload& w) {
  switch (w.which) {
    case bench::pingpong: return 2 * w.n;
    case bench::counting: return w.n + 2;
    case bench::threadring: return w.n;
    case bench::fjthrput: return w.a * w.n;
    case bench::fjcreate: return 2 * w.n;
    case bench::fib: return 2 * (2 * fib(w.n) - 2); // 2 * (actors - 1), actors = 2 fib(N) - 1
    case bench::chameneos: return 4 * w.n;
    case bench::big: return 2 * w.a * w.n;
    case bench::executor: return w.a * executor_group * w.n;
  }
  return 0;
}

// Savina's per-message work for the fork-join benchmarks, as docs/benchmarks.md and loka
// define it: the square of the sine of the message's angle. The handler adds the result to its
// actor's state and reports it, so the call is never dead code, and the angle comes from the
// message, so it is never constant-folded.
inline double compute(double angle) {
  double s = std::sin(angle);
  return s * s;
}

// The angle the k-th message of a fork-join benchmark carries: 32 + (k mod 1024) / 128 (exact
// in binary, so every language computes the same angle bit for bit).
inline double compute_angle(uint64_t k) {
  return 32.0 + static_cast<double>(k % 1024) / 128.0;
}

// SplitMix64's finaliser: summed (wrapping) over values, it fingerprints a multiset in any order.
inline uint64_t mix(uint64_t v) {
  uint64_t z = v + UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

// `mix` of the bits of a double: a fjthrput worker's sum, a fjcreate child's result.
inline uint64_t fingerprint_of(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return mix(bits);
}

// The fingerprint the fjthrput reports must add up to, computed sequentially: worker w
// receives the angles of messages r * actors + w, r = 0..per_actor, in that order.
uint64_t fjthrput_expected(uint64_t actors, uint64_t per_actor) {
  uint64_t fingerprint = 0;
  for (uint64_t w = 0; w < actors; ++w) {
    double sum = 0.0;
    for (uint64_t r = 0; r < per_actor; ++r)
      sum += compute(compute_angle(r * actors + w));
    fingerprint += fingerprint_of(sum);
  }
  return fingerprint;
}

// The fingerprint the fjcreate replies must add up to (child k gets compute_angle(k)).
uint64_t fjcreate_expected(uint64_t actors) {
  uint64_t fingerprint = 0;
  for (uint64_t k = 0; k < actors; ++k)
    fingerprint += fingerprint_of(compute(compute_angle(k)));
  return fingerprint;
}

// The per-actor xorshift64* generator of `big`, seeded with actor_index + 1.
struct xorshift64star {
  uint64_t state;

  uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * UINT64_C(0x2545F4914F6CDD1D);
  }

  // The next ping target of actor `me` among `actors`: never `me` itself.
  uint64_t next_target(uint64_t me, uint64_t actors) {
    uint64_t t = next() % (actors - 1);
    return t >= me ? t + 1 : t;
  }
};

// Chameneo colours: i mod 3 gives blue (0), red (1), yellow (2).
int32_t complement(int32_t a, int32_t b) {
  return a == b ? a : 3 - a - b;
}

// ---------------------------------------------------------------------------------- atoms

using start_atom = caf::atom_constant<caf::atom("start")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;
using increment_atom = caf::atom_constant<caf::atom("increment")>;
using retrieve_atom = caf::atom_constant<caf::atom("retrieve")>;
using continue_atom = caf::atom_constant<caf::atom("continue")>;
using connect_atom = caf::atom_constant<caf::atom("connect")>;
using token_atom = caf::atom_constant<caf::atom("token")>;
using work_atom = caf::atom_constant<caf::atom("work")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
using request_atom = caf::atom_constant<caf::atom("request")>;
using reply_atom = caf::atom_constant<caf::atom("reply")>;
using fib_atom = caf::atom_constant<caf::atom("fib")>;
using run_atom = caf::atom_constant<caf::atom("run")>;
using meet_atom = caf::atom_constant<caf::atom("meet")>;
using change_atom = caf::atom_constant<caf::atom("change")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;
using count_atom = caf::atom_constant<caf::atom("count")>;
using neighbours_atom = caf::atom_constant<caf::atom("neighbours")>;
using peer_atom = caf::atom_constant<caf::atom("peer")>;
using finished_atom = caf::atom_constant<caf::atom("finished")>;

// ------------------------------------------------------------------------------- measuring

using clock_type = std::chrono::steady_clock;

struct outcome {
  double seconds;
  bool verified;
};

outcome since(clock_type::time_point start, bool verified) {
  std::chrono::duration<double> d = clock_type::now() - start;
  return {d.count(), verified};
}

// Asks `dest` and waits for its single answer; 0 if the request failed.
template <class... Ts>
uint64_t ask(scoped_actor& self, const actor& dest, Ts&&... xs) {
  uint64_t answer = 0;
  self->request(dest, infinite, std::forward<Ts>(xs)...)
    .receive([&](uint64_t v) { answer = v; }, [&](caf::error&) { answer = 0; });
  return answer;
}

// Stops actors that others still refer to (rings, meshes), which would otherwise never be
// collected, once the clock has stopped.
void stop_all(scoped_actor& self, const std::vector<actor>& actors) {
  for (auto& a : actors)
    self->send_exit(a, caf::exit_reason::user_shutdown);
}

// -------------------------------------------------------------------------------- pingpong

struct pinger_state {
  actor ponger;
  uint64_t round_trips = 0;
  uint64_t pongs = 0;
  typed_response_promise<uint64_t> done;
};

behavior pinger(stateful_actor<pinger_state>* self, actor ponger, uint64_t round_trips) {
  self->state.ponger = std::move(ponger);
  self->state.round_trips = round_trips;
  return {
    [=](start_atom) -> result<uint64_t> {
      auto& s = self->state;
      s.done = self->make_response_promise<uint64_t>();
      self->send(s.ponger, ping_atom::value);
      return s.done;
    },
    [=](pong_atom) {
      auto& s = self->state;
      if (++s.pongs < s.round_trips)
        self->send(s.ponger, ping_atom::value);
      else
        s.done.deliver(s.pongs);
    },
  };
}

// A value returned from a handler goes back to the sender.
behavior ponger(event_based_actor*) {
  return {
    [](ping_atom) { return pong_atom::value; },
  };
}

outcome run_pingpong(caf::actor_system& sys, uint64_t round_trips) {
  scoped_actor self{sys};
  auto pong = sys.spawn(ponger);
  auto ping = sys.spawn(pinger, pong, round_trips);
  auto start = clock_type::now();
  auto pongs = ask(self, ping, start_atom::value);
  auto result = since(start, pongs == round_trips);
  stop_all(self, {ping, pong});
  return result;
}

// -------------------------------------------------------------------------------- counting

struct counter_state {
  uint64_t count = 0;
};

behavior counter(stateful_actor<counter_state>* self) {
  return {
    [=](increment_atom) { ++self->state.count; },
    [=](retrieve_atom) { return self->state.count; },
  };
}

// Sends the increments a slice at a time, as loka's Producer does (peers/rust/common's
// COUNTING_SLICE): the first on the driver's request, each next one on a message to itself; then
// asks the Counter for its total and passes it on to the driver.
const uint64_t counting_slice = 10000;

struct producer_state {
  uint64_t left = 0;
  typed_response_promise<uint64_t> done;
};

behavior producer(stateful_actor<producer_state>* self, actor counter, uint64_t increments) {
  self->state.left = increments;
  auto send_slice = [=] {
    auto& s = self->state;
    uint64_t slice = std::min(s.left, counting_slice);
    for (uint64_t i = 0; i < slice; ++i)
      self->send(counter, increment_atom::value);
    s.left -= slice;
    if (s.left > 0) {
      self->send(self, continue_atom::value);
      return;
    }
    self->request(counter, caf::infinite, retrieve_atom::value).then([=](uint64_t total) {
      self->state.done.deliver(total);
    });
  };
  return {
    [=](start_atom) -> result<uint64_t> {
      self->state.done = self->make_response_promise<uint64_t>();
      send_slice();
      return self->state.done;
    },
    [=](continue_atom) { send_slice(); },
  };
}

outcome run_counting(caf::actor_system& sys, uint64_t increments) {
  scoped_actor self{sys};
  auto count = sys.spawn(counter);
  auto produce = sys.spawn(producer, count, increments);
  auto start = clock_type::now();
  auto total = ask(self, produce, start_atom::value);
  auto result = since(start, total == increments);
  stop_all(self, {produce, count});
  return result;
}

// ------------------------------------------------------------------------------ threadring

struct ring_state {
  actor next;
};

// The driver's request travels with the token (delegated hop by hop), so whichever member
// takes the last hop answers the driver.
behavior ring_member(stateful_actor<ring_state>* self) {
  return {
    [=](connect_atom, const actor& next) { self->state.next = next; },
    [=](token_atom, uint64_t left, uint64_t hops) -> result<caf::message> {
      if (left == 0)
        return caf::make_message(hops);
      return self->delegate(self->state.next, token_atom::value, left - 1, hops + 1);
    },
  };
}

outcome run_threadring(caf::actor_system& sys, uint64_t actors, uint64_t hops) {
  scoped_actor self{sys};
  std::vector<actor> ring;
  for (uint64_t i = 0; i < actors; ++i)
    ring.push_back(sys.spawn(ring_member));
  for (uint64_t i = 0; i < actors; ++i)
    self->send(ring[i], connect_atom::value, ring[(i + 1) % actors]);
  auto start = clock_type::now();
  auto taken = ask(self, ring[0], token_atom::value, hops, uint64_t{0});
  auto result = since(start, taken == hops);
  stop_all(self, ring);
  return result;
}

// -------------------------------------------------------------------------------- fjthrput

struct thrput_state {
  uint64_t received = 0;
  double sum = 0.0;
};

behavior thrput_worker(stateful_actor<thrput_state>* self, actor driver, uint64_t per_actor) {
  return {
    [=](work_atom, double angle) {
      auto& s = self->state;
      s.sum += compute(angle);
      if (++s.received == per_actor)
        self->send(driver, report_atom::value, s.received, fingerprint_of(s.sum));
    },
  };
}

// Receives `expected` reports and counts those carrying `want`.
uint64_t collect_reports(scoped_actor& self, uint64_t expected, uint64_t want) {
  uint64_t correct = 0;
  uint64_t i = 0;
  self->receive_for(i, expected)([&](report_atom, uint64_t v) { correct += v == want; });
  return correct;
}

outcome run_fjthrput(caf::actor_system& sys, uint64_t actors, uint64_t per_actor) {
  scoped_actor self{sys};
  std::vector<actor> workers;
  for (uint64_t i = 0; i < actors; ++i)
    workers.push_back(sys.spawn(thrput_worker, actor{self}, per_actor));
  auto expected = fjthrput_expected(actors, per_actor);
  auto start = clock_type::now();
  uint64_t k = 0;
  for (uint64_t i = 0; i < per_actor; ++i)
    for (auto& w : workers)
      self->send(w, work_atom::value, compute_angle(k++));
  uint64_t complete = 0;
  uint64_t fingerprint = 0;
  uint64_t i = 0;
  self->receive_for(i, actors)([&](report_atom, uint64_t received, uint64_t worker_fingerprint) {
    complete += received == per_actor;
    fingerprint += worker_fingerprint;
  });
  auto result = since(start, complete == actors && fingerprint == expected);
  stop_all(self, workers);
  return result;
}

// -------------------------------------------------------------------------------- fjcreate

behavior created_worker(event_based_actor* self) {
  return {
    [=](request_atom, double angle) -> result<reply_atom, uint64_t> {
      self->quit();
      return {reply_atom::value, fingerprint_of(compute(angle))};
    },
  };
}

outcome run_fjcreate(caf::actor_system& sys, uint64_t actors) {
  scoped_actor self{sys};
  auto expected = fjcreate_expected(actors);
  auto start = clock_type::now();
  for (uint64_t k = 0; k < actors; ++k)
    self->send(sys.spawn(created_worker), request_atom::value, compute_angle(k));
  uint64_t replies = 0;
  uint64_t fingerprint = 0;
  self->receive_for(replies, actors)([&](reply_atom, uint64_t x) { fingerprint += x; });
  return since(start, replies == actors && fingerprint == expected);
}

// ------------------------------------------------------------------------------------- fib

struct fib_state {
  uint64_t sum = 0;
  int pending = 2;
  typed_response_promise<uint64_t> answer;
};

behavior fib_actor(stateful_actor<fib_state>* self) {
  return {
    [=](fib_atom, uint64_t n) -> result<uint64_t> {
      if (n <= 2) {
        self->quit();
        return uint64_t{1};
      }
      auto& s = self->state;
      s.answer = self->make_response_promise<uint64_t>();
      auto add = [=](uint64_t v) {
        auto& s = self->state;
        s.sum += v;
        if (--s.pending == 0) {
          s.answer.deliver(s.sum);
          self->quit();
        }
      };
      // Both requests are in flight at once (`then` does not suspend the actor).
      self->request(self->spawn(fib_actor), infinite, fib_atom::value, n - 1).then(add);
      self->request(self->spawn(fib_actor), infinite, fib_atom::value, n - 2).then(add);
      return s.answer;
    },
  };
}

outcome run_fib(caf::actor_system& sys, uint64_t n) {
  scoped_actor self{sys};
  auto start = clock_type::now();
  auto value = ask(self, sys.spawn(fib_actor), fib_atom::value, n);
  return since(start, value == fib(n));
}

// ------------------------------------------------------------------------------- chameneos

struct mall_state {
  uint64_t meetings_left = 0;
  uint64_t creatures = 0;
  actor waiting;
  uint64_t faded = 0;
  uint64_t total = 0;
  typed_response_promise<uint64_t> done;
};

behavior mall(stateful_actor<mall_state>* self, uint64_t meetings, uint64_t creatures) {
  self->state.meetings_left = meetings;
  self->state.creatures = creatures;
  return {
    [=](run_atom, const std::vector<actor>& all) -> result<uint64_t> {
      auto& s = self->state;
      s.done = self->make_response_promise<uint64_t>();
      for (auto& c : all)
        self->send(c, start_atom::value);
      return s.done;
    },
    [=](meet_atom, const actor& from, int32_t colour) {
      auto& s = self->state;
      if (s.meetings_left == 0) {
        // All meetings are done: every later visitor is asked for its meeting count.
        self->send(from, exit_atom::value);
      } else if (s.waiting) {
        --s.meetings_left;
        self->send(s.waiting, meet_atom::value, from, colour);
        s.waiting = nullptr;
      } else {
        s.waiting = from;
      }
    },
    [=](count_atom, uint64_t meetings) {
      auto& s = self->state;
      s.total += meetings;
      if (++s.faded == s.creatures)
        s.done.deliver(s.total);
    },
  };
}

struct chameneo_state {
  actor mall;
  int32_t colour = 0;
  uint64_t meetings = 0;
};

behavior chameneo(stateful_actor<chameneo_state>* self, actor mall, int32_t colour) {
  self->state.mall = std::move(mall);
  self->state.colour = colour;
  auto visit_mall = [=] {
    auto& s = self->state;
    self->send(s.mall, meet_atom::value, caf::actor_cast<actor>(self), s.colour);
  };
  return {
    [=](start_atom) { visit_mall(); },
    [=](meet_atom, const actor& other, int32_t colour) {
      auto& s = self->state;
      s.colour = complement(s.colour, colour);
      ++s.meetings;
      self->send(other, change_atom::value, s.colour);
      visit_mall();
    },
    [=](change_atom, int32_t colour) {
      self->state.colour = colour;
      ++self->state.meetings;
      visit_mall();
    },
    [=](exit_atom) {
      self->send(self->state.mall, count_atom::value, self->state.meetings);
      self->quit();
    },
  };
}

outcome run_chameneos(caf::actor_system& sys, uint64_t creatures, uint64_t meetings) {
  scoped_actor self{sys};
  auto the_mall = sys.spawn(mall, meetings, creatures);
  std::vector<actor> all;
  for (uint64_t i = 0; i < creatures; ++i)
    all.push_back(sys.spawn(chameneo, the_mall, static_cast<int32_t>(i % 3)));
  auto start = clock_type::now();
  auto total = ask(self, the_mall, run_atom::value, all);
  auto result = since(start, total == 2 * meetings);
  stop_all(self, {the_mall});
  return result;
}

// ------------------------------------------------------------------------------------- big

struct big_state {
  uint64_t me = 0;
  uint64_t pings = 0;
  uint64_t pongs = 0;
  xorshift64star rng{0};
  std::vector<actor> all;
  actor sink;
};

behavior big_actor(stateful_actor<big_state>* self, uint64_t me, uint64_t pings, actor sink) {
  auto& init = self->state;
  init.me = me;
  init.pings = pings;
  init.rng = xorshift64star{me + 1};
  init.sink = std::move(sink);
  auto ping_someone = [=] {
    auto& s = self->state;
    self->send(s.all[s.rng.next_target(s.me, s.all.size())], ping_atom::value);
  };
  return {
    [=](neighbours_atom, const std::vector<actor>& all) { self->state.all = all; },
    [=](start_atom) { ping_someone(); },
    // A value returned from a handler goes back to the sender.
    [=](ping_atom) { return pong_atom::value; },
    [=](pong_atom) {
      auto& s = self->state;
      if (++s.pongs == s.pings)
        self->send(s.sink, report_atom::value, s.pongs);
      else
        ping_someone();
    },
  };
}

outcome run_big(caf::actor_system& sys, uint64_t actors, uint64_t pings) {
  scoped_actor self{sys};
  std::vector<actor> all;
  for (uint64_t i = 0; i < actors; ++i)
    all.push_back(sys.spawn(big_actor, i, pings, actor{self}));
  for (auto& a : all)
    self->send(a, neighbours_atom::value, all);
  auto start = clock_type::now();
  for (auto& a : all)
    self->send(a, start_atom::value);
  auto reports = collect_reports(self, actors, pings);
  auto result = since(start, reports == actors);
  stop_all(self, all);
  return result;
}

// -------------------------------------------------------------------------------- executor

// Cforall's executor benchmark, as loka's `cforall-executor` (crates/loka-bench/src/cforall/
// executor.rs): A actors in groups of S; an actor's start and each message it receives make it
// send one message, to its group's members in turn (its k-th send goes to member k mod S), until
// it has sent S·R; it then has sent R to, and received R from, every member. Every message names
// its sender. CAF places the actors (its scheduler spreads spawns from a non-worker thread over
// its workers in turn).
struct member_state {
  uint64_t index = 0;
  uint64_t quota = 0;
  std::vector<actor> group;
  actor sink;
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t senders = 0; // wrapping sum of mix(sender index)
  bool finished = false;
};

behavior member(stateful_actor<member_state>* self, uint64_t index, uint64_t quota, actor sink) {
  auto& init = self->state;
  init.index = index;
  init.quota = quota;
  init.sink = std::move(sink);
  auto send_next = [=] {
    auto& s = self->state;
    if (s.sent == s.quota)
      return;
    auto& target = s.group[s.sent % s.group.size()];
    ++s.sent;
    self->send(target, peer_atom::value, s.index);
  };
  auto check_finished = [=] {
    auto& s = self->state;
    if (!s.finished && s.sent == s.quota && s.received >= s.quota) {
      s.finished = true;
      self->send(s.sink, finished_atom::value);
    }
  };
  return {
    [=](neighbours_atom, const std::vector<actor>& group) { self->state.group = group; },
    [=](start_atom) {
      send_next();
      check_finished();
    },
    [=](peer_atom, uint64_t from) {
      auto& s = self->state;
      ++s.received;
      s.senders += mix(from);
      send_next();
      check_finished();
    },
    // After the run: what it sent and received, answered to the driver.
    [=](retrieve_atom) {
      auto& s = self->state;
      return caf::make_message(report_atom::value, s.index, s.sent, s.received, s.senders);
    },
  };
}

outcome run_executor(caf::actor_system& sys, uint64_t actors, uint64_t rounds) {
  scoped_actor self{sys};
  const uint64_t size = executor_group;
  const uint64_t quota = size * rounds;
  std::vector<actor> all;
  all.reserve(actors);
  for (uint64_t i = 0; i < actors; ++i)
    all.push_back(sys.spawn(member, i, quota, actor{self}));
  // Set-up, untimed: each member learns its group (members g·S .. g·S + S - 1).
  for (uint64_t g = 0; g < actors / size; ++g) {
    std::vector<actor> group(all.begin() + g * size, all.begin() + (g + 1) * size);
    for (auto& m : group)
      self->send(m, neighbours_atom::value, group);
  }
  auto start = clock_type::now();
  for (auto& m : all)
    self->send(m, start_atom::value);
  // A lost message leaves members that never finish: after the first report, ten seconds
  // without another end the wait (the run fails its check instead of hanging).
  uint64_t finished = 0;
  bool stalled = false;
  self->receive([&](finished_atom) { ++finished; });
  self->receive_while([&] { return finished < actors && !stalled; })(
    [&](finished_atom) { ++finished; },
    caf::after(std::chrono::seconds(10)) >> [&] { stalled = true; });
  auto elapsed = since(start, false);
  // What every member sent and received, once the run is over (a duplicated or misrouted
  // message shows here): R from every member of its group, S·R sent and received.
  std::vector<uint64_t> group_senders(actors / size, 0);
  for (uint64_t i = 0; i < actors; ++i)
    group_senders[i / size] += mix(i) * rounds;
  uint64_t right = 0;
  for (auto& m : all)
    self->send(m, retrieve_atom::value);
  uint64_t i = 0;
  self->receive_for(i, actors)(
    [&](report_atom, uint64_t index, uint64_t sent, uint64_t received, uint64_t senders) {
      right += index < actors && sent == quota && received == quota
               && senders == group_senders[index / size];
    });
  stop_all(self, all);
  return {elapsed.seconds, !stalled && finished == actors && right == actors};
}

outcome run(caf::actor_system& sys, const workload& w) {
  switch (w.which) {
    case bench::pingpong: return run_pingpong(sys, w.n);
    case bench::counting: return run_counting(sys, w.n);
    case bench::threadring: return run_threadring(sys, w.a, w.n);
    case bench::fjthrput: return run_fjthrput(sys, w.a, w.n);
    case bench::fjcreate: return run_fjcreate(sys, w.n);
    case bench::fib: return run_fib(sys, w.n);
    case bench::chameneos: return run_chameneos(sys, w.a, w.n);
    case bench::big: return run_big(sys, w.a, w.n);
    case bench::executor: return run_executor(sys, w.a, w.n);
  }
  return {0, false};
}

// ---------------------------------------------------------------------------- command line

const char* usage = "usage: peer-caf --bench NAME[,NAME...]|all [--size quick|full] "
                    "[--threads N] [--repeat K]\n"
                    "  NAME: pingpong counting threadring fjthrput fjcreate fib chameneos big\n"
                    "        (`all`), or cforall-executor\n";

struct args {
  std::vector<bench> benches;
  bool quick = true;
  uint64_t threads = 2;
  uint64_t repeat = 1;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "peer-caf: %s\n%s", what.c_str(), usage);
  std::exit(2);
}

uint64_t parse_positive(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || *end != '\0' || n == 0)
    usage_error(flag + " expects a positive integer, got '" + v + "'");
  return n;
}

std::vector<bench> parse_benches(const std::string& list) {
  if (list == "all")
    return {std::begin(all_benches), std::end(all_benches)};
  std::vector<bench> out;
  size_t from = 0;
  while (true) {
    auto comma = list.find(',', from);
    auto item = list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    bool found = false;
    for (auto b : all_benches) {
      if (item == name(b)) {
        out.push_back(b);
        found = true;
      }
    }
    for (auto b : named_only) {
      if (item == name(b)) {
        out.push_back(b);
        found = true;
      }
    }
    if (!found)
      usage_error("unknown bench '" + item + "'");
    if (comma == std::string::npos)
      return out;
    from = comma + 1;
  }
}

args parse_args(int argc, char** argv) {
  args out;
  bool have_bench = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (flag != "--bench" && flag != "--size" && flag != "--threads" && flag != "--repeat")
      usage_error("unknown argument '" + flag + "'");
    if (i + 1 == argc)
      usage_error(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--bench") {
      out.benches = parse_benches(value);
      have_bench = true;
    } else if (flag == "--size") {
      if (value != "quick" && value != "full")
        usage_error("unknown size '" + value + "' (expected quick or full)");
      out.quick = value == "quick";
    } else if (flag == "--threads") {
      out.threads = parse_positive(flag, value);
    } else {
      out.repeat = parse_positive(flag, value);
    }
  }
  if (!have_bench)
    usage_error("--bench is required");
  return out;
}

} // namespace peer

int main(int argc, char** argv) {
  auto args = peer::parse_args(argc, argv);
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<size_t>(args.threads));
  caf::actor_system sys{cfg};
  bool all_verified = true;
  for (auto b : args.benches) {
    auto w = peer::make_workload(b, args.quick);
    auto msgs = peer::messages(w);
    for (uint64_t r = 0; r < args.repeat; ++r) {
      auto o = peer::run(sys, w);
      all_verified = all_verified && o.verified;
      std::printf("{\"runtime\":\"caf\",\"bench\":\"%s\",\"engine\":\"work-stealing\","
                  "\"policy\":\"default\",\"topology\":\"host\",\"workers\":%llu,"
                  "\"size\":\"%s\",\"messages\":%llu,\"seconds\":%.6f,\"msgs_per_sec\":%.1f,"
                  "\"verified\":%s,\"telemetry\":{},\"repeat\":%llu}\n",
                  peer::name(b), static_cast<unsigned long long>(args.threads),
                  args.quick ? "quick" : "full", static_cast<unsigned long long>(msgs),
                  o.seconds, static_cast<double>(msgs) / o.seconds,
                  o.verified ? "true" : "false", static_cast<unsigned long long>(r));
      // One line per run, flushed at once so a later hang still leaves the earlier results.
      std::fflush(stdout);
    }
  }
  return all_verified ? 0 : 1;
}
