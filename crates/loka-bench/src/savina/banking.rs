//! Bank Transaction: a teller sends N transfers between A account actors; the source account
//! debits itself, credits the destination and stays locked until the destination acknowledges
//! (Savina #16).

use crate::rng::XorShift as Rng;
use crate::verify::{fingerprint, mix};
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "banking",
    suite: "savina",
    about: "a teller sends N two-phase transfers between A account actors (4·N messages)",
    run,
    faults: &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule,
    ],
};

/// Every account's opening balance, in cents.
const INITIAL_BALANCE: i64 = 1_000_000_000_000;

/// One transfer `(source, destination, cents)`, drawn as in Savina: the source among the first 80 %
/// of the accounts, the destination above it (so waiting chains always climb and cannot deadlock),
/// up to 1000.00.
fn transfer(rng: &mut Rng, accounts: usize) -> (usize, usize, i64) {
    let src = rng.below((accounts / 10) * 8);
    let step = rng.below(accounts - src).max(1);
    let amount = rng.below(100_000) as i64;
    (src, src + step, amount)
}

/// Every account of the run, by index; shared read-only.
type Table = Arc<[ActorRef<AccountMsg>]>;

enum AccountMsg {
    /// Set-up: every account's address.
    Table(Table),
    /// From the teller: transfer `id` sends `amount` to account `to`.
    Transfer { id: u32, to: usize, amount: i64 },
    /// From account `from`: receive `amount`, then acknowledge.
    Credit { from: usize, amount: i64 },
    /// The destination's acknowledgement.
    Ack,
    /// After the run: the balance and the messages handled, then stop.
    Balance(ReplyTo<(i64, u64)>),
}

struct Account {
    index: usize,
    balance: i64,
    table: Option<Table>,
    teller: ActorRef<TellerMsg>,
    /// Locked: a transfer from this account waits for its acknowledgement.
    waiting: bool,
    /// The id of the transfer last sent from this account (the one waited for while locked).
    transfer: u32,
    /// Requests that arrived while locked, taken up in order once unlocked (Savina's manual stash).
    stash: VecDeque<AccountMsg>,
    /// `Transfer`, `Credit` and `Ack` messages handled.
    handled: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
}

impl Account {
    fn process(&mut self, ctx: &mut Context<Self>, msg: AccountMsg) {
        match msg {
            AccountMsg::Table(table) => self.table = Some(table),
            AccountMsg::Transfer { id, to, amount } => {
                self.handled += 1;
                self.balance -= amount;
                self.waiting = true;
                self.transfer = id;
                let table = self.table.as_ref().expect("table set");
                let credit = AccountMsg::Credit {
                    from: self.index,
                    amount,
                };
                if self.fault == Fault::Duplicate {
                    // Fault injection: the first credit is delivered twice.
                    self.fault = Fault::None;
                    table[to]
                        .send(AccountMsg::Credit {
                            from: self.index,
                            amount,
                        })
                        .expect("account alive");
                }
                table[to].send(credit).expect("account alive");
            }
            AccountMsg::Credit { from, amount } => {
                self.handled += 1;
                if self.fault != Fault::None {
                    return self.faulty_credit(from, amount);
                }
                self.balance += amount;
                let table = self.table.as_ref().expect("table set");
                table[from].send(AccountMsg::Ack).expect("account alive");
            }
            AccountMsg::Ack => {
                self.handled += 1;
                self.waiting = false;
                let id = if self.fault == Fault::WrongRule {
                    // Fault injection: the first completion names the next transfer.
                    self.fault = Fault::None;
                    self.transfer + 1
                } else {
                    self.transfer
                };
                self.teller.send(TellerMsg::Done(id)).expect("teller alive");
            }
            AccountMsg::Balance(reply) => {
                reply.send((self.balance, self.handled));
                ctx.stop();
            }
        }
    }

    /// Fault injection at the first credit: it is lost (neither applied nor acknowledged), or
    /// its acknowledgement goes to the wrong account.
    #[cold]
    fn faulty_credit(&mut self, from: usize, amount: i64) {
        let table = self.table.as_ref().expect("table set");
        match std::mem::replace(&mut self.fault, Fault::None) {
            Fault::Drop => {}
            Fault::Misroute => {
                self.balance += amount;
                let wrong = (from + 1) % table.len();
                table[wrong].send(AccountMsg::Ack).expect("account alive");
            }
            _ => {
                self.balance += amount;
                table[from].send(AccountMsg::Ack).expect("account alive");
            }
        }
    }
}

