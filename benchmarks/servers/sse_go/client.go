// A minimal Go client of server-sent events, the benchmark's reference for CPU per event:
// CONNECTIONS goroutines, each reading one stream after another from URL over its own
// kept-alive connection for DURATION seconds, counting the data: lines that are not
// [DONE]. Prints "streams=<n> events=<n>".
//
// usage: client URL CONNECTIONS DURATION_S
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: client URL CONNECTIONS DURATION_S")
		os.Exit(2)
	}
	url := os.Args[1]
	connections, _ := strconv.Atoi(os.Args[2])
	seconds, _ := strconv.ParseFloat(os.Args[3], 64)
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	transport := &http.Transport{MaxIdleConnsPerHost: connections, MaxConnsPerHost: connections}
	client := &http.Client{Transport: transport}
	var streams, events atomic.Int64
	var wait sync.WaitGroup
	data, done := []byte("data:"), []byte("data: [DONE]")
	for i := 0; i < connections; i++ {
		wait.Add(1)
		go func() {
			defer wait.Done()
			for time.Now().Before(deadline) {
				response, err := client.Get(url)
				if err != nil {
					continue
				}
				reader := bufio.NewReader(response.Body)
				for {
					line, err := reader.ReadSlice('\n')
					if bytes.HasPrefix(line, data) && !bytes.HasPrefix(line, done) {
						events.Add(1)
					}
					if err == io.EOF || (err != nil && err != bufio.ErrBufferFull) {
						break
					}
				}
				response.Body.Close()
				streams.Add(1)
			}
		}()
	}
	wait.Wait()
	fmt.Printf("streams=%d events=%d\n", streams.Load(), events.Load())
}
