//! Identifiers: random record ids, generation tokens, and validation of user-supplied ids.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::error::{AccError, AccResult};

fn random_bytes<const N: usize>() -> AccResult<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|e| AccError::internal(format!("the system random source failed: {e}")))?;
    Ok(bytes)
}

/// A new record id `<kind>_<base64url of 16 random bytes>`.
pub fn new_id(kind: &str) -> AccResult<String> {
    let bytes = random_bytes::<16>()?;
    Ok(format!("{kind}_{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// How many characters of an id's random part a prefix must give.
pub const MIN_PREFIX: usize = 6;
/// The length of an id's random part (16 bytes, base64url without padding).
pub const ID_RANDOM_LEN: usize = 22;

/// A new generation token (256 random bits) to hand to the session owner once.
pub fn new_generation_token() -> AccResult<String> {
    let bytes = random_bytes::<32>()?;
    Ok(format!("gen_{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// The hash under which a generation token is stored; the token itself never is.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    hex(&digest)
}

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    // Not `write!("{byte:02x}")` per byte: every send hashes its content and every call its
    // token, and the formatter's machinery was most of that time.
    data_encoding::HEXLOWER.encode(bytes)
}

/// Check a portable id (participants, workspaces, client message ids):
/// `[A-Za-z0-9][A-Za-z0-9._-]{0,199}`, no trailing dot.
pub fn validate_portable_id(what: &str, value: &str) -> AccResult<()> {
    let bytes = value.as_bytes();
    let shape_ok = !bytes.is_empty()
        && bytes.len() <= 200
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !value.ends_with('.');
    if shape_ok {
        Ok(())
    } else {
        Err(AccError::usage(format!(
            "{what} `{}` is not a portable id: use 1 to 200 of A-Z a-z 0-9 . _ -, starting with a letter or digit and not ending with a dot",
            value.escape_debug()
        )))
    }
}

/// Check a record id of the given kind (`claim_...`), as far as its shape goes.
pub fn validate_record_id(kind: &str, value: &str) -> AccResult<()> {
    let ok = value
        .strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|rest| {
            !rest.is_empty()
                && rest.len() <= 64
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if ok {
        Ok(())
    } else {
        Err(AccError::usage(format!(
            "`{}` is not a {kind} id (expected `{kind}_` followed by its base64url suffix)",
            value.escape_debug()
        )))
    }
}

/// Make a portable id from arbitrary text (used for derived workspace ids).
pub fn portable_slug(text: &str) -> String {
    let mut slug: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(120)
        .collect();
    while slug.ends_with('.') {
        slug.pop();
    }
    if !slug
        .as_bytes()
        .first()
        .is_some_and(|b| b.is_ascii_alphanumeric())
    {
        slug.insert(0, 'w');
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_ids() {
        assert!(validate_portable_id("participant", "alice").is_ok());
        assert!(validate_portable_id("participant", "a.b_c-1").is_ok());
        assert!(validate_portable_id("participant", "").is_err());
        assert!(validate_portable_id("participant", ".a").is_err());
        assert!(validate_portable_id("participant", "a.").is_err());
        assert!(validate_portable_id("participant", "a b").is_err());
        assert!(validate_portable_id("participant", &"a".repeat(200)).is_ok());
        assert!(validate_portable_id("participant", &"a".repeat(201)).is_err());
    }

    #[test]
    fn hex_is_two_lower_case_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
        // A token's hash: its SHA-256 in hex (sha256sum of the same bytes).
        assert_eq!(
            hash_token("gen_x"),
            "cfb5b2efd994a29d1ad45bfe278df11ec4f893be9b3e92429bc47cdb0cfa0ebe"
        );
    }

    #[test]
    fn record_ids_and_tokens() {
        let id = new_id("claim").expect("random");
        assert!(validate_record_id("claim", &id).is_ok());
        assert!(validate_record_id("session", &id).is_err());
        assert_eq!(id.len(), "claim_".len() + 22);
        let token = new_generation_token().expect("random");
        assert_ne!(hash_token(&token), token);
        assert_eq!(hash_token(&token).len(), 64);
        assert_eq!(portable_slug("My Repo!"), "My-Repo-");
        assert_eq!(portable_slug(".git"), "w.git");
    }
}
