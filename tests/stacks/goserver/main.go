// An HTTP server and its clients in one process (cgo: dynamically linked),
// with busy goroutines that the scheduler preempts with SIGURG and
// goroutines locked to threads that exit with them. Prints a summary that
// does not depend on timing.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// #include <stdlib.h>
import "C"

var stop int32

func busy(wg *sync.WaitGroup, n *uint64) {
	defer wg.Done()
	for atomic.LoadInt32(&stop) == 0 {
		atomic.AddUint64(n, 1)
	}
}

func lockedExit(wg *sync.WaitGroup, ok *int32) {
	defer wg.Done()
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		// returning without unlocking ends the thread
		atomic.AddInt32(ok, 1)
		done <- true
	}()
	<-done
}

func main() {
	_ = C.abs(1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = byte('a' + len(r.URL.Path)%26)
		}
		w.Write(b)
	})
	go http.Serve(ln, mux)

	var bwg sync.WaitGroup
	var spins uint64
	for i := 0; i < 4; i++ {
		bwg.Add(1)
		go busy(&bwg, &spins)
	}
	var lwg sync.WaitGroup
	var locked int32
	for i := 0; i < 20; i++ {
		lwg.Add(1)
		go lockedExit(&lwg, &locked)
	}

	const clients, requests = 8, 50
	var cwg sync.WaitGroup
	var good, bytes int64
	url := "http://" + ln.Addr().String() + "/path"
	for c := 0; c < clients; c++ {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: c%2 == 0}}
			for i := 0; i < requests; i++ {
				resp, err := cl.Get(url)
				if err != nil {
					fmt.Println("get:", err)
					continue
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					atomic.AddInt64(&good, 1)
					atomic.AddInt64(&bytes, n)
				}
			}
		}()
	}
	cwg.Wait()
	lwg.Wait()
	atomic.StoreInt32(&stop, 1)
	bwg.Wait()
	fmt.Printf("requests %d ok, %d bytes; locked threads exited %d; busy goroutines ran: %v\n",
		good, bytes, locked, spins > 0)
}
