//! A room's connection parameters resolved the way `libpq` (and so `psql`) resolves them, for
//! what the PostgreSQL driver does not read itself: the parameters a URL carries in its query
//! (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`, `service`, `connect_timeout`), the service
//! file (`service=NAME`: `PGSERVICEFILE`, else `~/.pg_service.conf`, then
//! `PGSYSCONFDIR/pg_service.conf`), and the environment (`PGHOST`, `PGPORT`, `PGUSER`,
//! `PGDATABASE`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`, `PGCONNECT_TIMEOUT`,
//! `PGSERVICE`). libpq's order: what the connection string says, else the service file's
//! section, else the environment.
//!
//! Owns: reading those sources and merging them into [`Params`], and the TLS mode ACC applies
//! ([`Params::ssl_mode`], stricter than libpq's `prefer` for a host that is neither a Unix
//! socket nor loopback). Must not: connect, or read a password (that is `rooms::complete`).
//! The service file and the query are read by hand: they are `key=value` lines and pairs that
//! no maintained crate reads on their own for this purpose.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::{StoreError, StoreErrorKind};

/// The connection parameters this module resolves, by libpq's keyword.
const KEYWORDS: &[(&str, &str)] = &[
    ("host", "PGHOST"),
    ("port", "PGPORT"),
    ("user", "PGUSER"),
    ("dbname", "PGDATABASE"),
    ("sslmode", "PGSSLMODE"),
    ("sslrootcert", "PGSSLROOTCERT"),
    ("sslcert", "PGSSLCERT"),
    ("sslkey", "PGSSLKEY"),
    ("connect_timeout", "PGCONNECT_TIMEOUT"),
];

/// libpq's TLS modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Plain text first, TLS if the server insists.
    Allow,
    /// TLS if the server offers it, else plain text.
    Prefer,
    /// TLS, the server's certificate not checked (checked as `verify-ca` when a root
    /// certificate is named: libpq's rule).
    Require,
    /// TLS, the server's certificate signed by a trusted root.
    VerifyCa,
    /// TLS, the certificate signed by a trusted root and naming the host.
    VerifyFull,
}

impl SslMode {
    /// libpq's spelling.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "disable" => Self::Disable,
            "allow" => Self::Allow,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }

    /// libpq's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Allow => "allow",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }
}

/// Whom a server's certificate must be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCert {
    /// The certificates in this file.
    File(PathBuf),
    /// The system's trusted roots (`sslrootcert=system`).
    System,
}

/// A room's connection parameters, merged from the URL, the service file and the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    values: BTreeMap<String, String>,
}

impl Params {
    /// One parameter, by libpq's keyword.
    pub fn get(&self, keyword: &str) -> Option<&str> {
        self.values.get(keyword).map(String::as_str)
    }

    /// Whether the host is a Unix socket (a path) or loopback: where plain text never crosses a
    /// network.
    pub fn host_is_local(&self) -> bool {
        match self.get("host") {
            None | Some("") => true,
            Some(host) => {
                host.starts_with('/')
                    || host == "localhost"
                    || host
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            }
        }
    }

    /// The TLS mode: the one written; none written, `verify-full` for a host that is neither a
    /// Unix socket nor loopback (ACC's default, stricter than libpq's `prefer`), else `prefer`.
    pub fn ssl_mode(&self) -> Result<SslMode, StoreError> {
        match self.get("sslmode") {
            Some(text) => SslMode::parse(text).ok_or_else(|| {
                refused(format!(
                    "sslmode `{text}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
                ))
            }),
            None if self.host_is_local() => Ok(SslMode::Prefer),
            None => Ok(SslMode::VerifyFull),
        }
    }

    /// Whom the server's certificate must be signed by, when named: a file, or `system`.
    pub fn root_cert(&self) -> Option<RootCert> {
        match self.get("sslrootcert")? {
            "system" => Some(RootCert::System),
            file => Some(RootCert::File(PathBuf::from(file))),
        }
    }
}

pub(crate) fn refused(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Unavailable, message)
}

/// Where the sources are read from: the environment and the files, injected so tests need
/// neither.
pub struct Sources<'a> {
    /// An environment variable's value.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// A file's text (`None`: it cannot be read).
    pub read: &'a dyn Fn(&std::path::Path) -> Option<String>,
}

impl Sources<'_> {
    /// The real environment and files.
    pub fn real() -> Sources<'static> {
        Sources {
            env: &|name| std::env::var(name).ok().filter(|v| !v.is_empty()),
            read: &|path| std::fs::read_to_string(path).ok(),
        }
    }
}

/// The parameters of `query` (a URL's query, without its `?`): `key=value` pairs joined by `&`,
/// each percent-decoded.
pub fn query_params(query: &str) -> Result<BTreeMap<String, String>, StoreError> {
    let mut params = BTreeMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            refused(format!(
                "the room's URL has `{pair}` in its query, not a key=value pair"
            ))
        })?;
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(text)
                .decode_utf8()
                .map(|t| t.into_owned())
                .map_err(|_| refused(format!("the room's URL has `{pair}`, which is not UTF-8")))
        };
        params.insert(decode(key)?, decode(value)?);
    }
    Ok(params)
}

