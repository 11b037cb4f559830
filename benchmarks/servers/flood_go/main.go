// A minimal echo flood client, the yardstick for `netbench echo` (benchmarks/bench_echo_flood.py).
//
// usage: flood_go HOST:PORT CONNECTIONS BYTES CHUNK SECONDS
//
// Each connection repeats one exchange: it writes BYTES in CHUNK-sized writes while it reads
// the echo back into a preallocated buffer, and checks every byte. Connections are opened
// before the window. At the end it prints one line:
// FLOOD exchanges=N verify_errors=N io_errors=N seconds=S
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: flood_go HOST:PORT CONNECTIONS BYTES CHUNK SECONDS")
		os.Exit(2)
	}
	addr := os.Args[1]
	conns, _ := strconv.Atoi(os.Args[2])
	size, _ := strconv.Atoi(os.Args[3])
	chunk, _ := strconv.Atoi(os.Args[4])
	seconds, _ := strconv.ParseFloat(os.Args[5], 64)
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	opened := make([]net.Conn, 0, conns)
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "connect %d: %v\n", i, err)
			os.Exit(1)
		}
		opened = append(opened, c)
	}
	var exchanges, verifyErrors, ioErrors atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	for _, c := range opened {
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, size)
			written := make(chan error, 1)
			for !stop.Load() {
				go func() {
					for off := 0; off < size; off += chunk {
						end := off + chunk
						if end > size {
							end = size
						}
						if _, err := c.Write(payload[off:end]); err != nil {
							written <- err
							return
						}
					}
					written <- nil
				}()
				_, rerr := io.ReadFull(c, buf)
				werr := <-written
				if rerr != nil || werr != nil {
					ioErrors.Add(1)
					return
				}
				if !bytes.Equal(buf, payload) {
					verifyErrors.Add(1)
				}
				if time.Now().After(deadline) {
					return
				}
				exchanges.Add(1)
			}
		}(c)
	}
	time.Sleep(time.Until(deadline))
	stop.Store(true)
	elapsed := time.Since(start).Seconds()
	done := exchanges.Load()
	fmt.Printf("FLOOD exchanges=%d verify_errors=%d io_errors=%d seconds=%.3f\n",
		done, verifyErrors.Load(), ioErrors.Load(), elapsed)
	os.Exit(0)
}
