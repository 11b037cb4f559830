// pytest-netbench reference server in Go speaking HTTP/2: net/http, standard library only
// (Go 1.24+ for http.Protocols), built apart from ../go so an older Go still builds that one.
//
// usage: server h2c|h2 HOST PORT
//
//	h2c: HTTP/2 over cleartext with prior knowledge (and HTTP/1.1) on one port.
//	h2:  TLS with ALPN "h2" (and "http/1.1"), on a self-signed ECDSA certificate for HOST
//	     made at start, so no key is written anywhere; clients must not verify it.
//
// Paths as ../go's hello app: "/" -> "Hello World!", "/bytes/N", "/status/N"; and
// "/trailers", which answers "ok" with a trailer "x-done: yes"; "/split/H/B", which sends
// its HEADERS H ms after the request and its body "hello" B ms later; "/sse", "/chunks"
// and "/json" stream with set timings as ../go's do (see stream). Prints
// "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const maxBody = 64 * 1024 * 1024

var hello = []byte("Hello World!")
var filler = bytes.Repeat([]byte("x"), 65536)

func handle(w http.ResponseWriter, r *http.Request) {
	// A request body is read to its end, as a real handler would, before the answer.
	io.Copy(io.Discard, r.Body)
	h := w.Header()
	h["Content-Type"] = []string{"text/plain"}
	path := r.URL.Path
	switch {
	case path == "/sse" || path == "/chunks" || path == "/json":
		stream(w, r)
	case path == "/":
		h["Content-Length"] = []string{"12"}
		w.Write(hello)
	case path == "/trailers":
		h["Trailer"] = []string{"X-Done"}
		w.Write([]byte("ok"))
		h.Set("X-Done", "yes")
	case strings.HasPrefix(path, "/bytes/"):
		n, err := strconv.Atoi(path[len("/bytes/"):])
		if err != nil || n < 0 || n > maxBody {
			http.Error(w, "bad size", http.StatusBadRequest)
			return
		}
		h["Content-Length"] = []string{strconv.Itoa(n)}
		for n > 0 {
			chunk := min(n, len(filler))
			if _, err := w.Write(filler[:chunk]); err != nil {
				return
			}
			n -= chunk
		}
	case strings.HasPrefix(path, "/split/"):
		var head, body int
		if _, err := fmt.Sscanf(path, "/split/%d/%d", &head, &body); err != nil {
			http.Error(w, "bad split", http.StatusBadRequest)
			return
		}
		time.Sleep(time.Duration(head) * time.Millisecond)
		h["Content-Length"] = []string{"5"}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(time.Duration(body) * time.Millisecond)
		w.Write([]byte("hello"))
	case strings.HasPrefix(path, "/status/"):
		code, err := strconv.Atoi(path[len("/status/"):])
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "bad status", http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
	default:
		http.NotFound(w, r)
	}
}

// selfSigned is a certificate for host, valid from an hour ago for a day.
func selfSigned(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	template := x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "netbench " + host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
	}
	if ip := net.ParseIP(host); ip != nil {
		template.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, &template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func main() {
	if len(os.Args) != 4 || (os.Args[1] != "h2c" && os.Args[1] != "h2") {
		fmt.Fprintf(os.Stderr, "usage: %s h2c|h2 HOST PORT\n", os.Args[0])
		os.Exit(2)
	}
	mode, host := os.Args[1], os.Args[2]
	server := &http.Server{
		Handler:   http.HandlerFunc(handle),
		ErrorLog:  log.New(io.Discard, "", 0),
		Protocols: new(http.Protocols),
	}
	server.Protocols.SetHTTP1(true)
	if mode == "h2c" {
		server.Protocols.SetUnencryptedHTTP2(true)
	} else {
		server.Protocols.SetHTTP2(true)
		cert, err := selfSigned(host)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cannot make a certificate: %v\n", err)
			os.Exit(2)
		}
		server.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	// Go's listener takes its backlog from net.core.somaxconn.
	listener, err := net.Listen("tcp", net.JoinHostPort(host, os.Args[3]))
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
	if mode == "h2c" {
		server.Serve(listener)
	} else {
		server.ServeTLS(listener, "", "")
	}
}

// stream serves the streaming paths with set timings (the same in the Python catalog's
// starlette server): /sse, server-sent events; /chunks, a plain chunked body; /json, a
// plain JSON answer where a stream may have been asked. Query: first_ms (the first event
// that long after the request), every_ms (then one every that long), events (how many),
// end (the data of a last event, e.g. [DONE]), cut=K (close the connection mid-stream
// after K events), hold=1 (never end the stream after the events), malformed=1 (a line
// with no known field before the first event), status=N (answer N with a JSON error).
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
		time.Sleep(time.Until(due))
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
