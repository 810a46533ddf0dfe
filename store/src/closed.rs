//! The closed sets the store persists, as enums: each has one stable spelling (stored, printed
//! and published), `parse`, `ALL`, and `ToSql`/`FromSql`. A stored value the enum does not
//! know is a damaged store (`StoreErrorKind::Corrupt` through the conversion failure), never a
//! silent default.

/// What every closed set offers, for code generic over them (parsing user input with one
/// error shape).
pub trait ClosedSet: Copy + Sized + 'static {
    /// What the set is called in messages (`claim mode`).
    const WHAT: &'static str;
    /// The member a string names.
    fn parse(text: &str) -> Option<Self>;
    /// Every spelling, in declaration order.
    fn spellings() -> Vec<&'static str>;
}

/// Defines a closed set: the enum, its spellings, its SQL conversions, and its serialisation
/// as its spelling.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];
            /// What the set is called in messages.
            pub const WHAT: &'static str = $what;

            /// The stable string form (stored, printed, published).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }

            /// The member a string names.
            pub fn parse(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|s| s.as_str() == text)
            }

            /// Every spelling, in declaration order.
            pub fn spellings() -> Vec<&'static str> {
                Self::ALL.iter().map(|s| s.as_str()).collect()
            }
        }

        impl ClosedSet for $name {
            const WHAT: &'static str = $what;
            fn parse(text: &str) -> Option<Self> {
                $name::parse(text)
            }
            fn spellings() -> Vec<&'static str> {
                $name::spellings()
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }

        impl tokio_postgres::types::ToSql for $name {
            fn to_sql(
                &self,
                ty: &tokio_postgres::types::Type,
                out: &mut bytes::BytesMut,
            ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
                self.as_str().to_sql(ty, out)
            }
            fn accepts(ty: &tokio_postgres::types::Type) -> bool {
                <&str as tokio_postgres::types::ToSql>::accepts(ty)
            }
            tokio_postgres::types::to_sql_checked!();
        }

        $crate::db::plain_arg!(tokio_postgres::types::Type::TEXT; $name);

        impl $crate::db::Column for $name {
            fn lite(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Self> {
                row.get(index)
            }
            fn pg(row: &tokio_postgres::Row, index: usize) -> $crate::StoreResult<Self> {
                <Option<$name> as $crate::db::Column>::pg(row, index)?.ok_or_else(|| {
                    $crate::db::refused(index, &format!("no {} where one must be", $what))
                })
            }
        }

        impl $crate::db::Column for Option<$name> {
            fn lite(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Self> {
                row.get(index)
            }
            fn pg(row: &tokio_postgres::Row, index: usize) -> $crate::StoreResult<Self> {
                <Option<String> as $crate::db::Column>::pg(row, index)?
                    .map(|text| {
                        $name::parse(&text).ok_or_else(|| {
                            $crate::db::refused(
                                index,
                                &format!("unknown {} `{}`", $what, text.escape_debug()),
                            )
                        })
                    })
                    .transpose()
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                let text = value.as_str()?;
                Self::parse(text).ok_or_else(|| {
                    rusqlite::types::FromSqlError::Other(
                        format!("unknown {} `{}`", $what, text.escape_debug()).into(),
                    )
                })
            }
        }
    };
}

closed_set! {
    /// How far a message got for one recipient; it only moves forward, in this order.
    ReceiptState, "receipt state" {
        /// Recorded durably; nothing more is known.
        Queued = "queued",
        /// A transport carried the bytes (not proof anyone read them).
        Offered = "offered",
        /// The recipient read the body exactly.
        Retrieved = "retrieved",
        /// The recipient acknowledged or replied.
        Acknowledged = "acknowledged",
    }
}

closed_set! {
    /// A message's kind.
    MessageKind, "message kind" {
        /// Information; nothing is owed.
        Note = "note",
        /// Asks for an answer.
        Question = "question",
        /// Asks for something to be done.
        Request = "request",
        /// Answers a message in its thread.
        Answer = "answer",
        /// Records a decision (which may replace or withdraw earlier ones).
        Decision = "decision",
        /// Hands work over.
        Handoff = "handoff",
    }
}

closed_set! {
    /// What a message asks of its recipients.
    Obligation, "obligation" {
        /// Nothing.
        None = "none",
        /// A reply.
        Reply = "reply",
        /// An acknowledgement.
        Acknowledge = "acknowledge",
    }
}

closed_set! {
    /// Shared or exclusive.
    ClaimMode, "claim mode" {
        /// Coexists with other shared claims.
        Shared = "shared",
        /// Conflicts with every other overlapping claim.
        Exclusive = "exclusive",
    }
}

closed_set! {
    /// Advisory or guarded (a claim's, or what a session's client can enforce).
    Enforcement, "enforcement" {
        /// Informs only.
        Advisory = "advisory",
        /// Enforced by write guards where the whole room can enforce it.
        Guarded = "guarded",
    }
}

closed_set! {
    /// Who ends a session: its client's hooks, or the agent itself.
    Lifecycle, "lifecycle" {
        /// Opened and closed by a client's hooks.
        Managed = "managed",
        /// Opened by `acc attach` or an MCP server; ended by `finish` or by going offline.
        Manual = "manual",
    }
}

closed_set! {
    /// Which messages a binding may push live.
    LivePolicy, "live policy" {
        /// None.
        Off = "off",
        /// Questions, requests, answers, decisions and addressed handoffs.
        Actionable = "actionable",
        /// Every addressed message.
        All = "all",
    }
}

closed_set! {
    /// What a participant is doing.
    IntentMode, "intent mode" {
        /// Watching.
        Observe = "observe",
        /// Reading around.
        Explore = "explore",
        /// Changing files.
        Edit = "edit",
        /// Reviewing.
        Review = "review",
        /// Coordinating others.
        Coordinate = "coordinate",
        /// Waiting.
        Wait = "wait",
    }
}

closed_set! {
    /// Where an intent stands.
    IntentState, "intent state" {
        /// Under way.
        Active = "active",
        /// Blocked.
        Blocked = "blocked",
        /// Waiting on someone.
        Waiting = "waiting",
        /// Done.
        Done = "done",
    }
}

closed_set! {
    /// What a decision does to an earlier one.
    DecisionAction, "decision action" {
        /// Supersedes it.
        Replace = "replace",
        /// Withdraws it.
        Withdraw = "withdraw",
    }
}
