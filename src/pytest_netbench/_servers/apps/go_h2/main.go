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
// its HEADERS H ms after the request and its body "hello" B ms later. Prints
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
