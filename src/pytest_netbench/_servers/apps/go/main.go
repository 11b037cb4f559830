// pytest-netbench reference server in Go: net/http hello (with streams: see stream) and a
// net echo.
//
// usage: server hello|echo HOST PORT
//        server proxy HOST PORT BACKEND_HOST:PORT
// Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.
package main

import (
	"bytes"
	"encoding/json"
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
	"sync/atomic"
	"syscall"
	"time"
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
	case path == "/sse" || path == "/chunks" || path == "/json":
		stream(w, r)
	case path == "/v1/completions" || path == "/v1/chat/completions":
		openai(w, r)
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

// stream serves the streaming paths with set timings (the same in the Python catalog's
// starlette server): /sse, server-sent events; /chunks, a plain chunked body; /json, a
// plain JSON answer where a stream may have been asked. Query: first_ms (the first event
// that long after the request), every_ms (then one every that long), events (how many),
// end (the data of a last event, e.g. [DONE]), cut=K (close the connection mid-stream
// after K events), hold=1 (never end the stream after the events), malformed=1 (a line
// with no known field before the first event), status=N (answer N with a JSON error),
// per_stream_ms=P (the first event P ms later for each stream open at once, this one
// included: a server whose first event slows as streams pile up).
func stream(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q := r.URL.Query()
	number := func(name string, fallback int) int {
		if v, err := strconv.Atoi(q.Get(name)); err == nil {
			return v
		}
		return fallback
	}
	first, every, events := number("first_ms", 0), number("every_ms", 0), number("events", 10)
	cut, status := number("cut", -1), number("status", 200)
	h := w.Header()
	if status != 200 || r.URL.Path == "/json" {
		h["Content-Type"] = []string{"application/json"}
		if status != 200 {
			w.WriteHeader(status)
			fmt.Fprintf(w, "{\"error\": {\"message\": \"status %d asked for\", \"code\": %d}}\n", status, status)
			return
		}
		fmt.Fprint(w, "{\"choices\": [{\"text\": \"not a stream\"}]}\n")
		return
	}
	sse := r.URL.Path == "/sse"
	if sse {
		h["Content-Type"] = []string{"text/event-stream"}
		h["Cache-Control"] = []string{"no-cache"}
	} else {
		h["Content-Type"] = []string{"text/plain"}
	}
	open := openStreams.Add(1)
	defer openStreams.Add(-1)
	first += number("per_stream_ms", 0) * int(open)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flusher.Flush()
	if sse && q.Get("malformed") == "1" {
		fmt.Fprint(w, "bogus line\n\n")
	}
	for i := 0; i < events; i++ {
		if i == cut {
			panic(http.ErrAbortHandler) // the server drops the connection mid-stream
		}
		due := start.Add(time.Duration(first+i*every) * time.Millisecond)
		if wait := time.Until(due); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-r.Context().Done(): // the client left: the stream ends here
				timer.Stop()
				return
			}
		}
		if sse {
			fmt.Fprintf(w, "id: %d\ndata: {\"n\": %d}\n\n", i+1, i+1)
		} else {
			fmt.Fprintf(w, "chunk %d\n", i+1)
		}
		flusher.Flush()
	}
	if end := q.Get("end"); end != "" && sse {
		fmt.Fprintf(w, "data: %s\n\n", end)
		flusher.Flush()
	}
	if q.Get("hold") == "1" {
		<-r.Context().Done()
	}
}

// openStreams counts the /sse and /chunks streams being served (per_stream_ms).
var openStreams atomic.Int64

// openai serves an OpenAI-compatible completion (/v1/completions) or chat completion
// (/v1/chat/completions) with set timings, as an LLM server streams its tokens: the body's
// max_tokens (default 16) tokens, the first first_ms after the request and then one every
// every_ms (query parameters); with "stream": true, server-sent events of JSON chunks (a
// chat stream opens with a chunk carrying the role and no text), a usage chunk when
// stream_options.include_usage is true, and data: [DONE]; without it, one JSON answer.
func openai(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var ask struct {
		MaxTokens     *int `json:"max_tokens"`
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ask); err != nil {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "{\"error\": {\"message\": \"the body is not a JSON request\"}}\n")
		return
	}
	tokens := 16
	if ask.MaxTokens != nil {
		tokens = *ask.MaxTokens
	}
	q := r.URL.Query()
	first, _ := strconv.Atoi(q.Get("first_ms"))
	every, _ := strconv.Atoi(q.Get("every_ms"))
	chat := r.URL.Path == "/v1/chat/completions"
	h := w.Header()
	if !ask.Stream {
		time.Sleep(time.Until(start.Add(time.Duration(first+(tokens-1)*every) * time.Millisecond)))
		h["Content-Type"] = []string{"application/json"}
		text := strings.Repeat("tok ", tokens)
		if chat {
			fmt.Fprintf(w, "{\"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": %q}}], \"usage\": {\"completion_tokens\": %d}}\n", text, tokens)
		} else {
			fmt.Fprintf(w, "{\"choices\": [{\"index\": 0, \"text\": %q}], \"usage\": {\"completion_tokens\": %d}}\n", text, tokens)
		}
		return
	}
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if chat {
		fmt.Fprint(w, "data: {\"choices\": [{\"index\": 0, \"delta\": {\"role\": \"assistant\"}}]}\n\n")
	}
	flusher.Flush()
	for i := 0; i < tokens; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(first+i*every) * time.Millisecond)))
		if chat {
			fmt.Fprintf(w, "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"tok%d \"}}]}\n\n", i+1)
		} else {
			fmt.Fprintf(w, "data: {\"choices\": [{\"index\": 0, \"text\": \"tok%d \"}]}\n\n", i+1)
		}
		flusher.Flush()
	}
	if chat {
		fmt.Fprint(w, "data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"length\"}]}\n\n")
	} else {
		fmt.Fprint(w, "data: {\"choices\": [{\"index\": 0, \"text\": \"\", \"finish_reason\": \"length\"}]}\n\n")
	}
	if ask.StreamOptions.IncludeUsage {
		fmt.Fprintf(w, "data: {\"choices\": [], \"usage\": {\"completion_tokens\": %d}}\n\n", tokens)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
}
