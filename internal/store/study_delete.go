package store

import (
	"context"
	"errors"
	"slices"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Deleting a study takes two steps (issue 11; migration 000008). One
// DELETE of a study with 2 million answers ran its ON DELETE CASCADE row
// by row for about 39 s, past the request timeout, and rolled back whole.
//
//   - MarkStudyDeleted, in the request, marks the study in one short
//     transaction: it is hidden from every lookup, closed to participants,
//     and its slug is free at once.
//   - The purge (internal/purge, a background job) then deletes the
//     study's rows with PurgeStudyBatch, table by table in batches of a
//     few thousand rows, each batch its own transaction, and last the
//     study's row with DeletePurgedStudy. A purge that stops half way
//     (crash, restart, deploy) resumes where it stopped: the rows it
//     deleted are gone, the others are found again.

// markStudyDeletedSQL marks a study deleted: closed to participants (their
// requests get "the study is closed"), hidden from every lookup, and
// renamed 'deleted:<id>' (a slug no live study can have) so that its slug
// can be given to a new study at once.
const markStudyDeletedSQL = `
	UPDATE studies SET deleted_at = now(), status = 'closed', slug = 'deleted:' || id, updated_at = now(), version = version + 1
	WHERE id = $1 AND deleted_at IS NULL`

// markLockTimeout bounds how long MarkStudyDeleted waits for the study's
// row: an upload into the study holds it for its whole transaction.
const markLockTimeout = "5s"

// MarkStudyDeleted marks the study deleted (see markStudyDeletedSQL); the
// purge deletes its rows later. A study already marked or unknown is
// KindNotFound; a study that stays locked by an upload for markLockTimeout
// is KindConflict.
func (s *Store) MarkStudyDeleted(ctx context.Context, id int64) (err error) {
	defer wrap(&err, "store.MarkStudyDeleted(%d)", id)
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+markLockTimeout+`'`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, markStudyDeletedSQL, id)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == pgerrcode.LockNotAvailable {
			return study.Errorf(study.KindConflict, "the study is busy (an upload is writing to it); try again when it has finished")
		}
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return study.NotFound("study")
		}
		return nil
	})
}

