package web

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"golang.org/x/sync/singleflight"

	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/study"
)

var (
	markdown = goldmark.New()
	sanitize = bluemonday.UGCPolicy()
)

// markdownCache keeps rendered Markdown by the sha256 of its source, so a
// text version is rendered once however many pages show it: a study's
// instructions appear on every landing and question page, and rendering and
// sanitising them each time would cost more than the rest of the page. It
// is a least-recently-used cache bounded both in entries and in the bytes of
// HTML it holds; concurrent first views of one text share one render
// (singleflight). The zero value is ready to use.
type markdownCache struct {
	once     sync.Once                             // makes rendered on first use
	rendered *cache.LRU[[sha256.Size]byte, string] // HTML by the sha256 of its source

	flight singleflight.Group
	// renders counts the texts rendered (tests check that a page's text
	// is rendered once, not on every view).
	renders atomic.Int64
}

// The cache's bounds: studies are few and each edit adds a version; the
// bytes bound keeps the worst case (every entry a maximal text) small.
const (
	maxRendered      = 256
	maxRenderedBytes = 16 << 20
)

// texts returns the cache of rendered texts, making it on first use.
func (c *markdownCache) texts() *cache.LRU[[sha256.Size]byte, string] {
	c.once.Do(func() {
		c.rendered = cache.NewSized[[sha256.Size]byte, string](maxRendered, maxRenderedBytes,
			func(html string) int64 { return int64(len(html)) })
	})
	return c.rendered
}

// render returns src rendered (renderMarkdownHTML), from the cache when it
// was rendered before.
func (c *markdownCache) render(src string) templ.Component {
	key := sha256.Sum256([]byte(src))
	texts := c.texts()
	if html, ok := texts.Get(key); ok {
		return templ.Raw(html)
	}
	v, _, _ := c.flight.Do(string(key[:]), func() (any, error) {
		if html, ok := texts.Get(key); ok { // rendered while this call waited
			return html, nil
		}
		c.renders.Add(1)
		html := renderMarkdownHTML(src)
		texts.Add(key, html) // not kept past maxRenderedBytes
		return html, nil
	})
	return templ.Raw(v.(string))
}

// renderMarkdownHTML renders researcher-written text (plain text or
// Markdown) as sanitised HTML. The text is cut to collect.MaxStudyTextBytes
// (texts saved before that limit existed) and its markup bounded
// (boundMarkdown) first, so that no text costs more than a few
// milliseconds: goldmark's parsers are quadratic in nesting depth and in
// some inline constructs on one line or in one paragraph.
func renderMarkdownHTML(src string) string {
	if len(src) > study.MaxStudyTextBytes {
		cut := study.MaxStudyTextBytes
		for cut > 0 && !utf8.RuneStart(src[cut]) {
			cut--
		}
		src = src[:cut]
	}
	var buf bytes.Buffer
	if err := markdown.Convert(boundMarkdown(src), &buf); err != nil {
		return "<p>" + templ.EscapeString(src) + "</p>"
	}
	return string(sanitize.SanitizeBytes(buf.Bytes()))
}

// The markup boundMarkdown lets through.
const (
	// maxContainerMarkers is how many block-quote and list markers one
	// line may open, maxContainerColumn the column past which a line opens
	// no more: together they bound the nesting of blocks (a list nests by
	// indentation across lines too) to about 30.
	maxContainerMarkers = 8
	maxContainerColumn  = 48
	// maxInlineMarks is how many of each inline markup character ([ ] * _
	// ` <) a paragraph (a run of non-blank lines) may use as markup.
	maxInlineMarks = 256
	// maxWordCloses is how many "]" one word (a run without spaces) may
	// use as markup: after each, goldmark scans for a link destination to
	// the next space, so a long word of "[a](" costs its length squared.
	maxWordCloses = 8
	// maxHTMLBlockLine is the longest line that may open an HTML block.
	maxHTMLBlockLine = 4096
)

// inlineMarks are the characters whose inline constructs goldmark may
// rescan to the end of the line or paragraph for every occurrence.
const inlineMarks = "[]*_`<"

