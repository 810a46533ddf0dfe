//! The helper protocol's two lines: the request the caller writes, the reply the helper
//! writes.

use std::path::PathBuf;

use acc_adapter_api::wire::ContractDeclaration;
use serde::{Deserialize, Serialize};

/// What the caller asks a helper.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Request {
    pub(super) file: PathBuf,
    pub(super) config: String,
    /// `describe`, or an operation's name (`crate::plugins::Operation`).
    pub(super) operation: String,
    pub(super) request: String,
}

/// What a helper answers.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub(super) enum Reply {
    Described {
        adapter_id: String,
        transport: String,
        offer_kind: String,
        features: Vec<String>,
        api_version: String,
        contract: ContractDeclaration,
    },
    Answered {
        status: String,
        code: String,
        client_version: String,
        payload: String,
    },
    /// The load was refused (`reason` as the in-process loader words it).
    Refused {
        reason: String,
    },
    Failed {
        code: String,
        message: String,
    },
}
