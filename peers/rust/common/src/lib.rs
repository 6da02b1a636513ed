//! What every Rust peer shares: the command line, the workload sizes and message counts of
//! docs/internals/benchmarks.md, the JSON result record, and the small helpers the workloads need
//! (`compute()` and the fork-join fingerprints, the xorshift64* generator of `big`, the chameneos
//! colours, fib).
//!
//! Each peer binary only supplies, per workload, a function that runs it on its framework and
//! returns the measured time and whether the run verified.

use std::fmt;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The eight Savina workloads, in the order `all` runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bench {
    PingPong,
    Counting,
    ThreadRing,
    FjThrput,
    FjCreate,
    Fib,
    Chameneos,
    Big,
}

impl Bench {
    pub const ALL: [Bench; 8] = [
        Bench::PingPong,
        Bench::Counting,
        Bench::ThreadRing,
        Bench::FjThrput,
        Bench::FjCreate,
        Bench::Fib,
        Bench::Chameneos,
        Bench::Big,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Bench::PingPong => "pingpong",
            Bench::Counting => "counting",
            Bench::ThreadRing => "threadring",
            Bench::FjThrput => "fjthrput",
            Bench::FjCreate => "fjcreate",
            Bench::Fib => "fib",
            Bench::Chameneos => "chameneos",
            Bench::Big => "big",
        }
    }

    pub fn parse(name: &str) -> Option<Bench> {
        Bench::ALL.into_iter().find(|b| b.name() == name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Quick,
    Full,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Quick => "quick",
            Size::Full => "full",
        }
    }

    pub fn parse(name: &str) -> Option<Size> {
        match name {
            "quick" => Some(Size::Quick),
            "full" => Some(Size::Full),
            _ => None,
        }
    }
}

/// One workload with its parameters for the chosen size (table in docs/internals/benchmarks.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    PingPong { round_trips: u64 },
    Counting { increments: u64 },
    ThreadRing { actors: usize, hops: u64 },
    FjThrput { actors: usize, per_actor: u64 },
    FjCreate { actors: u64 },
    Fib { n: u32 },
    Chameneos { creatures: usize, meetings: u64 },
    Big { actors: usize, pings: u64 },
}

impl Workload {
    pub fn new(bench: Bench, size: Size) -> Workload {
        let quick = size == Size::Quick;
        let pick = |q: u64, f: u64| if quick { q } else { f };
        match bench {
            Bench::PingPong => Workload::PingPong {
                round_trips: pick(1_800_000, 2_000_000),
            },
            Bench::Counting => Workload::Counting {
                increments: pick(5_000_000, 10_000_000),
            },
            Bench::ThreadRing => Workload::ThreadRing {
                actors: pick(100, 1_200) as usize,
                hops: pick(2_000_000, 1_200_000),
            },
            Bench::FjThrput => Workload::FjThrput {
                actors: pick(60, 360) as usize,
                per_actor: pick(60_000, 60_000),
            },
            Bench::FjCreate => Workload::FjCreate {
                actors: pick(400_000, 4_000_000),
            },
            Bench::Fib => Workload::Fib {
                n: pick(27, 34) as u32,
            },
            Bench::Chameneos => Workload::Chameneos {
                creatures: pick(100, 4_000) as usize,
                meetings: pick(400_000, 800_000),
            },
            Bench::Big => Workload::Big {
                actors: pick(60, 360) as usize,
                pings: pick(25_000, 60_000),
            },
        }
    }

    pub fn bench(&self) -> Bench {
        match self {
            Workload::PingPong { .. } => Bench::PingPong,
            Workload::Counting { .. } => Bench::Counting,
            Workload::ThreadRing { .. } => Bench::ThreadRing,
            Workload::FjThrput { .. } => Bench::FjThrput,
            Workload::FjCreate { .. } => Bench::FjCreate,
            Workload::Fib { .. } => Bench::Fib,
            Workload::Chameneos { .. } => Bench::Chameneos,
            Workload::Big { .. } => Bench::Big,
        }
    }

    /// The `messages` column of docs/internals/benchmarks.md: what msgs/s is computed from.
    pub fn messages(&self) -> u64 {
        match *self {
            Workload::PingPong { round_trips } => 2 * round_trips,
            Workload::Counting { increments } => increments + 2,
            Workload::ThreadRing { hops, .. } => hops,
            Workload::FjThrput { actors, per_actor } => actors as u64 * per_actor,
            Workload::FjCreate { actors } => 2 * actors,
            Workload::Fib { n } => 2 * (fib_actors(n) - 1),
            Workload::Chameneos { meetings, .. } => 4 * meetings,
            Workload::Big { actors, pings } => 2 * actors as u64 * pings,
        }
    }
}

