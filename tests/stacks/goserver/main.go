// An HTTP server and its clients in one process, with busy goroutines that
// the scheduler preempts with SIGURG, goroutines locked to threads that
// exit with them, a known number of getppid calls, CPU time in a main.*
// function, and os.Executable. Prints a summary that does not depend on
// timing. Built two ways: with cgo (dynamically linked, t800; cgo.go) and
// without (statically linked, t950).
//
//	gostatic [ROUNDS]   ROUNDS (default 1) times the clients' requests and
//	                    the hashing work: more samples for a profile
package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

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

// hashWork: CPU time in a main.* function, for the profile (not inlined:
// its frame must show).
//
//go:noinline
func hashWork(rounds int) [32]byte {
	sum := sha256.Sum256([]byte("exitscope"))
	for i := 0; i < rounds*200000; i++ {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

func main() {
	rounds := 1
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	touchC()
	exe, err := os.Executable()
	fmt.Println("executable:", exe, err)

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

	// getppid from one goroutine: a count that the
	// Go runtime's own (timing-dependent) calls never add to
	ppids := make(chan int)
	go func() {
		n := 0
		for i := 0; i < 1000; i++ {
			if syscall.Getppid() > 0 {
				n++
			}
		}
		ppids <- n
	}()

	clients, requests := 8, 50*rounds
	var cwg sync.WaitGroup
	var good, bytes int64
	url := "http://" + ln.Addr().String() + "/path"
	for c := 0; c < clients; c++ {
		cwg.Add(1)
		go func(c int) {
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
		}(c)
	}
	sum := hashWork(rounds)
	cwg.Wait()
	lwg.Wait()
	atomic.StoreInt32(&stop, 1)
	bwg.Wait()
	fmt.Printf("requests %d ok, %d bytes; getppid %d; locked threads exited %d; busy goroutines ran: %v; hash %x\n",
		good, bytes, <-ppids, locked, spins > 0, sum[:4])
}
