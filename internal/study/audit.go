package study

import "time"

// AuditEntry is one line of the audit trail (issue 30): who did what,
// when, from where, in which study. What changed is told in Detail; a
// participant's ids are never written there.
type AuditEntry struct {
	ID        int64
	At        time.Time
	AdminID   int64 // 0: nobody logged in (a failed login)
	Email     string
	Address   string
	StudyID   int64 // 0: not about one study
	StudySlug string
	Action    string
	Detail    string
}

// AuditColumns are the columns of the audit log's CSV export.
var AuditColumns = []string{"id", "at", "account_id", "email", "address", "study_id", "study", "action", "detail"}
