//! The second question of the adaptive `auto`: while it runs `hierarchical`, whether hubs are
//! detected online (`hierarchical:auto`'s rule) or only declared ones count
//! (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
//!
//! Hub detection pays on some workloads and costs on others, and no count of the topology
//! tells which: on the simulated multi-node machines it runs `big` at 1.16–1.55× of `cls` where
//! `hierarchical` alone runs it at 1.0×, and the Cforall executor at 0.50–1.01× where
//! `hierarchical` runs it at 1.06–2.69× (docs/results/sim-policies.md), because its rule marks
//! nearly every actor of a group workload a hub. So `auto` measures it as it measures locality:
//! a second [`Adaptive`] controller whose two arms are "declared hubs only" (its
//! [`Mechanism::Plain`], where ties go) and "hubs detected too" (its [`Mechanism::Locality`]).
//!
//! The question is asked only once the engine has seen a candidate: a wake-up after which the
//! detection, were it on, would have marked the actor a hub (counted, not marked, while it is
//! off). Until then hubs or not run the same actors the same way, and a probe would only cost
//! (on the bursty fjcreate the probes alone moved `auto` on the simulated Opteron from 2.65× to
//! 2.13× of `cls`).
//!
//! The two controllers never probe at once, so each compares windows that differ only in what
//! it decides: a window goes to the hubs controller only while the first one is settled on
//! locality and not probing; while the hubs controller probes, the first one waits (its
//! countdown to its next probe paused). While both are settled, a window counts down both,
//! the hubs controller first: when both would start a probe with it, the hubs question goes
//! first, so that locality is judged with the hubs that pay (on the simulated Altix, Savina's
//! big left `hierarchical` for `cls` before the question was asked, at 0.98× of `cls` where
//! `hierarchical:auto` runs at 1.55×). The first controller's locality arm is `hierarchical`
//! with the hubs controller's settled answer.

use super::{Adaptive, Mechanism, Window};

/// What the adaptive `auto` runs: a mechanism and, under locality, whether hubs are detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm {
    /// Plain stealing or the topology's locality policy.
    pub mechanism: Mechanism,
    /// Under [`Mechanism::Locality`], whether the online hub detection runs (always `false`
    /// under plain stealing, or where the locality policy has no hubs to detect).
    pub hubs: bool,
}

/// The adaptive `auto`'s controllers: plain stealing against locality, and, where the locality
/// policy can detect hubs, hubs detected against declared hubs only (module docs).
#[derive(Debug, Clone)]
pub struct Ladder {
    /// Plain stealing against locality.
    base: Adaptive,
    /// Declared hubs only (`Plain`) against detected ones too (`Locality`); `None`: no such
    /// question (the locality policy has no hub detection, or the comparison is another one,
    /// as the gathering `auto`'s).
    hubs: Option<Adaptive>,
    /// Whether an actor the detection would mark has been seen: until then the question has
    /// nothing to answer and is not asked (module docs).
    candidates: bool,
}

impl Ladder {
    /// One controller, no hubs question.
    pub fn single(base: Adaptive) -> Ladder {
        Ladder {
            base,
            hubs: None,
            candidates: false,
        }
    }

    /// The adaptive `auto` starting on locality with declared hubs only, asking both questions.
    pub fn with_hubs() -> Ladder {
        Ladder {
            base: Adaptive::new(Mechanism::Locality),
            hubs: Some(Adaptive::new(Mechanism::Plain)),
            candidates: false,
        }
    }

    /// The controller of plain stealing against locality (or the one controller).
    pub fn base(&self) -> &Adaptive {
        &self.base
    }

    /// The controller of the hubs question, if it is asked.
    pub fn hubs(&self) -> Option<&Adaptive> {
        self.hubs.as_ref()
    }

    /// An actor the hub detection would mark has been seen (while it is off): from now on the
    /// hubs question is asked.
    pub fn hub_candidates_seen(&mut self) {
        self.candidates = true;
    }

    /// An outside verdict on the first question ([`Adaptive::overrule`]).
    pub fn overrule(&mut self, mechanism: Mechanism) {
        self.base.overrule(mechanism);
    }

    /// What to run now.
    pub fn current(&self) -> Arm {
        let mechanism = self.base.current();
        Arm {
            mechanism,
            hubs: mechanism == Mechanism::Locality
                && self
                    .hubs
                    .as_ref()
                    .is_some_and(|h| h.current() == Mechanism::Locality),
        }
    }

    /// Whether the next window is the hubs controller's to measure (it probes).
    fn hubs_probing(&self) -> bool {
        self.hubs.as_ref().is_some_and(Adaptive::probing)
    }

    /// How long the next window should run, in ns: the length the controller that measures it
    /// asks for.
    pub fn window_ns(&self) -> u64 {
        match &self.hubs {
            Some(hubs) if hubs.probing() => hubs.window_ns(),
            _ => self.base.window_ns(),
        }
    }

    /// A window ran [`current`](Self::current); returns what to run next.
    pub fn observe(&mut self, window: Window) -> Arm {
        if self.hubs_probing() {
            if let Some(hubs) = &mut self.hubs {
                hubs.observe(window);
            }
            return self.current();
        }
        let settled_on_locality =
            !self.base.probing() && self.base.settled() == Mechanism::Locality;
        // Both settled: the window counts down both, the hubs controller first; when it starts
        // its probe with this window, the first one waits.
        if settled_on_locality && self.candidates {
            if let Some(hubs) = &mut self.hubs {
                hubs.observe(window);
                if hubs.probing() {
                    return self.current();
                }
            }
        }
        self.base.observe(window);
        self.current()
    }

    /// Probes of the first question (plain stealing against locality).
    pub fn probes(&self) -> u64 {
        self.base.probes()
    }

