// pytest-netbench reference server in Go: a gorilla/websocket echo (the catalog's "go",
// app "ws"; its hello and echo apps are ../go, standard library only).
//
// usage: server ws HOST PORT
// Every path upgrades, accepts the client's first subprotocol if it offers any, and sends
// each message back with its own type; but /push sends each connection a stamped message
// ({"seq": n, "ts": epoch us}) every every_ms (query, default 100), and after close_after
// of them (if given) a close with close_code (default 4000), and /broadcast sends one
// such message every every_ms (the first connection's) to every connection on it.
// Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.
package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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
	if strings.HasPrefix(r.URL.Path, "/push") {
		push(c, planOf(r))
		return
	}
	if strings.HasPrefix(r.URL.Path, "/broadcast") {
		broadcast(c, planOf(r))
		return
	}
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

type pushPlan struct {
	every      time.Duration
	closeAfter int
	closeCode  int
}

func planOf(r *http.Request) pushPlan {
	q := r.URL.Query()
	everyMs, err := strconv.ParseFloat(q.Get("every_ms"), 64)
	if err != nil {
		everyMs = 100
	}
	if everyMs < 0.1 {
		everyMs = 0.1
	}
	closeAfter, _ := strconv.Atoi(q.Get("close_after"))
	closeCode, err := strconv.Atoi(q.Get("close_code"))
	if err != nil {
		closeCode = 4000
	}
	return pushPlan{time.Duration(everyMs * float64(time.Millisecond)), closeAfter, closeCode}
}

func stamped(seq int) []byte {
	return []byte(fmt.Sprintf(`{"seq": %d, "ts": %d}`, seq, time.Now().UnixMicro()))
}

// listen reads until the client goes (gorilla answers its pings); done closes then.
func listen(c *websocket.Conn, done chan struct{}) {
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			close(done)
			return
		}
	}
}

func push(c *websocket.Conn, plan pushPlan) {
	done := make(chan struct{})
	go listen(c, done)
	ticker := time.NewTicker(plan.every)
	defer ticker.Stop()
	for seq := 1; ; seq++ {
		if err := c.WriteMessage(websocket.TextMessage, stamped(seq)); err != nil {
			return
		}
		if plan.closeAfter > 0 && seq >= plan.closeAfter {
			closing := websocket.FormatCloseMessage(plan.closeCode, "enough")
			c.WriteControl(websocket.CloseMessage, closing, time.Now().Add(time.Second))
			select {
			case <-done:
			case <-time.After(time.Second):
			}
			return
		}
		select {
		case <-done:
			return
		case <-ticker.C:
		}
	}
}

var audience = struct {
	sync.Mutex
	conns   map[*websocket.Conn]bool
	started bool
}{conns: map[*websocket.Conn]bool{}}

func broadcast(c *websocket.Conn, plan pushPlan) {
	audience.Lock()
	audience.conns[c] = true
	if !audience.started {
		audience.started = true
		go broadcaster(plan.every)
	}
	audience.Unlock()
	done := make(chan struct{})
	listen(c, done)
	audience.Lock()
	delete(audience.conns, c)
	audience.Unlock()
}

// broadcaster is the only writer of the /broadcast connections.
func broadcaster(every time.Duration) {
	ticker := time.NewTicker(every)
	for seq := 1; ; seq++ {
		<-ticker.C
		message := stamped(seq) // one stamp for all: the broadcast's send time
		audience.Lock()
		conns := make([]*websocket.Conn, 0, len(audience.conns))
		for c := range audience.conns {
			conns = append(conns, c)
		}
		audience.Unlock()
		for _, c := range conns {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.WriteMessage(websocket.TextMessage, message)
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
