//! The private secret of a data directory (`hook-secret`, 0600), from which the hooks derive
//! their sessions' generation tokens (`acc_core::identity::derived_token`) and which an
//! adopting `acc-mcp` reads to present the same credentials.

use std::io::Write;
use std::path::Path;

use acc_core::error::{AccError, AccResult};

const SECRET_FILE: &str = "hook-secret";

/// The secret of this data directory, when the hooks have created it.
pub fn read(data_dir: &Path) -> Option<Vec<u8>> {
    std::fs::read(data_dir.join(SECRET_FILE))
        .ok()
        .filter(|bytes| bytes.len() >= 32)
}

/// The private secret of this data directory, created on first use (0600).
pub fn secret(data_dir: &Path) -> AccResult<Vec<u8>> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let path = data_dir.join(SECRET_FILE);
    if let Some(bytes) = read(data_dir) {
        return Ok(bytes);
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(data_dir)?;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AccError::internal(format!("random source: {e}")))?;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
    {
        Ok(mut file) => {
            file.write_all(&bytes)?;
            file.sync_all()?;
            Ok(bytes.to_vec())
        }
        // Another hook created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(std::fs::read(&path)?),
        Err(e) => Err(e.into()),
    }
}
