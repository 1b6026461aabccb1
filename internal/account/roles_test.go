package account_test

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A site administrator owns every study; a researcher holds the role it
// was granted and sees only those studies; a study's only owner cannot
// lose the role, by demotion or removal.
func TestStudyRoles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	site, err := s.CreateAdmin(ctx, "site@example.org", "secret-password")
	if err != nil || !site.SiteAdmin {
		t.Fatal(site, err)
	}
	alice, err := s.CreateResearcher(ctx, "alice@example.org", "secret-password")
	if err != nil || alice.SiteAdmin {
		t.Fatal(alice, err)
	}
	bob, err := s.CreateResearcher(ctx, "bob@example.org", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Authenticate(ctx, "alice@example.org", "secret-password"); err != nil || got.SiteAdmin {
		t.Fatalf("alice logs in as %+v, %v", got, err)
	}
	var a, b int64
	if err := pool.QueryRow(ctx, `INSERT INTO studies (slug, title, questions_per_participant, status) VALUES ('a', 'A', 5, 'open') RETURNING id`).Scan(&a); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `INSERT INTO studies (slug, title, questions_per_participant, status) VALUES ('b', 'B', 5, 'open') RETURNING id`).Scan(&b); err != nil {
		t.Fatal(err)
	}
	if err := s.GrantRole(ctx, a, alice.ID, study.RoleOwner, alice.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.GrantRole(ctx, b, bob.ID, study.RoleOwner, bob.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.GrantRole(ctx, a, bob.ID, study.RoleViewer, alice.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who   study.Admin
		study int64
		want  study.Role
	}{
		{site, a, study.RoleOwner}, {site, b, study.RoleOwner},
		{alice, a, study.RoleOwner}, {alice, b, study.RoleNone},
		{bob, a, study.RoleViewer}, {bob, b, study.RoleOwner},
	} {
		if got, err := s.StudyRole(ctx, c.who, c.study); err != nil || got != c.want {
			t.Errorf("%s in study %d: %v (%v), want %v", c.who.Email, c.study, got, err, c.want)
		}
	}
	ids, all, err := s.VisibleStudies(ctx, alice)
	if err != nil || all || len(ids) != 1 || ids[a] != study.RoleOwner {
		t.Errorf("alice sees %v (all %t, %v), want study a only", ids, all, err)
	}
	if _, all, _ := s.VisibleStudies(ctx, site); !all {
		t.Error("the site administrator does not see every study")
	}
	// The only owner keeps the role.
	if err := s.GrantRole(ctx, a, alice.ID, study.RoleEditor, alice.ID); kindOf(err) != study.KindConflict {
		t.Errorf("demoting the only owner: %v, want a conflict", err)
	}
	if err := s.RevokeRole(ctx, a, alice.ID); kindOf(err) != study.KindConflict {
		t.Errorf("removing the only owner: %v, want a conflict", err)
	}
	// With a second owner, the first may go.
	if err := s.GrantRole(ctx, a, bob.ID, study.RoleOwner, alice.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeRole(ctx, a, alice.ID); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Members(ctx, a)
	if err != nil || len(ms) != 1 || ms[0].Email != "bob@example.org" || ms[0].Role != study.RoleOwner {
		t.Fatalf("members of a: %+v, %v", ms, err)
	}
}

// kindOf is the kind of a user-facing error (0 for another).
func kindOf(err error) study.Kind {
	var e *study.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
