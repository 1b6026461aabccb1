package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/a-h/templ"
)

// render writes a templ component as an HTML page with status.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// maxJSONBody bounds a JSON request body; maxJSONDepth its nesting (closer's
// bodies are flat objects).
const (
	maxJSONBody  = 64 << 10
	maxJSONDepth = 32
)

// decodeJSON reads exactly one JSON object into dst, refusing unknown fields,
// trailing data and what checkJSON refuses. An empty body is allowed when
// emptyOK.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return badRequest("the request body is too large or unreadable")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		return badRequest("the request body is empty; send a JSON object")
	}
	if err := checkJSON(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return badRequest("malformed JSON: " + err.Error())
	}
	if dec.More() {
		return badRequest("malformed JSON: trailing data after the object")
	}
	return nil
}

// checkJSON refuses, naming the place, what encoding/json would let through
// in the first JSON value of body: a string that is not valid UTF-8 (it
// would become U+FFFD) or holds a NUL character (PostgreSQL stores
// neither), a key given twice in one object, also in another case (the last
// would silently win, and encoding/json matches field names
// case-insensitively), and nesting deeper than maxJSONDepth. It walks the
// tokens with an explicit stack, so its memory is bounded by the body's.
func checkJSON(body []byte) error {
	type level struct {
		object  bool
		path    string          // where this array or object is ("" at the top)
		keys    map[string]bool // the keys seen, case-folded (objects)
		hasKey  bool            // a key was read and its value comes next
		key     string          // that key
		element int             // elements seen (arrays)
	}
	var stack []*level
	// at names the place of the next value, for messages.
	at := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return joinPath(top.path, top.key)
		}
		return fmt.Sprintf("%s[%d]", top.path, top.element)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay text: a huge one is the decoder's to refuse
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return badRequest("malformed JSON: " + err.Error())
		}
		// Outside strings invalid UTF-8 and escapes are syntax errors, so
		// a token whose bytes are not UTF-8 or hold a lone surrogate is a
		// string the decoder quietly repaired (with U+FFFD).
		why := ""
		if str, ok := tok.(string); ok {
			why = badText(str)
			if raw := body[start:dec.InputOffset()]; !utf8.Valid(raw) {
				why = "is not valid UTF-8"
			} else if loneSurrogate(raw) {
				why = "is not valid Unicode (a lone UTF-16 surrogate)"
			}
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && !top.hasKey && tok != json.Delim('}') {
			k, _ := tok.(string) // the decoder allows only a string here
			if why != "" {
				return badRequest(fmt.Sprintf("a key in %s %s", objectName(top.path), why))
			}
			fk := foldKey(k)
			if top.keys[fk] {
				return badRequest(fmt.Sprintf("the key %q appears twice in %s", joinPath(top.path, k), objectName(top.path)))
			}
			top.keys[fk], top.hasKey, top.key = true, true, k
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) == maxJSONDepth {
				return badRequest(fmt.Sprintf("the JSON is nested deeper than %d levels", maxJSONDepth))
			}
			stack = append(stack, &level{object: tok == json.Delim('{'), path: at(), keys: map[string]bool{}})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if why != "" {
			if len(stack) == 0 {
				return badRequest("the body " + why)
			}
			return badRequest(fmt.Sprintf("the value of %q %s", at(), why))
		}
		if len(stack) == 0 {
			if !utf8.Valid(body) {
				return badRequest("the request body is not valid UTF-8")
			}
			return nil // the first value is complete; the decoder refuses trailing data
		}
		// The value is complete: the enclosing level moves past it.
		if top := stack[len(stack)-1]; top.object {
			top.hasKey = false
		} else {
			top.element++
		}
	}
}

// loneSurrogate reports whether the JSON string in raw (a token the decoder
// accepted) escapes a UTF-16 surrogate that is not half of a pair.
func loneSurrogate(raw []byte) bool {
	hex := func(b []byte) rune {
		n, _ := strconv.ParseUint(string(b), 16, 16)
		return rune(n)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped letter: \\ and \" stay skipped
		if raw[i] != 'u' {
			continue
		}
		r := hex(raw[i+1 : i+5])
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xDC00 || i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
			return true // a low half first, or a high half with no escape after it
		}
		if low := hex(raw[i+3 : i+7]); low < 0xDC00 || low > 0xDFFF {
			return true
		}
		i += 6
	}
	return false
}

// objectName names the object at path in messages.
func objectName(path string) string {
	if path == "" {
		return "the object"
	}
	return fmt.Sprintf("the object %q", path)
}

// joinPath names key inside path ("a.b").
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// foldKey maps every rune of s to the smallest rune of its simple case
// folding orbit, so two keys equal under strings.EqualFold (as
// encoding/json compares field names) have one foldKey.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// staticFiles serves the embedded CSS and JS. embed.FS has no modification
// times, so the files are cached for a short while only.
func staticFiles(fsys fs.FS) http.Handler {
	h := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		h.ServeHTTP(w, r)
	})
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}
