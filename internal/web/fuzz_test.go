package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The JSON bodies the API decodes: the answer, the join, and any object.
type fuzzAnswer struct {
	QuestionID *string `json:"question_id"`
	Closer     *int    `json:"closer"`
	ResponseMS *int    `json:"response_ms"`
}

type fuzzJoin struct {
	ExternalID string `json:"external_id"`
}

// decodeBody runs decodeJSON on body into a new value like dst.
func decodeBody(body []byte, dst any, emptyOK bool) error {
	r := httptest.NewRequest("POST", "/api/v1/answers", bytes.NewReader(body))
	return decodeJSON(httptest.NewRecorder(), r, dst, emptyOK)
}

// FuzzDecodeJSON: whatever the body, decodeJSON never panics and refuses
// with a 4xx only; what it accepts holds only storable text, and encodes
// to a body that it accepts again as the same value.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		`{"question_id": "q", "closer": 3, "response_ms": 800}`,
		`{"external_id": "w1"}`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, newDst := range []func() any{
			func() any { return new(fuzzAnswer) },
			func() any { return new(fuzzJoin) },
			func() any { return new(map[string]any) },
		} {
			dst := newDst()
			err := decodeBody(body, dst, true)
			if err != nil {
				var he *httpError
				if !errors.As(err, &he) || he.status < 400 || he.status >= 500 {
					t.Fatalf("%T: %v is not a 4xx", dst, err)
				}
				if he.msg == "" || !utf8.ValidString(he.msg) {
					t.Fatalf("%T: refused with the message %q", dst, he.msg)
				}
				continue
			}
			if len(bytes.TrimSpace(body)) > 0 {
				// An independent judge of the first value: the JSON v2
				// prototype's decoder refuses invalid UTF-8 and duplicate
				// names (exact ones; decodeJSON also refuses names equal
				// but for case).
				if _, err := jsontext.NewDecoder(bytes.NewReader(body)).ReadValue(); err != nil {
					t.Fatalf("%T: accepted %q, which jsontext refuses: %v", dst, body, err)
				}
			}
			if why := badTextIn(reflect.ValueOf(dst)); why != "" {
				t.Fatalf("%T: accepted %s: %q", dst, why, body)
			}
			again, err := json.Marshal(dst)
			if err != nil {
				t.Fatalf("%T: accepted %q but cannot encode it: %v", dst, body, err)
			}
			back := newDst()
			if err := decodeBody(again, back, true); err != nil {
				t.Fatalf("%T: accepted %q but refuses its encoding %s: %v", dst, body, again, err)
			}
			if !reflect.DeepEqual(dst, back) {
				t.Fatalf("%T: %q decodes to %#v, its encoding %s to %#v", dst, body, dst, again, back)
			}
		}
	})
}

// badTextIn says which string in v (keys included) is not storable text.
func badTextIn(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return badTextIn(v.Elem())
	case reflect.String:
		if why := badText(v.String()); why != "" {
			return "a string that " + why
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if why := badTextIn(v.Field(i)); why != "" {
				return why
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if why := badTextIn(v.Index(i)); why != "" {
				return why
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if why := badTextIn(it.Key()); why != "" {
				return "a key that" + strings.TrimPrefix(why, "a string that")
			}
			if why := badTextIn(it.Value()); why != "" {
				return why
			}
		}
	}
	return ""
}

// FuzzFormText: a request with any path, query and URL-encoded form goes
// through refuseBadText (or, on an admin route, readAdminBody, which reads
// and checks its body after the session) and then the study form's
// decoder (studyInput)
// without a panic or a 5xx; a request it lets through holds only storable
// text, also after studyInput; and a request whose text is all storable
// and whose form parses is let through.
func FuzzFormText(f *testing.F) {
	f.Add("/admin/studies", "", "slug=birds&title=Birds&questions_per_participant=20&design=random&seed=7")
	f.Add("/s/birds/start", "PROLIFIC_PID=abc", "external_id=w1")
	f.Add("/admin/studies/birds", "", "title=%E2%9C%93&instructions=Pick+the+**closer**+one.")
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), cfg: withShedDefaults(Config{})}
	f.Fuzz(func(t *testing.T, path, query, body string) {
		let := false
		var in any
		h := s.deadlines(s.refuseBadText(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := s.readAdminBody(w, r); err != nil {
				s.writeError(w, r, err)
				return
			}
			let = true
			if why := badText(r.URL.Path); why != "" {
				t.Fatalf("let through a path that %s", why)
			}
			for _, vs := range []url.Values{r.Form, r.PostForm} {
				for k, v := range vs {
					if why := badText(k) + badText(strings.Join(v, "")); why != "" {
						t.Fatalf("let through a form field %q that %s", k, why)
					}
				}
			}
			got, d, _, err := studyInput(r)
			if err != nil {
				t.Fatalf("studyInput after the form was parsed: %v", err)
			}
			in = struct {
				In             any
				Picks, Problem string
			}{got, d.picks, d.problem}
		})))
		r := (&http.Request{
			Method: http.MethodPost, URL: &url.URL{Path: "/" + path, RawQuery: query}, Host: "closer.test",
			Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
			Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
		}).WithContext(context.Background())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%d for path %q query %q body %q", w.Code, path, query, body)
		}
		if !let {
			if w.Code != http.StatusBadRequest {
				t.Fatalf("refused with %d, want 400", w.Code)
			}
			if storable(path, query, body) {
				t.Fatalf("refused storable text: path %q query %q body %q: %s", path, query, body, w.Body)
			}
			return
		}
		if why := badTextIn(reflect.ValueOf(in)); why != "" {
			t.Fatalf("studyInput gave %s", why)
		}
	})
}

// storable reports whether a request's path, query and form are all
// storable text and its form parses: such a request must not be refused.
func storable(path, query, body string) bool {
	if badText("/"+path) != "" {
		return false
	}
	q, err := url.ParseQuery(query) // net/http's ParseForm reports a bad query too
	if err != nil {
		return false
	}
	form, err := url.ParseQuery(body)
	if err != nil {
		return false
	}
	for _, vs := range []url.Values{q, form} {
		for k, v := range vs {
			if badText(k) != "" || badText(strings.Join(v, "")) != "" {
				return false
			}
		}
	}
	return true
}
