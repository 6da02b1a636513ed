//! The cell's layout: what the padding before the mailbox holds.

use super::ActorCell;

struct Quiet;
impl crate::Actor for Quiet {
    type Msg = u64;
    fn handle(&mut self, _: &mut crate::Context<Self>, _: u64) {}
}

/// The fields written only at spawn (or once: the exit word, the registered mark) sit between the
/// header and the mailbox, whose leading gap keeps them off the consumer's line: the tests of every
/// send (`plain_send`, `bound`) read a line the actor does not write. The cell needs no alignment beyond 16, so
/// its allocation takes `malloc`'s fast path (docs/decisions/0028-spawn-stop-cost.md).
#[test]
fn spawn_time_fields_sit_between_the_header_and_the_mailbox() {
    // The engines cast a task's header pointer to the cell (`run_raw` and the other vtable
    // entries): the header must be the cell's first byte, through `CellBase`.
    assert_eq!(
        std::mem::offset_of!(ActorCell<Quiet>, base.header),
        0,
        "a header pointer is a cell pointer"
    );
    let mailbox = std::mem::offset_of!(ActorCell<Quiet>, mailbox);
    let header = std::mem::size_of::<crate::runtime::Header>();
    for field in [
        std::mem::offset_of!(ActorCell<Quiet>, base.bound),
        std::mem::offset_of!(ActorCell<Quiet>, base.plain_send),
        std::mem::offset_of!(ActorCell<Quiet>, base.runtime),
        std::mem::offset_of!(ActorCell<Quiet>, base.parent),
        std::mem::offset_of!(ActorCell<Quiet>, base.extras),
        std::mem::offset_of!(ActorCell<Quiet>, base.exit),
        std::mem::offset_of!(ActorCell<Quiet>, base.named),
        std::mem::offset_of!(ActorCell<Quiet>, base.registered),
        std::mem::offset_of!(ActorCell<Quiet>, base.sink),
        std::mem::offset_of!(ActorCell<Quiet>, base.started),
    ] {
        assert!(
            field >= header && field < mailbox,
            "{field} in [{header}, {mailbox})"
        );
    }
    // A send tests `plain_send` and, on the other way, `bound`: one 16-byte block, so one line
    // whatever malloc's 16-byte alignment puts where.
    assert_eq!(
        std::mem::offset_of!(ActorCell<Quiet>, base.plain_send) / 16,
        std::mem::offset_of!(ActorCell<Quiet>, base.bound) / 16,
        "a send's tests in one line"
    );
    assert!(
        std::mem::align_of::<ActorCell<Quiet>>() <= 16,
        "an over-aligned cell is allocated by posix_memalign"
    );
}
