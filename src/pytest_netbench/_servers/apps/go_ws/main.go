// pytest-netbench reference server in Go: a gorilla/websocket echo (the catalog's "go",
// app "ws"; its hello and echo apps are ../go, standard library only).
//
// usage: server ws HOST PORT
// Every path upgrades, accepts the client's first subprotocol if it offers any, and sends
// each message back with its own type. Prints "NETBENCH_LISTENING port=<n>" once
// listening; exits 0 on SIGTERM/SIGINT.
package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func echo(w http.ResponseWriter, r *http.Request) {
	var header http.Header
	if offered := websocket.Subprotocols(r); len(offered) > 0 {
		header = http.Header{"Sec-WebSocket-Protocol": {offered[0]}}
	}
	c, err := upgrader.Upgrade(w, r, header)
	if err != nil {
		return
	}
	defer c.Close()
	for {
		kind, message, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, message); err != nil {
			return
		}
	}
}

func main() {
	if len(os.Args) != 4 || os.Args[1] != "ws" {
		fmt.Fprintf(os.Stderr, "usage: %s ws HOST PORT\n", os.Args[0])
		os.Exit(2)
	}
	// Go's listener takes its backlog from net.core.somaxconn.
	listener, err := net.Listen("tcp", net.JoinHostPort(os.Args[2], os.Args[3]))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot listen: %v\n", err)
		os.Exit(2)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0)
	}()
	fmt.Printf("NETBENCH_LISTENING port=%d\n", listener.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	server := &http.Server{Handler: http.HandlerFunc(echo), ErrorLog: log.New(io.Discard, "", 0)}
	server.Serve(listener)
}
