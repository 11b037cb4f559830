//! pytest-netbench reference server in Rust, std only: a thread per connection.
//!
//! usage: server hello|echo HOST PORT
//! Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::io::AsRawFd; // std::os::fd is newer than Debian 12's rustc 1.63
use std::thread;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;
const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

extern "C" {
    // libc is linked by std anyway; declaring these two avoids a crate dependency.
    fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    fn _exit(status: i32) -> !;
    fn listen(fd: i32, backlog: i32) -> i32;
}

extern "C" fn on_signal(_: i32) {
    unsafe { _exit(0) }
}

const FILLER: [u8; 65536] = [b'x'; 65536];

/// A response body: fixed text, or N filler bytes for /bytes/N.
enum Body {
    Text(&'static [u8]),
    Filler(usize),
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        304 => "Not Modified",
        400 => "Bad Request",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Other",
    }
}

fn route(path: &str) -> (u16, Body) {
    let path = path.split('?').next().unwrap_or("");
    if path == "/" {
        return (200, Body::Text(b"Hello World!"));
    }
    if let Some(size) = path.strip_prefix("/bytes/") {
        return match size.parse::<usize>() {
            Ok(n) if n <= MAX_BODY => (200, Body::Filler(n)),
            _ => (400, Body::Text(b"bad size\n")),
        };
    }
    if let Some(code) = path.strip_prefix("/status/") {
        return match code.parse::<u16>() {
            Ok(s) if (200..600).contains(&s) => (s, Body::Text(reason(s).as_bytes())),
            _ => (400, Body::Text(b"bad status\n")),
        };
    }
    (404, Body::Text(b"Not Found\n"))
}

fn respond(out: &mut Vec<u8>, path: &str, keep_alive: bool, http10: bool) {
    let (status, body) = route(path);
    let no_body = status == 204 || status == 304;
    out.extend_from_slice(
        format!("HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\n", status, reason(status)).as_bytes(),
    );
    let length = match body {
        Body::Text(text) => text.len(),
        Body::Filler(n) => n,
    };
    if !no_body {
        out.extend_from_slice(format!("Content-Length: {}\r\n", length).as_bytes());
    }
    if !keep_alive {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if http10 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if no_body {
        return;
    }
    match body {
        Body::Text(text) => out.extend_from_slice(text),
        Body::Filler(mut left) => {
            while left > 0 {
                let n = left.min(FILLER.len());
                out.extend_from_slice(&FILLER[..n]);
                left -= n;
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Parses one request head; returns (path, keep_alive, http10, body_length).
fn parse_head(head: &[u8]) -> Option<(String, bool, bool, usize)> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (_method, path, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !version.starts_with("HTTP/1.") {
        return None;
    }
    let http10 = version == "HTTP/1.0";
    let mut keep_alive = !http10;
    let mut body = 0;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("connection") {
            if value.eq_ignore_ascii_case("close") {
                keep_alive = false;
            } else if value.eq_ignore_ascii_case("keep-alive") {
                keep_alive = true;
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            body = value.parse().ok()?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return None;
        }
    }
    Some((path.to_string(), keep_alive, http10, body))
}

fn serve_hello(mut stream: TcpStream) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut chunk = [0u8; 65536];
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    let mut body_left = 0usize;
    loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut start = 0;
        let mut close = false;
        loop {
            if body_left > 0 {
                let skip = body_left.min(buf.len() - start);
                start += skip;
                body_left -= skip;
                if body_left > 0 {
                    break;
                }
            }
            let end = match find(&buf[start..], b"\r\n\r\n") {
                Some(end) => end,
                None => break,
            };
            match parse_head(&buf[start..start + end]) {
                Some((path, keep_alive, http10, body)) => {
                    respond(&mut out, &path, keep_alive, http10);
                    body_left = body;
                    start += end + 4;
                    if !keep_alive {
                        close = true;
                        break;
                    }
                }
                None => {
                    out.extend_from_slice(
                        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 12\r\nConnection: close\r\n\r\nBad Request\n",
                    );
                    close = true;
                    break;
                }
            }
        }
        buf.drain(..start.min(buf.len()));
        if !out.is_empty() {
            stream.write_all(&out)?;
            out.clear();
        }
        if close || buf.len() > MAX_HEAD {
            return Ok(());
        }
    }
}

fn serve_echo(mut stream: TcpStream) -> io::Result<()> {
    let mut chunk = [0u8; 65536];
    loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        stream.write_all(&chunk[..n])?;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 || (args[1] != "hello" && args[1] != "echo") {
        eprintln!("usage: {} hello|echo HOST PORT", args[0]);
        std::process::exit(2);
    }
    unsafe {
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
    }
    let echo = args[1] == "echo";
    let host = args[2].trim_start_matches('[').trim_end_matches(']');
    let address = if host.contains(':') {
        format!("[{}]:{}", host, args[3])
    } else {
        format!("{}:{}", host, args[3])
    };
    let listener = TcpListener::bind(&address).unwrap_or_else(|e| {
        eprintln!("cannot listen on {}: {}", address, e);
        std::process::exit(2);
    });
    // std listens with a small backlog; listening again on Linux just raises it.
    unsafe {
        listen(listener.as_raw_fd(), 4096);
    }
    println!("NETBENCH_LISTENING port={}", listener.local_addr().unwrap().port());
    io::stdout().flush().unwrap();
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(stream) => stream,
            Err(_) => continue,
        };
        let _ = stream.set_nodelay(true);
        let spawned = thread::Builder::new().stack_size(128 * 1024).spawn(move || {
            let _ = if echo { serve_echo(stream) } else { serve_hello(stream) };
        });
        if let Err(e) = spawned {
            eprintln!("cannot start a connection thread: {}", e);
        }
    }
}
