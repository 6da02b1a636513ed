//! Loom model of the stop-when-unreferenced rule (`handles.rs`), with the real mailbox and the
//! real [`Handles`].

// Every `unsafe` call here is a single-consumer mailbox operation made by the one consumer thread
// of the model (the main thread), which is the contract of those functions.
#![allow(clippy::undocumented_unsafe_blocks)]

use super::handles::Handles;
use crate::mailbox::{Mailbox, Pop};
use loom::sync::Arc;
use loom::thread;

#[derive(Debug, PartialEq, Eq)]
enum Env {
    Data,
    Unreferenced,
}

/// An `Unreferenced` signal is queued while a new handle exists (made by the actor itself, as
/// `ctx.myself()` does, and handed to another thread). That thread sends one message and drops
/// the handle. Whatever the interleaving, the actor never stops with the message claimed in its
/// mailbox: either the check sees the handle (or the message) and the actor keeps going, or the
/// message is sent after the close and handed back to its sender.
#[test]
fn unreferenced_actor_never_stops_with_a_message_queued() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let mailbox = Arc::new(Mailbox::new());
        unsafe { mailbox.settle() };
        // The signal queued by an earlier last drop; then the actor made a new handle.
        let _ = mailbox.push(Env::Unreferenced);
        let handles = Arc::new(Handles::new(1));
        let sender = {
            let (mailbox, handles) = (mailbox.clone(), handles.clone());
            thread::spawn(move || {
                let delivered =
                    !matches!(mailbox.push(Env::Data), crate::mailbox::Push::Rejected(_));
                if handles.release() {
                    let _ = mailbox.push(Env::Unreferenced);
                }
                delivered
            })
        };
        // The consumer: the activation holding the schedule.
        let mut received = 0;
        loop {
            match unsafe { mailbox.pop() } {
                Pop::Item(Env::Data) => received += 1,
                Pop::Item(Env::Unreferenced) => {
                    if unsafe { handles.can_stop(&mailbox) } {
                        break;
                    }
                }
                Pop::Empty | Pop::NotReady => thread::yield_now(),
            }
        }
        mailbox.close();
        let delivered = sender.join().unwrap();
        // Anything claimed before the close and not consumed would be a message lost by the stop.
        let stranded = matches!(unsafe { mailbox.pop() }, Pop::Item(Env::Data));
        assert!(!stranded, "stopped with a message in the mailbox");
        assert_eq!(
            received,
            usize::from(delivered),
            "a delivered message was not handled"
        );
    });
}
