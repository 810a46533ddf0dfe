//! The one error type of the host, with closed error codes.
//!
//! Every failure that reaches a user carries a stable `code` string, a lower-case message, and
//! optional structured `details`. The mapping from a code to a CLI exit code lives here and only
//! here ([`ErrorCode::exit_code`]); the MCP mapping lives in the MCP module.

use std::fmt;

/// Closed set of error codes. The string form is part of the public interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// Bad command-line or tool arguments.
    InvalidArguments,
    /// A claim resource shape that can never match anything.
    UnmatchableResource,
    /// A mutation or inbox read without owner credentials.
    CallerIdentityUnresolved,
    /// The workspace could not be determined or its configuration is invalid.
    InvalidConfig,
    /// The data home resolves inside the workspace.
    DataHomeInsideWorkspace,
    /// The operation was not allowed to proceed because of an interactive consent question.
    ConsentRequired,
    /// A timeout.
    Timeout,
    /// A store of another protocol or schema version.
    StoreVersionUnsupported,
    /// A file or directory that is not an ACC store, or a damaged one.
    StoreCorrupt,
    /// The environment refuses the store: a read-only or full file system, no permission, a
    /// path that is not a directory (the message names the cause and the path).
    StorageUnavailable,
    /// The config file already exists.
    ConfigExists,
    /// A named claim does not exist.
    ClaimNotFound,
    /// A named participant is unknown to the workspace.
    UnknownParticipant,
    /// A named message does not exist.
    MessageNotFound,
    /// An idempotency key was reused with other content.
    IdempotencyConflict,
    /// Input that is well-formed but violates the protocol's data rules.
    InvalidData,
    /// A conflicting claim is held.
    ClaimConflict,
    /// A named claim belongs to another session.
    ClaimNotOwned,
    /// The caller's generation is no longer the current opening of its session.
    GenerationStale,
    /// The caller's session is not part of this workspace.
    CallerWorkspaceMismatch,
    /// Sessions are attached where the command needs none.
    SessionsAttached,
    /// `ack` of a message that still needs a reply.
    ReplyRequired,
    /// A message that needs a reply or acknowledgement is not addressed to the caller.
    NotARecipient,
    /// A receipt transition that would move backward.
    ReceiptBackward,
    /// A page cursor that names no message of this listing.
    InvalidCursor,
    /// Anything that should not happen: an I/O or SQLite failure.
    Internal,
}

impl ErrorCode {
    /// The stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::UnmatchableResource => "unmatchable_resource",
            Self::CallerIdentityUnresolved => "caller_identity_unresolved",
            Self::InvalidConfig => "invalid_config",
            Self::DataHomeInsideWorkspace => "data_home_inside_workspace",
            Self::ConsentRequired => "consent_required",
            Self::Timeout => "timeout",
            Self::StoreVersionUnsupported => "store_version_unsupported",
            Self::StoreCorrupt => "store_corrupt",
            Self::StorageUnavailable => "storage_unavailable",
            Self::ConfigExists => "config_exists",
            Self::ClaimNotFound => "claim_not_found",
            Self::UnknownParticipant => "unknown_participant",
            Self::MessageNotFound => "message_not_found",
            Self::IdempotencyConflict => "idempotency_conflict",
            Self::InvalidData => "invalid_data",
            Self::ClaimConflict => "claim_conflict",
            Self::ClaimNotOwned => "claim_not_owned",
            Self::GenerationStale => "generation_stale",
            Self::CallerWorkspaceMismatch => "caller_workspace_mismatch",
            Self::SessionsAttached => "sessions_attached",
            Self::ReplyRequired => "reply_required",
            Self::NotARecipient => "not_a_recipient",
            Self::ReceiptBackward => "receipt_backward",
            Self::InvalidCursor => "invalid_cursor",
            Self::Internal => "internal",
        }
    }

    /// The CLI exit code for this error (SUPPLEMENT.md section 6).
    pub fn exit_code(self) -> i32 {
        match self {
            Self::InvalidArguments
            | Self::UnmatchableResource
            | Self::CallerIdentityUnresolved
            | Self::InvalidConfig
            | Self::DataHomeInsideWorkspace
            | Self::ConsentRequired
            | Self::InvalidCursor => 2,
            Self::Timeout => 3,
            Self::StoreVersionUnsupported
            | Self::StoreCorrupt
            | Self::StorageUnavailable
            | Self::ConfigExists
            | Self::ClaimNotFound
            | Self::UnknownParticipant
            | Self::MessageNotFound
            | Self::IdempotencyConflict
            | Self::InvalidData
            | Self::ReceiptBackward => 4,
            Self::ClaimConflict
            | Self::ClaimNotOwned
            | Self::GenerationStale
            | Self::CallerWorkspaceMismatch
            | Self::SessionsAttached
            | Self::ReplyRequired
            | Self::NotARecipient => 5,
            Self::Internal => 1,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with a closed code, a human message, and optional structured details.
#[derive(Debug, Clone)]
pub struct AccError {
    /// The closed code.
    pub code: ErrorCode,
    /// A lower-case message without a trailing period.
    pub message: String,
    /// Structured details (for example `conflicts` of a claim conflict).
    pub details: Option<serde_json::Value>,
}

impl AccError {
    /// A new error without details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// Attach structured details (a wire type from `crate::wire`, or a JSON value).
    pub fn with_details<T: serde::Serialize>(mut self, details: &T) -> Self {
        self.details = Some(crate::wire::json(details));
        self
    }

    /// Shorthand for a usage error.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArguments, message)
    }

    /// The member of a closed set that `text` names, or an `invalid_arguments` error naming
    /// the set, the spellings it takes and what was given (`claim mode must be `shared` or
    /// `exclusive`, got `x``).
    pub fn parse<T: acc_store::ClosedSet>(text: &str) -> AccResult<T> {
        T::parse(text).ok_or_else(|| {
            let spellings: Vec<String> = T::spellings().iter().map(|s| format!("`{s}`")).collect();
            let list = match spellings.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            };
            Self::usage(format!(
                "{} must be {list}, got `{}`",
                T::WHAT,
                text.escape_debug()
            ))
        })
    }

    /// Shorthand for an internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
}

impl fmt::Display for AccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for AccError {}

impl From<acc_store::StoreError> for AccError {
    fn from(error: acc_store::StoreError) -> Self {
        let code = match error.kind {
            acc_store::StoreErrorKind::Busy => ErrorCode::Timeout,
            acc_store::StoreErrorKind::Corrupt => ErrorCode::StoreCorrupt,
            acc_store::StoreErrorKind::VersionUnsupported => ErrorCode::StoreVersionUnsupported,
            acc_store::StoreErrorKind::Unavailable => ErrorCode::StorageUnavailable,
            acc_store::StoreErrorKind::Refused => ErrorCode::InvalidData,
            acc_store::StoreErrorKind::Internal => ErrorCode::Internal,
        };
        Self::new(code, error.message)
    }
}

impl From<std::io::Error> for AccError {
    fn from(error: std::io::Error) -> Self {
        Self::internal(format!("i/o error: {error}"))
    }
}

/// Result alias used throughout the host.
pub type AccResult<T> = Result<T, AccError>;
