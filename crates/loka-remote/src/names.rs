//! Names across nodes: a registered name is a Zenoh liveliness token
//! `loka/name/<name>/<node>/<actor id>/<fingerprint>`, so it vanishes with its actor, its
//! node's departure or its node's loss; a lookup asks for the tokens under the name.

use crate::node::Node;
use crate::{NodeId, RemoteError};
use loka::remote::{decode, fingerprint, inbox, RemoteMessage};
use loka::ActorRef;
use std::time::{Duration, Instant};
use zenoh::Wait;

const NAME_PREFIX: &str = "loka/name";
/// The longest name.
pub const MAX_NAME_LEN: usize = 128;
/// How long `register` asks the other nodes whether a name is taken.
const TAKEN_QUERY: Duration = Duration::from_millis(200);

/// A name is 1 to [`MAX_NAME_LEN`] characters of `A-Z a-z 0-9 _ - .` (it is one chunk of a
/// Zenoh key).
fn check_name(name: &str) -> Result<(), RemoteError> {
    let bad = |why| RemoteError::BadName {
        name: name.to_owned(),
        why,
    };
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(bad("it is longer than 128 bytes"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Err(bad("only A-Z a-z 0-9 _ - . are allowed"));
    }
    Ok(())
}

/// What a name's token says.
struct Entry {
    node: u128,
    id: u64,
    fingerprint: u64,
}

fn parse(key: &str) -> Option<Entry> {
    let mut parts = key.rsplit('/');
    let fingerprint = u64::from_str_radix(parts.next()?, 16).ok()?;
    let id = parts.next()?.parse().ok()?;
    let node = u128::from_str_radix(parts.next()?, 16).ok()?;
    Some(Entry {
        node,
        id,
        fingerprint,
    })
}

impl Node {
    /// Registers `actor` under `name` for every node to [`lookup`](Self::lookup). The name
    /// vanishes when the actor stops, when it is [`unregister`](Self::unregister)ed, and with
    /// this node. Fails, registering nothing, on a bad name, a name some node holds already, or
    /// a stopped actor. A registered actor stays exported (reachable) until it stops.
    pub fn register<M: RemoteMessage>(
        &self,
        name: &str,
        actor: &ActorRef<M>,
    ) -> Result<(), RemoteError> {
        check_name(name)?;
        if actor.is_stopped() {
            return Err(RemoteError::Stopped { actor: actor.id() });
        }
        if let Some(entry) = self.find(name, TAKEN_QUERY)? {
            return Err(RemoteError::NameTaken {
                name: name.to_owned(),
                node: NodeId(entry.node),
            });
        }
        let inner = &self.inner;
        let address = inner.export(inbox(actor));
        let key = format!(
            "{NAME_PREFIX}/{name}/{}/{}/{:016x}",
            NodeId(inner.me),
            address.id,
            fingerprint::<M>()
        );
        let token = inner
            .session
            .liveliness()
            .declare_token(key)
            .wait()
            .map_err(|error| RemoteError::Transport(error.to_string()))?;
        let mut state = inner.state.lock();
        if state.names.contains_key(name) {
            return Err(RemoteError::NameTaken {
                name: name.to_owned(),
                node: NodeId(inner.me),
            });
        }
        match state.exports.get_mut(&address.id) {
            Some(export) => export.names.push((name.to_owned(), token)),
            // Stopped meanwhile: the token drops here, the name never stood.
            None => return Err(RemoteError::Stopped { actor: actor.id() }),
        }
        state.names.insert(name.to_owned(), address.id);
        Ok(())
    }

    /// Removes the name; `false` if this node had no actor under it.
    pub fn unregister(&self, name: &str) -> bool {
        let mut state = self.inner.state.lock();
        let Some(id) = state.names.remove(name) else {
            return false;
        };
        if let Some(export) = state.exports.get_mut(&id) {
            export.names.retain(|(held, _)| held != name);
        }
        true
    }

    /// The actor registered under `name` on any node, as an [`ActorRef`] of message type `M`.
    /// Waits up to [`crate::NodeConfig::lookup_timeout`] for the name to appear (names of a
    /// node just connected arrive a moment later). Fails with [`RemoteError::NotFound`], or
    /// [`RemoteError::TypeMismatch`] when the actor takes another message type.
    pub fn lookup<M: RemoteMessage>(&self, name: &str) -> Result<ActorRef<M>, RemoteError> {
        check_name(name)?;
        let entry = self
            .find(name, self.inner.config.lookup_timeout)?
            .ok_or_else(|| RemoteError::NotFound {
                name: name.to_owned(),
            })?;
        let expected = fingerprint::<M>();
        if entry.fingerprint != expected {
            return Err(RemoteError::TypeMismatch {
                name: name.to_owned(),
                expected: std::any::type_name::<M>(),
                expected_fingerprint: expected,
                found: entry.fingerprint,
            });
        }
        // The address read back as a reference in the scope of its node: the actor's own
        // reference if it is this node's, a remote face otherwise.
        let bytes = postcard::to_allocvec(&(entry.node, entry.id, entry.fingerprint))
            .map_err(|error| RemoteError::Transport(error.to_string()))?;
        decode::<ActorRef<M>>(&self.inner.wire(entry.node), &bytes).map_err(|_| {
            RemoteError::NotFound {
                name: name.to_owned(),
            }
        })
    }

    /// The token under `name`, asking again until `wait` has passed.
    fn find(&self, name: &str, wait: Duration) -> Result<Option<Entry>, RemoteError> {
        let deadline = Instant::now() + wait;
        loop {
            let replies = self
                .inner
                .session
                .liveliness()
                .get(format!("{NAME_PREFIX}/{name}/**"))
                .timeout(wait)
                .wait()
                .map_err(|error| RemoteError::Transport(error.to_string()))?;
            while let Ok(reply) = replies.recv() {
                if let Ok(sample) = reply.result() {
                    if let Some(entry) = parse(sample.key_expr().as_str()) {
                        return Ok(Some(entry));
                    }
                }
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_key_chunk() {
        check_name("kv-store_1.main").unwrap();
        for (name, why) in [
            ("", "empty"),
            ("a/b", "only"),
            ("a*", "only"),
            ("ключ", "only"),
        ] {
            let error = check_name(name).unwrap_err().to_string();
            assert!(
                error.contains(why) && error.contains(&format!("{name:?}")),
                "{error}"
            );
        }
        check_name(&"x".repeat(MAX_NAME_LEN)).unwrap();
        check_name(&"x".repeat(MAX_NAME_LEN + 1)).unwrap_err();
    }

    #[test]
    fn a_token_key_reads_back() {
        let entry =
            parse("loka/name/kv/000000000000000000000000000000ab/42/00000000deadbeef").unwrap();
        assert_eq!(
            (entry.node, entry.id, entry.fingerprint),
            (0xab, 42, 0xdead_beef)
        );
        assert!(parse("loka/name/kv/zz/42/1").is_none());
    }
}
