//! Certificates the tests make for themselves (never fetched): a certificate authority, a
//! server's certificate for names and addresses of the test's choosing (valid, or expired), and
//! a client's, each written as PEM files into a directory of the test's.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};

/// A certificate authority of the test's own, its certificate written to [`Ca::cert`].
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    /// The CA's certificate (PEM): what a client names as `sslrootcert`.
    pub cert: PathBuf,
}

impl std::fmt::Debug for Ca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ca").field("cert", &self.cert).finish()
    }
}

/// A certificate and its private key, as files.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM, mode 0600).
    pub key: PathBuf,
}

/// How long ago or ahead a certificate is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// From a day ago until a year ahead.
    Current,
    /// It ended in 2020.
    Expired,
}

fn write_private(path: &Path, text: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .expect("a private key file");
    file.write_all(text.as_bytes()).expect("write the key");
}

impl Ca {
    /// A new CA called `name`, its certificate written to `<dir>/<name>.crt`.
    pub fn new(dir: &Path, name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("ACC test CA {name}"));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a CA key");
        let issuer = CertifiedIssuer::self_signed(params, key).expect("the CA's certificate");
        let cert = dir.join(format!("{name}.crt"));
        std::fs::write(&cert, issuer.pem()).expect("write the CA's certificate");
        Self { issuer, cert }
    }

    /// A certificate signed by this CA for `names` (DNS names, or IP addresses), with
    /// `common_name`, written to `<dir>/<file>.crt` and `.key`.
    pub fn issue(
        &self,
        dir: &Path,
        file: &str,
        common_name: &str,
        names: &[&str],
        validity: Validity,
    ) -> Issued {
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_string()).collect::<Vec<_>>())
                .expect("certificate parameters");
        params
            .distinguished_name
            .push(DnType::CommonName, common_name.to_string());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let year = 1970 + i32::try_from(now / 31_557_600).unwrap_or(2026);
        (params.not_before, params.not_after) = match validity {
            Validity::Current => (
                rcgen::date_time_ymd(year - 1, 1, 1),
                rcgen::date_time_ymd(year + 2, 1, 1),
            ),
            Validity::Expired => (
                rcgen::date_time_ymd(2019, 1, 1),
                rcgen::date_time_ymd(2020, 1, 1),
            ),
        };
        let key = KeyPair::generate().expect("a key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("a signed certificate");
        let issued = Issued {
            cert: dir.join(format!("{file}.crt")),
            key: dir.join(format!("{file}.key")),
        };
        std::fs::write(&issued.cert, cert.pem()).expect("write the certificate");
        write_private(&issued.key, &key.serialize_pem());
        issued
    }
}
