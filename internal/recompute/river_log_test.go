package recompute

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// River's info lines reach the log only at debug level; its warnings and
// errors at every level, with their own level and attributes.
func TestRiverRoutineLinesAtDebug(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		log := slog.New(routineToDebug{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})}).
			With("component", "river")
		log.Info("producer: Producer job counts", "queue", "recompute")
		log.Warn("job rescued")
		log.ErrorContext(context.Background(), "fetch failed")
		out := buf.String()
		if got := strings.Contains(out, "Producer job counts"); got != (level == slog.LevelDebug) {
			t.Errorf("at %v the info line is logged: %v\n%s", level, got, out)
		}
		if level == slog.LevelDebug && !strings.Contains(out, `level=DEBUG msg="producer: Producer job counts" component=river queue=recompute`) {
			t.Errorf("at debug the info line is not shown at DEBUG with its attributes:\n%s", out)
		}
		if !strings.Contains(out, `level=WARN msg="job rescued" component=river`) || !strings.Contains(out, `level=ERROR msg="fetch failed"`) {
			t.Errorf("at %v a warning or an error is missing:\n%s", level, out)
		}
	}
}
