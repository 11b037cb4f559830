// pytest-netbench reference server for Node.js: the http module hello and a net echo.
//
// usage: node server.js hello|echo HOST PORT
// Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.
"use strict";

const http = require("http");
const net = require("net");

const MAX_BODY = 64 * 1024 * 1024;
const HELLO = Buffer.from("Hello World!");
const FILLER = Buffer.alloc(65536, "x");

function writeFiller(res, n) {
  // Write in 64 KiB pieces, waiting for 'drain' so a big body does not pile up in memory.
  const next = () => {
    while (n > 0) {
      const chunk = Math.min(n, FILLER.length);
      n -= chunk;
      if (!res.write(chunk === FILLER.length ? FILLER : FILLER.subarray(0, chunk))) {
        res.once("drain", next);
        return;
      }
    }
    res.end();
  };
  next();
}

function handle(req, res) {
  const path = req.url.split("?")[0];
  if (path === "/") {
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": HELLO.length });
    res.end(HELLO);
    return;
  }
  let match = /^\/bytes\/(\d+)$/.exec(path);
  if (match && Number(match[1]) <= MAX_BODY) {
    const n = Number(match[1]);
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": n });
    writeFiller(res, n);
    return;
  }
  match = /^\/status\/(\d{3})$/.exec(path);
  if (match && Number(match[1]) >= 200 && Number(match[1]) <= 599) {
    const status = Number(match[1]);
    res.writeHead(status, { "Content-Type": "text/plain" });
    res.end(status === 204 || status === 304 ? undefined : http.STATUS_CODES[status] || "");
    return;
  }
  res.writeHead(404, { "Content-Type": "text/plain", "Content-Length": 10 });
  res.end("Not Found\n");
}

function main() {
  const [app, host, port] = process.argv.slice(2);
  if (process.argv.length !== 5 || (app !== "hello" && app !== "echo")) {
    process.stderr.write("usage: node server.js hello|echo HOST PORT\n");
    process.exit(2);
  }
  const server =
    app === "hello"
      ? http.createServer(handle)
      : net.createServer((socket) => {
          socket.on("error", () => socket.destroy());
          socket.pipe(socket);
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
