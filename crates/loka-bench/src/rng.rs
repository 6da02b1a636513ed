//! The workloads' deterministic pseudo-random numbers: xorshift64* (Vigna), the generator
//! `docs/internals/benchmarks.md` spells out for the peers too.

/// xorshift64*: `state ^= state >> 12; state ^= state << 25; state ^= state >> 27;` output
/// `state · 0x2545F4914F6CDD1D`. The state must not be 0.
#[derive(Debug, Clone)]
pub struct XorShift(pub u64);

impl XorShift {
    /// A generator for a small seed (an index, a constant): the seed is spread over the state
    /// (golden-ratio multiply) and made odd, so it is never 0.
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..bound` (modulo reduction, as the Savina sources do).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    /// A value uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_documented_steps() {
        let mut s = 1u64;
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        assert_eq!(XorShift(1).next(), s.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut r = XorShift::new(0);
        assert_ne!(r.0, 0);
        assert!((0..1000).all(|_| r.below(7) < 7 && (0.0..1.0).contains(&r.unit())));
    }
}