/// The section `service` of a service file's `text`, as its `key=value` lines; `None` when the
/// file has no such section.
pub fn service_section(text: &str, service: &str) -> Option<BTreeMap<String, String>> {
    let mut found = None;
    let mut current: Option<&str> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.trim());
            if current == Some(service) {
                found.get_or_insert_with(BTreeMap::new);
            }
            continue;
        }
        if current == Some(service)
            && let (Some(section), Some((key, value))) = (found.as_mut(), line.split_once('='))
        {
            let section: &mut BTreeMap<String, String> = section;
            section.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    found
}

/// Merge the connection's parameters: `given` (what the connection string itself says),
/// over the service file's section of the service it (else `PGSERVICE`) names, over the
/// environment. A service named but found in no service file is refused, naming the files
/// looked in (libpq refuses it too).
pub fn resolve(
    given: BTreeMap<String, String>,
    sources: &Sources<'_>,
) -> Result<Params, StoreError> {
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    for (keyword, variable) in KEYWORDS {
        if let Some(value) = (sources.env)(variable) {
            values.insert((*keyword).to_string(), value);
        }
    }
    let service = given
        .get("service")
        .cloned()
        .or_else(|| (sources.env)("PGSERVICE"));
    if let Some(service) = service {
        let mut files = Vec::new();
        match (sources.env)("PGSERVICEFILE") {
            Some(file) => files.push(PathBuf::from(file)),
            None => {
                if let Some(home) = (sources.env)("HOME") {
                    files.push(PathBuf::from(home).join(".pg_service.conf"));
                }
            }
        }
        if let Some(dir) = (sources.env)("PGSYSCONFDIR") {
            files.push(PathBuf::from(dir).join("pg_service.conf"));
        }
        let section = files.iter().find_map(|file| {
            (sources.read)(file).and_then(|text| service_section(&text, &service))
        });
        let Some(section) = section else {
            let looked: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            return Err(refused(format!(
                "the service `{service}` is in no service file (looked in {})",
                if looked.is_empty() {
                    "none: set PGSERVICEFILE or HOME".to_string()
                } else {
                    looked.join(", ")
                }
            )));
        };
        values.extend(section);
    }
    values.extend(given);
    values.remove("service");
    Ok(Params { values })
}

/// The parameters ACC resolves itself, taken out of the text before the driver reads the rest
/// (the driver refuses some, and would read `sslmode` with its own, weaker meaning).
const OURS: &[&str] = &[
    "service",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "connect_timeout",
];

/// A room's address split into what the driver reads (`driver`, a URL or `key=value` text) and
/// the parameters ACC resolves itself.
fn split(text: &str) -> Result<(String, BTreeMap<String, String>), StoreError> {
    let mut ours = BTreeMap::new();
    if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        let Some((base, query)) = text.split_once('?') else {
            return Ok((text.to_string(), ours));
        };
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let decoded = query_params(pair)?;
            match decoded.into_iter().next() {
                Some((key, value)) if OURS.contains(&key.as_str()) => {
                    ours.insert(key, value);
                }
                _ => kept.push(pair),
            }
        }
        let driver = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return Ok((driver, ours));
    }
    let mut kept = Vec::new();
    for (key, value) in keyword_pairs(text)? {
        if OURS.contains(&key.as_str()) {
            ours.insert(key, value);
        } else {
            let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
            kept.push(format!("{key}='{quoted}'"));
        }
    }
    Ok((kept.join(" "), ours))
}