/// Increments counting's Producer sends before it lets the rest of the runtime run, as loka's
/// Producer does (`crates/loka-bench/src/savina/counting.rs`, `SLICE`): the same work as loka's,
/// where a Producer sending all 10 million at once queued them before the Counter read one.
pub const COUNTING_SLICE: u64 = 10_000;

/// The sizes of the slices `n` increments are sent in: `COUNTING_SLICE` each, the rest last.
pub fn counting_slices(n: u64) -> impl Iterator<Item = u64> {
    (0..n)
        .step_by(COUNTING_SLICE as usize)
        .map(move |sent| (n - sent).min(COUNTING_SLICE))
}

/// Savina's per-message work for the fork-join benchmarks (fjthrput, fjcreate), exactly as
/// docs/internals/benchmarks.md and loka's `loka_bench::compute` define it: the square of the sine of the
/// message's angle. The handler adds the result to its actor's state and reports it, so the call
/// is never dead code, and the angle comes from the message, so it is never constant-folded.
#[inline]
pub fn compute(angle: f64) -> f64 {
    let s = angle.sin();
    s * s
}

/// The angle the `k`-th message of a fork-join benchmark carries: `32 + (k mod 1024) / 128`
/// (exact in binary, so every language computes the same angle bit for bit).
#[inline]
pub fn compute_angle(k: u64) -> f64 {
    32.0 + (k % 1024) as f64 / 128.0
}

/// SplitMix64's finaliser (as loka's `verify::mix`): summed (wrapping) over values, it
/// fingerprints a multiset in any order.
pub fn mix(v: u64) -> u64 {
    let mut z = v.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What a fjthrput worker reports besides its count: `mix` of the bits of its sum of
/// `compute()` results, added in arrival order.
pub fn fjthrput_report(sum: f64) -> u64 {
    mix(sum.to_bits())
}

/// The fingerprint the fjthrput reports must add up to, computed sequentially: worker `w` of
/// `actors` receives the angles of messages `r·actors + w`, r = 0..per_actor, in that order.
pub fn fjthrput_expected(actors: usize, per_actor: u64) -> u64 {
    (0..actors as u64).fold(0, |fingerprint: u64, w| {
        let sum = (0..per_actor).fold(0.0, |sum, r| {
            sum + compute(compute_angle(r * actors as u64 + w))
        });
        fingerprint.wrapping_add(fjthrput_report(sum))
    })
}

/// What a fjcreate child reports besides its `1`: `mix` of the bits of its `compute()` result.
pub fn fjcreate_report(result: f64) -> u64 {
    mix(result.to_bits())
}

/// The fingerprint the fjcreate reports must add up to, computed sequentially (child `k` gets
/// `compute_angle(k)`).
pub fn fjcreate_expected(actors: u64) -> u64 {
    (0..actors).fold(0, |fingerprint: u64, k| {
        fingerprint.wrapping_add(fjcreate_report(compute(compute_angle(k))))
    })
}

/// fib(n) with fib(1) = fib(2) = 1: the expected root result of the `fib` workload.
pub fn fib(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// How many actors the `fib` workload creates for `n`: 2·fib(n) − 1.
pub fn fib_actors(n: u32) -> u64 {
    2 * fib(n) - 1
}

/// The per-actor xorshift64* generator of the `big` workload.
#[derive(Clone, Debug)]
pub struct XorShift64Star(u64);

impl XorShift64Star {
    /// Seeded with `actor_index + 1`, as docs/internals/benchmarks.md prescribes.
    pub fn for_actor(index: usize) -> Self {
        XorShift64Star(index as u64 + 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut s = self.0;
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        self.0 = s;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next ping target of actor `me` among `actors`: never `me` itself.
    pub fn next_target(&mut self, me: usize, actors: usize) -> usize {
        let t = (self.next_u64() % (actors as u64 - 1)) as usize;
        if t >= me {
            t + 1
        } else {
            t
        }
    }
}

/// A chameneo's colour: `i mod 3` gives blue (0), red (1), yellow (2).
pub type Colour = u8;

/// The colour both creatures take after meeting: unchanged if equal, otherwise the third one.
pub fn complement(a: Colour, b: Colour) -> Colour {
    if a == b {
        a
    } else {
        3 - a - b
    }
}

/// What one run of a workload produced.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    pub elapsed: Duration,
    pub verified: bool,
}

impl Outcome {
    /// Stops the clock started at `start` (the driver's first message) now.
    pub fn since(start: Instant, verified: bool) -> Outcome {
        Outcome {
            elapsed: start.elapsed(),
            verified,
        }
    }
}

/// The parsed command line shared by every peer.
#[derive(Clone, Debug)]
pub struct Args {
    pub benches: Vec<Bench>,
    pub size: Size,
    pub threads: usize,
    pub repeat: usize,
}

/// A command-line error: the message names the bad flag or value.
#[derive(Debug)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const USAGE: &str = "--bench NAME[,NAME...]|all [--size quick|full] [--threads N] [--repeat K]
  NAME: pingpong counting threadring fjthrput fjcreate fib chameneos big";

impl Args {
    /// Parses `--bench`, `--size`, `--threads` (default `default_threads`) and `--repeat`.
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        default_threads: usize,
    ) -> Result<Args, UsageError> {
        let mut benches = None;
        let mut size = Size::Quick;
        let mut threads = default_threads;
        let mut repeat = 1;
        let mut it = args.into_iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .ok_or_else(|| UsageError(format!("{flag} needs a value")))
            };
            match flag.as_str() {
                "--bench" => benches = Some(parse_benches(&value()?)?),
                "--size" => {
                    let v = value()?;
                    size = Size::parse(&v).ok_or_else(|| {
                        UsageError(format!("unknown size '{v}' (expected quick or full)"))
                    })?;
                }
                "--threads" => threads = parse_positive("--threads", &value()?)?,
                "--repeat" => repeat = parse_positive("--repeat", &value()?)?,
                other => return Err(UsageError(format!("unknown argument '{other}'"))),
            }
        }
        let benches = benches.ok_or_else(|| UsageError("--bench is required".into()))?;
        Ok(Args {
            benches,
            size,
            threads,
            repeat,
        })
    }

    /// Parses the process's own arguments; prints usage and exits 2 on a bad one, 0 on `--help`.
    pub fn from_env(program: &str, default_threads: usize) -> Args {
        let raw: Vec<String> = std::env::args().skip(1).collect();
        if raw.iter().any(|a| a == "--help" || a == "-h") {
            println!("usage: {program} {USAGE}");
            std::process::exit(0);
        }
        Args::parse(raw, default_threads).unwrap_or_else(|e| {
            eprintln!("{program}: {e}\nusage: {program} {USAGE}");
            std::process::exit(2);
        })
    }
}

