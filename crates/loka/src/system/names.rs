//! Registered names from a plain thread: the [`System`] side of `actor/names.rs`.

use super::System;
use crate::actor::{ActorRef, LookupError, RegisterError};
use crate::runtime::ActorId;

impl System {
    /// Registers `actor` under `name`, unique in this system, until the actor stops (or
    /// [`unregister`](Self::unregister)). Registering an actor again under its own name is
    /// accepted and changes nothing. The name keeps the actor referenced: it does not stop as
    /// unreferenced while registered.
    ///
    /// Fails, registering nothing, if another actor holds the name ([`RegisterError::Taken`]),
    /// the actor has stopped ([`RegisterError::Stopped`]), it is registered under another name
    /// ([`RegisterError::AlreadyNamed`]), it belongs to another system, or the name is empty.
    ///
    /// ```
    /// use loka::{Actor, Context, System};
    ///
    /// struct Logger;
    /// impl Actor for Logger {
    ///     type Msg = String;
    ///     fn handle(&mut self, _ctx: &mut Context<Self>, line: String) { println!("{line}") }
    /// }
    ///
    /// let system = System::builder().workers(1).build().unwrap();
    /// system.register("logger", &system.spawn(Logger)).unwrap();
    /// // Elsewhere, typed by the message type:
    /// let logger = system.lookup::<String>("logger").unwrap();
    /// logger.send("hello".to_owned()).unwrap();
    /// assert!(system.lookup::<u64>("logger").is_none(), "wrong message type");
    /// ```
    pub fn register<M: Send + 'static>(
        &self,
        name: &str,
        actor: &ActorRef<M>,
    ) -> Result<(), RegisterError> {
        self.shared.directory.register(&self.shared, name, actor)
    }

    /// The actor registered under `name`, if there is one and it takes messages of type `M`
    /// (`None` otherwise; [`try_lookup`](Self::try_lookup) says which).
    pub fn lookup<M: Send + 'static>(&self, name: &str) -> Option<ActorRef<M>> {
        self.try_lookup(name).ok()
    }

    /// The actor registered under `name`, or why there is none of type `M`:
    /// [`LookupError::NotRegistered`] or [`LookupError::WrongType`] (naming both types).
    pub fn try_lookup<M: Send + 'static>(&self, name: &str) -> Result<ActorRef<M>, LookupError> {
        self.shared.directory.lookup(name)
    }

    /// Frees `name`; returns the actor that held it (`None`: the name was not registered). The
    /// actor goes on; with no other reference it then stops as unreferenced.
    pub fn unregister(&self, name: &str) -> Option<ActorId> {
        self.shared.directory.unregister(name)
    }
}
