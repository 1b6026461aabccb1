package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A JSON body that encoding/json would take with a surprise is refused with
// 400 naming the place, and stores nothing: a key twice (in any case, at
// any depth: the last would win), nesting beyond reason, a number no field
// can hold. The same answer without the surprise is then taken.
func TestJSONBodiesAreStrict(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("js", 3, 5, "open")
	j := a.join("js", "")
	var n nextResp
	if res := a.api("GET", "/api/v1/studies/js/next", j.Token, "", &n); res.StatusCode != http.StatusOK {
		t.Fatalf("next: %d %s", res.StatusCode, res.body)
	}
	qid, left, right := n.QuestionID, n.Left.Index, n.Right.Index
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	for _, c := range []struct {
		name, path, body, want string
	}{
		{"a key twice", "/api/v1/answers",
			fmt.Sprintf(`{"question_id": %q, "closer": %d, "closer": %d}`, qid, left, right), `the key \"closer\" appears twice`},
		{"a key twice, in another case", "/api/v1/answers",
			fmt.Sprintf(`{"question_id": %q, "closer": %d, "Closer": %d}`, qid, left, right), `the key \"Closer\" appears twice`},
		{"a key twice in a nested object", "/api/v1/studies/js/participants",
			`{"external_id": "w1", "meta": {"k": 1, "k": 2}}`, `the key \"meta.k\" appears twice in the object \"meta\"`},
		{"a key twice in an object in an array", "/api/v1/studies/js/participants",
			`{"external_id": "w1", "list": [1, {"k": 1, "k": 2}]}`, `the key \"list[1].k\" appears twice`},
		{"nested too deep", "/api/v1/studies/js/participants", deep, "nested deeper than"},
		{"a huge number", "/api/v1/answers",
			fmt.Sprintf(`{"question_id": %q, "closer": 1e400}`, qid), "malformed JSON"},
		{"a lone surrogate", "/api/v1/studies/js/participants",
			`{"external_id": "w\ud800"}`, `the value of \"external_id\" is not valid Unicode`},
		{"a NUL deep inside", "/api/v1/studies/js/participants",
			`{"external_id": "w1", "x": [{"y": ["ok", "a\u0000"]}]}`, `the value of \"x[0].y[1]\" contains a NUL character`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			before := a.count(stored)
			res := a.api("POST", c.path, j.Token, c.body, nil)
			if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, c.want) {
				t.Errorf("%d %s, want 400 with %s", res.StatusCode, strings.TrimSpace(res.body), c.want)
			}
			if after := a.count(stored); after != before {
				t.Errorf("%d rows stored", after-before)
			}
		})
	}
	if res := a.api("POST", "/api/v1/studies/js/participants", "", `{"external_id": "\ud83d\ude00 \\ud800"}`, nil); res.StatusCode != http.StatusCreated {
		t.Errorf("a surrogate pair and an escaped backslash: %d %s", res.StatusCode, res.body)
	}
	body := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, qid, left)
	if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
		t.Fatalf("the answer without duplicates: %d %s", res.StatusCode, res.body)
	}
}
