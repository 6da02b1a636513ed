//! Nodes that prove who they are ([`TlsConfig`]): TLS with mutual authentication, every node
//! holding a certificate signed by the cluster's own certificate authority, and an access list
//! that keeps peers to loka's key space (and, if given, to the certificate names allowed).
//!
//! A node without a certificate the authority signed cannot open a link at all; one whose
//! certificate's name is not on the list links but may neither publish, subscribe, declare
//! tokens nor query anything: it cannot send to, look up or watch an actor (docs/remote.md,
//! "Security").

use crate::RemoteError;
use base64::Engine;
use std::path::Path;

/// TLS with mutual authentication between nodes, and who may use this node.
///
/// Every node of a cluster holds a certificate signed by the same authority (`ca_pem`), for
/// the names other nodes reach it by: a node connecting to `tls/10.0.0.5:7447` checks that the
/// certificate names `10.0.0.5` (an IP subject alternative name), `tls/db-1:7447` that it
/// names `db-1`.
///
/// ```
/// # let (ca, cert, key) = ("-----BEGIN CERTIFICATE-----", "-----BEGIN CERTIFICATE-----",
/// #     "-----BEGIN PRIVATE KEY-----");
/// let tls = loka_remote::TlsConfig::new(ca, cert, key).allow_name("node-a");
/// let config = loka_remote::NodeConfig::default()
///     .listen("tls/127.0.0.1:7447")
///     .tls(tls);
/// assert!(config.validate().is_ok());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// The certificate authority (PEM) that signs every node's certificate: the only one
    /// trusted for peers that connect here.
    pub ca_pem: String,
    /// This node's certificate (PEM, its chain up to the authority).
    pub cert_pem: String,
    /// This node's private key (PEM: PKCS#8, PKCS#1 RSA or SEC1 EC).
    pub key_pem: String,
    /// The certificate common names allowed to use this node's key space; empty: any node
    /// whose certificate the authority signed.
    pub allowed_names: Vec<String>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the private key.
        f.debug_struct("TlsConfig")
            .field("allowed_names", &self.allowed_names)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// From PEM text: the authority's certificate, this node's certificate and its key.
    pub fn new(
        ca_pem: impl Into<String>,
        cert_pem: impl Into<String>,
        key_pem: impl Into<String>,
    ) -> TlsConfig {
        TlsConfig {
            ca_pem: ca_pem.into(),
            cert_pem: cert_pem.into(),
            key_pem: key_pem.into(),
            allowed_names: Vec::new(),
        }
    }

    /// From PEM files; an unreadable one is [`RemoteError::BadConfig`] naming its path.
    pub fn from_files(
        ca: impl AsRef<Path>,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsConfig, RemoteError> {
        let read = |setting: &'static str, path: &Path| {
            std::fs::read_to_string(path).map_err(|error| RemoteError::BadConfig {
                setting,
                why: format!("{}: {error}", path.display()),
            })
        };
        Ok(TlsConfig::new(
            read("tls.ca_pem", ca.as_ref())?,
            read("tls.cert_pem", cert.as_ref())?,
            read("tls.key_pem", key.as_ref())?,
        ))
    }

    /// Allows nodes whose certificate's common name is `name` (once any name is allowed, only
    /// the names allowed are).
    pub fn allow_name(mut self, name: impl Into<String>) -> TlsConfig {
        self.allowed_names.push(name.into());
        self
    }

    /// Checks the PEM texts look like PEM and the names are not empty.
    pub(crate) fn validate(&self) -> Result<(), RemoteError> {
        for (setting, pem, kind) in [
            ("tls.ca_pem", &self.ca_pem, "CERTIFICATE"),
            ("tls.cert_pem", &self.cert_pem, "CERTIFICATE"),
            ("tls.key_pem", &self.key_pem, "PRIVATE KEY"),
        ] {
            if !pem.contains("-----BEGIN ") || !pem.contains(kind) {
                return Err(RemoteError::BadConfig {
                    setting,
                    why: format!("not PEM text with a {kind} block"),
                });
            }
        }
        if self.allowed_names.iter().any(|name| name.trim().is_empty()) {
            return Err(RemoteError::BadConfig {
                setting: "tls.allowed_names",
                why: "an allowed name is empty".to_owned(),
            });
        }
        Ok(())
    }

    /// The Zenoh settings: the certificates for both directions, mutual authentication, and
    /// the access list.
    pub(crate) fn zenoh_settings(&self) -> Vec<(&'static str, String)> {
        let b64 = |pem: &str| {
            let encoded = base64::engine::general_purpose::STANDARD.encode(pem);
            format!("{encoded:?}")
        };
        let names = if self.allowed_names.is_empty() {
            // Any node that got through mutual TLS: the authority vouched for it.
            r#"link_protocols: ["tls"]"#.to_owned()
        } else {
            format!("cert_common_names: {:?}", self.allowed_names)
        };
        let access = format!(
            r#"{{
                enabled: true,
                default_permission: "deny",
                rules: [{{
                    id: "loka",
                    messages: ["put", "delete", "declare_subscriber", "query", "reply",
                        "declare_queryable", "liveliness_token",
                        "declare_liveliness_subscriber", "liveliness_query"],
                    flows: ["ingress", "egress"],
                    permission: "allow",
                    key_exprs: ["loka/**"],
                }}],
                subjects: [{{ id: "nodes", {names} }}],
                policies: [{{ rules: ["loka"], subjects: ["nodes"] }}],
            }}"#
        );
        vec![
            (
                "transport/link/tls/root_ca_certificate_base64",
                b64(&self.ca_pem),
            ),
            (
                "transport/link/tls/listen_certificate_base64",
                b64(&self.cert_pem),
            ),
            (
                "transport/link/tls/listen_private_key_base64",
                b64(&self.key_pem),
            ),
            (
                "transport/link/tls/connect_certificate_base64",
                b64(&self.cert_pem),
            ),
            (
                "transport/link/tls/connect_private_key_base64",
                b64(&self.key_pem),
            ),
            ("transport/link/tls/enable_mtls", "true".to_owned()),
            (
                "transport/link/tls/verify_name_on_connect",
                "true".to_owned(),
            ),
            ("access_control", access),
        ]
    }
}