impl Actor for Account {
    type Msg = AccountMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: AccountMsg) {
        if self.waiting && !matches!(msg, AccountMsg::Ack) {
            self.stash.push_back(msg);
            return;
        }
        self.process(ctx, msg);
        while !self.waiting {
            match self.stash.pop_front() {
                Some(msg) => self.process(ctx, msg),
                None => break,
            }
        }
    }
}

/// The teller's account of the run: transfers reported done and the fingerprint of their ids.
#[derive(Clone, Copy)]
struct Completed {
    count: u64,
    ids: u64,
}

enum TellerMsg {
    Start {
        accounts: Table,
        done: ReplyTo<Completed>,
    },
    /// Transfer `.0` completed.
    Done(u32),
}

struct Teller {
    transfers: u64,
    completed: Completed,
    done: Option<ReplyTo<Completed>>,
}

impl Actor for Teller {
    type Msg = TellerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: TellerMsg) {
        match msg {
            TellerMsg::Start { accounts, done } => {
                self.done = Some(done);
                let mut rng = Rng::new(123_456);
                for id in 0..self.transfers as u32 {
                    let (src, to, amount) = transfer(&mut rng, accounts.len());
                    accounts[src]
                        .send(AccountMsg::Transfer { id, to, amount })
                        .expect("account alive");
                }
            }
            TellerMsg::Done(id) => {
                let c = &mut self.completed;
                c.count += 1;
                c.ids = c.ids.wrapping_add(mix(u64::from(id)));
                if c.count == self.transfers {
                    if let Some(done) = self.done.take() {
                        done.send(*c);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let (accounts, transfers) = run.pick((1_000, 500_000_u64), (16_000, 800_000_u64));
    let mut expected = vec![INITIAL_BALANCE; accounts];
    let mut rng = Rng::new(123_456);
    for _ in 0..transfers {
        let (src, to, amount) = transfer(&mut rng, accounts);
        expected[src] -= amount;
        expected[to] += amount;
    }
    let expected_ids = fingerprint(0..transfers);
    let teller = system.spawn(Teller {
        transfers,
        completed: Completed { count: 0, ids: 0 },
        done: None,
    });
    let table: Table = (0..accounts)
        .map(|index| {
            system.spawn(Account {
                index,
                balance: INITIAL_BALANCE,
                table: None,
                teller: teller.clone(),
                waiting: false,
                transfer: 0,
                stash: VecDeque::new(),
                handled: 0,
                // Injected faults: a credit duplicated or a completion misreported by account 0
                // (a source of transfers, never a destination), a credit lost or acknowledged to
                // the wrong account by the last account (a destination, never a source).
                fault: match run.fault {
                    Fault::Duplicate | Fault::WrongRule if index == 0 => run.fault,
                    Fault::Drop | Fault::Misroute if index == accounts - 1 => run.fault,
                    _ => Fault::None,
                },
            })
        })
        .collect();
    for account in table.iter() {
        account
            .send(AccountMsg::Table(Arc::clone(&table)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let pending = teller
        .ask(|done| TellerMsg::Start {
            accounts: Arc::clone(&table),
            done,
        })
        .expect("fresh actor");
    let completed = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let completed = match completed {
        Ok(completed) => completed,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    // Read the balances (each account then stops).
    let pending: Vec<_> = table
        .iter()
        .map(|account| account.ask(AccountMsg::Balance).expect("account alive"))
        .collect();
    let mut balances = Vec::with_capacity(accounts);
    let mut handled = completed.count;
    for p in pending {
        match await_result(system, p, run, BENCH.name) {
            Ok((balance, h)) => {
                balances.push(balance);
                handled += h;
            }
            Err(reason) => return Measured::failed(handled, elapsed, reason),
        }
    }
    let total: i64 = balances.iter().sum();
    let opening = INITIAL_BALANCE * accounts as i64;
    let same = balances == expected;
    let ids_ok = completed.ids == expected_ids;
    Measured {
        messages: handled,
        elapsed,
        verified: completed.count == transfers && ids_ok && total == opening && same,
        check: format!(
            "{} of {transfers} transfers reported done, {} (fingerprint of their ids against \
             0..N: each transfer exactly once); total balance {total} (opening {opening}); every \
             balance equals the sequential replay: {same}",
            completed.count,
            if ids_ok { "each once" } else { "NOT each once" },
        ),
    }
    .with_message_count(4 * transfers, "4·N = ")
}
