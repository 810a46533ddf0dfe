//! TLS for a room on PostgreSQL, with libpq's meanings (`sslmode`, `sslrootcert`, `sslcert`,
//! `sslkey`) on rustls, which the driver's own TLS support does not give: it knows only
//! `disable`, `prefer` and `require`, and checks nothing.
//!
//! Owns: turning a room's resolved parameters ([`Params`]) into the driver's TLS mode and a
//! rustls configuration ([`Plan`]); the certificate checks of each mode; what a TLS failure
//! says ([`failure`]). Must not: resolve parameters (that is `conninfo`) or connect (that is
//! `db::PgSession`).
//!
//! The modes, as libpq has them:
//! - `disable`: plain text; `allow`: plain text, TLS when the server refuses that; `prefer`:
//!   TLS when the server offers it; `require`: TLS, the certificate unchecked unless a root
//!   certificate is at hand (named, or libpq's `~/.postgresql/root.crt`), which makes it
//!   `verify-ca`;
//! - `verify-ca`: the certificate signed by a trusted root; `verify-full`: that, and naming
//!   the host.
//!
//! The roots: the file `sslrootcert` names, the system's with `sslrootcert=system` (which,
//! as in libpq 16, takes nothing weaker than `verify-full`), else `~/.postgresql/root.crt`
//! when it exists, else, for the `verify-` modes, the system's (ACC's default for a host
//! across a network is `verify-full` against the system's roots: what a managed server's
//! certificate is signed by). A Unix socket never carries TLS (the server offers none there),
//! as with libpq.
//!
//! SCRAM channel binding (`tls-server-end-point`) is used whenever the connection is TLS and
//! the server offers `SCRAM-SHA-256-PLUS`: the driver asks for it by default, and the rustls
//! integration gives the certificate's hash.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use crate::conninfo::{Params, RootCert, Sources, SslMode};
use crate::{StoreError, StoreErrorKind, StoreResult};

/// How a room's connections are made: the TLS mode, and the configuration TLS uses.
#[derive(Clone)]
pub(crate) struct Plan {
    /// The mode, as written or defaulted.
    pub(crate) mode: SslMode,
    /// rustls's configuration (unused when `checked` is [`Checked::Nothing`]: the driver
    /// makes a connector for every connection, TLS or not).
    config: Arc<rustls::ClientConfig>,
    /// What the server's certificate is checked against, for messages.
    pub(crate) checked: Checked,
}

impl Checked {
    /// In words, for `acc room show`, `acc status` and `acc doctor`.
    pub(crate) fn words(&self) -> String {
        match self {
            Self::Nothing => "no TLS".to_string(),
            Self::Unchecked => "TLS, the server's certificate not checked".to_string(),
            Self::Chain(roots) => format!("TLS, the server's certificate checked against {roots}"),
            Self::ChainAndName(roots) => format!(
                "TLS, the server's certificate checked against {roots} and for the host's name"
            ),
        }
    }
}

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Checked {
    /// No TLS at all.
    Nothing,
    /// TLS, the certificate not checked.
    Unchecked,
    /// Signed by the roots named (a file, or "the system's").
    Chain(String),
    /// Signed by the roots named, and naming the host.
    ChainAndName(String),
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("mode", &self.mode)
            .field("checked", &self.checked)
            .finish_non_exhaustive()
    }
}

fn refused(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Unavailable, message)
}

