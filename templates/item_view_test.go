package templates

import (
	"strings"
	"testing"
)

// An item view draws an image as a thumbnail, a sound (issue 29) as its
// label linking to the sound (an <img> of a sound is a broken picture),
// and a text item as its text.
func TestItemView(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		it         ItemView
		want, lack []string
	}{
		{ItemView{Label: "disk", URL: "/img/b"}, []string{`<img class="thumb" src="/img/b"`}, nil},
		{ItemView{Label: "rain", Sound: "/img/s"}, []string{`href="/img/s"`, "♪ rain"}, []string{"<img"}},
		{ItemView{Label: "wave", Video: "/img/v"}, []string{`href="/img/v"`, "▶ wave", "video-item"}, []string{"<img", "<video"}},
		{ItemView{Label: "fr", Text: "fraise"}, []string{">fraise<"}, []string{"<img", "href="}},
	} {
		var b strings.Builder
		if err := itemView(c.it).Render(t.Context(), &b); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%+v renders %s, without %q", c.it, b.String(), w)
			}
		}
		for _, l := range c.lack {
			if strings.Contains(b.String(), l) {
				t.Errorf("%+v renders %s, with %q", c.it, b.String(), l)
			}
		}
	}
}
