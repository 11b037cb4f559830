// A gorilla/websocket echo server and a minimal closed-loop WebSocket client: the yardstick
// of `netbench ws` (benchmarks/bench_ws.py).
//
// usage: ws_go server HOST PORT
//
//	prints NETBENCH_LISTENING port=N; every path echoes each message with its own type.
//
// usage: ws_go client URL CONNECTIONS BYTES SECONDS
//
//	opens CONNECTIONS (handshakes included) before its window, then each one sends a text
//	message of BYTES letters and reads its echo, checking it, again and again. It counts the
//	exchanges completed inside the window and prints one line:
//	WS messages=N verify_errors=N io_errors=N seconds=S
package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "server" {
		serve(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) == 6 && os.Args[1] == "client" {
		conns, _ := strconv.Atoi(os.Args[3])
		size, _ := strconv.Atoi(os.Args[4])
		seconds, _ := strconv.ParseFloat(os.Args[5], 64)
		load(os.Args[2], conns, size, seconds)
		return
	}
	fmt.Fprintln(os.Stderr, "usage: ws_go server HOST PORT | ws_go client URL CONNECTIONS BYTES SECONDS")
	os.Exit(2)
}

func serve(host, port string) {
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
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
	})
	listener, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("NETBENCH_LISTENING port=%d\n", listener.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	http.Serve(listener, handler)
}

func load(url string, conns, size int, seconds float64) {
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	opened := make([]*websocket.Conn, 0, conns)
	for i := 0; i < conns; i++ {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "connect %d: %v\n", i, err)
			os.Exit(1)
		}
		opened = append(opened, c)
	}
	var messages, verifyErrors, ioErrors atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	for _, c := range opened {
		wg.Add(1)
		go func(c *websocket.Conn) {
			defer wg.Done()
			defer c.Close()
			for !stop.Load() {
				if err := c.WriteMessage(websocket.TextMessage, payload); err != nil {
					ioErrors.Add(1)
					return
				}
				_, echo, err := c.ReadMessage()
				if err != nil {
					ioErrors.Add(1)
					return
				}
				if time.Now().After(deadline) {
					return
				}
				if !bytes.Equal(echo, payload) {
					verifyErrors.Add(1)
				} else {
					messages.Add(1)
				}
			}
		}(c)
	}
	time.Sleep(time.Until(deadline))
	stop.Store(true)
	elapsed := time.Since(start).Seconds()
	wg.Wait()
	fmt.Printf("WS messages=%d verify_errors=%d io_errors=%d seconds=%.3f\n",
		messages.Load(), verifyErrors.Load(), ioErrors.Load(), elapsed)
}
