//! The stall guard's monitor: one thread per system that looks at every worker each
//! `stall.tick_us` (1 ms), as Go's `sysmon` does, and acts for a worker that has stayed in one
//! stretch of user code for longer than the slot bound (docs/stalls.md):
//!
//! * it takes the worker's next slot and held actor (`stall.rs`) and queues them where any
//!   worker may steal them, waking a sleeping worker: idle workers rescue within the slot bound
//!   while they are looking (`steal.rs`); the monitor covers the case where they all sleep;
//! * it fires the worker's due timers, which would otherwise wait for the handler's end;
//! * it wakes a sleeping worker if the stalled one has queued actors;
//! * a worker that has been in one handler for [`blocking::LONG`] (2 ms) while its thread sleeps
//!   in the kernel, having run on a CPU for under a quarter of the time since the previous look,
//!   is *blocked*: the actor is told so when the handler ends, and an actor told so
//!   twice moves to a thread of its own (`stall.promote`).
//!
//! The monitor sleeps without a timeout once every worker has been parked for ten of its looks (a
//! parked worker holds no hostage and its timers wake it), and the first worker to leave its park
//! wakes it: an idle system costs nothing, a busy one a few µs per tick, and a system idle for a
//! few milliseconds between messages pays no wake-up of the monitor on a message's path.

use super::stall::{Hostages, Rescue, Sighting, IN_USER};
use super::Engine;
use crate::runtime::exec_policy::blocking;
use crate::sync::AtomicBool;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

/// Looks that find every worker parked before the monitor sleeps until a worker leaves its park.
/// While it still ticks, a worker leaving its park pays one load (`wake_monitor`); once it
/// sleeps, the first worker to leave pays a wake-up (a system call, ~2–5 µs on a VM) before its
/// first activation, on the path of the message that woke it. Ten looks (10 ms at the default
/// tick, ~1 µs of the monitor's time each at 2 workers) keep that cost off a system that goes
/// idle for a few milliseconds between messages, and spend at most ten looks per idle spell.
const IDLE_LOOKS_BEFORE_SLEEP: u32 = 10;

/// The monitor thread of one engine.
#[derive(Default)]
pub(super) struct Monitor {
    thread: Mutex<Option<JoinHandle<()>>>,
    handle: OnceLock<Thread>,
    /// The monitor sleeps until a worker leaves its park (every worker was parked).
    asleep: CachePadded<AtomicBool>,
}

/// What the monitor last saw of one worker.
#[derive(Clone, Copy)]
struct Seen {
    /// The worker's stretch of user code, as the monitor saw it.
    sighting: Sighting,
    /// The blocking of this stretch of user code was reported already.
    noted: bool,
    /// The CPU time the worker's thread had run at the previous look in this long stretch (when
    /// taken, in ns), if it could be read.
    cpu: Option<(Instant, u64)>,
}

/// Whether a long stretch's thread, found asleep at this look, is blocked: it ran on a CPU for
/// less than a quarter (`blocking::OFF_CPU_SHARE`, `exec = "auto"`'s rule) of the time since the
/// previous look (`before`, `now`: when, and its CPU
/// time in ns). A look that finds a computing handler in a brief wait (the allocator's lock, a
/// page fault) must not count: a long activation met one often enough to promote its actor, a
/// consumer gulping a backlog (docs/decisions/0091-sends-charged-and-backlogs-gulped.md). With
/// no earlier sample the next look decides; where the CPU time cannot be read, the look alone.
fn blocked_since(before: Option<(Instant, u64)>, now: Option<(Instant, u64)>) -> bool {
    match (before, now) {
        (Some((then, cpu_then)), Some((at, cpu))) => {
            let wall = at.saturating_duration_since(then).as_nanos();
            u128::from(cpu.saturating_sub(cpu_then)) * u128::from(blocking::OFF_CPU_SHARE) < wall
        }
        (None, Some(_)) => false,
        (_, None) => true,
    }
}

/// Starts the monitor thread of `engine`.
pub(super) fn start(engine: &Arc<Engine>) {
    let for_thread = Arc::clone(engine);
    let spawned = std::thread::Builder::new()
        .name("loka-monitor".into())
        .spawn(move || for_thread.monitor_loop());
    match spawned {
        Ok(handle) => {
            let _ = engine.monitor.handle.set(handle.thread().clone());
            *engine.monitor.thread.lock() = Some(handle);
        }
        // No thread to spare: the system runs without the monitor (idle workers still rescue).
        Err(error) => tracing::warn!(%error, "loka: the stall monitor could not start"),
    }
}

