//! All-Pairs Shortest Path: Floyd-Warshall on an N-node graph split into (N/B)² block actors of
//! B×B distances; in every one of the N steps each block sends its block to the blocks of its row
//! and column and updates itself from theirs (Savina #17).

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "apsp",
    suite: "savina",
    about: "Floyd-Warshall by (N/B)² block actors exchanging blocks each step (N·(N/B)²·2·(N/B − 1) + (N/B)² messages)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
};

/// A B×B block of distances, row-major.
type Block = Arc<[u32]>;

/// The graph: a complete undirected graph with weights 1..=W (Savina's `generateGraph`), drawn with
/// xorshift64* seeded with N; row-major N×N.
fn graph(n: usize, max_weight: u64) -> Vec<u32> {
    let mut state = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut g = vec![0_u32; n * n];
    for i in 0..n {
        for j in i + 1..n {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let w = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) % max_weight) as u32 + 1;
            g[i * n + j] = w;
            g[j * n + i] = w;
        }
    }
    g
}

/// The sequential reference.
/// One step of a `b`×`b` block (`b = col_k.len()`): `d[i][j] = min(d[i][j], d[i][k] + d[k][j])`.
fn relax(data: &mut [u32], col_k: &[u32], row_k: &[u32]) {
    let b = col_k.len();
    for (i, &dik) in col_k.iter().enumerate() {
        let row = &mut data[i * b..(i + 1) * b];
        for (dij, &dkj) in row.iter_mut().zip(row_k) {
            *dij = (*dij).min(dik + dkj);
        }
    }
}

/// What one cell of [`relax`] takes on this project's host, declared to the simulation engine
/// with `ctx.charge` (docs/simulation.md): measured with `cargo test --release -p loka-bench --lib
/// relax_cost -- --ignored --nocapture --test-threads=1`, a 64×64 block (16 KiB, in L1), so the
/// constant is compute; the least of six runs on 2026-11-24 (210 ps; the others up to 284 ps).
const RELAX_PS: u64 = 210;

/// The declared compute of one step of a `b`×`b` block.
fn step_cost(b: usize) -> std::time::Duration {
    std::time::Duration::from_nanos((b * b) as u64 * RELAX_PS / 1_000)
}

fn floyd_warshall(n: usize, d: &mut [u32]) {
    for k in 0..n {
        let row_k: Vec<u32> = d[k * n..(k + 1) * n].to_vec();
        for i in 0..n {
            let dik = d[i * n + k];
            let row = &mut d[i * n..(i + 1) * n];
            for (dij, &dkj) in row.iter_mut().zip(&row_k) {
                *dij = (*dij).min(dik + dkj);
            }
        }
    }
}

/// The blocks of the same row (indexed by block column) and of the same column (by block row).
struct Received {
    row: Vec<Option<Block>>,
    col: Vec<Option<Block>>,
    count: usize,
}

impl Received {
    fn new(blocks: usize) -> Received {
        Received {
            row: vec![None; blocks],
            col: vec![None; blocks],
            count: 0,
        }
    }
}

enum BlockMsg {
    /// Set-up: every block actor, row-major by block.
    Table(Arc<[ActorRef<BlockMsg>]>),
    Start,
    /// Block (bi, bj) as it is after `k` steps.
    Data {
        k: usize,
        bi: usize,
        bj: usize,
        data: Block,
    },
}

struct FloydWarshallBlock {
    bi: usize,
    bj: usize,
    /// Blocks per dimension.
    blocks: usize,
    b: usize,
    n: usize,
    data: Vec<u32>,
    /// Steps done.
    k: usize,
    neighbors: Vec<ActorRef<BlockMsg>>,
    /// Neighbors' blocks after `k` steps, and the ones already sent for step `k + 1` (a neighbor
    /// can be at most one step ahead: it needs this block's data to get further).
    current: Received,
    next: Received,
    master: ActorRef<MasterMsg>,
    /// `Data` messages handled.
    handled: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
}

