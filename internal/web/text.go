package web

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// badText says why s cannot be taken as text ("" when it can): PostgreSQL
// stores neither a NUL character nor invalid UTF-8, and refuses them with
// an error, so both are refused where they come in.
func badText(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL character"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	return ""
}

// refuseBadText answers 400, naming the place, a request whose URL path,
// query parameters or URL-encoded form fields are not text PostgreSQL can
// store. It is also where a small route's body comes in (limits.go): read
// whole, bounded by the route's limit (413 past it, unread when
// Content-Length says so), before the request takes a database slot, so a
// client that sends its body slowly holds none. Admin routes' bodies are
// read after the session is checked (requireAdmin), uploads' by their
// handlers. A URL-encoded form is parsed here from that copy, so handlers
// see r.PostForm already filled; a form that cannot be parsed is refused
// here too, because a failed parse leaves an empty form behind that a
// handler's own ParseForm would not report. Bodies under /api/ are JSON
// whatever their Content-Type (curl -d sends a JSON body as a form) and are
// decodeJSON's.
func (s *Server) refuseBadText(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkURLText(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		if a := admissionFrom(r.Context()); a != nil && a.limits.kind == bodySmall {
			if err := readForm(w, r, a.limits.body); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// checkURLText refuses a URL path or query parameter that is not text.
func checkURLText(r *http.Request) error {
	if why := badText(r.URL.Path); why != "" {
		return badRequest("the URL path " + why)
	}
	// Parse errors in the query are left to the handlers, as before;
	// what parsed must still be text.
	q, _ := url.ParseQuery(r.URL.RawQuery)
	return checkValues("query parameter", q)
}

// readForm reads the request's body whole (readBody, at most limit bytes)
// and, for a URL-encoded form outside /api/, parses and checks it.
func readForm(w http.ResponseWriter, r *http.Request, limit int64) error {
	if err := readBody(w, r, limit); err != nil {
		return err
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch ||
		strings.HasPrefix(r.URL.Path, "/api/") {
		return nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return nil
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form: " + err.Error())
	}
	return checkValues("form field", r.PostForm)
}

// checkValues refuses the first name or value (in name order) that is not
// text.
func checkValues(what string, vs url.Values) error {
	names := make([]string, 0, len(vs))
	for k := range vs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if why := badText(k); why != "" {
			return badRequest(fmt.Sprintf("the name of a %s (%q) %s", what, k, why))
		}
		for _, v := range vs[k] {
			if why := badText(v); why != "" {
				return badRequest(fmt.Sprintf("the %s %q %s", what, k, why))
			}
		}
	}
	return nil
}