/// rustls on *ring*. Deprecated in rustls 0.23.48 for lacking post-quantum key exchange; kept
/// because the alternative (aws-lc-rs) builds a large C library on every CI machine, and a
/// room's connection is authenticated by SCRAM over it (see docs/decisions.md, issue 56).
#[allow(deprecated)]
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl Plan {
    /// The plan for `params`; `socket_only` when every host is a Unix socket (no TLS there).
    pub(crate) fn new(
        params: &Params,
        socket_only: bool,
        sources: &Sources<'_>,
    ) -> StoreResult<Self> {
        let mode = params.ssl_mode()?;
        let root = params.root_cert();
        if root == Some(RootCert::System)
            && params.get("sslmode").is_some()
            && mode != SslMode::VerifyFull
        {
            return Err(refused(format!(
                "sslrootcert=system takes sslmode=verify-full (or no sslmode), not {}: the system's roots vouch for names, so a weaker check would trust any certificate they signed",
                mode.as_str()
            )));
        }
        let provider = provider();
        if mode == SslMode::Disable || socket_only {
            return Ok(Self {
                mode,
                config: Arc::new(unchecked_config(provider)?),
                checked: Checked::Nothing,
            });
        }
        let home_root = (sources.env)("HOME")
            .map(|home| PathBuf::from(home).join(".postgresql/root.crt"))
            .filter(|file| (sources.read)(file).is_some());
        // The roots to check against, when any: named, else libpq's default file, else (for
        // the verify modes) the system's.
        let roots = match root {
            Some(RootCert::File(file)) => Some(Roots::File(file)),
            Some(RootCert::System) => Some(Roots::System),
            None => match home_root {
                Some(file) => Some(Roots::File(file)),
                None if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) => {
                    Some(Roots::System)
                }
                None => None,
            },
        };
        let (verifier, checked): (Arc<dyn ServerCertVerifier>, Checked) = match roots {
            None => (Arc::new(Unchecked(provider.clone())), Checked::Unchecked),
            Some(roots) => {
                let label = roots.label();
                let store = roots.load(sources)?;
                let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(store),
                    provider.clone(),
                )
                .build()
                .map_err(|e| refused(format!("the roots in {label} cannot check a server: {e}")))?;
                if mode == SslMode::VerifyFull {
                    (webpki, Checked::ChainAndName(label))
                } else {
                    (Arc::new(ChainOnly(webpki)), Checked::Chain(label))
                }
            }
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| refused(format!("no TLS versions to offer: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match client_identity(params, sources)? {
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| refused(format!("the client certificate cannot be used: {e}")))?,
            None => builder.with_no_client_auth(),
        };
        Ok(Self {
            mode,
            config: Arc::new(config),
            checked,
        })
    }

    /// The connector for one connection, and the flag it sets when that connection's TLS
    /// handshake begins (the server took TLS).
    pub(crate) fn connector(&self) -> (Connector, Arc<AtomicBool>) {
        let used = Arc::new(AtomicBool::new(false));
        let inner = tokio_postgres_rustls::MakeRustlsConnect::new(rustls::ClientConfig::clone(
            &self.config,
        ));
        (
            Connector {
                inner,
                used: used.clone(),
            },
            used,
        )
    }

    /// The driver's mode for a first attempt (`allow` tries plain text first).
    pub(crate) fn driver_mode(&self) -> tokio_postgres::config::SslMode {
        use tokio_postgres::config::SslMode as Driver;
        match (self.mode, &self.checked) {
            (_, Checked::Nothing) | (SslMode::Disable | SslMode::Allow, _) => Driver::Disable,
            (SslMode::Prefer, _) => Driver::Prefer,
            _ => Driver::Require,
        }
    }

    /// Whether a first attempt that the server refused is tried again with TLS (`allow`).
    pub(crate) fn retries_with_tls(&self) -> bool {
        self.mode == SslMode::Allow && self.checked != Checked::Nothing
    }
}

/// Where a root certificate store comes from.
enum Roots {
    File(PathBuf),
    System,
}

impl Roots {
    fn label(&self) -> String {
        match self {
            Self::File(file) => format!("sslrootcert `{}`", file.display()),
            Self::System => "the system's trusted roots".to_string(),
        }
    }

