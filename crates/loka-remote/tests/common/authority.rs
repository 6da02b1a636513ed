//! A certificate authority made at run time with rcgen, and node certificates it signs: shared by
//! the TLS test and the `remote_tls` example (which includes this file by its path).

use loka_remote::TlsConfig;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// A certificate authority: its certificate (PEM) and what signs with its key.
pub struct Authority {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Authority {
    /// A self-signed authority whose common name is `name`.
    pub fn new(name: &str) -> Result<Authority, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::CrlSign,
        ];
        params.distinguished_name.push(DnType::CommonName, name);
        let pem = params.self_signed(&key)?.pem();
        Ok(Authority {
            pem,
            issuer: Issuer::new(params, key),
        })
    }

    /// A node's TLS settings: a certificate with common name `name`, for localhost and
    /// 127.0.0.1, signed by this authority.
    pub fn node(&self, name: &str) -> Result<TlsConfig, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(TlsConfig::new(&self.pem, cert.pem(), key.serialize_pem()))
    }
}
