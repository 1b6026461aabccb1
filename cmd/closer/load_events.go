package main

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/closer-lab/closer/internal/loadgen"
)

// eventLog writes closer load's requests as CSV lines (load --events), one
// per request, from the annotators' goroutines at once.
type eventLog struct {
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	start time.Time
	err   error
}

func newEventLog(f *os.File, start time.Time) *eventLog {
	l := &eventLog{f: f, w: bufio.NewWriterSize(f, 1<<16), start: start}
	_, l.err = l.w.WriteString("at_ms,endpoint,status,latency_ms\n")
	return l
}

func (l *eventLog) add(e loadgen.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	_, l.err = fmt.Fprintf(l.w, "%.1f,%s,%d,%.3f\n", float64(e.At.Sub(l.start).Microseconds())/1000,
		e.Endpoint, e.Status, float64(e.Latency.Microseconds())/1000)
}

// close flushes and closes the file; the first error of any write.
func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.Flush(); l.err == nil {
		l.err = err
	}
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	return l.err
}
