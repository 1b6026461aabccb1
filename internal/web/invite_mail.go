package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/study"
)

// mailInvitation e-mails a new invitation's link to the invited address
// through the configured SMTP server (issue 30). The invitation exists
// whatever happens here: a failure is logged, noted in the request's
// audit entry with its reason, and returned for the page to say that the
// mail was not sent and why (the page shows the link to copy either way).
func (s *Server) mailInvitation(r *http.Request, st study.Study, inv study.Invitation, link string) (sent bool, why string) {
	by := adminFrom(r.Context())
	subject := fmt.Sprintf("Invitation to the study %q on closer", st.Title)
	body := invitationBody(st, inv, by.Email, link)
	// The mail's own deadline (mailer.Config.Timeout) bounds the wait;
	// without the request's cancellation a client that leaves does not
	// cut a message half sent.
	err := s.cfg.Mailer.Send(context.WithoutCancel(r.Context()), inv.Email, subject, body)
	detail := formDetail(r)
	if err != nil {
		s.log.WarnContext(r.Context(), "invitation e-mail not sent", "study", st.Slug, "invitation", inv.ID, "error", err)
		noteAudit(r.Context(), detail+"; invitation e-mail not sent: "+err.Error(), 0, "")
		return false, err.Error()
	}
	noteAudit(r.Context(), detail+"; invitation e-mailed via "+s.cfg.Mailer.Server(), 0, "")
	return true, ""
}

// invitationBody is the plain text of an invitation: the study (and its
// slug, which names it on the server), who invited, the role, the link and
// when it expires.
func invitationBody(st study.Study, inv study.Invitation, inviter, link string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello,\n\n%s invites you to the study %q (%s) on closer as %s.\n\n", inviter, st.Title, st.Slug, inv.Role)
	fmt.Fprintf(&b, "Open this link to choose a password and create your account:\n\n%s\n\n", link)
	fmt.Fprintf(&b, "The link works once and expires on %s.\n", inv.ExpiresAt.UTC().Format("2 January 2006 at 15:04 UTC"))
	b.WriteString("If you did not expect this invitation, ignore this e-mail: nothing happens without the link.\n")
	return b.String()
}
