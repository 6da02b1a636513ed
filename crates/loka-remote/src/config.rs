//! A node's settings ([`NodeConfig`]), checked before anything opens: plain TCP only on
//! loopback unless the user says otherwise, and the Zenoh configuration they become.

use crate::{RemoteError, TlsConfig};
use std::net::IpAddr;
use std::time::Duration;

/// The most messages waiting toward one node, by default.
pub const DEFAULT_QUEUE_CAPACITY: usize = 65_536;
/// The most bytes of messages waiting toward one node, by default (64 MiB).
pub const DEFAULT_QUEUE_BYTES: usize = 64 << 20;
/// Frames Zenoh keeps ready to write per link, by default: see
/// [`NodeConfig::link_frames`]. Zenoh's own default is 2; with frames of up to 60 KiB two keep
/// the sending thread waiting on the socket (4 KiB messages one way: 0.42–0.46 of raw Zenoh's
/// rate at 2, 0.58–0.69 at 8, 0.70–0.72 at 16; docs/results/remote.md).
pub const DEFAULT_LINK_FRAMES: usize = 8;
/// The most frames [`NodeConfig::link_frames`] takes (Zenoh's limit per priority queue).
pub const MAX_LINK_FRAMES: usize = 16;
/// How long a silent node is still believed alive, by default: its loss is noticed within it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(2);
/// The shortest lease accepted (Zenoh sends keep-alives at a quarter of it).
pub const MIN_LEASE: Duration = Duration::from_millis(200);

/// How a node opens: where it listens, whom it connects to, and its limits.
///
/// ```
/// let config = loka_remote::NodeConfig::default()
///     .listen("tcp/127.0.0.1:7447")
///     .connect("tcp/127.0.0.1:7448");
/// assert_eq!(config.listen.len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Zenoh endpoints to listen on (`tcp/HOST:PORT`; port 0 picks a free one). Default:
    /// `tcp/127.0.0.1:0`.
    pub listen: Vec<String>,
    /// Zenoh endpoints of nodes to connect to. Nodes also find each other through the nodes
    /// they connect to (gossip); multicast discovery is off.
    pub connect: Vec<String>,
    /// The most messages (data and replies) waiting toward one node: a send beyond it fails
    /// at once with [`loka::SendErrorReason::Full`], counted in [`crate::NodeStats::refused`].
    pub queue_capacity: usize,
    /// The most bytes of encoded messages waiting toward one node: once they are reached, a
    /// send fails like one beyond [`queue_capacity`](Self::queue_capacity) (the last message
    /// in may pass the bound by its own size, so one larger than the bound still goes).
    pub queue_bytes: usize,
    /// Frames (of up to 60 KiB each) Zenoh keeps ready to write toward each connected node, 1
    /// to [`MAX_LINK_FRAMES`]. More lets a stream of large messages run faster; a small message
    /// sent while they stream waits behind up to this many frames (8 × 60 KiB ≈ 0.5 ms on this
    /// project's 2-core machine). Default [`DEFAULT_LINK_FRAMES`].
    pub link_frames: usize,
    /// How long a node that stopped answering is still believed alive. A node killed
    /// outright is noticed when its connection breaks, at once on a local machine; a
    /// partitioned one within the lease.
    pub lease: Duration,
    /// How long [`crate::Node::lookup`] waits for a name to appear (other nodes' names arrive
    /// a moment after they connect).
    pub lookup_timeout: Duration,
    /// Allow plain (unencrypted, unauthenticated) TCP on addresses other than loopback. Off:
    /// such an endpoint is refused with [`RemoteError::PlaintextOffLoopback`].
    pub allow_plaintext: bool,
    /// TLS with mutual authentication and an access list ([`TlsConfig`]): needed by `tls/`
    /// endpoints, and then every endpoint must be `tls/`.
    pub tls: Option<TlsConfig>,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            listen: vec!["tcp/127.0.0.1:0".to_owned()],
            connect: Vec::new(),
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            queue_bytes: DEFAULT_QUEUE_BYTES,
            link_frames: DEFAULT_LINK_FRAMES,
            lease: DEFAULT_LEASE,
            lookup_timeout: Duration::from_secs(2),
            allow_plaintext: false,
            tls: None,
        }
    }
}

impl NodeConfig {
    /// Listens on `endpoint` instead of the default (the first call replaces it, later ones
    /// add).
    pub fn listen(mut self, endpoint: impl Into<String>) -> Self {
        if self.listen == NodeConfig::default().listen {
            self.listen.clear();
        }
        self.listen.push(endpoint.into());
        self
    }

    /// Connects to the node at `endpoint` too.
    pub fn connect(mut self, endpoint: impl Into<String>) -> Self {
        self.connect.push(endpoint.into());
        self
    }

