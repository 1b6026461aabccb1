package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"
)

var (
	prefetchRE = regexp.MustCompile(`<link rel="prefetch" as="image" href="([^"]+)">`)
	imgSrcRE   = regexp.MustCompile(`<img src="(/img/[0-9a-f]+)"`)
)

// The question page names the next question's images, issued ahead, for
// the browser to fetch while the question is shown: the page the answer
// returns shows exactly those images, and the last question names none.
func TestQuestionPageFetchesTheNextImagesAhead(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("ahead", 12, 4, "open")
	c := a.client()
	if res := a.do(c, "POST", "/s/ahead/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", res.StatusCode)
	}
	page := a.do(c, "GET", "/s/ahead/q", nil, nil)
	for i := 0; i < 4; i++ {
		ahead := submatches(prefetchRE, page.body)
		if i == 3 {
			if len(ahead) != 0 {
				t.Fatalf("the last question names images ahead: %v", ahead)
			}
			break
		}
		if len(ahead) != 3 {
			t.Fatalf("question %d names %d images ahead, want 3:\n%s", i+1, len(ahead), page.body)
		}
		form := url.Values{"question_id": {questionIDRE.FindStringSubmatch(page.body)[1]}, "closer": {closerRE.FindStringSubmatch(page.body)[1]}}
		page = a.do(c, "POST", "/s/ahead/answer", form, map[string]string{"X-Closer-Next": "1"})
		if shown := submatches(imgSrcRE, page.body); page.StatusCode != http.StatusOK || !slices.Equal(shown, ahead) {
			t.Fatalf("answer %d: %d, the next question shows %v; the page before named %v", i+1, page.StatusCode, shown, ahead)
		}
	}
}

// The API names the next question's images too (ahead_images), and the
// answer's next question shows them.
func TestAPINextNamesTheImagesAhead(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("api-ahead", 12, 3, "open")
	j := a.join("api-ahead", "")
	var n nextResp
	a.api("GET", "/api/v1/studies/api-ahead/next", j.Token, "", &n)
	for i := 0; i < 2; i++ {
		if len(n.AheadImages) != 3 {
			t.Fatalf("question %d: ahead_images %v", i+1, n.AheadImages)
		}
		var r answerNextResp
		a.api("POST", "/api/v1/answers", j.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d, "next": true}`, n.QuestionID, n.Left.Index), &r)
		var next nextResp
		if err := json.Unmarshal(r.Next, &next); err != nil {
			t.Fatal(err)
		}
		if shown := []string{next.Anchor.ImageURL, next.Left.ImageURL, next.Right.ImageURL}; !slices.Equal(shown, n.AheadImages) {
			t.Fatalf("answer %d: next shows %v, ahead were %v", i+1, shown, n.AheadImages)
		}
		n = next
	}
	if n.AheadImages != nil {
		t.Fatalf("the last question has ahead_images %v", n.AheadImages)
	}
}

func submatches(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
