//! Hooked sessions' credentials: the generation token a client's hooks derive from the data
//! directory's private secret, and the check an adopting `acc-mcp` asks the core to make.

use super::*;

/// The token of a keyed session's generation: HMAC-SHA256 over the workspace, the session key
/// and the generation number, keyed by a private per-data-home secret. Unguessable without the
/// secret (a 0600 file beside the stores), yet the same on every event of one opening.
pub fn derived_token(
    secret: &[u8],
    workspace_id: &str,
    session_key: &str,
    generation: i64,
) -> String {
    use base64::Engine;
    use hmac::Mac;
    let mut mac = match hmac::Hmac::<sha2::Sha256>::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(
        format!("acc-hooked-session\n{workspace_id}\n{session_key}\n{generation}").as_bytes(),
    );
    format!(
        "gen_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    )
}

impl Core {
    /// The credentials of a hooked session, derived from the data directory's hook `secret`
    /// as the hooks derive them; `None` when the session has no key or its current generation
    /// was not opened with that secret (so not by this data directory's hooks).
    pub fn hooked_credentials(&self, session: &SessionRow, secret: &[u8]) -> Option<Caller> {
        let key = session.session_key.as_deref()?;
        let token = derived_token(secret, &self.workspace.id, key, session.generation);
        (ids::hash_token(&token) == session.generation_hash).then(|| Caller {
            session_id: session.session_id.clone(),
            generation: token,
        })
    }
}
