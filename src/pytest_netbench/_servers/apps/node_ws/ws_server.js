// pytest-netbench reference server for Node.js: a WebSocket echo on the ws package (the
// catalog's "node", app "ws"; its hello and echo apps are ../node/server.js, built-ins only).
//
// usage: node ws_server.js ws HOST PORT
// Every path upgrades, accepts the client's first subprotocol if it offers any, and sends
// each message back with its own type; but /push sends each connection a stamped message
// ({"seq": n, "ts": epoch us}) every every_ms (query, default 100), and after close_after
// of them (if given) a close with close_code (default 4000), and /broadcast sends one
// such message every every_ms (the first connection's) to every connection on it.
// Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.
"use strict";

const { WebSocketServer } = require("ws");

if (process.argv.length !== 5 || process.argv[2] !== "ws") {
  process.stderr.write("usage: node ws_server.js ws HOST PORT\n");
  process.exit(2);
}

const server = new WebSocketServer({
  host: process.argv[3],
  port: Number(process.argv[4]),
  backlog: 4096,
  perMessageDeflate: false,
  handleProtocols: (offered) => {
    const first = offered.values().next();
    return first.done ? false : first.value;
  },
});

function planOf(request) {
  const url = new URL(request.url, "http://localhost");
  const each = url.pathname.startsWith("/push");
  if (!each && !url.pathname.startsWith("/broadcast")) return null;
  const number = (name, fallback) => {
    const value = Number(url.searchParams.get(name));
    return url.searchParams.has(name) && Number.isFinite(value) ? value : fallback;
  };
  return {
    each,
    everyMs: Math.max(number("every_ms", 100), 0.1),
    closeAfter: Math.trunc(number("close_after", 0)),
    closeCode: Math.trunc(number("close_code", 4000)),
  };
}

// A push: its sequence number and its send time, epoch microseconds.
function stamped(seq) {
  const ts = Math.round((performance.timeOrigin + performance.now()) * 1000);
  return JSON.stringify({ seq, ts });
}

function push(socket, plan) {
  let seq = 0;
  const timer = setInterval(() => {
    seq += 1;
    socket.send(stamped(seq));
    if (plan.closeAfter > 0 && seq >= plan.closeAfter) {
      clearInterval(timer);
      socket.close(plan.closeCode, "enough");
    }
  }, plan.everyMs);
  socket.on("close", () => clearInterval(timer));
}

const audience = new Set(); // the connections on /broadcast
let broadcasting = false;

function broadcast(socket, plan) {
  audience.add(socket);
  socket.on("close", () => audience.delete(socket));
  if (broadcasting) return;
  broadcasting = true;
  let seq = 0;
  setInterval(() => {
    seq += 1;
    const message = stamped(seq); // one stamp for all: the broadcast's send time
    for (const each of audience) each.send(message);
  }, plan.everyMs);
}

server.on("connection", (socket, request) => {
  socket.on("error", () => {}); // a client that went away: nothing to report
  const plan = planOf(request);
  if (plan === null) {
    socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary }));
  } else if (plan.each) {
    push(socket, plan);
  } else {
    broadcast(socket, plan);
  }
});

server.on("listening", () => {
  process.stdout.write(`NETBENCH_LISTENING port=${server.address().port}\n`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => process.exit(0));
}