impl Engine {
    fn monitor_loop(&self) {
        let stall = self.shared.config.stall;
        let (tick, bound) = (stall.tick(), stall.slot_bound());
        let now = Instant::now();
        let mut seen = vec![
            Seen {
                sighting: Sighting::new(0, now),
                noted: false,
                cpu: None,
            };
            self.workers.len()
        ];
        // Looks in a row that found every worker parked.
        let mut idle_looks = 0;
        while !self.is_shutdown() {
            if self.sleepers.all_asleep() {
                idle_looks += 1;
                if idle_looks > IDLE_LOOKS_BEFORE_SLEEP {
                    idle_looks = 0;
                    self.monitor_sleep();
                    continue;
                }
            } else {
                idle_looks = 0;
            }
            std::thread::park_timeout(tick);
            let now = Instant::now();
            for (w, seen) in seen.iter_mut().enumerate() {
                self.look_at(w, seen, now, bound, stall.promote);
            }
        }
    }

    /// One look at worker `w`.
    fn look_at(&self, w: usize, seen: &mut Seen, now: Instant, bound: Duration, promote: bool) {
        let worker = &self.workers[w];
        let state = worker.watch.state();
        if state != seen.sighting.state {
            *seen = Seen {
                sighting: Sighting::new(state, now),
                noted: false,
                cpu: None,
            };
            return;
        }
        let stalled_for = now.saturating_duration_since(seen.sighting.since);
        if state & IN_USER == 0 || stalled_for < bound {
            return;
        }
        let blocked = promote
            && !seen.noted
            && stalled_for >= blocking::LONG
            && worker.tid.get().is_some_and(|&tid| {
                let sample = thread_cpu_ns(tid).map(|cpu| (now, cpu));
                let before = std::mem::replace(&mut seen.cpu, sample);
                sleeps_in_kernel(tid) && blocked_since(before, sample)
            });
        let may_take = blocked || seen.sighting.stalled(state, now, bound);
        if may_take && (blocked || worker.watch.has_hostages()) {
            // A blocked handler feeds nobody: its hostages are taken whatever they hold.
            match worker
                .watch
                .rescue_if_waiting(state, blocked, seen.sighting.fed)
            {
                Some(Rescue::Taken(hostages)) => {
                    if blocked {
                        seen.noted = true;
                        self.shared.counters.system.stalls_blocked.add_shared(1);
                    }
                    // A retired worker would take no rescued actor: spread first.
                    self.spread_for_rescue();
                    self.queue_rescued(w, hostages);
                }
                Some(Rescue::Fed(queued)) => seen.sighting.found_fed(queued, now),
                None => {}
            }
        }
        // Its due timers fire here rather than after the handler.
        if self.shared.fire_timers(w) {
            self.shared.counters.system.stall_timers.add_shared(1);
        }
        // Actors queued behind the handler: a sleeping worker takes them.
        if worker.queues.has_work() {
            self.spread_for_rescue();
            self.notify(None);
        }
    }

    /// Queues what the monitor took from stalled worker `from`: into that worker's inbox, where
    /// every thief looks, waking a sleeping worker. A held actor's hold ends first; it is queued
    /// only if a message came meanwhile.
    pub(super) fn queue_rescued(&self, from: usize, hostages: Hostages) {
        let answered = hostages.held.filter(|held| {
            // SAFETY: the rescue gave us the held actor's schedule (`stall.rs`).
            !unsafe { held.release() }
        });
        for task in [hostages.next, hostages.pending, answered]
            .into_iter()
            .flatten()
        {
            self.shared.counters.system.stall_rescues.add_shared(1);
            self.push_tail(from, task);
        }
    }

