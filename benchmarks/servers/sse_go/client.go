// A minimal Go client of server-sent events, the benchmark's reference for CPU per event:
// CONNECTIONS goroutines, each reading one stream after another from URL over its own
// kept-alive connection for DURATION seconds, counting the data: lines that are not
// [DONE]. Prints "streams=<n> events=<n> first_event_p50_ms=<ms> gap_p50_ms=<ms>": the
// median time from a request's send to its first data: line, and between data: lines.
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
	"sort"
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
	var mutex sync.Mutex
	var firsts, gaps []float64
	data, done := []byte("data:"), []byte("data: [DONE]")
	for i := 0; i < connections; i++ {
		wait.Add(1)
		go func() {
			defer wait.Done()
			var myFirsts, myGaps []float64
			defer func() {
				mutex.Lock()
				firsts = append(firsts, myFirsts...)
				gaps = append(gaps, myGaps...)
				mutex.Unlock()
			}()
			for time.Now().Before(deadline) {
				sent := time.Now()
				response, err := client.Get(url)
				if err != nil {
					continue
				}
				reader := bufio.NewReader(response.Body)
				last := time.Time{}
				for {
					line, err := reader.ReadSlice('\n')
					if bytes.HasPrefix(line, data) && !bytes.HasPrefix(line, done) {
						events.Add(1)
						now := time.Now()
						if last.IsZero() {
							myFirsts = append(myFirsts, float64(now.Sub(sent))/1e6)
						} else {
							myGaps = append(myGaps, float64(now.Sub(last))/1e6)
						}
						last = now
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
	fmt.Printf("streams=%d events=%d first_event_p50_ms=%.3f gap_p50_ms=%.3f\n",
		streams.Load(), events.Load(), median(firsts), median(gaps))
}

func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sort.Float64s(values)
	return values[(len(values)-1)/2]
}
