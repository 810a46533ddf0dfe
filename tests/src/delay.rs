//! A delaying TCP proxy of the tests' own: what this kernel cannot do without `netem`. It
//! listens on a loopback port and forwards every connection to a target, holding each chunk
//! for half the round-trip time in each direction (and a whole one before the first bytes, as
//! a TCP handshake across that distance would), so a client through it sees the round-trip
//! time asked for, in order. It also counts the round trips each connection made: every time
//! the client sends after the server answered starts a new one, its first bytes too, and the
//! TCP handshake is one more; the goodbye a client sends as it closes (which waits for nothing)
//! counts as one as well.
//!
//! By hand: a proxy that delays and counts is a few dozen lines over std's sockets, and no
//! maintained crate does this for a test.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// A running proxy; stopped when dropped.
#[derive(Debug)]
pub struct DelayProxy {
    /// The port it listens on (loopback).
    pub port: u16,
    stop: Arc<AtomicBool>,
    trips: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
}

impl DelayProxy {
    /// Forward `127.0.0.1:<port>` to `target` with `rtt`.
    pub fn start(target: std::net::SocketAddr, rtt: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the proxy");
        let port = listener.local_addr().expect("its address").port();
        listener
            .set_nonblocking(true)
            .expect("a listener that can stop");
        let stop = Arc::new(AtomicBool::new(false));
        let trips = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(AtomicU64::new(0));
        let (stopping, counted, connected) = (stop.clone(), trips.clone(), connections.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        connected.fetch_add(1, Ordering::SeqCst);
                        // The handshake's round trip.
                        counted.fetch_add(1, Ordering::SeqCst);
                        let counted = counted.clone();
                        std::thread::spawn(move || relay(client, target, rtt, &counted));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    Err(_) => break,
                }
            }
        });
        Self {
            port,
            stop,
            trips,
            connections,
        }
    }

    /// Round trips and connections through the proxy so far, and set both back to zero.
    pub fn take_counts(&self) -> (u64, u64) {
        (
            self.trips.swap(0, Ordering::SeqCst),
            self.connections.swap(0, Ordering::SeqCst),
        )
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Relay one connection both ways with the delay; a client flight after a server answer
/// counts one round trip.
fn relay(client: TcpStream, target: std::net::SocketAddr, rtt: Duration, trips: &Arc<AtomicU64>) {
    let Ok(server) = TcpStream::connect(target) else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (Ok(client_read), Ok(server_read)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    // Whether the server spoke since the client last did: the client's next bytes begin a
    // round trip (its first bytes too).
    let answered = Arc::new(AtomicBool::new(true));
    let half = rtt / 2;
    // The handshake: the first bytes wait a whole round trip more.
    let first_extra = rtt;
    let up = {
        let answered = answered.clone();
        let trips = trips.clone();
        std::thread::spawn(move || {
            pump(client_read, server, half, first_extra, |_| {
                if answered.swap(false, Ordering::SeqCst) {
                    trips.fetch_add(1, Ordering::SeqCst);
                }
            });
        })
    };
    pump(server_read, client, half, Duration::ZERO, |_| {
        answered.store(true, Ordering::SeqCst);
    });
    let _ = up.join();
}

/// Copy `from` into `to`, each chunk delivered `delay` after it was read (the first one `extra`
/// later still), in order; `seen` is told of each chunk as it is read.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    delay: Duration,
    extra: Duration,
    seen: impl Fn(usize),
) {
    let (send, receive) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = std::thread::spawn(move || {
        for (due, bytes) in receive {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
    let mut buffer = vec![0u8; 64 * 1024];
    let mut first = true;
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                seen(n);
                let mut due = Instant::now() + delay;
                if std::mem::take(&mut first) {
                    due += extra;
                }
                if send.send((due, buffer[..n].to_vec())).is_err() {
                    break;
                }
            }
        }
    }
    drop(send);
    let _ = writer.join();
}
