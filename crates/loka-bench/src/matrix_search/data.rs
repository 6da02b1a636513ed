//! Matrix Search's data and work: the seeded matrices and words, the seekers' search (and what
//! it declares to the simulation engine), and the check's independent count.

use super::{Params, ALPHABET, MATRIX_SEED, WORD, WORD_SEED};
use std::time::Duration;

/// SplitMix64: the seeded generator of matrices and words.
pub(super) fn splitmix(state: &mut u64) -> u64 {
    let current = *state;
    *state = current.wrapping_add(0x9E37_79B9_7F4A_7C15);
    crate::verify::mix(current)
}

/// Seeker `seeker`'s matrix, row-major: 32 letters from each 64-bit draw, two bits a letter.
pub(super) fn matrix(seeker: usize, side: usize) -> Vec<u8> {
    let mut state = MATRIX_SEED ^ (seeker as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    let mut cells = vec![0u8; side * side];
    for chunk in cells.chunks_mut(32) {
        let mut bits = splitmix(&mut state);
        for cell in chunk {
            *cell = ALPHABET[(bits & 3) as usize];
            bits >>= 2;
        }
    }
    cells
}

/// The word of job `job` of seeker `seeker` (independent of the order jobs are given out).
pub(super) fn word(seeker: usize, job: usize) -> [u8; WORD] {
    let mut state = WORD_SEED ^ (((seeker as u64) << 32) | job as u64);
    let bits = splitmix(&mut state);
    std::array::from_fn(|k| ALPHABET[((bits >> (2 * k)) & 3) as usize])
}

/// The seeker's search: occurrences of `word` read downwards along a column, column by column.
pub(super) fn count_in_columns(cells: &[u8], side: usize, word: &[u8; WORD]) -> u64 {
    if side < WORD {
        return 0;
    }
    let mut count = 0;
    for column in 0..side {
        for row in 0..=side - WORD {
            let at = row * side + column;
            if cells[at] == word[0] && (1..WORD).all(|k| cells[at + k * side] == word[k]) {
                count += 1;
            }
        }
    }
    count
}

/// What [`count_in_columns`] takes per cell it starts a match at (`side × (side − 5)` of them) on
/// this project's host, with the matrix in cache: declared to the simulation engine with
/// `ctx.charge`, whose memory model adds the matrix's transfer from wherever it lies
/// (docs/simulation.md). Measured with `cargo test --release -p loka-bench --lib scan_cost --
/// --ignored --nocapture --test-threads=1` (512² matrix, 256 KiB, in this host's 1 MiB L2): the
/// least of six runs on 2026-11-24 (3.03 ns; the others up to 4.2 ns on the shared host).
const SCAN_PS_PER_CELL: u64 = 3_030;

/// The declared compute of one search of a `side`² matrix.
pub(super) fn scan_cost(side: usize) -> Duration {
    let cells = (side * side.saturating_sub(WORD - 1)) as u64;
    Duration::from_nanos(cells * SCAN_PS_PER_CELL / 1_000)
}

/// The fault of a mutation test: the same count along the rows.
pub(super) fn count_in_rows(cells: &[u8], side: usize, word: &[u8; WORD]) -> u64 {
    cells
        .chunks(side)
        .map(|row| row.windows(WORD).filter(|w| *w == word).count() as u64)
        .sum()
}

/// Each letter's two bits in the check's codes (indexed by the letter's byte).
const LETTER_CODE: [u8; 256] = {
    let mut codes = [0u8; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        codes[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    codes
};

/// The code of a word: its letters' codes, the first letter in the highest bits.
pub(super) fn word_code(word: &[u8; WORD]) -> usize {
    word.iter().fold(0, |code, &l| {
        (code << 2) | usize::from(LETTER_CODE[usize::from(l)])
    })
}

/// The check's count, done differently from the seekers' search: one pass over the matrix, row by
/// row, keeps the code of the last `WORD` letters of every column and counts how often each of
/// the 4⁶ codes occurs. The count of a word is then a lookup: every job of a seeker is checked for
/// the price of one search.
pub(super) fn column_histogram(cells: &[u8], side: usize) -> Vec<u32> {
    const MASK: u16 = (1 << (2 * WORD)) - 1;
    let shift =
        |code: u16, letter: u8| ((code << 2) | u16::from(LETTER_CODE[usize::from(letter)])) & MASK;
    let mut codes = vec![0u16; side];
    let mut histogram = [0u32; 1 << (2 * WORD)];
    for (r, row) in cells.chunks_exact(side).enumerate() {
        if r + 1 < WORD {
            codes
                .iter_mut()
                .zip(row)
                .for_each(|(c, &l)| *c = shift(*c, l));
            continue;
        }
        for (code, &letter) in codes.iter_mut().zip(row) {
            let c = shift(*code, letter);
            *code = c;
            histogram[usize::from(c)] += 1;
        }
    }
    histogram.to_vec()
}

/// What every job of every seeker must report: [`column_histogram`] looked up for each word,
/// indexed seeker · N + job. The seekers are shared among the machine's cores.
pub(super) fn expected_counts(p: &Params) -> Vec<u64> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = p.seekers.div_ceil(threads).max(1);
    let searches = p.searches.max(1);
    let mut counts = vec![0u64; p.seekers * p.searches];
    std::thread::scope(|scope| {
        for (chunk, out) in counts.chunks_mut(per_thread * searches).enumerate() {
            scope.spawn(move || {
                for (i, jobs) in out.chunks_mut(searches).enumerate() {
                    let seeker = chunk * per_thread + i;
                    let histogram = column_histogram(&matrix(seeker, p.side), p.side);
                    for (job, count) in jobs.iter_mut().enumerate() {
                        *count = u64::from(histogram[word_code(&word(seeker, job))]);
                    }
                }
            });
        }
    });
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_searches_agree_and_find_planted_words() {
        let side = 40;
        let mut cells = matrix(3, side);
        // Plant "AAAAAA" down column 7 from row 2: exactly one match there, maybe others elsewhere.
        for k in 0..WORD {
            cells[(2 + k) * side + 7] = b'A';
        }
        let word = *b"AAAAAA";
        let fast = count_in_columns(&cells, side, &word);
        assert!(fast >= 1);
        let histogram = column_histogram(&cells, side);
        assert_eq!(fast, u64::from(histogram[word_code(&word)]));
        for job in 0..50 {
            let w = super::word(3, job);
            assert_eq!(
                count_in_columns(&cells, side, &w),
                u64::from(histogram[word_code(&w)])
            );
        }
        // Every window of every column is counted once.
        let windows = (side * (side - WORD + 1)) as u32;
        assert_eq!(histogram.iter().sum::<u32>(), windows);
        // Rows do not count: a word written along a row is not found there.
        let mut row = vec![b'C'; side * side];
        row[..WORD].copy_from_slice(b"GATTAC");
        assert_eq!(count_in_columns(&row, side, b"GATTAC"), 0);
        assert_eq!(count_in_rows(&row, side, b"GATTAC"), 1);
        assert_eq!(column_histogram(&row, side)[word_code(b"GATTAC")], 0);
    }

    #[test]
    fn matrices_and_words_are_seeded() {
        assert_eq!(matrix(5, 64), matrix(5, 64));
        assert_ne!(matrix(5, 64), matrix(6, 64));
        assert_eq!(word(1, 2), word(1, 2));
        assert!(matrix(0, 33).iter().all(|c| ALPHABET.contains(c)));
    }

    /// The per-cell cost of a search with the matrix in cache, for [`SCAN_PS_PER_CELL`]:
    /// `cargo test --release -p loka-bench --lib scan_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a test"]
    fn scan_cost_per_cell() {
        let side = 512;
        let cells = matrix(1, side);
        let searches = 400;
        for _ in 0..3 {
            let start = std::time::Instant::now();
            let mut found = 0;
            for job in 0..searches {
                found += count_in_columns(std::hint::black_box(&cells), side, &word(1, job));
            }
            std::hint::black_box(found);
            let per_cell =
                start.elapsed().as_nanos() as f64 / (searches * side * (side - WORD + 1)) as f64;
            eprintln!(
                "count_in_columns: {:.0} ps per cell ({side}² matrix)",
                per_cell * 1000.0
            );
        }
    }
}