/// The `key=value` pairs of libpq's keyword form (`host=db port=5432 sslmode='verify-full'`):
/// values bare or in single quotes, `\\` escaping the next character. By hand: the driver's
/// reader of this form is private to it.
fn keyword_pairs(text: &str) -> Result<Vec<(String, String)>, StoreError> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(refused(format!(
                "the room's address has `{key}` without `=value`: write a postgres:// URL or key=value pairs"
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => {
                        return Err(refused(format!(
                            "the room's address has an unclosed quote in `{key}`"
                        )));
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
}

/// Check a room's address without connecting: it parses, carries no password, and names no
/// parameter wrongly. The service it names (if any) is looked up when it is used, so a room
/// recorded by service name follows later edits of the service file.
pub fn check(text: &str) -> Result<tokio_postgres::Config, StoreError> {
    parse(text).map(|(config, _)| config)
}

/// [`check`], with the parameters ACC resolves itself (what the driver does not read).
pub(crate) fn parse(
    text: &str,
) -> Result<(tokio_postgres::Config, BTreeMap<String, String>), StoreError> {
    let (driver, ours) = split(text.trim())?;
    let config: tokio_postgres::Config = driver.parse().map_err(|e| {
        refused(format!(
            "the room's address does not parse: {e} (write a postgres:// URL, or key=value pairs such as service=NAME)"
        ))
    })?;
    if config.get_password().is_some() || ours.contains_key("password") {
        return Err(refused(
            "the room's address carries a password, which acc does not keep: put it in ~/.pgpass (or PGPASSFILE), or in PGPASSWORD".to_string(),
        ));
    }
    if let Some(mode) = ours.get("sslmode") {
        SslMode::parse(mode).ok_or_else(|| {
            refused(format!(
                "sslmode `{mode}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
            ))
        })?;
    }
    Ok((config, ours))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    const SERVICES: &str = "# the team's rooms\n[team]\nhost = db.example.net\nport=6432\nsslmode=verify-full\n\n[other]\nhost=elsewhere\n";

    #[test]
    fn the_url_wins_over_the_service_file_which_wins_over_the_environment() {
        let env = env(&[
            ("PGHOST", "from-env"),
            ("PGPORT", "7000"),
            ("PGUSER", "env-user"),
            ("PGSSLMODE", "disable"),
            ("HOME", "/home/u"),
        ]);
        let read = |path: &std::path::Path| {
            (path == std::path::Path::new("/home/u/.pg_service.conf")).then(|| SERVICES.to_string())
        };
        let sources = Sources {
            env: &env,
            read: &read,
        };
        let params =
            resolve(given(&[("service", "team"), ("port", "6500")]), &sources).expect("resolved");
        assert_eq!(params.get("host"), Some("db.example.net"), "the service's");
        assert_eq!(params.get("port"), Some("6500"), "the URL's");
        assert_eq!(params.get("user"), Some("env-user"), "the environment's");
        assert_eq!(
            params.get("sslmode"),
            Some("verify-full"),
            "the service's over PGSSLMODE"
        );
        assert_eq!(params.get("service"), None);
        // Without the service, the environment's.
        let params = resolve(given(&[]), &sources).expect("resolved");
        assert_eq!(params.ssl_mode().expect("mode"), SslMode::Disable);
        assert_eq!(params.get("host"), Some("from-env"));
    }

    #[test]
    fn a_service_nowhere_is_refused_naming_the_files_looked_in() {
        let env = env(&[
            ("PGSERVICEFILE", "/etc/acc/services"),
            ("PGSYSCONFDIR", "/opt/pg"),
        ]);
        let read = |_: &std::path::Path| Some(SERVICES.to_string());
        let sources = Sources {
            env: &env,
            read: &read,
        };
        let refused = resolve(given(&[("service", "missing")]), &sources).expect_err("refused");
        assert!(
            refused.message.contains("`missing`")
                && refused.message.contains("/etc/acc/services")
                && refused.message.contains("/opt/pg/pg_service.conf"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn acc_defaults_to_verify_full_for_a_host_across_a_network() {
        let none = |_: &str| None;
        let read = |_: &std::path::Path| None;
        let sources = Sources {
            env: &none,
            read: &read,
        };
        for (host, expected) in [
            ("db.example.net", SslMode::VerifyFull),
            ("10.1.2.3", SslMode::VerifyFull),
            ("[2001:db8::1]", SslMode::VerifyFull),
            ("localhost", SslMode::Prefer),
            ("127.0.0.1", SslMode::Prefer),
            ("[::1]", SslMode::Prefer),
            ("/run/postgresql", SslMode::Prefer),
        ] {
            let params = resolve(given(&[("host", host)]), &sources).expect("resolved");
            assert_eq!(params.ssl_mode().expect("mode"), expected, "{host}");
        }
        let params = resolve(given(&[("sslmode", "sometimes")]), &sources).expect("resolved");
        let refused = params.ssl_mode().expect_err("refused");
        assert!(
            refused.message.contains("`sometimes`"),
            "{}",
            refused.message
        );
        for mode in [
            "disable",
            "allow",
            "prefer",
            "require",
            "verify-ca",
            "verify-full",
        ] {
            assert_eq!(SslMode::parse(mode).map(SslMode::as_str), Some(mode));
        }
    }

    #[test]
    fn a_query_is_decoded_and_a_pair_without_a_value_refused() {
        let params =
            query_params("sslmode=verify-full&sslrootcert=%2Fhome%2Fu%2Fca%20one.crt").expect("ok");
        assert_eq!(params["sslrootcert"], "/home/u/ca one.crt");
        assert!(query_params("sslmode").is_err());
        let roots = Params {
            values: given(&[("sslrootcert", "system")]),
        };
        assert_eq!(roots.root_cert(), Some(RootCert::System));
    }

    #[test]
    fn a_service_section_ends_at_the_next_one_and_comments_are_skipped() {
        let team = service_section(SERVICES, "team").expect("team");
        assert_eq!(team.get("port").map(String::as_str), Some("6432"));
        assert!(!team.contains_key("host ") && team.contains_key("host"));
        let other = service_section(SERVICES, "other").expect("other");
        assert_eq!(other.len(), 1);
        assert!(service_section(SERVICES, "nobody").is_none());
    }
}