// boundMarkdown returns src with the markup past the bounds above escaped
// by a backslash, so that it shows as the character it is: past
// maxContainerMarkers block-quote or list markers on a line (or past
// maxContainerColumn), the next marker; past maxInlineMarks of one
// character in a paragraph or maxWordCloses "]" in a word, each further
// one; a line longer than maxHTMLBlockLine opens no HTML block. Text
// within the bounds is left exactly as written. In code, where a backslash is shown, an escaped
// character shows with its backslash: only a code block with more than
// maxInlineMarks of one character in a paragraph is touched.
func boundMarkdown(src string) []byte {
	out := make([]byte, 0, len(src)+len(src)/16)
	var counts [len(inlineMarks)]int
	for len(src) > 0 {
		line := src
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			line = src[:i+1]
		}
		src = src[len(line):]
		if strings.TrimSpace(line) == "" {
			counts = [len(inlineMarks)]int{} // a blank line ends the paragraph
			out = append(out, line...)
			continue
		}
		rest := line
		out, rest = boundContainers(out, rest)
		if len(rest) > maxHTMLBlockLine && strings.HasPrefix(strings.TrimLeft(rest, " \t"), "<") {
			// goldmark matches a line that may open an HTML block against
			// regular expressions: linear, but slow on a long line.
			n := len(rest) - len(strings.TrimLeft(rest, " \t"))
			out = append(out, rest[:n]...)
			out = append(out, '\\')
			rest = rest[n:]
		}
		wordCloses := 0
		for i := 0; i < len(rest); i++ {
			c := rest[i]
			if c == ' ' || c == '\t' {
				wordCloses = 0
			}
			if k := strings.IndexByte(inlineMarks, c); k >= 0 && !escaped(rest, i) {
				counts[k]++
				if c == ']' {
					wordCloses++
				}
				if counts[k] > maxInlineMarks || (c == ']' && wordCloses > maxWordCloses) {
					out = append(out, '\\')
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// escaped says whether s[i] follows an odd run of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for i > 0 && s[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// boundContainers copies the block-quote and list markers that open line
// (with the spaces between them) to out, escaping the first one past the
// bounds, and returns the rest of the line. A thematic break ("* * * *")
// is not a list and is left alone.
func boundContainers(out []byte, line string) ([]byte, string) {
	if thematicBreak(line) {
		return append(out, line...), ""
	}
	markers, col, i := 0, 0, 0
	for i < len(line) {
		switch c := line[i]; c {
		case ' ', '\t':
			col++
			if c == '\t' {
				col += 3 - (col-1)%4
			}
			out = append(out, c)
			i++
			continue
		}
		n := containerMarker(line[i:])
		if n == 0 {
			break
		}
		if markers >= maxContainerMarkers || col >= maxContainerColumn {
			// Escape the marker's last character ("-", "1." → "1\.",
			// ">"): what follows is then text.
			out = append(out, line[i:i+n-1]...)
			out = append(out, '\\')
			out = append(out, line[i+n-1])
			return out, line[i+n:]
		}
		out = append(out, line[i:i+n]...)
		markers++
		col += n
		i += n
	}
	return out, line[i:]
}

// containerMarker returns the length of the block-quote marker (">") or
// list marker ("-", "+", "*", "1." or "1)" followed by a space or the end
// of the line) that s starts with, or 0.
func containerMarker(s string) int {
	if s == "" {
		return 0
	}
	followed := func(n int) int {
		if n == len(s) || s[n] == ' ' || s[n] == '\t' || s[n] == '\n' || s[n] == '\r' {
			return n
		}
		return 0
	}
	switch c := s[0]; {
	case c == '>':
		return 1
	case c == '-' || c == '+' || c == '*':
		return followed(1)
	case c >= '0' && c <= '9':
		n := 1
		for n < len(s) && n < 10 && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n < 10 && n < len(s) && (s[n] == '.' || s[n] == ')') {
			return followed(n + 1)
		}
	}
	return 0
}

// thematicBreak says whether line is a thematic break: three or more of
// one of - * _ and nothing else but spaces and tabs.
func thematicBreak(line string) bool {
	var mark byte
	n := 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t', '\n', '\r':
		case '-', '*', '_':
			if mark != 0 && c != mark {
				return false
			}
			mark = c
			n++
		default:
			return false
		}
	}
	return n >= 3
}
