//! Connecting to a room: one place for the session ([`super::PgSession`]) and the listener
//! that wakes followers (`crate::wake`), so both take the same TLS and the same errors.

use crate::{StoreError, StoreErrorKind, StoreResult};

/// A room's connection, as the driver makes it: the client, the connection to drive, and
/// whether it is TLS.
pub(crate) type Dialled =
    (
        tokio_postgres::Client,
        tokio_postgres::Connection<
            tokio_postgres::Socket,
            <crate::tls::Connector as tokio_postgres::tls::MakeTlsConnect<
                tokio_postgres::Socket,
            >>::Stream,
        >,
        bool,
    );

/// Connect with `config` and the TLS of `tls` (the room called `name` in errors): `allow`
/// tries plain text first, and TLS when the server refused that. A failure names the host and
/// its cause.
pub(crate) async fn dial(
    config: &tokio_postgres::Config,
    tls: &crate::tls::Plan,
    name: &str,
) -> StoreResult<Dialled> {
    let attempt = async |config: &tokio_postgres::Config| {
        let (connector, used) = tls.connector();
        config
            .connect(connector)
            .await
            .map(|(client, connection)| (client, connection, used))
    };
    let mut answer = attempt(config).await;
    if tls.retries_with_tls()
        && let Err(e) = &answer
        && e.as_db_error().is_some()
    {
        let mut with_tls = config.clone();
        with_tls.ssl_mode(tokio_postgres::config::SslMode::Require);
        answer = attempt(&with_tls).await;
    }
    let (client, connection, used) = answer.map_err(|e| {
        let host = crate::address::host_names(config)
            .into_iter()
            .next()
            .unwrap_or_default();
        match crate::tls::failure(&e, &host, tls) {
            Some(why) => StoreError::new(
                StoreErrorKind::Unavailable,
                format!("the room at {name} is unreachable: {why}"),
            ),
            None => crate::pg::error(name, &e),
        }
    })?;
    Ok((
        client,
        connection,
        used.load(std::sync::atomic::Ordering::SeqCst),
    ))
}
