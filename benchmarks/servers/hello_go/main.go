// A net/http hello server for the netbench benchmarks: the same 13-byte answer as httpd.c,
// served by Go's standard library (run it with GOMAXPROCS=1 to keep it on one core).
// --mode vary answers every request differently, as a real API does: a JSON body with the
// request's own id and a padding whose length cycles through 0..199 bytes (bodies of 20 to
// 230 bytes), and the id again in an X-Request-Id header, so no two responses on a
// connection are the same bytes.
// Prints "NETBENCH_LISTENING port=<n>" once listening; --port 0 picks a free port.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to bind")
	port := flag.Int("port", 0, "port to bind (0: any free port)")
	mode := flag.String("mode", "hello", "hello (the same bytes each time) or vary")
	flag.Parse()
	listener, err := net.Listen("tcp", fmt.Sprintf("%s:%d", *host, *port))
	if err != nil {
		log.Fatal(err)
	}
	var handler http.HandlerFunc
	switch *mode {
	case "hello":
		body := []byte("Hello, World!")
		handler = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write(body)
		}
	case "vary":
		var next atomic.Uint64
		pad := strings.Repeat("x", 200)
		handler = func(w http.ResponseWriter, r *http.Request) {
			id := next.Add(1)
			ids := strconv.FormatUint(id, 10)
			body := `{"id":` + ids + `,"pad":"` + pad[:id%200] + `"}`
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Request-Id", ids)
			w.Write([]byte(body))
		}
	default:
		fmt.Fprintf(os.Stderr, "hello_go: --mode must be hello or vary, got %s\n", *mode)
		os.Exit(2)
	}
	fmt.Printf("NETBENCH_LISTENING port=%d\n", listener.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	log.Fatal(http.Serve(listener, handler))
}
