//! The cell's layout: what the padding before the mailbox holds.

use super::ActorCell;

struct Quiet;
impl crate::Actor for Quiet {
    type Msg = u64;
    fn handle(&mut self, _: &mut crate::Context<Self>, _: u64) {}
}

/// The fields written only at spawn (or once: the exit word, the registered mark) fill the
/// padding between the header and the mailbox: the `bound` test of every send reads a line no one
/// writes, and the cell did not grow for them.
#[test]
fn spawn_time_fields_sit_in_the_padding_before_the_mailbox() {
    let mailbox = std::mem::offset_of!(ActorCell<Quiet>, mailbox);
    let header = std::mem::size_of::<crate::runtime::Header>();
    for field in [
        std::mem::offset_of!(ActorCell<Quiet>, bound),
        std::mem::offset_of!(ActorCell<Quiet>, runtime),
        std::mem::offset_of!(ActorCell<Quiet>, parent),
        std::mem::offset_of!(ActorCell<Quiet>, extras),
        std::mem::offset_of!(ActorCell<Quiet>, exit),
        std::mem::offset_of!(ActorCell<Quiet>, named),
        std::mem::offset_of!(ActorCell<Quiet>, registered),
    ] {
        assert!(
            field >= header && field < mailbox,
            "{field} in [{header}, {mailbox})"
        );
    }
    let align = std::mem::align_of::<crate::mailbox::Mailbox<super::Envelope<Quiet>>>();
    assert_eq!(
        mailbox,
        header.next_multiple_of(align),
        "the fields fit the padding: the mailbox did not move"
    );
}
