//! `acc doctor`'s output shape, as serde types.

use serde::Serialize;

/// One `acc doctor` check.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorCheck<'a> {
    pub name: &'a str,
    /// `ok`, `warn` or `fail`.
    pub status: &'static str,
    pub detail: &'a str,
    pub fix: Option<&'a str>,
}

/// `acc doctor`.
#[derive(Debug, Clone, Serialize)]
pub struct Doctor<'a> {
    pub ok: bool,
    pub checks: Vec<DoctorCheck<'a>>,
}
