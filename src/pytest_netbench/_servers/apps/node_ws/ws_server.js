// pytest-netbench reference server for Node.js: a WebSocket echo on the ws package (the
// catalog's "node", app "ws"; its hello and echo apps are ../node/server.js, built-ins only).
//
// usage: node ws_server.js ws HOST PORT
// Every path upgrades, accepts the client's first subprotocol if it offers any, and sends
// each message back with its own type. Prints "NETBENCH_LISTENING port=<n>" once
// listening; exits 0 on SIGTERM/SIGINT.
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

server.on("connection", (socket) => {
  socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary }));
  socket.on("error", () => {}); // a client that went away: nothing to report
});

server.on("listening", () => {
  process.stdout.write(`NETBENCH_LISTENING port=${server.address().port}\n`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => process.exit(0));
}
