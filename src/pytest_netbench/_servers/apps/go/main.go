// pytest-netbench reference server in Go: net/http hello and a net echo.
//
// usage: server hello|echo HOST PORT
//        server proxy HOST PORT BACKEND_HOST:PORT
// Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.
package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

const maxBody = 64 * 1024 * 1024

var hello = []byte("Hello World!")
var filler = bytes.Repeat([]byte("x"), 65536)

func writeFiller(w io.Writer, n int) {
	for n > 0 {
		chunk := n
		if chunk > len(filler) {
			chunk = len(filler)
		}
		if _, err := w.Write(filler[:chunk]); err != nil {
			return
		}
		n -= chunk
	}
}

func handle(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Content-Type"] = []string{"text/plain"}
	path := r.URL.Path
	switch {
	case path == "/":
		h["Content-Length"] = []string{"12"}
		w.Write(hello)
	case strings.HasPrefix(path, "/bytes/"):
		n, err := strconv.Atoi(path[len("/bytes/"):])
		if err != nil || n < 0 || n > maxBody {
			http.Error(w, "bad size", http.StatusBadRequest)
			return
		}
		h["Content-Length"] = []string{strconv.Itoa(n)}
		writeFiller(w, n)
	case strings.HasPrefix(path, "/status/"):
		code, err := strconv.Atoi(path[len("/status/"):])
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "bad status", http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
		if code != 204 && code != 304 {
			w.Write([]byte(http.StatusText(code)))
		}
	default:
		http.NotFound(w, r)
	}
}

// echo writes back what it reads through one 32 KiB buffer, as io.Copy does. io.Copy
// itself is not used: between two TCP connections it splices through a pipe pair of its
// own (two more open files per connection, kept in a pool), so a server limited to 20,000
// open files stops accepting at about 6,600 connections.
func echo(conn net.Conn) {
	defer conn.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			if _, werr := conn.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// proxy is httputil.ReverseProxy with its default transport (seed 004's Go proxy). Reverse
// (GET /path) and forward (GET http://host/path) requests both go to the one backend, so
// it never reaches beyond the backend it was given.
func proxy(backend string) http.Handler {
	return &httputil.ReverseProxy{
		Director: func(r *http.Request) {
			r.URL.Scheme = "http"
			r.URL.Host = backend
			r.Host = backend
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

func main() {
	usage := len(os.Args) != 4 || (os.Args[1] != "hello" && os.Args[1] != "echo")
	if len(os.Args) == 5 && os.Args[1] == "proxy" {
		usage = false
	}
	if usage {
		fmt.Fprintf(os.Stderr, "usage: %s hello|echo HOST PORT, or proxy HOST PORT BACKEND\n", os.Args[0])
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
	if os.Args[1] == "hello" {
		server := &http.Server{Handler: http.HandlerFunc(handle)}
		server.Serve(listener)
		return
	}
	if os.Args[1] == "proxy" {
		server := &http.Server{Handler: proxy(os.Args[4]), ErrorLog: log.New(io.Discard, "", 0)}
		server.Serve(listener)
		return
	}
	for {
		conn, err := listener.Accept()
		if err != nil {
			continue
		}
		go echo(conn)
	}
}
