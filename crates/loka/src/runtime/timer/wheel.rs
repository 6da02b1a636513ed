//! A hierarchical timer wheel: the data structure under the timer service (no locking, no clock).
//!
//! ```text
//!   level 5  [ 64 slots of 64^5 ticks ]   covers the current span of 64^6 = 2^36 ticks
//!   level 4  [ 64 slots of 64^4 ticks ]   covers the current slot of level 5
//!   ...
//!   level 0  [ 64 slots of 1 tick     ]   covers the current slot of level 1
//!   ready    (deadline already passed when inserted: out at the next advance)
//!   overflow (deadline in a later span of 2^36 ticks)
//! ```
//!
//! As tokio's and Erlang's wheels: time is an integer count of *ticks* whose length is the
//! caller's (a millisecond for the real engines, a microsecond for the simulation). An entry due
//! at `when` sits at the level of the highest base-64 digit in which `when` differs from
//! `elapsed`, in the slot of `when`'s digit there. When the wheel reaches the first tick a slot
//! covers, the slot is emptied: entries due at that tick come out, the others *cascade* to a
//! lower level, where their slot is finer. So an entry is touched at most once per level (seven
//! times in all), inserting and removing are O(1), and an idle wheel costs nothing however long
//! its deadlines are.
//!
//! Why the order of what comes out is right (by `when`, insertion order among equal `when`s):
//! slots are emptied in the order of the ticks they start at; when a slot of level `l` is emptied,
//! every level below `l` is empty (their entries lie before that tick), so a cascade never lands
//! behind entries inserted after it, and every list stays in insertion order. Every entry due at a
//! tick `t` is in the one slot that starts at `t` when the wheel reaches it.
//!
//! Entries live in a slab (a `Vec` and a free list): a [`Key`] is an index and the generation of
//! that place, so a key whose entry already fired or was removed is recognised (the generation
//! moved on), even once the place holds another entry. A place whose generation reached
//! `u32::MAX` is never reused (it leaks one node after four billion entries went through it), so
//! no key ever matches a later entry: the timer service relies on it to use keys as one-shot
//! timers' handles. Every slot is a doubly linked list
//! threaded through the slab by index: removing is O(1) and costs no allocation. A bitmap per
//! level says which slots hold entries, so [`Wheel::next_deadline`] is a few instructions.
//!
//! Safe code only: the links are indices, not pointers.

/// Bits of a tick per level: each level has `1 << BITS` slots.
const BITS: u32 = 6;
/// Slots per level.
const SLOTS: usize = 1 << BITS;
/// Levels: together they cover a span of `64^6 = 2^36` ticks (~2.2 years of milliseconds,
/// ~19 hours of microseconds). Later deadlines wait in the overflow list.
const LEVELS: usize = 6;
/// `log2` of the span the levels cover.
const SPAN_BITS: u32 = BITS * LEVELS as u32;
/// The list of entries already due when inserted (`when <= elapsed`).
const READY: u16 = (LEVELS * SLOTS) as u16;
/// The list of entries due after the current span of `2^36` ticks.
const OVERFLOW: u16 = READY + 1;
/// Lists in all: one per slot of each level, ready and overflow.
const LISTS: usize = LEVELS * SLOTS + 2;
/// `list` of a vacant slab entry (on the free list).
const VACANT: u16 = u16::MAX;
/// The null index of the links.
const NIL: u32 = u32::MAX;
/// The generation of a place that is never reused (its generations are spent).
const RETIRED: u32 = u32::MAX;

/// Names a wheel entry: where it lives in the slab and that place's generation when it was
/// inserted. Once the entry leaves the wheel (fired, removed, drained) the generation moves on,
/// so the key no longer matches anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    /// The entry's place in the slab.
    index: u32,
    /// The place's generation when the entry was inserted.
    generation: u32,
}

