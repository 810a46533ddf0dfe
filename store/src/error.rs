//! The store's own error: what went wrong with the file or SQLite, in a closed set of kinds.
//! The protocol core maps each kind to its public error code; the store knows no protocol
//! error (a rule a closure inside [`crate::Store::write`] breaks is the caller's error type).

use std::fmt;

/// What kind of store failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// Another process held the lock past the busy timeout.
    Busy,
    /// The file is not an ACC store, or is damaged.
    Corrupt,
    /// A store of another protocol or schema version, or of another workspace.
    VersionUnsupported,
    /// Anything else: an I/O or SQLite failure that should not happen.
    Internal,
}

/// A store failure with a lower-case message naming what was wrong.
#[derive(Debug, Clone)]
pub struct StoreError {
    /// The kind.
    pub kind: StoreErrorKind,
    /// What was wrong.
    pub message: String,
}

impl StoreError {
    /// A new error.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// An internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StoreErrorKind::Internal, message)
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        // A column whose value the store's types refuse (an unknown state, a wrong type) is
        // damage, not a bug to hide behind a default.
        if matches!(
            error,
            rusqlite::Error::FromSqlConversionFailure(..) | rusqlite::Error::InvalidColumnType(..)
        ) {
            return Self::new(
                StoreErrorKind::Corrupt,
                format!("the store holds a value acc cannot read: {error}"),
            );
        }
        if let rusqlite::Error::SqliteFailure(failure, _) = &error {
            match failure.code {
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => {
                    return Self::new(
                        StoreErrorKind::Busy,
                        format!("the store stayed locked by another process: {error}"),
                    );
                }
                rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt => {
                    return Self::new(
                        StoreErrorKind::Corrupt,
                        format!("the store is damaged: {error}"),
                    );
                }
                _ => {}
            }
        }
        Self::internal(format!("store error: {error}"))
    }
}

impl From<std::io::Error> for StoreError {
    fn from(error: std::io::Error) -> Self {
        Self::internal(format!("i/o error: {error}"))
    }
}

/// Result alias of the store.
pub type StoreResult<T> = Result<T, StoreError>;