    /// Probes of the hubs question.
    pub fn hub_probes(&self) -> u64 {
        self.hubs.as_ref().map_or(0, Adaptive::probes)
    }

    /// Times the hubs question's answer changed.
    pub fn hub_switches(&self) -> u64 {
        self.hubs.as_ref().map_or(0, Adaptive::switches)
    }
}

#[cfg(test)]
mod tests {
    use super::super::WINDOW_NS;
    use super::*;

    /// Feeds `ticks` windows of [`WINDOW_NS`] (a window the ladder asks longer counts as that
    /// many ticks), each handling what `rate_of` gives for the arm running; returns the arms run.
    fn run(ladder: &mut Ladder, ticks: usize, rate_of: impl Fn(Arm) -> f64) -> Vec<Arm> {
        let mut ran = Vec::new();
        while ran.len() < ticks {
            let arm = ladder.current();
            let length = (ladder.window_ns() / WINDOW_NS) as usize;
            let messages = (rate_of(arm) * (length as u64 * WINDOW_NS) as f64) as u64;
            ran.extend(std::iter::repeat_n(arm, length));
            ladder.observe(Window {
                elapsed_ns: length as u64 * WINDOW_NS,
                messages,
            });
        }
        ran.truncate(ticks);
        ran
    }

    fn arm(mechanism: Mechanism, hubs: bool) -> Arm {
        Arm { mechanism, hubs }
    }

    /// A ladder whose hubs question has candidates to answer for.
    fn asked() -> Ladder {
        let mut ladder = Ladder::with_hubs();
        ladder.hub_candidates_seen();
        ladder
    }

    /// What the two controllers settled on (probes aside).
    fn settled(ladder: &Ladder) -> Arm {
        let hubs = ladder.hubs().expect("the hubs question is asked").settled();
        arm(ladder.base().settled(), hubs == Mechanism::Locality)
    }

    #[test]
    fn hubs_that_pay_are_turned_on_and_kept() {
        let mut ladder = asked();
        let ran = run(&mut ladder, 400, |a| match (a.mechanism, a.hubs) {
            (Mechanism::Plain, _) => 1.0,
            (Mechanism::Locality, false) => 1.0,
            (Mechanism::Locality, true) => 1.4,
        });
        assert_eq!(settled(&ladder), arm(Mechanism::Locality, true));
        assert_eq!(ladder.hub_switches(), 1);
        let on = ran.iter().filter(|a| a.hubs).count();
        assert!(on > 300, "{on} of 400 windows with hubs");
    }

    #[test]
    fn hubs_that_cost_stay_off_and_locality_that_pays_stays() {
        let mut ladder = asked();
        let ran = run(&mut ladder, 400, |a| match (a.mechanism, a.hubs) {
            (Mechanism::Plain, _) => 1.0,
            (Mechanism::Locality, false) => 1.3,
            (Mechanism::Locality, true) => 0.6,
        });
        assert_eq!(settled(&ladder), arm(Mechanism::Locality, false));
        assert!(ladder.hub_probes() >= 1, "the question was asked");
        assert_eq!(ladder.hub_switches(), 0);
        let on = ran.iter().filter(|a| a.hubs).count();
        assert!(on < 20, "{on} of 400 windows with hubs");
    }

    #[test]
    fn the_two_questions_never_probe_at_once() {
        let mut ladder = asked();
        for i in 0..2_000u64 {
            assert!(
                !(ladder.base().probing() && ladder.hubs().is_some_and(Adaptive::probing)),
                "both probe at window {i}"
            );
            // A workload whose best arm changes now and then.
            let arm = ladder.current();
            let rate = match (i / 300 % 3, arm.mechanism, arm.hubs) {
                (0, Mechanism::Locality, true) => 1.5,
                (1, Mechanism::Plain, _) => 1.5,
                (2, Mechanism::Locality, false) => 1.5,
                _ => 1.0,
            };
            let length = ladder.window_ns();
            ladder.observe(Window {
                elapsed_ns: length,
                messages: (rate * length as f64) as u64,
            });
        }
        assert!(ladder.hub_probes() > 2 && ladder.probes() > 2);
    }

    #[test]
    fn plain_stealing_that_pays_is_reached_and_no_hubs_run_under_it() {
        let mut ladder = asked();
        let ran = run(&mut ladder, 400, |a| match (a.mechanism, a.hubs) {
            (Mechanism::Plain, _) => 1.5,
            (Mechanism::Locality, _) => 1.0,
        });
        assert_eq!(ladder.base().settled(), Mechanism::Plain);
        assert!(ran
            .iter()
            .all(|a| a.mechanism == Mechanism::Locality || !a.hubs));
    }

    #[test]
    fn without_candidates_the_hubs_question_is_not_asked() {
        let mut ladder = Ladder::with_hubs();
        let rate = |a: Arm| match (a.mechanism, a.hubs) {
            (Mechanism::Plain, _) => 1.0,
            (Mechanism::Locality, false) => 1.3,
            (Mechanism::Locality, true) => 2.0,
        };
        let ran = run(&mut ladder, 400, rate);
        assert!(ran.iter().all(|a| !a.hubs));
        assert_eq!(ladder.hub_probes(), 0);
        ladder.hub_candidates_seen();
        run(&mut ladder, 400, rate);
        assert_eq!(ladder.hub_switches(), 1, "asked once there are candidates");
    }

    #[test]
    fn a_single_controller_never_runs_hubs() {
        let mut ladder = Ladder::single(Adaptive::new(Mechanism::Locality));
        let ran = run(&mut ladder, 200, |a| if a.hubs { 9.0 } else { 1.0 });
        assert!(ran.iter().all(|a| !a.hubs));
        assert_eq!(ladder.hub_probes(), 0);
    }
}
