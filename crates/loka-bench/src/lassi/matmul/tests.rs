use super::*;

#[test]
fn message_formula_counts_the_tree() {
    let p = Params {
        n: 8,
        leaf: 2,
        places: 2,
    };
    // Two levels: 1 + 8 inner multiplications, 64 leaves.
    assert_eq!(p.messages(), 13 * 9 + 64 + 1);
    // Quick: 1024 in leaves of 64, four levels: 1 + 8 + 64 + 512 inner, 4,096 leaves.
    assert_eq!(of(Size::Quick, 1).messages(), 13 * 585 + 4_096 + 1);
}

#[test]
fn best_and_worst_hints_follow_the_slides() {
    let best = child_hints(Variant::Best, 2, 0, 0, (0, 2));
    assert_eq!(best.adds, [0, 1, 1, 0].map(Some));
    assert_eq!(
        best.muls,
        [[0; 2], [1; 2], [1; 2], [0; 2]].map(|m| m.map(Some))
    );
    // Below the top level the whole subtree stays on its place.
    let below = child_hints(Variant::Best, 2, 3, 1, best.ranges[1]);
    assert!(below.adds.iter().all(|&a| a == Some(1)));
    let worst = child_hints(Variant::Worst, 2, 0, 0, (0, 2));
    for q in 0..4 {
        let [m0, m1] = worst.muls[q];
        assert_ne!(
            m0, m1,
            "quadrant {q}: its multiplications on different places"
        );
        assert_eq!(worst.adds[q], m1);
    }
    // Each place gets four of the eight multiplications.
    let on0 = worst
        .muls
        .iter()
        .flatten()
        .filter(|&&m| m == Some(0))
        .count();
    assert_eq!(on0, 4);
    // Four places: the best split halves the range at each level.
    let best4 = child_hints(Variant::Best, 4, 0, 0, (0, 4));
    assert_eq!(best4.ranges, [(0, 2), (2, 2), (2, 2), (0, 2)]);
    let next = child_hints(Variant::Best, 4, 1, 2, (2, 2));
    assert_eq!(next.adds, [2, 3, 3, 2].map(Some));
}

#[test]
fn blocks_add_and_multiply_like_matrices() {
    let leaf = |v: [u32; 4]| Block::Leaf(v.to_vec());
    let mut c = Block::Quad(Box::new([
        leaf([1, 2, 3, 4]),
        leaf([0; 4]),
        leaf([0; 4]),
        leaf([5, 6, 7, 8]),
    ]));
    assert_eq!(c.entry(4, 3, 3), Some(8));
    assert_eq!(c.entry(4, 1, 0), Some(3));
    let mut y = vec![0; 4];
    assert!(c.mul_vec(4, (0, 0), &[1, 1, 1, 1], &mut y));
    assert_eq!(y, [3, 7, 11, 15]);
    let copy = Block::Quad(Box::new([
        leaf([1; 4]),
        leaf([1; 4]),
        leaf([1; 4]),
        leaf([1; 4]),
    ]));
    c.add(&copy);
    assert_eq!(c.entry(4, 0, 0), Some(2));
    assert!(!Block::Leaf(vec![1; 3]).mul_vec(2, (0, 0), &[1, 1], &mut [0, 0]));
}

#[test]
fn small_runs_verify_and_faults_fail() {
    let p = Params {
        n: 16,
        leaf: 4,
        places: 1,
    };
    for variant in [Variant::Best, Variant::Worst, Variant::Random] {
        let system = loka::System::builder().workers(2).build().unwrap();
        let m = measure(&system, &Run::new(Size::Quick), variant, p);
        assert!(m.verified, "{variant:?}: {}", m.check);
        assert_eq!(m.messages, p.messages());
    }
    for &fault in BENCHES[0].faults {
        let system = loka::System::builder().workers(2).build().unwrap();
        let run = Run::new(Size::Quick).with_fault(fault);
        let m = measure(&system, &run, Variant::Best, p);
        assert!(!m.verified, "{fault:?}: {}", m.check);
    }
}
