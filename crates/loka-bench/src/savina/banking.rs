//! Bank Transaction: a teller sends N transfers between A account actors; the source account
//! debits itself, credits the destination and stays locked until the destination acknowledges
//! (Savina #16).

use crate::rng::XorShift as Rng;
use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "banking",
    suite: "savina",
    about: "a teller sends N two-phase transfers between A account actors (4·N messages)",
    run,
    faults: &[],
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
    /// From the teller: send `amount` to account `to`.
    Transfer { to: usize, amount: i64 },
    /// From account `from`: receive `amount`, then acknowledge.
    Credit { from: usize, amount: i64 },
    /// The destination's acknowledgement.
    Ack,
    /// After the run: the balance, then stop.
    Balance(ReplyTo<i64>),
}

struct Account {
    index: usize,
    balance: i64,
    table: Option<Table>,
    teller: ActorRef<TellerMsg>,
    /// Locked: a transfer from this account waits for its acknowledgement.
    waiting: bool,
    /// Requests that arrived while locked, taken up in order once unlocked (Savina's manual stash).
    stash: VecDeque<AccountMsg>,
}

impl Account {
    fn process(&mut self, ctx: &mut Context<Self>, msg: AccountMsg) {
        match msg {
            AccountMsg::Table(table) => self.table = Some(table),
            AccountMsg::Transfer { to, amount } => {
                self.balance -= amount;
                self.waiting = true;
                let table = self.table.as_ref().expect("table set");
                table[to]
                    .send(AccountMsg::Credit {
                        from: self.index,
                        amount,
                    })
                    .expect("account alive");
            }
            AccountMsg::Credit { from, amount } => {
                self.balance += amount;
                let table = self.table.as_ref().expect("table set");
                table[from].send(AccountMsg::Ack).expect("account alive");
            }
            AccountMsg::Ack => {
                self.waiting = false;
                self.teller.send(TellerMsg::Done).expect("teller alive");
            }
            AccountMsg::Balance(reply) => {
                reply.send(self.balance);
                ctx.stop();
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

enum TellerMsg {
    Start {
        accounts: Table,
        done: ReplyTo<u64>,
    },
    /// A transfer completed.
    Done,
}

struct Teller {
    transfers: u64,
    completed: u64,
    done: Option<ReplyTo<u64>>,
}

impl Actor for Teller {
    type Msg = TellerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: TellerMsg) {
        match msg {
            TellerMsg::Start { accounts, done } => {
                self.done = Some(done);
                let mut rng = Rng::new(123_456);
                for _ in 0..self.transfers {
                    let (src, to, amount) = transfer(&mut rng, accounts.len());
                    accounts[src]
                        .send(AccountMsg::Transfer { to, amount })
                        .expect("account alive");
                }
            }
            TellerMsg::Done => {
                self.completed += 1;
                if self.completed == self.transfers {
                    if let Some(done) = self.done.take() {
                        done.send(self.completed);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (accounts, transfers) = size.pick((1_000, 200_000_u64), (16_000, 800_000_u64));
    let mut expected = vec![INITIAL_BALANCE; accounts];
    let mut rng = Rng::new(123_456);
    for _ in 0..transfers {
        let (src, to, amount) = transfer(&mut rng, accounts);
        expected[src] -= amount;
        expected[to] += amount;
    }
    let teller = system.spawn(Teller {
        transfers,
        completed: 0,
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
                stash: VecDeque::new(),
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
    let completed = teller
        .ask(|done| TellerMsg::Start {
            accounts: Arc::clone(&table),
            done,
        })
        .expect("fresh actor")
        .wait()
        .unwrap_or(0);
    let elapsed = start.elapsed();
    // Every transfer is acknowledged: read the balances (each account then stops).
    let pending: Vec<_> = table
        .iter()
        .map(|account| account.ask(AccountMsg::Balance).expect("account alive"))
        .collect();
    let balances: Vec<i64> = pending
        .into_iter()
        .map(|p| p.wait().unwrap_or(i64::MIN))
        .collect();
    let total: i64 = balances.iter().sum();
    let opening = INITIAL_BALANCE * accounts as i64;
    let same = balances == expected;
    Measured {
        messages: 4 * transfers,
        elapsed,
        verified: completed == transfers && total == opening && same,
        check: format!(
            "{completed} of {transfers} transfers acknowledged; total balance {total} (opening \
             {opening}); every balance equals the sequential replay: {same}"
        ),
    }
}