    fn load(&self, sources: &Sources<'_>) -> StoreResult<rustls::RootCertStore> {
        let mut store = rustls::RootCertStore::empty();
        match self {
            Self::File(file) => {
                let text = (sources.read)(file).ok_or_else(|| {
                    refused(format!("sslrootcert `{}` cannot be read", file.display()))
                })?;
                for cert in CertificateDer::pem_slice_iter(text.as_bytes()) {
                    let cert = cert.map_err(|e| {
                        refused(format!(
                            "sslrootcert `{}` is not a PEM certificate file: {e}",
                            file.display()
                        ))
                    })?;
                    store.add(cert).map_err(|e| {
                        refused(format!(
                            "sslrootcert `{}` holds a certificate that cannot be a root: {e}",
                            file.display()
                        ))
                    })?;
                }
            }
            Self::System => {
                let found = rustls_native_certs::load_native_certs();
                let (added, _) = store.add_parsable_certificates(found.certs);
                if added == 0 {
                    let why = found
                        .errors
                        .first()
                        .map_or(String::new(), |e| format!(" ({e})"));
                    return Err(refused(format!(
                        "the system has no trusted roots to check the room's server against{why}: name the server's CA with sslrootcert=FILE"
                    )));
                }
            }
        }
        if store.is_empty() {
            return Err(refused(format!("{} holds no certificate", self.label())));
        }
        Ok(store)
    }
}

/// The client certificate and key: named (`sslcert`, `sslkey`), else libpq's defaults
/// (`~/.postgresql/postgresql.crt` and `.key`) when the certificate exists. The key file must
/// be private (mode 0600 or less; 0640 when root owns it), as libpq requires.
fn client_identity(
    params: &Params,
    sources: &Sources<'_>,
) -> StoreResult<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>> {
    let home = (sources.env)("HOME").map(|home| PathBuf::from(home).join(".postgresql"));
    let named = params.get("sslcert").map(PathBuf::from);
    let cert_file = match (&named, &home) {
        (Some(file), _) => file.clone(),
        (None, Some(dir)) => dir.join("postgresql.crt"),
        (None, None) => return Ok(None),
    };
    let Some(cert_text) = (sources.read)(&cert_file) else {
        if named.is_some() {
            return Err(refused(format!(
                "sslcert `{}` cannot be read",
                cert_file.display()
            )));
        }
        return Ok(None);
    };
    let key_file = params.get("sslkey").map(PathBuf::from).unwrap_or_else(|| {
        home.map_or_else(
            || cert_file.with_extension("key"),
            |dir| dir.join("postgresql.key"),
        )
    });
    let chain = CertificateDer::pem_slice_iter(cert_text.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            refused(format!(
                "sslcert `{}` is not a PEM certificate file: {e}",
                cert_file.display()
            ))
        })?;
    if chain.is_empty() {
        return Err(refused(format!(
            "sslcert `{}` holds no certificate",
            cert_file.display()
        )));
    }
    private_enough(&key_file)?;
    let key_text = (sources.read)(&key_file)
        .ok_or_else(|| refused(format!("sslkey `{}` cannot be read", key_file.display())))?;
    let key = PrivateKeyDer::from_pem_slice(key_text.as_bytes()).map_err(|e| {
        refused(format!(
            "sslkey `{}` is not a PEM private key: {e}",
            key_file.display()
        ))
    })?;
    Ok(Some((chain, key)))
}

/// libpq's rule for a private key file: no access for others, and none for the group unless
/// root owns it (then group read at most).
fn private_enough(file: &Path) -> StoreResult<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(file) else {
        return Ok(());
    };
    let mode = meta.mode() & 0o777;
    let allowed = if meta.uid() == 0 { 0o640 } else { 0o600 };
    if mode & !allowed != 0 {
        return Err(refused(format!(
            "sslkey `{}` has mode {mode:04o}, readable by others: make it 0600 (`chmod 600 {}`)",
            file.display(),
            file.display()
        )));
    }
    Ok(())
}

/// `require` without roots: TLS, the certificate unchecked (the handshake's signatures still
/// are, so the connection is with whoever holds the certificate's key).
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain checked against the roots, the host's name not. rustls checks the
/// chain before the name, so a name refusal means the chain passed.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The driver's TLS connector for a room: rustls, and a flag set when a connection's handshake
/// begins (the driver calls the connector only after the server took TLS), so a `prefer` or
/// `allow` connection knows whether it is encrypted.
#[derive(Clone)]
pub(crate) struct Connector {
    inner: tokio_postgres_rustls::MakeRustlsConnect,
    used: Arc<AtomicBool>,
}

