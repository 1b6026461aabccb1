package store

// TrialFiguresSQL reads the trial figures of participant p.id (the
// enclosing query's), with how many trial answers they gave (n) and the
// last one's time (last); by trial_answers_participant.
const TrialFiguresSQL = `(
	SELECT count(*)::int AS n, max(x.answered_at) AS last, count(*) FILTER (WHERE x.closer IS NULL)::int AS skipped,
		count(*) FILTER (WHERE q.design = 'catch')::int AS catches,
		count(*) FILTER (WHERE q.design = 'catch' AND x.correct)::int AS caught,
		count(*) FILTER (WHERE q.design = 'repeat' AND x.closer IS NOT NULL)::int AS repeats,
		count(*) FILTER (WHERE q.design = 'repeat' AND x.correct)::int AS same
	FROM trial_answers x JOIN questions q ON q.id = x.question_id WHERE x.participant_id = p.id)`
