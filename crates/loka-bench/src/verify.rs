//! Result checks shared by the workloads: order-independent fingerprints of multisets and the
//! "came out sorted, as a permutation of the input" check of the sorting networks.

/// SplitMix64's finaliser: a strong 64-bit mix. Summed (wrapping) over values, it fingerprints a
/// multiset in any order.
pub fn mix(v: u64) -> u64 {
    let mut z = v.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The order-independent fingerprint of a multiset of values.
pub fn fingerprint(values: impl IntoIterator<Item = u64>) -> u64 {
    values
        .into_iter()
        .fold(0, |sum, v| sum.wrapping_add(mix(v)))
}

/// What a validator saw of a stream that should arrive sorted: how many values, whether each was
/// at least the previous one, and their multiset fingerprint. Equal to
/// [`SortedStream::expected`] of the input exactly when the output is a sorted permutation of it
/// (up to fingerprint collisions).
#[derive(Debug, Clone, Copy)]
pub struct SortedStream {
    /// Values seen.
    pub count: usize,
    /// Whether every value was at least the one before.
    pub sorted: bool,
    /// [`fingerprint`] of the values seen.
    pub fingerprint: u64,
    previous: u64,
}

impl SortedStream {
    /// Nothing seen yet.
    pub fn new() -> Self {
        SortedStream {
            count: 0,
            sorted: true,
            fingerprint: 0,
            previous: 0,
        }
    }

    /// What a correct run must show for this input.
    pub fn expected(input: impl IntoIterator<Item = u64>) -> Self {
        let mut count = 0;
        let fingerprint = fingerprint(input.into_iter().inspect(|_| count += 1));
        SortedStream {
            count,
            sorted: true,
            fingerprint,
            previous: 0,
        }
    }

    /// Records the next value of the stream.
    pub fn observe(&mut self, value: u64) {
        self.count += 1;
        self.sorted &= value >= self.previous;
        self.fingerprint = self.fingerprint.wrapping_add(mix(value));
        self.previous = value;
    }
}

impl Default for SortedStream {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for SortedStream {
    fn eq(&self, other: &Self) -> bool {
        (self.count, self.sorted, self.fingerprint)
            == (other.count, other.sorted, other.fingerprint)
    }
}

impl Eq for SortedStream {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_permutations_match_and_nothing_else_does() {
        let expected = SortedStream::expected([3, 1, 2]);
        let mut ok = SortedStream::new();
        [1, 2, 3].into_iter().for_each(|v| ok.observe(v));
        assert_eq!(ok, expected);
        let mut unsorted = SortedStream::new();
        [2, 1, 3].into_iter().for_each(|v| unsorted.observe(v));
        assert_ne!(unsorted, expected);
        let mut other = SortedStream::new();
        [1, 2, 4].into_iter().for_each(|v| other.observe(v));
        assert_ne!(other, expected);
        assert_eq!(fingerprint([1, 2]), fingerprint([2, 1]));
    }
}

/// An order-dependent hash of a sequence of values (a series' terms, a chain's contents in
/// order): one rotate, xor and multiply per value, so an actor can keep it in a local field on
/// its hot path. Two sequences hash equal exactly when they are equal (up to collisions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceHash {
    /// Values pushed.
    pub count: u64,
    /// The hash of the values so far.
    pub hash: u64,
}

impl SequenceHash {
    /// The empty sequence.
    pub fn new() -> Self {
        SequenceHash {
            count: 0,
            hash: 0x243F_6A88_85A3_08D3,
        }
    }

    /// The hash of `values`, in order.
    pub fn of(values: impl IntoIterator<Item = u64>) -> Self {
        let mut h = SequenceHash::new();
        values.into_iter().for_each(|v| h.push(v));
        h
    }

    /// Appends `value`.
    #[inline]
    pub fn push(&mut self, value: u64) {
        self.count += 1;
        self.hash = (self.hash.rotate_left(23) ^ value)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(0x6A09_E667_F3BC_C909);
    }
}

impl Default for SequenceHash {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod sequence_tests {
    use super::*;

    #[test]
    fn sequence_hashes_see_order_and_content() {
        let h = SequenceHash::of([1, 2, 3]);
        assert_eq!(h, SequenceHash::of([1, 2, 3]));
        assert_eq!(h.count, 3);
        assert_ne!(h, SequenceHash::of([2, 1, 3]));
        assert_ne!(h, SequenceHash::of([1, 2, 4]));
        assert_ne!(h, SequenceHash::of([1, 2]));
        assert_ne!(SequenceHash::of([0]), SequenceHash::of([0, 0]));
    }
}
