package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestDeadlineWriterExcludesServerTime: a handler that spends longer than
// the transfer window between two writes (reading the next piece of a
// stream from the database, say) does not get its reading client cut off.
// Before, the deadline set at one write ran through the handler's own
// pause and cut the connection at the next write.
func TestDeadlineWriterExcludesServerTime(t *testing.T) {
	t.Parallel()
	const window = 100 * time.Millisecond
	s := &Server{cfg: withShedDefaults(Config{Timeout: time.Second, TransferWindow: window, TransferMinBytes: 16 << 10,
		BodyReadTimeout: time.Second})}
	s.slots = make(chan struct{}, 1)
	piece := make([]byte, 4<<10)
	srv := httptest.NewServer(s.deadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range 4 {
			if _, err := w.Write(piece); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(3 * window) // the server's own work, not the client's
		}
	})))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil || n != 4*int64(len(piece)) {
		t.Fatalf("a reading client got %d of %d bytes (%v); the server's pauses cut it off", n, 4*len(piece), err)
	}
}
