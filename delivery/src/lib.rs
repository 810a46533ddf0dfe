//! ACC delivery: what becomes of a committed message after the protocol core recorded it.
//!
//! Owns: loading adapter plugins ([`plugins`]), contracts and their captured evidence
//! ([`contracts`]), and the router with its bindings, live policy, recorded consent and
//! next-turn path ([`router`]), including the envelope an adapter receives. Depends on the
//! store, the core and ACC's client toolkit; knows nothing of the CLI, MCP, hooks or the
//! installer (the installer's consent records reach it through [`router::ConsentRecords`]).

pub mod codes;
pub mod contracts;
pub mod inspect;
pub mod plugins;
pub mod router;
pub mod user_adapters;

pub use router::{ConsentRecords, Delivery, DeliveryOutcome, NoRecords, envelope};