    /// Every worker is parked: sleep until one leaves its park (`wake_monitor`) or shutdown.
    /// The flag is set before the re-check and read by a leaving worker after it left the
    /// sleeper count, both `SeqCst` (the Dekker pattern): a worker that leaves between the two
    /// either is seen by the re-check or sees the flag.
    fn monitor_sleep(&self) {
        self.monitor.asleep.store(true, SeqCst);
        crate::sync::fence(SeqCst);
        if !self.sleepers.all_asleep() || self.is_shutdown() {
            self.monitor.asleep.store(false, SeqCst);
            return;
        }
        while self.monitor.asleep.load(SeqCst) && !self.is_shutdown() {
            std::thread::park();
        }
    }

    /// A worker left its park: wake the monitor if it sleeps (one load otherwise).
    pub(super) fn wake_monitor(&self) {
        if self.monitor.asleep.load(SeqCst) && self.monitor.asleep.swap(false, SeqCst) {
            if let Some(thread) = self.monitor.handle.get() {
                thread.unpark();
            }
        }
    }

    /// Stops the monitor (shutdown, once the flag is set) and waits for it, so that nothing it
    /// does overlaps the workers' end.
    pub(super) fn stop_monitor(&self) {
        if let Some(thread) = self.monitor.handle.get() {
            thread.unpark();
        }
        if let Some(handle) = self.monitor.thread.lock().take() {
            let _ = handle.join();
        }
    }
}

/// The calling thread's kernel thread id (0 where there is none to read).
pub(super) fn current_tid() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `gettid` takes no argument and cannot fail.
        unsafe { libc::syscall(libc::SYS_gettid) as i32 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// Whether thread `tid` of this process sleeps in the kernel (`S` or `D` in its `stat`): it
/// waits (a sleep, a blocking read, a lock) rather than computes. `false` where that cannot be
/// read, so an unknown state never promotes an actor.
fn sleeps_in_kernel(tid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
            return false;
        };
        // `pid (comm) S ...`: the state follows the last parenthesis (the name may hold some).
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].trim_start().chars().next());
        matches!(state, Some('S' | 'D'))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        false
    }
}

/// The CPU time thread `tid` of this process has run, in ns (the first field of its
/// `schedstat`); `None` where that cannot be read.
fn thread_cpu_ns(tid: i32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
        stat.split_whitespace().next()?.parse().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        None
    }
}

#[cfg(all(test, not(loom)))]
mod rule_tests {
    use super::blocked_since;
    use std::time::{Duration, Instant};

    #[test]
    fn a_thread_asleep_is_blocked_only_if_it_ran_little_since_the_last_look() {
        let then = Instant::now();
        let at = then + Duration::from_millis(1);
        let ran = |ns| blocked_since(Some((then, 0)), Some((at, ns)));
        assert!(ran(100_000), "0.1 ms of CPU in 1 ms: waiting");
        assert!(
            !ran(600_000),
            "0.6 ms of CPU in 1 ms: a computing handler in a brief wait"
        );
        assert!(
            !blocked_since(None, Some((at, 0))),
            "first look: the next decides"
        );
        assert!(
            blocked_since(Some((then, 0)), None),
            "no CPU time: the look alone"
        );
    }
}

#[cfg(all(test, not(loom), target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_thread_is_seen_asleep_and_a_spinning_one_is_not() {
        let (tx, rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            tx.send(current_tid()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        });
        let tid = rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            sleeps_in_kernel(tid),
            "a thread in `sleep` waits in the kernel"
        );
        sleeper.join().unwrap();

        // atomic outside sync.rs: test-only, never run under loom (a real monitor thread).
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = Arc::clone(&stop);
        let spinner = std::thread::spawn(move || {
            tx.send(current_tid()).unwrap();
            while !flag.load(SeqCst) {
                std::hint::spin_loop();
            }
        });
        let tid = rx.recv().unwrap();
        // A spinning thread may be preempted at the instant we look (then `R` still): it is
        // never `S`, so most looks must say "not asleep".
        let asleep = (0..20).filter(|_| sleeps_in_kernel(tid)).count();
        let cpu_before = thread_cpu_ns(tid).expect("schedstat readable");
        std::thread::sleep(Duration::from_millis(20));
        let cpu_after = thread_cpu_ns(tid).unwrap();
        assert!(cpu_after > cpu_before, "a spinning thread's CPU time grows");
        stop.store(true, SeqCst);
        spinner.join().unwrap();
        assert_eq!(asleep, 0, "a spinning thread computes");
        assert!(!sleeps_in_kernel(-1), "no such thread: unknown, not asleep");
    }
}
