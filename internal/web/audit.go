package web

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/closer-lab/closer/internal/study"
)

// identifyingExports are the GET routes whose response may carry
// identifying data; authorize records them in the audit trail when it
// does (an editor's or owner's, a token allowed to).
var identifyingExports = map[string]bool{
	"GET /admin/studies/{slug}/triplets.csv":     true,
	"GET /admin/studies/{slug}/participants.csv": true,
	"GET /admin/studies/{slug}/bundle.zip":       true,
	"GET /api/v1/studies/{slug}/triplets.csv":    true,
}

// auditedFields are the form fields whose values the audit trail keeps
// (short, never a participant's id or a password); any other field is
// named without its value.
var auditedFields = []string{"status", "role", "email", "name", "kind", "studies", "read", "identifying", "write",
	"excluded", "title", "slug", "design", "method", "retention_days", "scope"}

type auditKey struct{}

// auditNote is what a handler adds to its request's audit entry.
type auditNote struct {
	detail  string
	studyID int64
	slug    string
}

// noteAudit replaces the request's audit detail (the form's fields by
// default), for a handler that knows better what changed; studyID and
// slug name the study when the URL does not (a study just created).
func noteAudit(ctx context.Context, detail string, studyID int64, slug string) {
	if n, ok := ctx.Value(auditKey{}).(*auditNote); ok {
		n.detail, n.studyID, n.slug = detail, studyID, slug
	}
}

// serveAudited serves an authorized request and records it in the audit
// trail when it changed something (a request other than GET that
// succeeded) or exported identifying data. st is the route's study (zero
// for an account's route).
func (s *Server) serveAudited(w http.ResponseWriter, r *http.Request, next http.Handler, st study.Study) {
	action := r.Method + " " + chi.RouteContext(r.Context()).RoutePattern()
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if !identifyingExports[action] || !identifyingFrom(r.Context()) {
			next.ServeHTTP(w, r)
			return
		}
	}
	note := &auditNote{}
	ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
	next.ServeHTTP(ww, r.WithContext(context.WithValue(r.Context(), auditKey{}, note)))
	if status := ww.Status(); status >= 400 {
		return
	}
	e := study.AuditEntry{StudyID: st.ID, StudySlug: st.Slug, Action: action, Detail: note.detail}
	if note.studyID != 0 {
		e.StudyID, e.StudySlug = note.studyID, note.slug
	}
	if e.Detail == "" {
		e.Detail = formDetail(r)
	}
	if tokenFrom(r.Context()).token {
		e.Detail = strings.TrimSpace("with an API token " + e.Detail)
	}
	s.audit(r, adminFrom(r.Context()), e)
}

// audit records e as done by a (nobody: the e-mail e names, a failed
// login's) from the request's client address. A
// failure to record is logged: the change it records is made.
func (s *Server) audit(r *http.Request, a study.Admin, e study.AuditEntry) {
	if a.ID != 0 {
		e.AdminID, e.Email = a.ID, a.Email
	}
	if e.Email == "" {
		e.Email = "(nobody)"
	}
	if addr := s.clientAddr(r); addr.IsValid() {
		e.Address = addr.String()
	}
	if err := s.accounts.Audit(context.WithoutCancel(r.Context()), e); err != nil {
		s.log.ErrorContext(r.Context(), "audit trail", "error", err, "action", e.Action)
	}
}

// formDetail is the audit detail of a request's form: the audited fields
// with their values, the others by name.
func formDetail(r *http.Request) string {
	if r.PostForm == nil {
		return ""
	}
	keys := make([]string, 0, len(r.PostForm))
	for k := range r.PostForm {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	var other []string
	for _, k := range keys {
		if !slices.Contains(auditedFields, k) {
			other = append(other, k)
			continue
		}
		v := r.PostForm.Get(k)
		if len(v) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			v = v[:cut] + "…"
		}
		parts = append(parts, k+"="+v)
	}
	if len(other) > 0 {
		parts = append(parts, "fields: "+strings.Join(other, ", "))
	}
	return strings.Join(parts, "; ")
}
