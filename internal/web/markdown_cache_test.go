package web

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/study"
)

// pathologicalMarkdown are texts of the largest size a study may save that
// cost goldmark quadratic time or more without boundMarkdown (seconds
// each for the deep nestings and the unclosed link destinations).
func pathologicalMarkdown() map[string]string {
	n := study.MaxStudyTextBytes
	fill := func(unit string) string { return strings.Repeat(unit, n/len(unit)) }
	lines := func(line func(i int) string) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(line(i))
		}
		return b.String()[:n]
	}
	return map[string]string{
		"quotes":          fill(">"),
		"quotes-spaced":   fill("> "),
		"quote-lists":     fill("> - "),
		"lists-inline":    fill("- "),
		"lists-ordered":   fill("1. "),
		"lists-indented":  lines(func(i int) string { return strings.Repeat("  ", i%2000) + "- x\n" }),
		"lists-stairs":    lines(func(i int) string { return strings.Repeat(" ", i%3000) + "* " }),
		"stars":           fill("*"),
		"star-words":      fill("*a"),
		"underscores":     fill("_a"),
		"stars-unders":    fill("*_"),
		"brackets":        fill("["),
		"link-openers":    fill("[a]("),
		"image-openers":   fill("!["),
		"backticks":       fill("`"),
		"backtick-words":  fill("`a"),
		"html-blocks":     fill("<div>"),
		"html-attributes": fill("<a href='"),
		"autolinks":       fill("<http://"),
		"entities":        fill("&#"),
		"link-defs":       fill("[a]: "),
		"table":           "| a | b |\n|---|---|\n" + lines(func(int) string { return "| x | y |\n" }),
		"list-items":      fill("- a\n"),
		"quote-lines":     lines(func(i int) string { return strings.Repeat(">", i%9) + " a\n" }),
		"link-spaced":     fill("[a]( "),
		"links-nested":    fill("[[[[[[[[a]]]]]]]]("),
		"html-comments":   fill("<!--"),
		"emphasis-mixed":  fill("**a_"),
		"headings":        fill("# *a\n"),
		"blank-lines":     fill("a\n\n"),
	}
}

// BenchmarkRenderMarkdownWorst renders each pathological text (uncached):
// docs/benchmarks.md, "Markdown". cpu-ms/op is the process's CPU time (user
// and system, garbage collection included) per render, which a busy machine
// does not inflate as it does ns/op.
func BenchmarkRenderMarkdownWorst(b *testing.B) {
	for name, src := range pathologicalMarkdown() {
		b.Run(name, func(b *testing.B) {
			before := cpuTime()
			for b.Loop() {
				renderMarkdownHTML(src)
			}
			b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Nesting is bounded: a line of block-quote or list markers opens at most
// maxContainerMarkers blocks, however many it has (goldmark's cost grows
// with the square of the depth: 99,000 ">" took 16 s).
func TestRenderMarkdownBoundsNesting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, open string }{
		{strings.Repeat(">", 5000), "<blockquote>"},
		{strings.Repeat("> ", 5000), "<blockquote>"},
		{strings.Repeat("- ", 5000) + "x", "<ul>"},
		{strings.Repeat("1. ", 5000) + "x", "<ol>"},
		{strings.Repeat("> - ", 5000) + "x", "<blockquote>"},
	} {
		html := renderMarkdownHTML(c.src)
		if got := strings.Count(html, c.open); got == 0 || got > maxContainerMarkers {
			t.Errorf("%.12q...: %d × %s, want 1 to %d", c.src, got, c.open, maxContainerMarkers)
		}
	}
	// Indentation nests lists across lines: bounded by maxContainerColumn.
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "%s- x\n", strings.Repeat("  ", i))
	}
	if got := strings.Count(renderMarkdownHTML(b.String()), "<ul>"); got > maxContainerColumn/2+1 {
		t.Errorf("2000 indented list levels: %d × <ul>, want at most %d", got, maxContainerColumn/2+1)
	}
}

// Past maxInlineMarks of one character in a paragraph (or maxWordCloses
// "]" in a word), the rest are text: 2,000 "[a](" render as the characters
// they are, and a new paragraph starts counting afresh.
func TestRenderMarkdownBoundsInlineMarkup(t *testing.T) {
	t.Parallel()
	src := strings.Repeat("[a](", 2000)
	out := string(boundMarkdown(src))
	if got := strings.Count(out, `\[`); got != 2000-maxInlineMarks {
		t.Errorf("%d escaped [, want %d", got, 2000-maxInlineMarks)
	}
	// One word: the "]" past maxWordCloses are text.
	if got := strings.Count(out, `\]`); got != 2000-maxWordCloses {
		t.Errorf("%d escaped ], want %d", got, 2000-maxWordCloses)
	}
	links := strings.Repeat("[x](https://example.org) ", maxInlineMarks)
	html := renderMarkdownHTML(links + "\n\n" + links)
	if got := strings.Count(html, `<a href="https://example.org"`); got != 2*maxInlineMarks {
		t.Errorf("%d links in two paragraphs of %d, want all", got, maxInlineMarks)
	}
	if got := strings.Count(renderMarkdownHTML(strings.Repeat("*a* ", maxInlineMarks)), "<em>"); got != maxInlineMarks/2 {
		t.Errorf("%d emphases, want %d", got, maxInlineMarks/2)
	}
}

// Ordinary Markdown passes through boundMarkdown unchanged.
func TestBoundMarkdownKeepsOrdinaryText(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"Pick the **closer** one.\n\n- a\n- b\n  - c\n    1. d\n\n> quoted *text* with `code` and [a link](https://x.org).\n",
		"* * *\n\n---\n\n1) one\n2) two\n\n    code - with * marks\n",
		"> > > > > > > > eight levels\n",
		"\\> \\- \\* escaped\n",
	} {
		if got := string(boundMarkdown(src)); got != src {
			t.Errorf("boundMarkdown(%q) = %q", src, got)
		}
	}
}

// The cache keeps at most maxRendered texts, evicting the least recently
// used: a text used since is kept.
func TestMarkdownCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	var c markdownCache
	c.render("first")
	for i := range maxRendered - 1 {
		c.render(fmt.Sprintf("text %d", i))
	}
	c.render("first") // used again: now the most recent
	c.render("one more")
	if n := c.renders.Load(); n != maxRendered+1 {
		t.Fatalf("%d renders, want %d", n, maxRendered+1)
	}
	c.render("first")
	if n := c.renders.Load(); n != maxRendered+1 {
		t.Errorf("the text used last was evicted (%d renders)", n)
	}
	c.render("text 0")
	if n := c.renders.Load(); n != maxRendered+2 {
		t.Errorf("the least recently used text was kept (%d renders)", n)
	}
	if n := c.texts().Len(); n != maxRendered {
		t.Errorf("%d entries, want %d", n, maxRendered)
	}
}

// Many first views of one text at once render it once.
func TestMarkdownCacheRendersConcurrentFirstViewsOnce(t *testing.T) {
	t.Parallel()
	var c markdownCache
	src := strings.Repeat("Pick the **closer** one. ", 1000)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() { c.render(src) })
	}
	wg.Wait()
	if n := c.renders.Load(); n != 1 {
		t.Fatalf("32 concurrent first views rendered %d times, want 1", n)
	}
}