fn parse_benches(list: &str) -> Result<Vec<Bench>, UsageError> {
    if list == "all" {
        return Ok(Bench::ALL.to_vec());
    }
    list.split(',')
        .map(|name| Bench::parse(name).ok_or_else(|| UsageError(format!("unknown bench '{name}'"))))
        .collect()
}

fn parse_positive(flag: &str, v: &str) -> Result<usize, UsageError> {
    match v.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(UsageError(format!(
            "{flag} expects a positive integer, got '{v}'"
        ))),
    }
}

/// How a peer names itself in the result record.
#[derive(Clone, Copy, Debug)]
pub struct Identity<'a> {
    /// `runtime` column: actix, actix-1thread, ractor, kameo, ...
    pub runtime: &'a str,
    /// `engine` column: the framework's default scheduler.
    pub engine: &'a str,
}

/// Runs every requested (bench, repeat), printing one JSON record per run on stdout.
/// Returns failure (exit 1) when any run did not verify.
pub fn run_all(
    id: Identity<'_>,
    args: &Args,
    mut run: impl FnMut(&Workload) -> Outcome,
) -> ExitCode {
    let mut all_verified = true;
    let mut out = std::io::stdout().lock();
    for &bench in &args.benches {
        let workload = Workload::new(bench, args.size);
        for repeat in 0..args.repeat {
            let outcome = run(&workload);
            all_verified &= outcome.verified;
            // One line per run, flushed at once so a later hang still leaves the earlier results.
            writeln!(out, "{}", record(id, args, &workload, repeat, outcome))
                .expect("write stdout");
            out.flush().expect("flush stdout");
        }
    }
    if all_verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The result record of docs/internals/benchmarks.md. Every string in it is one of our own names, so
/// nothing needs escaping.
pub fn record(id: Identity<'_>, args: &Args, w: &Workload, repeat: usize, o: Outcome) -> String {
    let seconds = o.elapsed.as_secs_f64();
    let messages = w.messages();
    format!(
        "{{\"runtime\":\"{}\",\"bench\":\"{}\",\"engine\":\"{}\",\"policy\":\"default\",\
         \"topology\":\"host\",\"workers\":{},\"size\":\"{}\",\"messages\":{},\"seconds\":{:.6},\
         \"msgs_per_sec\":{:.1},\"verified\":{},\"telemetry\":{{}},\"repeat\":{}}}",
        id.runtime,
        w.bench().name(),
        id.engine,
        args.threads,
        args.size.name(),
        messages,
        seconds,
        messages as f64 / seconds,
        o.verified,
        repeat,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_slices_cover_every_increment_once() {
        let slices: Vec<u64> = counting_slices(25_000).collect();
        assert_eq!(slices, [10_000, 10_000, 5_000]);
        assert_eq!(counting_slices(20_000).sum::<u64>(), 20_000);
        assert_eq!(counting_slices(0).count(), 0);
    }

    fn parse(list: &[&str]) -> Result<Args, UsageError> {
        Args::parse(list.iter().map(|s| s.to_string()), 2)
    }

    #[test]
    fn parses_lists_and_defaults() {
        let a = parse(&["--bench", "fib,big"]).unwrap();
        assert_eq!(a.benches, vec![Bench::Fib, Bench::Big]);
        assert_eq!((a.size, a.threads, a.repeat), (Size::Quick, 2, 1));
        let a = parse(&[
            "--bench",
            "all",
            "--size",
            "full",
            "--threads",
            "4",
            "--repeat",
            "3",
        ])
        .unwrap();
        assert_eq!(a.benches.len(), 8);
        assert_eq!((a.size, a.threads, a.repeat), (Size::Full, 4, 3));
    }

    #[test]
    fn errors_name_the_bad_value() {
        assert!(parse(&["--bench", "pingpong,nope"])
            .unwrap_err()
            .0
            .contains("'nope'"));
        assert!(parse(&["--bench", "fib", "--size", "huge"])
            .unwrap_err()
            .0
            .contains("'huge'"));
        assert!(parse(&["--bench", "fib", "--threads", "0"])
            .unwrap_err()
            .0
            .contains("'0'"));
        assert!(parse(&["--size", "quick"]).is_err());
    }

    #[test]
    fn message_counts_follow_the_table() {
        assert_eq!(fib(25), 75_025);
        assert_eq!(fib(26), 121_393);
        assert_eq!(fib(27), 196_418);
        assert_eq!(fib(34), 5_702_887);
        assert_eq!(
            Workload::new(Bench::Fib, Size::Quick).messages(),
            2 * (2 * 196_418 - 2)
        );
        assert_eq!(
            Workload::new(Bench::Counting, Size::Quick).messages(),
            5_000_002
        );
        assert_eq!(
            Workload::new(Bench::Big, Size::Full).messages(),
            2 * 360 * 60_000
        );
    }

    #[test]
    fn big_targets_skip_self() {
        for me in 0..5 {
            let mut rng = XorShift64Star::for_actor(me);
            for _ in 0..1000 {
                let t = rng.next_target(me, 5);
                assert!(t < 5 && t != me);
            }
        }
    }

    #[test]
    fn fork_join_fingerprints_follow_the_message_order() {
        assert_eq!(compute_angle(0), 32.0);
        assert_eq!(compute_angle(1023), 32.0 + 1023.0 / 128.0);
        assert_eq!(compute_angle(1024), 32.0);
        // One worker, two messages: the same sum as adding them by hand.
        let sum = compute(compute_angle(0)) + compute(compute_angle(1));
        assert_eq!(fjthrput_expected(1, 2), fjthrput_report(sum));
        assert_ne!(fjthrput_expected(2, 1), fjthrput_report(sum));
        assert_eq!(
            fjcreate_expected(2),
            fjcreate_report(compute(compute_angle(1)))
                .wrapping_add(fjcreate_report(compute(compute_angle(0))))
        );
    }

    #[test]
    fn complement_is_the_third_colour() {
        assert_eq!(complement(0, 1), 2);
        assert_eq!(complement(2, 2), 2);
        assert_eq!(complement(1, 2), 0);
    }
}
