//! postcard (what loka-remote encodes with) against bincode 2 (its serde mode, standard
//! configuration) on the shapes that cross between nodes: a small request, a binary payload of
//! 64 B and 4 KiB, and a frame of 64 small items (docs/results/remote.md, "Encoding").
//!
//! ```sh
//! cargo run --release -p loka-remote --example codec_compare
//! ```
//!
//! Prints, per shape and codec, the encoded size and the median (of 5 rounds) time to encode and
//! to decode one value; every decoded value is checked equal to the original.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::hint::black_box;
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Request {
    Put(String, u64),
    Get(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Blob(#[serde(with = "serde_bytes")] Vec<u8>);

/// The shape of loka-remote's frames: a sender, a sequence number and items with payloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Frame {
    from: u128,
    first_seq: u64,
    items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Item {
    Msg {
        to: u64,
        #[serde(with = "serde_bytes")]
        payload: Vec<u8>,
    },
    Stop {
        to: u64,
    },
}

trait Codec {
    const NAME: &'static str;
    fn encode<T: Serialize>(value: &T) -> Vec<u8>;
    fn decode<T: DeserializeOwned>(bytes: &[u8]) -> T;
}

struct Postcard;
impl Codec for Postcard {
    const NAME: &'static str = "postcard 1";
    fn encode<T: Serialize>(value: &T) -> Vec<u8> {
        postcard::to_allocvec(value).expect("encodes")
    }
    fn decode<T: DeserializeOwned>(bytes: &[u8]) -> T {
        postcard::from_bytes(bytes).expect("decodes")
    }
}

struct Bincode;
impl Codec for Bincode {
    const NAME: &'static str = "bincode 2";
    fn encode<T: Serialize>(value: &T) -> Vec<u8> {
        bincode::serde::encode_to_vec(value, bincode::config::standard()).expect("encodes")
    }
    fn decode<T: DeserializeOwned>(bytes: &[u8]) -> T {
        bincode::serde::decode_from_slice(bytes, bincode::config::standard())
            .expect("decodes")
            .0
    }
}

/// Median ns per call of `f` over 5 rounds of `n` calls.
fn time(n: u32, mut f: impl FnMut()) -> f64 {
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..n {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(n)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

fn row<C: Codec, T>(shape: &str, value: &T, n: u32)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let bytes = C::encode(value);
    assert_eq!(&C::decode::<T>(&bytes), value, "{} round trip", C::NAME);
    let encode = time(n, || {
        black_box(C::encode(black_box(value)));
    });
    let decode = time(n, || {
        black_box(C::decode::<T>(black_box(&bytes)));
    });
    println!(
        "| {shape} | {} | {} B | {encode:.0} ns | {decode:.0} ns |",
        C::NAME,
        bytes.len()
    );
}

fn both<T>(shape: &str, value: &T, n: u32)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    row::<Postcard, T>(shape, value, n);
    row::<Bincode, T>(shape, value, n);
}

fn main() {
    println!("| shape | codec | size | encode | decode |");
    println!("|---|---|---|---|---|");
    both(
        "request Put(String, u64)",
        &Request::Put("user:1042".into(), 1 << 40),
        200_000,
    );
    both(
        "request Get(String)",
        &Request::Get("user:1042".into()),
        200_000,
    );
    both("payload 64 B", &Blob(vec![7; 64]), 200_000);
    both("payload 4 KiB", &Blob(vec![7; 4096]), 50_000);
    let frame = Frame {
        from: u128::MAX / 3,
        first_seq: 123_456_789,
        items: (0..64)
            .map(|n| {
                if n % 16 == 15 {
                    Item::Stop { to: n }
                } else {
                    Item::Msg {
                        to: n,
                        payload: vec![n as u8; 64],
                    }
                }
            })
            .collect(),
    };
    both("frame of 64 items (60 of 64 B)", &frame, 20_000);
}
