package web

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// need is what a route asks of the request's account (issue 30).
type need int

const (
	// needPublic: a route for anyone or for participants (their own
	// credentials are checked by the handler); never behind authorize.
	needPublic need = iota + 1
	// needAccount: any logged-in account (its own things: the study list,
	// its tokens and sessions, creating or importing a study it then owns).
	needAccount
	// needSiteAdmin: a site administrator only (accounts).
	needSiteAdmin
	// needViewer, needEditor, needOwner: at least this role in the study
	// named by {slug}.
	needViewer
	needEditor
	needOwner
)

// routeNeeds declares, for every route of the router, what it needs. It is
// the one place roles are checked against (authorize): a route under
// authorize without a line here is refused with a 500, and
// TestEveryRouteDeclaresItsRole fails for any route of the router missing
// here, so a route added later cannot slip through without a decision.
var routeNeeds = map[string]need{
	"GET /healthz":                             needPublic,
	"* /static/*":                              needPublic, // every method (chi's Handle)
	"GET /img/{sha256}":                        needPublic,
	"GET /":                                    needPublic,
	"GET /s/{slug}":                            needPublic,
	"POST /s/{slug}/start":                     needPublic,
	"GET /s/{slug}/declined":                   needPublic,
	"GET /s/{slug}/q":                          needPublic,
	"POST /s/{slug}/answer":                    needPublic,
	"GET /s/{slug}/done":                       needPublic,
	"GET /admin/login":                         needPublic,
	"POST /admin/login":                        needPublic,
	"POST /admin/logout":                       needPublic,
	"GET /admin/login/oidc":                    needPublic, // single sign-on (oidc.go)
	"GET /admin/login/oidc/callback":           needPublic,
	"GET /invite/{token}":                      needPublic, // an invitation's secret link
	"POST /invite/{token}":                     needPublic,
	"POST /api/v1/answers":                     needPublic,
	"GET /api/v1/studies/{slug}/next":          needPublic,
	"POST /api/v1/studies/{slug}/participants": needPublic,

	"GET /api/v1/studies/{slug}/triplets.csv":        needViewer,
	"POST /api/v1/studies/{slug}/status":             needEditor,
	"POST /api/v1/studies/{slug}/participants/erase": needEditor,

	"GET /admin":                                 needAccount,
	"GET /admin/studies/new":                     needAccount,
	"POST /admin/studies":                        needAccount,
	"GET /admin/account":                         needAccount,
	"POST /admin/account/tokens":                 needAccount,
	"POST /admin/account/tokens/{id}/revoke":     needAccount,
	"POST /admin/account/sessions/{id}/revoke":   needAccount,
	"POST /admin/account/sessions/revoke-others": needAccount,
	"GET /admin/import":                          needAccount,
	"POST /admin/import/bundle":                  needAccount,
	"POST /admin/import/triplets":                needAccount,
	"POST /admin/account/admins":                 needSiteAdmin,
	"GET /admin/audit.csv":                       needSiteAdmin,

	"GET /admin/studies/{slug}":                  needViewer,
	"GET /admin/studies/{slug}/qr.png":           needViewer,
	"GET /admin/studies/{slug}/dashboard":        needViewer,
	"GET /admin/studies/{slug}/dashboard/status": needViewer,
	"GET /admin/studies/{slug}/triplets.csv":     needViewer, // identifying columns blanked below editor
	"GET /admin/studies/{slug}/embedding.csv":    needViewer,
	"GET /admin/studies/{slug}/kernel-pca.csv":   needViewer,
	"GET /admin/studies/{slug}/kernel.csv":       needViewer,
	"GET /admin/studies/{slug}/trials.csv":       needViewer, // item labels and choices, no participant column
	"GET /admin/studies/{slug}/people":           needViewer,
	"GET /admin/studies/{slug}/history":          needViewer,

	"GET /admin/studies/{slug}/edit":                                needEditor,
	"GET /admin/studies/{slug}/participants/erase":                  needEditor,
	"POST /admin/studies/{slug}/participants/erase":                 needEditor,
	"POST /admin/studies/{slug}/retention":                          needEditor,
	"POST /admin/studies/{slug}":                                    needEditor,
	"POST /admin/studies/{slug}/status":                             needEditor,
	"POST /admin/studies/{slug}/preview":                            needEditor,
	"POST /admin/studies/{slug}/previews/delete":                    needEditor,
	"POST /admin/studies/{slug}/items":                              needEditor,
	"POST /admin/studies/{slug}/texts":                              needEditor,
	"POST /admin/studies/{slug}/gold":                               needEditor,
	"POST /admin/studies/{slug}/dashboard/recompute":                needEditor,
	"POST /admin/studies/{slug}/estimate":                           needEditor, // runs and stores the estimate before opening
	"POST /admin/studies/{slug}/dashboard/cancel":                   needEditor,
	"POST /admin/studies/{slug}/dashboard/settings":                 needEditor,
	"POST /admin/studies/{slug}/participants/{participant}/exclude": needEditor,
	"GET /admin/studies/{slug}/participants.csv":                    needEditor, // external ids, user agents
	"GET /admin/studies/{slug}/bundle.zip":                          needEditor, // the whole study, identifying fields too

	"POST /admin/studies/{slug}/delete":                  needOwner,
	"POST /admin/studies/{slug}/people":                  needOwner,
	"POST /admin/studies/{slug}/people/{account}/remove": needOwner,
}