impl FloydWarshallBlock {
    fn notify_neighbors(&mut self) {
        let data: Block = Arc::from(&self.data[..]);
        // Fault injection: the first block message to the first neighbour is lost.
        let skip = usize::from(self.fault == Fault::Drop);
        if skip == 1 {
            self.fault = Fault::None;
        }
        for neighbor in &self.neighbors[skip..] {
            neighbor
                .send(BlockMsg::Data {
                    k: self.k,
                    bi: self.bi,
                    bj: self.bj,
                    data: Arc::clone(&data),
                })
                .expect("block alive");
        }
    }

    /// Step k: `d[i][j] = min(d[i][j], d[i][k] + d[k][j])` for this block's i, j.
    fn step(&mut self) {
        let (b, k) = (self.b, self.k);
        let (kb, kk) = (k / b, k % b);
        let col_k: Vec<u32> = if kb == self.bj {
            (0..b).map(|i| self.data[i * b + kk]).collect()
        } else {
            let block = self.current.row[kb].as_ref().expect("row block received");
            (0..b).map(|i| block[i * b + kk]).collect()
        };
        let row_k: Vec<u32> = if kb == self.bi {
            self.data[kk * b..(kk + 1) * b].to_vec()
        } else {
            let block = self.current.col[kb]
                .as_ref()
                .expect("column block received");
            block[kk * b..(kk + 1) * b].to_vec()
        };
        if self.fault == Fault::WrongRule {
            return self.wrong_step(&col_k, &row_k);
        }
        relax(&mut self.data, &col_k, &row_k);
    }

    /// Fault injection: one step relaxes with a path one shorter than it is.
    #[cold]
    fn wrong_step(&mut self, col_k: &[u32], row_k: &[u32]) {
        self.fault = Fault::None;
        let b = self.b;
        for (i, &dik) in col_k.iter().enumerate() {
            let row = &mut self.data[i * b..(i + 1) * b];
            for (dij, &dkj) in row.iter_mut().zip(row_k) {
                *dij = (*dij).min((dik + dkj).saturating_sub(1));
            }
        }
    }

    /// Runs every step whose data is complete; reports and stops after the last.
    fn advance(&mut self, ctx: &mut Context<Self>) {
        while self.current.count == self.neighbors.len() {
            self.step();
            ctx.charge(step_cost(self.b));
            self.k += 1;
            self.current = std::mem::replace(&mut self.next, Received::new(self.blocks));
            if self.k == self.n {
                self.master
                    .send(MasterMsg::Block {
                        bi: self.bi,
                        bj: self.bj,
                        data: std::mem::take(&mut self.data),
                        handled: self.handled,
                    })
                    .expect("master alive");
                ctx.stop();
                return;
            }
            self.notify_neighbors();
        }
    }
}

impl Actor for FloydWarshallBlock {
    type Msg = BlockMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: BlockMsg) {
        match msg {
            BlockMsg::Table(table) => {
                let (bi, bj, blocks) = (self.bi, self.bj, self.blocks);
                self.neighbors = (0..blocks)
                    .filter(|&r| r != bi)
                    .map(|r| table[r * blocks + bj].clone())
                    .chain(
                        (0..blocks)
                            .filter(|&c| c != bj)
                            .map(|c| table[bi * blocks + c].clone()),
                    )
                    .collect();
            }
            BlockMsg::Start => {
                self.notify_neighbors();
                self.advance(ctx);
            }
            BlockMsg::Data { k, bi, bj, data } => {
                self.handled += 1;
                let slot = if k == self.k {
                    &mut self.current
                } else {
                    assert_eq!(k, self.k + 1, "a neighbor is at most one step ahead");
                    &mut self.next
                };
                if bi == self.bi {
                    slot.row[bj] = Some(data);
                } else {
                    slot.col[bi] = Some(data);
                }
                slot.count += 1;
                self.advance(ctx);
            }
        }
    }
}

enum MasterMsg {
    Start {
        blocks: Arc<[ActorRef<BlockMsg>]>,
        done: ReplyTo<(Vec<u32>, u64)>,
    },
    /// A block's final distances, and the block messages it handled.
    Block {
        bi: usize,
        bj: usize,
        data: Vec<u32>,
        handled: u64,
    },
}

