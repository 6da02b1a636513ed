//! The result check: C against A·B by Freivalds' test on two random vectors (C·x = A·(B·x)) plus
//! 256 sampled entries against their dot products — a full sequential multiply at the full size
//! would take longer than the run it checks.

use super::{Block, Shared};
use crate::rng::XorShift;

/// M·x for the n×n row-major matrix `m`.
fn mat_vec(m: &[u32], n: usize, x: &[u64]) -> Vec<u64> {
    m.chunks_exact(n)
        .map(|row| {
            row.iter().zip(x).fold(0u64, |s, (&a, &x)| {
                s.wrapping_add(u64::from(a).wrapping_mul(x))
            })
        })
        .collect()
}

/// Checks C against A and B (see the module documentation).
pub(super) fn compare(s: &Shared, c: &Block) -> (bool, usize, usize) {
    let n = s.p.n;
    let mut rng = XorShift::new(0xF4E1_7A15);
    let mut shape_ok = true;
    let mut rows_off = 0;
    for _ in 0..2 {
        let x: Vec<u64> = (0..n).map(|_| rng.next() >> 44).collect();
        let want = mat_vec(&s.a, n, &mat_vec(&s.b, n, &x));
        let mut got = vec![0u64; n];
        shape_ok &= c.mul_vec(n, (0, 0), &x, &mut got);
        rows_off += got.iter().zip(&want).filter(|(g, w)| g != w).count();
    }
    let entries_off = (0..256)
        .filter(|_| {
            let (r, k) = (rng.below(n), rng.below(n));
            let dot = (0..n).fold(0u32, |z, j| {
                z.wrapping_add(s.a[r * n + j].wrapping_mul(s.b[j * n + k]))
            });
            c.entry(n, r, k) != Some(dot)
        })
        .count();
    (shape_ok, rows_off, entries_off)
}
