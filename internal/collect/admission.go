package collect

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/study"
)

// CanJoin reports, without joining or locking, whether study st would take
// a new participant with externalID now: KindInvalid for an external id or
// a link parameter CreateParticipant refuses (keptParams), KindFull once its participant
// limit is taken, KindForbidden when the id took part in a study st
// refuses the participants of, nil otherwise and always for an id that
// joined st before. The landing page asks first, so that nobody reads the
// instructions and consents only to be turned away; CreateParticipant,
// under the study's lock, still decides. Its other refusals are asked
// too: ErrExternalIDRequired without an id on a platform study, and on
// MTurk ErrCompletedOtherAssignment for a worker who completed the study
// on another assignment than params' assignmentId (params are the link's
// parameters, Platform.KeptParams).
func (s *Store) CanJoin(ctx context.Context, st study.Study, externalID string, params map[string]string) error {
	externalID = strings.TrimSpace(externalID)
	if len(externalID) > study.MaxExternalIDLen {
		return fmt.Errorf("can join: %w", study.Errorf(study.KindInvalid, "the external id is longer than %d characters", study.MaxExternalIDLen))
	}
	kept, err := keptParams(params)
	if err != nil {
		return fmt.Errorf("can join: %w", err)
	}
	if externalID == "" && st.Platform.RequiresID() {
		return fmt.Errorf("can join: %w", ErrExternalIDRequired)
	}
	if externalID != "" {
		var known bool
		if err := s.pool.QueryRow(ctx, externalKnownSQL, st.ID, externalID).Scan(&known); err != nil {
			return fmt.Errorf("can join: %w", err)
		}
		if known {
			if a := kept["assignmentId"]; st.Platform.Kind == study.PlatformMTurk && a != "" {
				var other bool
				if err := s.pool.QueryRow(ctx, completedOtherAssignmentSQL, st.ID, externalID, a).Scan(&other); err != nil {
					return fmt.Errorf("can join: %w", err)
				}
				if other {
					return fmt.Errorf("can join: %w", ErrCompletedOtherAssignment)
				}
			}
			return nil
		}
		if len(st.ExcludeStudies) > 0 {
			var tookPart bool
			if err := s.pool.QueryRow(ctx, tookPartElsewhereSQL, st.ID, externalID).Scan(&tookPart); err != nil {
				return fmt.Errorf("can join: %w", err)
			}
			if tookPart {
				return fmt.Errorf("can join: %w", study.Errorf(study.KindForbidden, "this participant id took part in a related study, which this study does not admit"))
			}
		}
	}
	if st.Quota.MaxParticipants > 0 {
		var n int
		if err := s.pool.QueryRow(ctx, takingPartSQL, st.ID, st.Quota.IdleMinutes, takingPartAnswered(st.Platform)).Scan(&n); err != nil {
			return fmt.Errorf("can join: %w", err)
		}
		if n >= st.Quota.MaxParticipants {
			return fmt.Errorf("can join: %w", study.Errorf(study.KindFull, "the study is full: %d people have taken part or are taking part", n))
		}
	}
	return nil
}

// MarkFull sets Full on the summaries of the studies whose participant
// limit is taken: as many have completed or are taking part as the limit
// admits, by the rule that turns the next newcomer away (CanJoin,
// checkQuota). A study without a limit is never full. One count for each
// study with a limit.
func (s *Store) MarkFull(ctx context.Context, rows []study.StudySummary) error {
	for i := range rows {
		st := rows[i].Study
		rows[i].Full = false
		if st.Quota.MaxParticipants <= 0 {
			continue
		}
		var n int
		if err := s.pool.QueryRow(ctx, takingPartSQL, st.ID, st.Quota.IdleMinutes, takingPartAnswered(st.Platform)).Scan(&n); err != nil {
			return fmt.Errorf("mark full(%d): %w", st.ID, err)
		}
		rows[i].Full = n >= st.Quota.MaxParticipants
	}
	return nil
}

// returningSQL reads how far the participant of study $1 known by the
// external id $2 got.
const returningSQL = `
	SELECT p.answered, s.questions_per_participant, coalesce(p.completion_code, '')
	FROM participants p JOIN studies s ON s.id = p.study_id
	WHERE p.study_id = $1 AND p.external_key = $2`

// Returning reports how far the participant of study studyID who joined
// with externalID got, issuing nothing, so that one who comes back (from
// another browser, or after closing the page) is shown where they are
// rather than the first page again; ok is false when the id never joined
// the study.
func (s *Store) Returning(ctx context.Context, studyID int64, externalID string) (back study.Returning, ok bool, err error) {
	externalID = strings.TrimSpace(externalID)
	if externalID == "" || len(externalID) > study.MaxExternalIDLen {
		return study.Returning{}, false, nil
	}
	err = s.pool.QueryRow(ctx, returningSQL, studyID, externalID).Scan(&back.Answered, &back.Total, &back.CompletionCode)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Returning{}, false, nil
	}
	if err != nil {
		return study.Returning{}, false, fmt.Errorf("returning(%d, %q): %w", studyID, externalID, err)
	}
	back.Done = back.CompletionCode != ""
	return back, true, nil
}
