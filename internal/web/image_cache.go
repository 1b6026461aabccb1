package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/store"
)

// DefaultImageCacheBytes is the memory the image cache may hold when the
// configuration does not say.
const DefaultImageCacheBytes = 64 << 20

// imageLoadTimeout bounds loading one image into the cache. The load is
// shared by every request waiting for that image, so it does not end with
// the request that started it.
const imageLoadTimeout = 30 * time.Second

// errBadStoredImage is a stored row whose bytes are not an image hashing
// to its sha256: it is never served.
var errBadStoredImage = errors.New("stored item is not an image matching its hash")

// servedType is the content type and file extension an item's bytes are
// served as, found from the content: an image's magic bytes (media.Sniff)
// or a sound's or video's probe (avfile.Probe, the type it was stored
// as). ok is false for anything else, which is never served.
func servedType(data []byte) (contentType, ext string, ok bool) {
	if ct, ext, ok := media.Sniff(data); ok {
		return ct, ext, true
	}
	return probeSound(bytes.NewReader(data), int64(len(data)))
}

// probeSound is servedType of a sound or a video read as a stream of size
// bytes. It probes only for the type: the limits are those of any item an
// upload could have stored, whatever the study's own.
func probeSound(r io.Reader, size int64) (contentType, ext string, ok bool) {
	info, err := avfile.Probe(r, size, avfile.Limits{MaxDuration: time.Hour, MaxBytes: max(size, 1), MaxWidth: 1 << 16, MaxHeight: 1 << 16})
	if err != nil {
		return "", "", false
	}
	return info.MIME, strings.TrimPrefix(info.Ext, "."), true
}

// cachedImage is an image whose bytes were verified (hash and type).
type cachedImage struct {
	sum, contentType, ext string
	data                  []byte
}

// imageCache keeps verified images by sha256 in memory, least recently
// used first out, within a byte budget, so that an image many annotators
// are shown at once is read from PostgreSQL and held once, not once per
// request. Concurrent misses of one image share one load (singleflight);
// loads in flight take their bytes from a second budget of the same size,
// and a miss that finds no room there (or an image over a quarter of the
// budget) is streamed instead (image.go). Images are content-addressed, so
// an entry never goes stale.
type imageCache struct {
	budget int64
	loads  singleflight.Group
	room   *semaphore.Weighted // bytes of loads in flight
	held   *cache.LRU[string, *cachedImage]
}

// newImageCache returns a cache of budget bytes (0 or less: nothing is
// cached, every image is streamed).
func newImageCache(budget int64) *imageCache {
	c := &imageCache{budget: max(budget, 0)}
	c.room = semaphore.NewWeighted(max(c.budget, 1))
	c.held = cache.NewSized[string, *cachedImage](0, c.budget, func(im *cachedImage) int64 { return int64(len(im.data)) })
	return c
}

// fits reports whether an image of size bytes may be cached.
func (c *imageCache) fits(size int64) bool { return size > 0 && size <= c.budget/4 }

// get returns the cached image sum, marking it used.
func (c *imageCache) get(sum string) (*cachedImage, bool) { return c.held.Get(sum) }

// put adds im, evicting the least recently used images past the budget.
func (c *imageCache) put(im *cachedImage) { c.held.Add(im.sum, im) }

// load reads the image sum of size bytes with open, verifies it and caches
// it; concurrent calls for one image share the read. ok is false when the
// loads in flight already hold the budget: the caller streams instead.
func (c *imageCache) load(ctx context.Context, sum string, size int64,
	open func(ctx context.Context) (*store.ImageReader, error)) (im *cachedImage, ok bool, err error) {
	v, err, _ := c.loads.Do(sum, func() (any, error) {
		if im, ok := c.get(sum); ok {
			return im, nil // a load that ended just before this one began
		}
		if !c.room.TryAcquire(size) {
			return nil, nil
		}
		defer c.room.Release(size)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), imageLoadTimeout)
		defer cancel()
		rd, err := open(ctx)
		if err != nil {
			return nil, err
		}
		if rd.Size() != size {
			return nil, fmt.Errorf("load image %s: its size changed from %d to %d", sum, size, rd.Size())
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(rd, data); err != nil {
			return nil, fmt.Errorf("load image %s: %w", sum, err)
		}
		got := sha256.Sum256(data)
		ct, ext, ok := servedType(data)
		if !ok || hex.EncodeToString(got[:]) != sum {
			return nil, errBadStoredImage
		}
		im := &cachedImage{sum: sum, contentType: ct, ext: ext, data: data}
		c.put(im)
		return im, nil
	})
	if err != nil || v == nil {
		return nil, false, err
	}
	return v.(*cachedImage), true, nil
}
