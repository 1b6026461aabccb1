package http

import (
	"crypto/sha256"
	"sync"

	"github.com/a-h/templ"
)

// markdownCache keeps rendered Markdown by the sha256 of its source: a
// study's instructions appear on every question page, and rendering and
// sanitising them each time would cost more than the rest of the page.
// Past maxRendered entries it starts afresh (studies are few; an edit
// adds an entry).
type markdownCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]string
}

const maxRendered = 256

// render returns src rendered (renderMarkdown), from the cache when it was
// rendered before.
func (c *markdownCache) render(src string) templ.Component {
	key := sha256.Sum256([]byte(src))
	c.mu.Lock()
	html, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		html = renderMarkdownHTML(src)
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxRendered {
			c.m = map[[sha256.Size]byte]string{}
		}
		c.m[key] = html
		c.mu.Unlock()
	}
	return templ.Raw(html)
}
