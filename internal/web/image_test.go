package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/media/mediatest"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// imageApp is the router on a fresh database with the image cache of
// cacheBytes (negative: none) and a log kept at debug level.
func imageApp(t *testing.T, cacheBytes int64) (*app, *logBuffer, http.Handler) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	logs := &logBuffer{}
	srv := httptest.NewUnstartedServer(nil)
	h := web.New(store, accounts, web.Config{BaseURL: "http://" + srv.Listener.Addr().String(), ImageCacheBytes: cacheBytes, RequestLog: true},
		slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}, logs, h
}

// addImage stores data as an item of a new study and returns its sha256.
func addImage(t *testing.T, a *app, slug string, data []byte) string {
	t.Helper()
	st := a.study(slug, 0, 3, study.StatusDraft)
	im, err := media.Check(slug+".png", data, 10<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(t.Context(), st.ID, []media.Image{im}); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	return im.SHA256
}

// totalAlloc is the bytes the process allocated so far.
func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestImageRequestsShareMemory: 32 concurrent requests of a 6 MiB image
// allocate about one image, not one each (the probe: 32 clients on a 10
// MiB image took 778 MiB), whether the image is served from the cache or,
// with no cache, streamed in chunks. Each response is the whole image.
// Not parallel: TotalAlloc is the process's, and a parallel test's
// allocations counted as the server's (16.5 images under -race on a
// loaded machine, 2026-11-27).
func TestImageRequestsShareMemory(t *testing.T) { //nolint:paralleltest // measures the process's allocations, so runs alone
	img := mediatest.NoisePNG(1250, 1250, 1)
	size := uint64(len(img))
	for _, c := range []struct { //nolint:paralleltest // subtests measure one shared image cache
		name  string
		cache int64
	}{{"cached", 0}, {"streamed", -1}} {
		t.Run(c.name, func(t *testing.T) {
			a, logs, _ := imageApp(t, c.cache)
			sum := addImage(t, a, "big", img)
			url := a.srv.URL + "/img/" + sum
			const clients = 32
			runtime.GC()
			before := totalAlloc()
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := http.Get(url)
					if err != nil {
						errs <- err
						return
					}
					defer res.Body.Close()
					n, err := io.Copy(io.Discard, res.Body)
					if err != nil || res.StatusCode != 200 || uint64(n) != size {
						errs <- fmt.Errorf("%d, %d bytes of %d, %v", res.StatusCode, n, size, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			// Reading the image whole per request allocates at least one
			// image per client. Under the race detector sync.Pool drops a
			// quarter of what is put back (pgx's read buffers among it), so
			// there the bound is half the clients.
			most := uint64(4)
			if raceEnabled {
				most = clients / 2
			}
			got := totalAlloc() - before
			t.Logf("%d requests allocated %.1f images' worth", clients, float64(got)/float64(size))
			if got > most*size {
				t.Fatalf("%d requests of a %d-byte image allocated %d bytes (%.1f images), want at most %d images",
					clients, size, got, float64(got)/float64(size), most)
			}
			if e := logs.lines("ERROR"); len(e) > 0 {
				t.Fatal(e)
			}
		})
	}
}

// TestImageCorruptRowNeverServed: a row whose bytes do not hash to its
// sha256 is a 404 when it is checked before anything is sent (cached, or
// not an image at all), and a cut connection when it is streamed: never a
// complete 200. A Range request of a good image gets its range.
func TestImageCorruptRowNeverServed(t *testing.T) {
	t.Parallel()
	big := mediatest.NoisePNG(600, 600, 2) // several chunks
	bad := append([]byte{}, big...)
	bad[len(bad)-20] ^= 0xFF     // inside IEND's CRC: the type still sniffs as PNG
	for _, c := range []struct { //nolint:paralleltest // subtests share one app's image cache
		name  string
		cache int64
	}{{"cached", 0}, {"streamed", -1}} {
		t.Run(c.name, func(t *testing.T) {
			a, _, _ := imageApp(t, c.cache)
			good := addImage(t, a, "good", big)
			st := a.study("bad", 0, 3, study.StatusDraft)
			badSum := sha(mediatest.SmallPNG(3))
			if _, err := a.pool.Exec(t.Context(), `INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
				VALUES ($1, 0, 'x', 'x.png', 'image/png', $2, 600, 600, $3), ($1, 1, 'y', 'y.png', 'image/png', $4, 1, 1, $5)`,
				st.ID, badSum, bad, sha([]byte("<html>")), []byte("<html><script>alert(1)</script>")); err != nil {
				t.Fatal(err)
			}
			res, err := http.Get(a.srv.URL + "/img/" + badSum)
			if err == nil {
				body, rerr := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == 200 && rerr == nil {
					t.Fatalf("a corrupted image was served whole: %d bytes", len(body))
				}
				if c.cache == 0 && res.StatusCode != 404 {
					t.Fatalf("cached: %d, want 404", res.StatusCode)
				}
			}
			if r := a.do(http.DefaultClient, "GET", "/img/"+sha([]byte("<html>")), nil, nil); r.StatusCode != 404 {
				t.Fatalf("HTML row: %d", r.StatusCode)
			}
			r := a.do(http.DefaultClient, "GET", "/img/"+good, nil, map[string]string{"Range": "bytes=100-199"})
			if c.cache == 0 && (r.StatusCode != http.StatusPartialContent || r.body != string(big[100:200])) {
				t.Fatalf("range: %d, %d bytes", r.StatusCode, len(r.body))
			}
			if c.cache < 0 && (r.StatusCode != 200 || r.body != string(big)) {
				t.Fatalf("streamed range request: %d, %d bytes", r.StatusCode, len(r.body))
			}
			if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("ETag") != `"`+good+`"` ||
				!strings.Contains(r.Header.Get("Cache-Control"), "immutable") || r.Header.Get("Content-Type") != "image/png" {
				t.Fatalf("headers: %v", r.Header)
			}
		})
	}
}

// brokenPipe is a ResponseWriter whose connection breaks after 64 KiB, as
// when a client hangs up mid-response; the request's context is not (yet)
// cancelled, as it often is not when the write fails.
type brokenPipe struct {
	h    http.Header
	sent int
}

func (b *brokenPipe) Header() http.Header { return b.h }
func (b *brokenPipe) WriteHeader(int)     {}
func (b *brokenPipe) Write(p []byte) (int, error) {
	if b.sent+len(p) > 64<<10 {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}
	}
	b.sent += len(p)
	return len(p), nil
}

// TestImageClientHangUpIsNotAnError: a client that stops reading an image
// (a write that fails with a broken pipe, and a real client that closes
// its connection mid-image) is logged below ERROR, cached or streamed.
func TestImageClientHangUpIsNotAnError(t *testing.T) {
	t.Parallel()
	img := mediatest.NoisePNG(1000, 1000, 3)
	for _, c := range []struct { //nolint:paralleltest // subtests read one shared request log
		name  string
		cache int64
	}{{"cached", 0}, {"streamed", -1}} {
		t.Run(c.name, func(t *testing.T) {
			a, logs, h := imageApp(t, c.cache)
			sum := addImage(t, a, "big", img)
			for range 2 { // a miss, then (cached) a hit
				req := httptest.NewRequestWithContext(context.Background(), "GET", "/img/"+sum, nil)
				func() {
					defer func() { // as net/http does: a cut response is no panic
						if v := recover(); v != nil && v != http.ErrAbortHandler {
							panic(v)
						}
					}()
					h.ServeHTTP(&brokenPipe{h: http.Header{}}, req)
				}()
			}
			if e := logs.lines("ERROR"); len(e) > 0 {
				t.Fatalf("a broken pipe logged at ERROR:\n%s", strings.Join(e, "\n"))
			}
			ended := strings.Count(logs.String(), "msg=request ")

			conn, err := net.Dial("tcp", a.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "GET /img/%s HTTP/1.1\r\nHost: x\r\n\r\n", sum)
			br := bufio.NewReader(conn)
			if _, err := io.ReadFull(br, make([]byte, 64<<10)); err != nil {
				t.Fatal(err)
			}
			if err := conn.(*net.TCPConn).SetLinger(0); err != nil { // hang up hard: a reset
				t.Fatal(err)
			}
			conn.Close()
			// The request log's line says the handler ended.
			deadline := time.Now().Add(20 * time.Second)
			for strings.Count(logs.String(), "msg=request ") == ended && len(logs.lines("ERROR")) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the image requests did not end:\n%s", logs.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if e := logs.lines("ERROR"); len(e) > 0 {
				t.Fatalf("a client hang-up logged at ERROR:\n%s", strings.Join(e, "\n"))
			}
			if c.cache < 0 && len(logs.lines("DEBUG")) == 0 {
				t.Fatalf("the streamed hang-up was not logged at debug:\n%s", logs.String())
			}
		})
	}
}