// studyRoleNeeded is the least role in a study each study need asks.
var studyRoleNeeded = map[need]study.Role{needViewer: study.RoleViewer, needEditor: study.RoleEditor, needOwner: study.RoleOwner}

// permits reports whether account a, holding role in the route's study
// (RoleNone on a route without one), may use a route that needs n. It is
// authorize's decision, and the pages' (canFrom): a page offers an action
// exactly when its click would be allowed.
func permits(n need, a study.Admin, role study.Role) bool {
	switch n {
	case needPublic:
		return true
	case needAccount:
		return a.ID != 0
	case needSiteAdmin:
		return a.ID != 0 && a.SiteAdmin
	}
	want, ok := studyRoleNeeded[n]
	return ok && a.ID != 0 && role >= want
}

// canFrom says, for the pages of the request, which routes (as written in
// routeNeeds, "POST /admin/studies/{slug}/delete") its account may use in
// the request's study: the view models' Can, so that a page shows only the
// buttons, forms and links its viewer's role allows. A route routeNeeds
// does not declare is never offered.
func canFrom(ctx context.Context) templates.Can {
	a, role := adminFrom(ctx), roleFrom(ctx)
	return func(route string) bool {
		n, ok := routeNeeds[route]
		return ok && permits(n, a, role)
	}
}

type roleKey struct{}

// access is what authorize found the request may do in its study.
type access struct {
	role        study.Role
	identifying bool // may see identifying data (external ids)
}

// roleFrom is the request's role in the study of its {slug}, as authorize
// found it (RoleNone on routes without a study).
func roleFrom(ctx context.Context) study.Role {
	a, _ := ctx.Value(roleKey{}).(access)
	return a.role
}

// identifyingFrom reports whether the request may see identifying data in
// its study: an editor's or owner's, through a session or a token allowed
// to export it.
func identifyingFrom(ctx context.Context) bool {
	a, _ := ctx.Value(roleKey{}).(access)
	return a.identifying
}

// authorize checks the request's account (requireAdmin's or requireToken's)
// against its route's line in routeNeeds. It runs after routing, so the
// route's pattern is known. A study the account holds no role on is not
// found, as an unknown slug is: one lab does not learn another's slugs.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.authorized(r, next, w); err != nil {
			s.handle(func(http.ResponseWriter, *http.Request) error { return err })(w, r)
		}
	})
}

func (s *Server) authorized(r *http.Request, next http.Handler, w http.ResponseWriter) error {
	pattern := chi.RouteContext(r.Context()).RoutePattern()
	n, ok := routeNeeds[r.Method+" "+pattern]
	if !ok || n == needPublic {
		s.log.Error("route without a declared role", "method", r.Method, "pattern", pattern)
		return &httpError{status: http.StatusInternalServerError, msg: "this page has no declared role"}
	}
	a := adminFrom(r.Context())
	if a.ID == 0 {
		return unauthorized("please log in")
	}
	switch n {
	case needAccount:
		s.serveAudited(w, r, next, study.Study{})
		return nil
	case needSiteAdmin:
		if !permits(n, a, study.RoleNone) {
			return &httpError{status: http.StatusForbidden, msg: "only a site administrator may do this"}
		}
		s.serveAudited(w, r, next, study.Study{})
		return nil
	}
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	role, err := s.accounts.StudyRole(r.Context(), a, st.ID)
	if err != nil {
		return err
	}
	if role == study.RoleNone {
		return study.NotFound("study")
	}
	tok := tokenFrom(r.Context())
	if err := tok.refuse(st.ID, n); err != nil {
		return err
	}
	if !permits(n, a, role) {
		return &httpError{status: http.StatusForbidden, msg: "your role in this study (" + role.String() + ") does not allow this; ask its owner"}
	}
	ctx := context.WithValue(r.Context(), roleKey{}, access{role: role, identifying: tok.identifying(role)})
	s.serveAudited(w, r.WithContext(ctx), next, st)
	return nil
}
