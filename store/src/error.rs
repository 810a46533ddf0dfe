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
    /// The environment refuses the store: a read-only or full file system, no permission, a
    /// path that is not a directory. The message names the cause and the path.
    Unavailable,
    /// What the store holds refuses the operation (a push into a room that already holds
    /// records).
    Refused,
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
                rusqlite::ErrorCode::ReadOnly => {
                    return Self::new(
                        StoreErrorKind::Unavailable,
                        format!(
                            "the store cannot be written (read-only file or file system): {error}"
                        ),
                    );
                }
                rusqlite::ErrorCode::DiskFull => {
                    return Self::new(
                        StoreErrorKind::Unavailable,
                        format!("the disk is full: {error}"),
                    );
                }
                rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::PermissionDenied => {
                    return Self::new(
                        StoreErrorKind::Unavailable,
                        format!(
                            "the store cannot be opened (permissions, or a missing or read-only directory): {error}"
                        ),
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
        match environment_cause(&error) {
            Some(cause) => Self::new(StoreErrorKind::Unavailable, format!("{cause}: {error}")),
            None => Self::internal(format!("i/o error: {error}")),
        }
    }
}

/// What in the environment an I/O error says refuses the store, if it is one of those.
pub fn environment_cause(error: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind;
    Some(match error.kind() {
        ErrorKind::ReadOnlyFilesystem => "the file system is read-only",
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => "the disk is full",
        ErrorKind::PermissionDenied => "permission denied",
        ErrorKind::NotADirectory => "a part of the path is not a directory",
        ErrorKind::IsADirectory => "the path is a directory",
        _ => return None,
    })
}

impl StoreError {
    /// An I/O failure on `path` while doing `what`: the environment's cause when it is one,
    /// naming the path.
    pub fn io(what: &str, path: &std::path::Path, error: &std::io::Error) -> Self {
        match environment_cause(error) {
            Some(cause) => Self::new(
                StoreErrorKind::Unavailable,
                format!("cannot {what} `{}`: {cause} ({error})", path.display()),
            ),
            None => Self::internal(format!("cannot {what} `{}`: {error}", path.display())),
        }
    }
}

/// Result alias of the store.
pub type StoreResult<T> = Result<T, StoreError>;