impl Key {
    /// The key as one word (to keep it in an atomic).
    pub(crate) fn to_bits(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.index)
    }

    /// The key [`to_bits`](Self::to_bits) made this word of.
    pub(crate) fn from_bits(bits: u64) -> Self {
        Key {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

/// One place of the slab: an entry, or a vacant place on the free list.
struct Node<T> {
    /// The entry's value; `None` while vacant.
    value: Option<T>,
    /// The tick the entry is due at.
    when: u64,
    /// The previous entry of its list (`NIL`: first).
    prev: u32,
    /// The next entry of its list (`NIL`: last); the next vacant place while vacant.
    next: u32,
    /// Bumped each time the place is vacated, so older keys stop matching.
    generation: u32,
    /// The list the entry is on (`VACANT` while vacant): which head to fix when it is unlinked
    /// first, and which occupancy bit to clear when its list empties.
    list: u16,
}

/// A list's ends (`NIL` both when empty).
#[derive(Clone, Copy)]
struct List {
    /// First entry (`NIL`: empty).
    head: u32,
    /// Last entry (`NIL`: empty).
    tail: u32,
}

impl List {
    /// A list without entries.
    const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };
}

/// A hierarchical timer wheel of values `T`; see the module documentation.
pub(crate) struct Wheel<T> {
    /// The slab of entries.
    nodes: Vec<Node<T>>,
    /// First vacant place of `nodes` (`NIL`: none; then `nodes` grows).
    free: u32,
    /// Every list's ends, indexed by list number (level * 64 + slot, then `READY`, `OVERFLOW`).
    /// Boxed: 3 KiB the wheel's owner need not carry inline.
    lists: Box<[List]>,
    /// Per level, which slots hold entries. Every set bit is above `elapsed`'s digit at that
    /// level (a slot is emptied as soon as the wheel reaches its first tick).
    occupied: [u64; LEVELS],
    /// The tick the wheel has advanced to.
    elapsed: u64,
    /// Entries pending.
    len: usize,
    /// No later than the earliest `when` on the ready list (`u64::MAX` while it is empty).
    ready_min: u64,
    /// No later than the earliest `when` on the overflow list (`u64::MAX` while it is empty).
    overflow_min: u64,
    /// Reused buffer for sorting the ready list.
    scratch: Vec<u32>,
}

impl<T> Wheel<T> {
    /// An empty wheel at tick 0.
    pub(crate) fn new() -> Self {
        Wheel {
            nodes: Vec::new(),
            free: NIL,
            lists: vec![List::EMPTY; LISTS].into_boxed_slice(),
            occupied: [0; LEVELS],
            elapsed: 0,
            len: 0,
            ready_min: u64::MAX,
            overflow_min: u64::MAX,
            scratch: Vec::new(),
        }
    }

    /// The tick the wheel has advanced to.
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Entries pending.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether no entry is pending.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Places in the slab, pending or vacant: what the wheel has allocated room for.
    #[cfg(test)]
    pub(crate) fn places(&self) -> usize {
        self.nodes.len()
    }

    /// Inserts `value`, due at tick `when`; `when <= elapsed` means "due at the next advance".
    ///
    /// # Panics
    /// If `u32::MAX - 1` entries are already pending.
    #[inline(always)]
    pub(crate) fn insert(&mut self, when: u64, value: T) -> Key {
        let index = if self.free != NIL {
            let index = self.free;
            self.free = self.nodes[index as usize].next;
            index
        } else {
            let index = u32::try_from(self.nodes.len())
                .ok()
                .filter(|&i| i != NIL)
                .expect("timer wheel: too many pending entries");
            self.nodes.push(Node {
                value: None,
                when: 0,
                prev: NIL,
                next: NIL,
                generation: 0,
                list: VACANT,
            });
            index
        };
        let node = &mut self.nodes[index as usize];
        node.when = when;
        node.value = Some(value);
        let generation = node.generation;
        let list = self.list_for(when);
        self.push_back(list, index);
        self.len += 1;
        Key { index, generation }
    }

    /// Removes the entry `key` names and returns its value; `None` if it already fired or was
    /// removed (its place's generation moved on), never a panic.
    #[inline(always)]
    pub(crate) fn remove(&mut self, key: Key) -> Option<T> {
        if !self.contains(key) {
            return None;
        }
        self.unlink(key.index);
        Some(self.release(key.index))
    }

    /// Whether the entry `key` names is still pending (neither fired, removed nor drained).
    pub(crate) fn contains(&self, key: Key) -> bool {
        self.nodes
            .get(key.index as usize)
            .is_some_and(|node| node.generation == key.generation && node.list != VACANT)
    }

    /// The earliest tick at which [`advance`](Self::advance) may have something to do, or `None`
    /// when empty. Never later than the earliest entry's `when`; it may be earlier (the tick a
    /// slot holding later entries cascades, or a ready entry's `when`, already past).
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        if self.is_empty() {
            return None;
        }
        if self.lists[READY as usize].head != NIL {
            return Some(self.ready_min);
        }
        let next = self.next_slot().map(|(_, tick)| tick);
        debug_assert!(next.is_some(), "timer wheel: entries on no list");
        next
    }

    /// A lower bound of [`next_deadline`](Self::next_deadline) contributed by an entry due at
    /// `when`, inserted now: the first tick of the list it goes on (its slot's start, the start
    /// of its span for the overflow list, `when` itself for the ready list). The earliest
    /// deadline after an insert is the earlier of this and the one before, so the timer service
    /// keeps its mirror of the deadline up to date on arming without looking at the levels.
    pub(crate) fn first_tick(&self, when: u64) -> u64 {
        if when <= self.elapsed {
            return when;
        }
        let differ = (self.elapsed ^ when) | (SLOTS as u64 - 1);
        let level = (63 - differ.leading_zeros()) / BITS;
        let low = if level as usize >= LEVELS {
            SPAN_BITS
        } else {
            BITS * level
        };
        (when >> low) << low
    }

    /// Advances to `now` and pushes every entry with `when <= now` onto `out`, in `when` order,
    /// in insertion order among equal `when`s. Entries of higher levels cascade down; an entry
    /// never comes out before its `when`. Time never goes backwards: a `now` below
    /// [`elapsed`](Self::elapsed) moves nothing and only lets out the entries already due (those
    /// inserted with `when <= elapsed`, which are due "at the next advance").
    pub(crate) fn advance(&mut self, now: u64, out: &mut Vec<(Key, T)>) {
        let now = now.max(self.elapsed);
        if self.lists[READY as usize].head != NIL {
            self.fire_ready(out);
        }
        // Slots in the order of the ticks they start at: the first occupied slot of the lowest
        // occupied level (see `next_slot`).
        while let Some((list, tick)) = self.next_slot() {
            if tick > now {
                break;
            }
            self.elapsed = tick;
            let mut cur = self.take_list(list);
            while cur != NIL {
                let node = &self.nodes[cur as usize];
                let (next, when) = (node.next, node.when);
                if when <= tick {
                    // A slot starts no later than any entry in it is due, so only `== tick`.
                    debug_assert_eq!(when, tick);
                    self.emit(cur, out);
                } else {
                    // Relative to the new `elapsed`, a lower level (or the overflow list again,
                    // for an entry spans away). Never the list being emptied: `next` is read.
                    let list = self.list_for(when);
                    self.push_back(list, cur);
                }
                cur = next;
            }
        }
        self.elapsed = now;
    }

    /// Removes and returns every entry (shutdown). Their keys stop matching; the wheel keeps its
    /// `elapsed` and stays usable.
    pub(crate) fn drain(&mut self) -> Vec<T> {
        let mut values = Vec::with_capacity(self.len());
        for index in 0..self.nodes.len() {
            if self.nodes[index].list != VACANT {
                values.push(self.release(index as u32));
            }
        }
        self.lists.fill(List::EMPTY);
        self.occupied = [0; LEVELS];
        self.ready_min = u64::MAX;
        self.overflow_min = u64::MAX;
        debug_assert_eq!(self.len, 0);
        values
    }

    /// The list an entry due at `when` goes on, given `elapsed`.
    fn list_for(&mut self, when: u64) -> u16 {
        if when <= self.elapsed {
            self.ready_min = self.ready_min.min(when);
            return READY;
        }
        // The highest base-64 digit in which `when` and `elapsed` differ (`| 63`: at least 0).
        let differ = (self.elapsed ^ when) | (SLOTS as u64 - 1);
        let level = ((63 - differ.leading_zeros()) / BITS) as usize;
        if level >= LEVELS {
            self.overflow_min = self.overflow_min.min(when);
            return OVERFLOW;
        }
        let slot = (when >> (BITS * level as u32)) as usize & (SLOTS - 1);
        (level * SLOTS + slot) as u16
    }

    /// The next list to empty and the tick it is due at: the first occupied slot of the lowest
    /// occupied level (a level's slots all lie after the current slot of the level below, which
    /// holds every slot of that level), else the overflow list, due when the span holding its
    /// earliest entry starts. The ready list is not considered.
    fn next_slot(&self) -> Option<(u16, u64)> {
        for (level, &occupied) in self.occupied.iter().enumerate() {
            if occupied != 0 {
                let slot = occupied.trailing_zeros();
                let above = BITS * (level as u32 + 1);
                let base = (self.elapsed >> above) << above;
                let tick = base + (u64::from(slot) << (BITS * level as u32));
                debug_assert!(tick > self.elapsed);
                return Some(((level * SLOTS) as u16 + slot as u16, tick));
            }
        }
        if self.lists[OVERFLOW as usize].head != NIL {
            let tick = (self.overflow_min >> SPAN_BITS) << SPAN_BITS;
            debug_assert!(tick > self.elapsed);
            return Some((OVERFLOW, tick));
        }
        None
    }

    /// Lets out the ready list, sorted by `when` (stable: insertion order among equals). Its
    /// entries are due before anything on a slot (`when <= elapsed` < every slot's tick).
    fn fire_ready(&mut self, out: &mut Vec<(Key, T)>) {
        let mut order = std::mem::take(&mut self.scratch);
        let mut cur = self.take_list(READY);
        while cur != NIL {
            order.push(cur);
            cur = self.nodes[cur as usize].next;
        }
        // Usually already sorted (one entry, or deadlines that passed in order): linear then.
        order.sort_by_key(|&index| self.nodes[index as usize].when);
        for &index in &order {
            self.emit(index, out);
        }
        order.clear();
        self.scratch = order;
    }

    /// Pushes the (already unlinked) entry at `index` onto `out` and frees its place.
    fn emit(&mut self, index: u32, out: &mut Vec<(Key, T)>) {
        let generation = self.nodes[index as usize].generation;
        let value = self.release(index);
        out.push((Key { index, generation }, value));
    }

    /// Appends the entry at `index` to `list`.
    fn push_back(&mut self, list: u16, index: u32) {
        let ends = &mut self.lists[list as usize];
        let tail = ends.tail;
        ends.tail = index;
        if tail == NIL {
            ends.head = index;
        } else {
            self.nodes[tail as usize].next = index;
        }
        let node = &mut self.nodes[index as usize];
        node.prev = tail;
        node.next = NIL;
        node.list = list;
        if (list as usize) < LEVELS * SLOTS {
            self.occupied[list as usize / SLOTS] |= 1 << (list as usize % SLOTS);
        }
    }

    /// Takes the entry at `index` off its list.
    fn unlink(&mut self, index: u32) {
        let node = &self.nodes[index as usize];
        let (prev, next, list) = (node.prev, node.next, node.list);
        if prev == NIL {
            self.lists[list as usize].head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.lists[list as usize].tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        if self.lists[list as usize].head == NIL {
            self.emptied(list);
        }
    }

    /// Empties `list` and returns its first entry; the entries stay chained by `next`.
    fn take_list(&mut self, list: u16) -> u32 {
        let head = self.lists[list as usize].head;
        self.lists[list as usize] = List::EMPTY;
        self.emptied(list);
        head
    }

    /// `list` became empty: clear its occupancy bit, or forget the ready or overflow minimum.
    fn emptied(&mut self, list: u16) {
        match list {
            READY => self.ready_min = u64::MAX,
            OVERFLOW => self.overflow_min = u64::MAX,
            _ => self.occupied[list as usize / SLOTS] &= !(1 << (list as usize % SLOTS)),
        }
    }

    /// Vacates the place at `index` (already off its list) and returns its value. Bumping the
    /// generation is what makes the entry's key stale; a place whose generation is spent stays
    /// off the free list, so a generation is never handed out twice.
    fn release(&mut self, index: u32) -> T {
        let node = &mut self.nodes[index as usize];
        let value = node
            .value
            .take()
            .expect("timer wheel: entry without a value");
        node.generation = node.generation.wrapping_add(1);
        node.list = VACANT;
        if node.generation != RETIRED {
            node.next = self.free;
            self.free = index;
        }
        self.len -= 1;
        value
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
