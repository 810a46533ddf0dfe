//! A room's address made ready to connect: resolved as libpq would ([`crate::conninfo`]) into
//! the driver's configuration, with its TLS plan ([`crate::tls`]).
//!
//! Owns: [`target`], from the text a room file keeps to what `db::PgSession::connect` takes.
//! Must not: read a password (that is `rooms::complete`) or connect.

use crate::StoreError;
use crate::conninfo::{Sources, parse, refused, resolve};

/// A room's address made ready to connect: the driver's configuration with everything
/// resolved into it, the parameters it was resolved from, and its TLS plan.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) tls: crate::tls::Plan,
}

/// Where libpq looks for a server when no host is named: Debian's socket folder, else `/tmp`.
fn default_socket_dir() -> &'static str {
    if std::path::Path::new("/var/run/postgresql").is_dir() {
        "/var/run/postgresql"
    } else {
        "/tmp"
    }
}

/// The hosts of a configuration as libpq writes them: names, addresses, socket folders.
pub(crate) fn host_names(config: &tokio_postgres::Config) -> Vec<String> {
    config
        .get_hosts()
        .iter()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect()
}

/// Resolve a room's address into what connecting needs, as libpq would: the address's own
/// parameters, over its service's, over the environment's.
pub(crate) fn target(text: &str, sources: &Sources<'_>) -> Result<Target, StoreError> {
    let (mut config, mut given) = parse(text)?;
    let hosts = host_names(&config);
    if !hosts.is_empty() {
        given.insert("host".to_string(), hosts.join(","));
    }
    if let Some(port) = config.get_ports().first() {
        given.insert("port".to_string(), port.to_string());
    }
    if let Some(user) = config.get_user() {
        given.insert("user".to_string(), user.to_string());
    }
    if let Some(db) = config.get_dbname() {
        given.insert("dbname".to_string(), db.to_string());
    }
    let params = resolve(given, sources)?;
    if hosts.is_empty() {
        let named = params.get("host").unwrap_or(default_socket_dir());
        for host in named.split(',').map(str::trim).filter(|h| !h.is_empty()) {
            if host.starts_with('/') {
                config.host_path(host);
            } else {
                config.host(host);
            }
        }
    }
    if config.get_ports().is_empty()
        && let Some(port) = params.get("port")
    {
        for one in port.split(',') {
            config.port(
                one.trim().parse().map_err(|_| {
                    refused(format!("the room's port `{one}` is not a port number"))
                })?,
            );
        }
    }
    if config.get_user().is_none()
        && let Some(user) = params.get("user")
    {
        config.user(user);
    }
    if config.get_dbname().is_none()
        && let Some(db) = params.get("dbname")
    {
        config.dbname(db);
    }
    if let Some(seconds) = params.get("connect_timeout") {
        let seconds: u64 = seconds.trim().parse().map_err(|_| {
            refused(format!(
                "connect_timeout `{seconds}` is not a whole number of seconds"
            ))
        })?;
        // libpq: zero waits for ever, and less than two seconds is two.
        if seconds > 0 {
            config.connect_timeout(std::time::Duration::from_secs(seconds.max(2)));
        }
    }
    let socket_only = config
        .get_hosts()
        .iter()
        .all(|h| !matches!(h, tokio_postgres::config::Host::Tcp(_)));
    let tls = crate::tls::Plan::new(&params, socket_only, sources)?;
    config.ssl_mode(tls.driver_mode());
    Ok(Target { config, tls })
}
