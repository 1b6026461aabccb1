package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// maxTokenStudies bounds the studies one token names.
const maxTokenStudies = 100

// createToken creates an API token and shows it once (POST
// /admin/account/tokens). The form names its studies (slugs; none: all
// the account may see) and its rights (read results, export identifying
// data, write); a token never does more than its account may.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	f := r.PostForm
	var secret string
	scope, err := s.tokenStudies(r.Context(), f.Get("studies"))
	if err == nil {
		scope.Read, scope.Identifying, scope.Write = f.Get("read") == "1", f.Get("identifying") == "1", f.Get("write") == "1"
		if f.Get("rights") != "1" {
			// A form without the rights' boxes (a script's, or from before
			// them): every right of the account, as tokens had before.
			scope.Read, scope.Identifying, scope.Write = true, true, true
		}
		secret, _, err = s.accounts.CreateScopedAPIToken(r.Context(), adminFrom(r.Context()).ID, f.Get("name"), scope)
	}
	if err != nil && collect.KindOf(err) != study.KindInvalid {
		return err
	}
	v, verr := s.accountView(r)
	if verr != nil {
		return verr
	}
	status := http.StatusOK
	if err != nil {
		v.Error, status = userMessage(err), http.StatusUnprocessableEntity
	}
	v.NewToken = secret
	return s.render(w, r, status, templates.AccountPage(v))
}

// tokenStudies reads the token form's list of study slugs: empty is every
// study the account may see; a study it may not see is no study.
func (s *Server) tokenStudies(ctx context.Context, text string) (study.TokenScope, error) {
	slugs := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
	if len(slugs) == 0 {
		return study.TokenScope{AllStudies: true}, nil
	}
	if len(slugs) > maxTokenStudies {
		return study.TokenScope{}, study.Errorf(study.KindInvalid, "a token can name at most %d studies", maxTokenStudies)
	}
	var sc study.TokenScope
	for _, slug := range slugs {
		st, err := s.store.StudyBySlug(ctx, slug)
		if err == nil {
			err = s.mustSee(ctx, st.ID)
		}
		if collect.KindOf(err) == study.KindNotFound {
			return study.TokenScope{}, study.Errorf(study.KindInvalid, "%s", fmt.Sprintf("there is no study %q of yours", slug))
		}
		if err != nil {
			return study.TokenScope{}, err
		}
		sc.Studies = append(sc.Studies, st.ID)
	}
	return sc, nil
}
