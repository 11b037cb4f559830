// pytest-netbench reference server for Node.js speaking HTTP/2: the http2 module (issue 22).
//
// usage: node h2_server.js h2c|h2 HOST PORT
//   h2c: HTTP/2 over cleartext with prior knowledge (Node's http2 does no HTTP/1.1 there).
//   h2:  TLS with ALPN "h2" (and "http/1.1"), on a self-signed certificate for HOST made at
//        start with the openssl command line in a temporary folder, removed once loaded.
// Paths: "/" -> "Hello World!", "/bytes/N", "/status/N", and "/trailers" ("ok" with a
// trailer "x-done: yes"). Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on
// SIGTERM/SIGINT.
"use strict";

const childProcess = require("child_process");
const fs = require("fs");
const http2 = require("http2");
const os = require("os");
const path = require("path");

const MAX_BODY = 64 * 1024 * 1024;
const HELLO = Buffer.from("Hello World!");
const FILLER = Buffer.alloc(65536, "x");

function respond(stream, headers) {
  const url = headers[":path"].split("?")[0];
  if (url === "/") {
    stream.respond({ ":status": 200, "content-type": "text/plain", "content-length": 12 });
    stream.end(HELLO);
    return;
  }
  if (url === "/trailers") {
    stream.respond({ ":status": 200, "content-type": "text/plain" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "x-done": "yes" }));
    stream.end("ok");
    return;
  }
  let match = /^\/bytes\/(\d+)$/.exec(url);
  if (match && Number(match[1]) <= MAX_BODY) {
    let n = Number(match[1]);
    stream.respond({ ":status": 200, "content-type": "text/plain", "content-length": n });
    const next = () => {
      while (n > 0) {
        const chunk = Math.min(n, FILLER.length);
        n -= chunk;
        if (!stream.write(chunk === FILLER.length ? FILLER : FILLER.subarray(0, chunk))) {
          stream.once("drain", next);
          return;
        }
      }
      stream.end();
    };
    next();
    return;
  }
  match = /^\/status\/(\d{3})$/.exec(url);
  if (match && Number(match[1]) >= 200 && Number(match[1]) <= 599) {
    stream.respond({ ":status": Number(match[1]) });
    stream.end();
    return;
  }
  stream.respond({ ":status": 404, "content-type": "text/plain", "content-length": 10 });
  stream.end("Not Found\n");
}

function selfSigned(host) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "netbench-h2-"));
  const key = path.join(folder, "key.pem");
  const cert = path.join(folder, "cert.pem");
  const san = /^[\d.]+$|:/.test(host) ? `IP:${host}` : `DNS:${host}`;
  try {
    childProcess.execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
       "-keyout", key, "-out", cert, "-days", "1", "-subj", `/CN=netbench ${host}`,
       "-addext", `subjectAltName=${san}`],
      { stdio: "ignore" },
    );
    return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

function main() {
  const [mode, host, port] = process.argv.slice(2);
  if (process.argv.length !== 5 || (mode !== "h2c" && mode !== "h2")) {
    process.stderr.write("usage: node h2_server.js h2c|h2 HOST PORT\n");
    process.exit(2);
  }
  const server =
    mode === "h2c"
      ? http2.createServer()
      : http2.createSecureServer({ ...selfSigned(host), allowHTTP1: true });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => stream.destroy());
    // A request body is read to its end, as a real handler would, before the answer.
    stream.resume();
    if (stream.readableEnded) respond(stream, headers);
    else stream.on("end", () => respond(stream, headers));
  });
  server.on("error", (err) => {
    process.stderr.write(`cannot listen on ${host}:${port}: ${err.message}\n`);
    process.exit(2);
  });
  server.listen({ host, port: Number(port), backlog: 4096 }, () => {
    process.stdout.write(`NETBENCH_LISTENING port=${server.address().port}\n`);
  });
  for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
}

main();