// StudyByID returns the study with id (never one being deleted).
func (s *Store) StudyByID(ctx context.Context, id int64) (_ study.Study, err error) {
	defer wrap(&err, "store.StudyByID(%d)", id)
	st, err := scanStudy(s.pool.QueryRow(ctx, `SELECT `+studyCols+` FROM studies WHERE id = $1 AND deleted_at IS NULL`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Study{}, study.NotFound("study")
	}
	if err != nil {
		return study.Study{}, err
	}
	return st, nil
}

// StudiesToPurge returns the studies marked deleted whose rows are not all
// deleted yet, the oldest mark first.
func (s *Store) StudiesToPurge(ctx context.Context) (_ []int64, err error) {
	defer wrap(&err, "store.StudiesToPurge()")
	rows, err := s.pool.Query(ctx, `SELECT id FROM studies WHERE deleted_at IS NOT NULL ORDER BY deleted_at, id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// StudyMarkedDeleted reports whether the study is marked deleted; a study
// that does not exist (any more) is KindNotFound.
func (s *Store) StudyMarkedDeleted(ctx context.Context, id int64) (_ bool, err error) {
	defer wrap(&err, "store.StudyMarkedDeleted(%d)", id)
	var marked bool
	err = s.pool.QueryRow(ctx, `SELECT deleted_at IS NOT NULL FROM studies WHERE id = $1`, id).Scan(&marked)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, study.NotFound("study")
	}
	if err != nil {
		return false, err
	}
	return marked, nil
}

// purgeTable is a table holding rows of a study. order lists the columns
// after study_id of the index the purge reads the study's rows through. A
// batch of n rows deletes n/per of its rows (at least one): items and
// recompute runs carry images and results of up to megabytes each, and
// deleting a participant looks up its questions, answers and leases in
// their participant_id indexes (the foreign keys' checks), past the index
// entries of the rows the purge deleted before (2 million answers: a batch
// of 200 participants took 0.6-0.9 s, of 100 about 0.3-0.4 s).
type purgeTable struct {
	name  string
	order string
	per   int
}

// purgeTables are the tables holding a study's rows, in the order the purge
// empties them: rows that reference others before the rows they reference,
// so that the foreign keys' ON DELETE CASCADE never finds anything to
// delete (a cascade runs row by row inside the statement that set it off,
// which is what made one DELETE of a large study take 39 s). Items go
// first (after the gold triplets that reference them): their images are
// public by URL. Every table with a study_id
// column must be here (internal/purge TestPurgeDeletesEveryRow).
var purgeTables = []purgeTable{
	{"gold_triplets", "line", 1000},                  // gold_triplets_pkey (it references items)
	{"items", "idx", 200},                            // items_study_id_idx_key
	{"design_leases", "arm, anchor, j, k", 1},        // design_leases_study
	{"design_pool", "arm, anchor, j, k", 1},          // design_pool_pkey
	{"design_inbox", "arm, id", 1},                   // design_inbox_study
	{"answers", "seq", 1},                            // answers_study_seq
	{"trial_answers", "answered_at, question_id", 1}, // trial_answers_study
	{"questions", "issued_at", 1},                    // questions_study
	{"design_events", "arm, version", 1},             // design_events_pkey
	{"design_states", "arm", 1},                      // design_states_pkey (a row per arm)
	{"votes", "anchor, j, k", 1},                     // votes_pkey
	{"arm_counts", "study_id", 1},                    // arm_counts_pkey (one row)
	{"participants", "id", 100},                      // participants_pkey
	{"recompute_runs", "id", 200},                    // recompute_runs_study
	{"recompute_settings", "study_id", 1},            // recompute_settings_pkey (one row)
	{"upload_reports", "created_at", 100},            // upload_reports_study
	{"study_costs", "study_id", 1},                   // study_costs_pkey (one row)
	{"study_estimates", "study_id", 1},               // study_estimates_pkey (one row)
	{"study_roles", "admin_id", 1000},                // study_roles_pkey (issue 30)
	{"api_token_studies", "token_id", 1000},          // api_token_studies_study
	{"invitations", "id", 1000},                      // invitations_study
}

// PurgeTables returns the tables PurgeStudyBatch empties, in the order the
// purge must empty them.
func PurgeTables() []string {
	names := make([]string, len(purgeTables))
	for i, t := range purgeTables {
		names[i] = t.name
	}
	return names
}

// purgeBatchSQL deletes up to $2 rows of study $1 from t, and nothing
// unless the study is marked deleted. The rows are picked in the order of
// an index that starts with study_id, so that a batch (and the generic plan
// of its prepared statement) reads the study's rows through that index:
// without the ORDER BY, a study that holds most of a table is read by a
// sequential scan from the table's first page, and one that is a small
// part of it would be too under a generic plan (TestHotQueryPlans). They
// are deleted by their physical address (ctid, a TID scan): one plan for
// every table, whatever its key.
func purgeBatchSQL(t purgeTable) string {
	return `
		DELETE FROM ` + t.name + ` WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM ` + t.name + ` WHERE study_id = $1
				AND EXISTS (SELECT FROM studies WHERE id = $1 AND deleted_at IS NOT NULL)
			ORDER BY ` + t.order + ` LIMIT $2))`
}

// PurgeStudyBatch deletes, in one transaction of its own, up to batch rows
// of the study marked deleted from table (one of PurgeTables; fewer rows
// for the tables of large rows). It returns how many it deleted and
// whether the table has none of the study's rows left. It deletes nothing
// of a study not marked deleted.
func (s *Store) PurgeStudyBatch(ctx context.Context, studyID int64, table string, batch int) (deleted int64, empty bool, err error) {
	defer wrap(&err, "store.PurgeStudyBatch(%d, %q, %d)", studyID, table, batch)
	i := slices.IndexFunc(purgeTables, func(t purgeTable) bool { return t.name == table })
	if i < 0 {
		return 0, false, errors.New("unknown table")
	}
	limit := max(1, batch/purgeTables[i].per)
	tag, err := s.pool.Exec(ctx, purgeBatchSQL(purgeTables[i]), studyID, limit)
	if err != nil {
		return 0, false, err
	}
	return tag.RowsAffected(), tag.RowsAffected() < int64(limit), nil
}

// DeletePurgedStudy deletes the row of a study marked deleted, once
// PurgeStudyBatch emptied every table of its rows (rows that arrived since,
// from a request that began before the mark, go by the cascade). It
// reports whether there was such a row.
func (s *Store) DeletePurgedStudy(ctx context.Context, studyID int64) (_ bool, err error) {
	defer wrap(&err, "store.DeletePurgedStudy(%d)", studyID)
	tag, err := s.pool.Exec(ctx, `DELETE FROM studies WHERE id = $1 AND deleted_at IS NOT NULL`, studyID)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() > 0, nil
}