    /// Sets [`queue_capacity`](Self::queue_capacity).
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.queue_capacity = capacity;
        self
    }

    /// Sets [`queue_bytes`](Self::queue_bytes).
    pub fn queue_bytes(mut self, bytes: usize) -> Self {
        self.queue_bytes = bytes;
        self
    }

    /// Sets [`link_frames`](Self::link_frames).
    pub fn link_frames(mut self, frames: usize) -> Self {
        self.link_frames = frames;
        self
    }

    /// Sets [`lease`](Self::lease).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Sets [`lookup_timeout`](Self::lookup_timeout).
    pub fn lookup_timeout(mut self, timeout: Duration) -> Self {
        self.lookup_timeout = timeout;
        self
    }

    /// Sets [`allow_plaintext`](Self::allow_plaintext).
    pub fn allow_plaintext(mut self, allow: bool) -> Self {
        self.allow_plaintext = allow;
        self
    }

    /// Sets [`tls`](Self::tls).
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Checks every setting; the first bad one is the error.
    pub fn validate(&self) -> Result<(), RemoteError> {
        if self.queue_capacity == 0 {
            return Err(RemoteError::BadConfig {
                setting: "queue_capacity",
                why: "must be at least 1".to_owned(),
            });
        }
        if self.queue_bytes == 0 {
            return Err(RemoteError::BadConfig {
                setting: "queue_bytes",
                why: "must be at least 1".to_owned(),
            });
        }
        if !(1..=MAX_LINK_FRAMES).contains(&self.link_frames) {
            return Err(RemoteError::BadConfig {
                setting: "link_frames",
                why: format!(
                    "{} is outside 1..={MAX_LINK_FRAMES} (Zenoh's limit)",
                    self.link_frames
                ),
            });
        }
        if self.lease < MIN_LEASE {
            return Err(RemoteError::BadConfig {
                setting: "lease",
                why: format!("{:?} is under the minimum {MIN_LEASE:?}", self.lease),
            });
        }
        if let Some(tls) = &self.tls {
            tls.validate()?;
        }
        for endpoint in self.listen.iter().chain(&self.connect) {
            check_endpoint(endpoint, self.allow_plaintext, self.tls.is_some())?;
        }
        Ok(())
    }

    /// The Zenoh configuration a node opens with (checked first): peer mode, no multicast
    /// discovery, this node's endpoints and lease, and its certificates and access list. For a
    /// tool that speaks raw Zenoh beside the nodes, under the same credentials.
    pub fn zenoh_config(&self) -> Result<zenoh::Config, RemoteError> {
        self.validate()?;
        self.zenoh()
    }

    /// [`zenoh_config`](Self::zenoh_config), unchecked.
    pub(crate) fn zenoh(&self) -> Result<zenoh::Config, RemoteError> {
        let mut config = zenoh::Config::default();
        let json = |v: &[String]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|e| format!("{e:?}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        let mut settings = vec![
            ("mode", "\"peer\"".to_owned()),
            ("listen/endpoints", json(&self.listen)),
            ("connect/endpoints", json(&self.connect)),
            ("scouting/multicast/enabled", "false".to_owned()),
            ("scouting/gossip/enabled", "true".to_owned()),
            (
                "transport/link/tx/lease",
                self.lease.as_millis().to_string(),
            ),
            // Frames go at Zenoh's data priority (the publisher's default).
            (
                "transport/link/tx/queue/size/data",
                self.link_frames.to_string(),
            ),
        ];
        if let Some(tls) = &self.tls {
            settings.extend(tls.zenoh_settings());
        }
        for (key, value) in settings {
            config
                .insert_json5(key, &value)
                .map_err(|error| RemoteError::BadConfig {
                    setting: "zenoh",
                    why: format!("{key} = {value}: {error}"),
                })?;
        }
        Ok(config)
    }
}

