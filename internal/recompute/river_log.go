package recompute

import (
	"context"
	"log/slog"
)

// routineToDebug passes River's records to the app's log with everything
// below warn logged at debug: River reports its periodic job counts and
// each maintenance run at info, which would fill a quiet server's log
// with routine lines (LOG_LEVEL=debug shows them). Warnings and errors
// keep their level.
type routineToDebug struct{ next slog.Handler }

func (h routineToDebug) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, demote(l))
}

func (h routineToDebug) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return h.next.Handle(ctx, r)
}

func (h routineToDebug) WithAttrs(as []slog.Attr) slog.Handler {
	return routineToDebug{h.next.WithAttrs(as)}
}

func (h routineToDebug) WithGroup(name string) slog.Handler {
	return routineToDebug{h.next.WithGroup(name)}
}

func demote(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}
