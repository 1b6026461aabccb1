package loadgen

import (
	"encoding/json"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// The annotator reads a question's options from the format vocabulary
// (format, options) and, from a server older than it, from left and right.
func TestNextReplyOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, body string }{
		{"format", `{"question_id": "q", "format": "triplet", "anchor": {"index": 0}, "options": [{"index": 3}, {"index": 5}], "left": {"index": 3}, "right": {"index": 5}}`},
		{"older server", `{"question_id": "q", "anchor": {"index": 0}, "left": {"index": 3}, "right": {"index": 5}}`},
	} {
		var q nextReply
		if err := json.Unmarshal([]byte(c.body), &q); err != nil {
			t.Fatal(err)
		}
		format, options := q.options()
		if format != study.FormatTriplet || len(options) != 2 || options[0].Index != 3 || options[1].Index != 5 {
			t.Errorf("%s: %q %+v, want a triplet with options 3 and 5", c.name, format, options)
		}
	}
	var none nextReply
	if err := json.Unmarshal([]byte(`{"question_id": "q", "format": "odd-one-out", "anchor": {"index": 0}}`), &none); err != nil {
		t.Fatal(err)
	}
	if _, options := none.options(); len(options) != 0 {
		t.Errorf("a question without options got %+v", options)
	}
}
