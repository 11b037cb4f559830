// A net/http hello server for the netbench benchmarks: the same 13-byte answer as httpd.c,
// served by Go's standard library (run it with GOMAXPROCS=1 to keep it on one core).
// Prints "NETBENCH_LISTENING port=<n>" once listening; --port 0 picks a free port.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to bind")
	port := flag.Int("port", 0, "port to bind (0: any free port)")
	mode := flag.String("mode", "hello", "only hello is supported")
	flag.Parse()
	if *mode != "hello" {
		fmt.Fprintf(os.Stderr, "hello_go: --mode must be hello, got %s\n", *mode)
		os.Exit(2)
	}
	listener, err := net.Listen("tcp", fmt.Sprintf("%s:%d", *host, *port))
	if err != nil {
		log.Fatal(err)
	}
	body := []byte("Hello, World!")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})
	fmt.Printf("NETBENCH_LISTENING port=%d\n", listener.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	log.Fatal(http.Serve(listener, handler))
}