type Socket = tokio_postgres::Socket;
type Rustls = tokio_postgres_rustls::MakeRustlsConnect;
type RustlsConnect = <Rustls as tokio_postgres::tls::MakeTlsConnect<Socket>>::TlsConnect;

/// One connection's TLS, flagged when its handshake begins.
pub(crate) struct Connect {
    inner: RustlsConnect,
    used: Arc<AtomicBool>,
}

impl tokio_postgres::tls::MakeTlsConnect<Socket> for Connector {
    type Stream = <Rustls as tokio_postgres::tls::MakeTlsConnect<Socket>>::Stream;
    type TlsConnect = Connect;
    type Error = <Rustls as tokio_postgres::tls::MakeTlsConnect<Socket>>::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Self::TlsConnect, Self::Error> {
        Ok(Connect {
            inner: <Rustls as tokio_postgres::tls::MakeTlsConnect<Socket>>::make_tls_connect(
                &mut self.inner,
                domain,
            )?,
            used: self.used.clone(),
        })
    }
}

impl tokio_postgres::tls::TlsConnect<Socket> for Connect {
    type Stream = <RustlsConnect as tokio_postgres::tls::TlsConnect<Socket>>::Stream;
    type Error = <RustlsConnect as tokio_postgres::tls::TlsConnect<Socket>>::Error;
    type Future = <RustlsConnect as tokio_postgres::tls::TlsConnect<Socket>>::Future;

    fn connect(self, stream: Socket) -> Self::Future {
        self.used.store(true, Ordering::SeqCst);
        self.inner.connect(stream)
    }
}

/// What a failed connection's TLS says, in words naming the host and the cause; `None` when
/// the failure was not TLS's.
pub(crate) fn failure(error: &tokio_postgres::Error, host: &str, plan: &Plan) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            return Some(rustls_failure(tls, host, plan));
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && let Some(inner) = io.get_ref()
            && let Some(tls) = inner.downcast_ref::<rustls::Error>()
        {
            return Some(rustls_failure(tls, host, plan));
        }
        if cause.to_string() == "server does not support TLS" {
            return Some(format!(
                "the server at {host} offers no TLS, and sslmode={} requires it; nothing was sent in plain text (to allow plain text, which anyone on the path can read, write sslmode=disable)",
                plan.mode.as_str()
            ));
        }
        source = cause.source();
    }
    None
}

/// A configuration that checks no certificate (for a plan whose connections carry no TLS,
/// where the driver still wants a connector).
fn unchecked_config(provider: Arc<CryptoProvider>) -> StoreResult<rustls::ClientConfig> {
    Ok(
        rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| refused(format!("no TLS versions to offer: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
            .with_no_client_auth(),
    )
}

fn rustls_failure(error: &rustls::Error, host: &str, plan: &Plan) -> String {
    let roots = match &plan.checked {
        Checked::Chain(label) | Checked::ChainAndName(label) => label.as_str(),
        Checked::Nothing | Checked::Unchecked => "no roots",
    };
    let cause = match error {
        rustls::Error::InvalidCertificate(cert) => match cert {
            CertificateError::UnknownIssuer => {
                format!("its certificate is not signed by a root in {roots}")
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!(
                    "its certificate does not name the host `{host}` (sslmode=verify-full checks the name; connect by a name the certificate holds)"
                )
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "its certificate has expired".to_string()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "its certificate is not valid yet (is this machine's clock right?)".to_string()
            }
            other => format!("its certificate was refused: {other:?}"),
        },
        rustls::Error::AlertReceived(alert) => {
            format!("it ended the TLS handshake ({alert:?}; a client certificate it wants?)")
        }
        other => format!("TLS failed: {other}"),
    };
    format!(
        "the server at {host} was refused ({cause}); sslmode={}, nothing was sent",
        plan.mode.as_str()
    )
}