struct Master {
    /// Every block actor, held until the end so that none is ever unreferenced while it works.
    table: Option<Arc<[ActorRef<BlockMsg>]>>,
    n: usize,
    b: usize,
    result: Vec<u32>,
    reports: usize,
    blocks: usize,
    /// Messages handled: the reports, and the block messages the blocks handled.
    messages: u64,
    done: Option<ReplyTo<(Vec<u32>, u64)>>,
}

impl Actor for Master {
    type Msg = MasterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MasterMsg) {
        match msg {
            MasterMsg::Start { blocks, done } => {
                self.done = Some(done);
                for block in blocks.iter() {
                    block.send(BlockMsg::Start).expect("block alive");
                }
                self.table = Some(blocks);
            }
            MasterMsg::Block {
                bi,
                bj,
                data,
                handled,
            } => {
                self.messages += 1 + handled;
                let (n, b) = (self.n, self.b);
                for i in 0..b {
                    let at = (bi * b + i) * n + bj * b;
                    self.result[at..at + b].copy_from_slice(&data[i * b..(i + 1) * b]);
                }
                self.reports += 1;
                if self.reports == self.blocks * self.blocks {
                    if let Some(done) = self.done.take() {
                        done.send((std::mem::take(&mut self.result), self.messages));
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (n, b, max_weight) = size.pick((700, 100, 100), (900, 150, 300));
    assert_eq!(n % b, 0, "the block size divides the node count");
    let blocks = n / b;
    let g = graph(n, max_weight);
    let master = system.spawn(Master {
        table: None,
        n,
        b,
        result: vec![0; n * n],
        reports: 0,
        blocks,
        messages: 0,
        done: None,
    });
    let table: Arc<[ActorRef<BlockMsg>]> = (0..blocks * blocks)
        .map(|id| {
            let (bi, bj) = (id / blocks, id % blocks);
            let data: Vec<u32> = (0..b * b)
                .map(|x| g[(bi * b + x / b) * n + bj * b + x % b])
                .collect();
            system.spawn(FloydWarshallBlock {
                bi,
                bj,
                blocks,
                b,
                n,
                data,
                k: 0,
                neighbors: Vec::new(),
                current: Received::new(blocks),
                next: Received::new(blocks),
                master: master.clone(),
                handled: 0,
                // Injected into block (0, 1): a lost message, or a wrong first step.
                fault: if id == 1 { run.fault } else { Fault::None },
            })
        })
        .collect();
    for block in table.iter() {
        block
            .send(BlockMsg::Table(Arc::clone(&table)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let pending = master
        .ask(|done| MasterMsg::Start {
            blocks: table,
            done,
        })
        .expect("fresh actor");
    let result = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let (result, counted) = match result {
        Ok(result) => result,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let mut expected = g;
    floyd_warshall(n, &mut expected);
    let differing = if result.len() == expected.len() {
        result.iter().zip(&expected).filter(|(a, b)| a != b).count()
    } else {
        usize::MAX
    };
    let total = blocks * blocks;
    let messages = (n * total * 2 * (blocks - 1) + total) as u64;
    Measured {
        messages: counted,
        elapsed,
        verified: differing == 0,
        check: format!(
            "{differing} of {} distances differ from a sequential Floyd-Warshall",
            n * n
        ),
    }
    .with_message_count(messages, "N·b²·2·(b − 1) + b² = ")
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    /// The per-cell cost of a block's step, for [`RELAX_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn relax_cost_per_cell() {
        let b = 64;
        let mut data: Vec<u32> = (0..b * b).map(|i| (i % 977) as u32 + 1000).collect();
        let col_k: Vec<u32> = (0..b).map(|i| (i % 13) as u32).collect();
        let row_k: Vec<u32> = (0..b).map(|i| (i % 17) as u32).collect();
        const ROUNDS: usize = 20_000;
        for _ in 0..6 {
            let start = Instant::now();
            for _ in 0..ROUNDS {
                relax(
                    std::hint::black_box(&mut data),
                    &col_k,
                    std::hint::black_box(&row_k),
                );
            }
            let ps = start.elapsed().as_nanos() as f64 * 1000.0 / (ROUNDS * b * b) as f64;
            eprintln!("apsp: {ps:.0} ps per cell");
        }
    }
}
