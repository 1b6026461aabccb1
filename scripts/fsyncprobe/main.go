// Command fsyncprobe measures how long the disk takes to make a small write
// durable, the wait every commit of PostgreSQL's has with
// synchronous_commit on: it appends 8 KiB (one WAL page) to a file in
// -dir and calls fdatasync, again and again for -duration, and prints the
// percentiles of those waits. scripts/crowd-bench.sh --fsync-probe runs it
// beside each load, on the filesystem of the benchmark's cluster, so a
// latency tail can be set against the disk's own (docs/benchmarks.md).
//
//	go run ./scripts/fsyncprobe -dir .data/crowd -duration 45s -every 10ms
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	dir := flag.String("dir", ".", "a directory on the filesystem to probe")
	duration := flag.Duration("duration", 30*time.Second, "how long to probe")
	every := flag.Duration("every", 10*time.Millisecond, "pause between two writes")
	flag.Parse()

	f, err := os.CreateTemp(*dir, "fsyncprobe-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	page := make([]byte, 8<<10)
	var waits []time.Duration
	for end := time.Now().Add(*duration); time.Now().Before(end); {
		t0 := time.Now()
		if _, err := f.Write(page); err != nil {
			log.Fatal(err)
		}
		if err := f.Sync(); err != nil { // fsync; on Linux as costly as fdatasync for an appended file
			log.Fatal(err)
		}
		waits = append(waits, time.Since(t0))
		time.Sleep(*every)
	}
	slices.Sort(waits)
	q := func(p float64) float64 {
		return float64(waits[min(len(waits)-1, int(p*float64(len(waits))))]) / float64(time.Millisecond)
	}
	fmt.Printf("fsync of 8 KiB on %s: %d writes, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms\n",
		filepath.Clean(*dir), len(waits), q(0.5), q(0.99), q(0.999), q(1))
}