/// An endpoint is `PROTOCOL/HOST:PORT`; plain `tcp` must name a loopback address unless
/// allowed, and is refused beside TLS; `tls` needs the certificates.
fn check_endpoint(endpoint: &str, allow_plaintext: bool, tls: bool) -> Result<(), RemoteError> {
    let bad = |why: &str| RemoteError::BadEndpoint {
        endpoint: endpoint.to_owned(),
        why: why.to_owned(),
    };
    let (protocol, address) = endpoint
        .split_once('/')
        .ok_or_else(|| bad("expected PROTOCOL/HOST:PORT, as tcp/127.0.0.1:7447"))?;
    let address = address.split('#').next().unwrap_or(address);
    let (host, port) = address
        .rsplit_once(':')
        .ok_or_else(|| bad("no :PORT after the host"))?;
    port.parse::<u16>()
        .map_err(|_| bad("the port is not a number from 0 to 65535"))?;
    match protocol {
        "tcp" if tls => Err(bad(
            "plain tcp beside TLS would let nodes without a certificate in; use tls/HOST:PORT",
        )),
        "tls" if !tls => Err(bad("a tls endpoint needs certificates (NodeConfig::tls)")),
        "tls" => Ok(()),
        "tcp" => {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let loopback = host == "localhost"
                || host
                    .parse::<IpAddr>()
                    .map(|ip| ip.is_loopback())
                    .unwrap_or(false);
            if loopback || allow_plaintext {
                Ok(())
            } else {
                Err(RemoteError::PlaintextOffLoopback {
                    endpoint: endpoint.to_owned(),
                })
            }
        }
        _ => Err(bad(
            "the protocol is neither tcp nor tls (the transports built in)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_tcp_is_for_loopback_unless_allowed() {
        for ok in [
            "tcp/127.0.0.1:0",
            "tcp/127.0.0.2:7447",
            "tcp/[::1]:7447",
            "tcp/localhost:80",
        ] {
            check_endpoint(ok, false, false).unwrap();
        }
        let refused = check_endpoint("tcp/10.0.0.1:7447", false, false).unwrap_err();
        assert!(
            matches!(&refused, RemoteError::PlaintextOffLoopback { endpoint } if endpoint == "tcp/10.0.0.1:7447"),
            "{refused}"
        );
        check_endpoint("tcp/10.0.0.1:7447", true, false).unwrap();
        check_endpoint("tcp/0.0.0.0:7447", false, false).unwrap_err();
    }

    #[test]
    fn malformed_settings_name_themselves() {
        for (endpoint, says) in [
            ("127.0.0.1:7447", "PROTOCOL/HOST:PORT"),
            ("tcp/127.0.0.1", ":PORT"),
            ("tcp/127.0.0.1:99999", "port"),
            ("udp/127.0.0.1:7447", "protocol"),
            ("tls/10.0.0.1:7447", "NodeConfig::tls"),
        ] {
            let error = check_endpoint(endpoint, false, false)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(endpoint) && error.contains(says),
                "{endpoint}: {error}"
            );
        }
        let config = NodeConfig::default().queue_capacity(0);
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("queue_capacity"));
        let config = NodeConfig::default().queue_bytes(0);
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("queue_bytes"));
        let config = NodeConfig::default().lease(Duration::from_millis(10));
        assert!(config.validate().unwrap_err().to_string().contains("lease"));
        for frames in [0, MAX_LINK_FRAMES + 1] {
            let error = NodeConfig::default()
                .link_frames(frames)
                .validate()
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("link_frames") && error.contains(&frames.to_string()),
                "{error}"
            );
        }
        let config = NodeConfig::default().connect("tcp/192.168.1.9:7447");
        assert!(matches!(
            config.validate(),
            Err(RemoteError::PlaintextOffLoopback { .. })
        ));
    }

    #[test]
    fn link_frames_become_zenoh_s_data_queue() {
        for frames in [1, DEFAULT_LINK_FRAMES, MAX_LINK_FRAMES] {
            let config = NodeConfig::default().link_frames(frames);
            let zenoh = config.zenoh_config().unwrap();
            assert_eq!(
                zenoh.get_json("transport/link/tx/queue/size/data").unwrap(),
                frames.to_string()
            );
        }
    }

    #[test]
    fn tls_needs_pem_and_refuses_plain_tcp_beside_it() {
        let pem = |kind| format!("-----BEGIN {kind}-----\nAAAA\n-----END {kind}-----\n");
        let tls = TlsConfig::new(pem("CERTIFICATE"), pem("CERTIFICATE"), pem("PRIVATE KEY"));
        let ok = NodeConfig::default()
            .listen("tls/10.0.0.1:7447")
            .tls(tls.clone());
        ok.validate().unwrap();
        let settings = ok.zenoh().unwrap();
        assert_eq!(
            settings.get_json("transport/link/tls/enable_mtls").unwrap(),
            "true"
        );
        // The default listener is plain TCP on loopback: beside TLS, refused.
        let error = NodeConfig::default()
            .tls(tls.clone())
            .validate()
            .unwrap_err();
        assert!(error.to_string().contains("beside TLS"), "{error}");
        for (bad, setting) in [
            (
                TlsConfig::new("", pem("CERTIFICATE"), pem("PRIVATE KEY")),
                "tls.ca_pem",
            ),
            (
                TlsConfig::new(pem("CERTIFICATE"), pem("PRIVATE KEY"), pem("PRIVATE KEY")),
                "tls.cert_pem",
            ),
            (
                TlsConfig::new(pem("CERTIFICATE"), pem("CERTIFICATE"), pem("CERTIFICATE")),
                "tls.key_pem",
            ),
            (tls.clone().allow_name(" "), "tls.allowed_names"),
        ] {
            let error = NodeConfig::default()
                .listen("tls/127.0.0.1:0")
                .tls(bad)
                .validate();
            match error {
                Err(RemoteError::BadConfig { setting: s, .. }) => assert_eq!(s, setting),
                other => panic!("{setting}: {other:?}"),
            }
        }
        let missing = TlsConfig::from_files("/nonexistent/ca.pem", "c", "k").unwrap_err();
        assert!(
            missing.to_string().contains("/nonexistent/ca.pem"),
            "{missing}"
        );
        // The key never shows in a debug print.
        assert!(!format!("{tls:?}").contains("PRIVATE"));
    }
}
