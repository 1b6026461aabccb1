package studyfile

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/study"
)

// A study bundle is a zip that backs up one study independently of the app
// version it came from (documented in docs/dashboard.md):
//
//	manifest.json      {"format": "closer-study-bundle", "version": 1, "exported_at", "counts"}
//	study.json         the study's settings, its design's settings (its arms' and held-out share) and its dashboard settings
//	items.csv          index,label,file_name,content_type,sha256,width,height,image,kind,text
//	images/...         the image bytes (the image column names the file; empty for label-only items)
//	participants.csv   participant,external_id,completion_code,created_at,completed_at,excluded_at,arm
//	answers.csv        question_id,participant,anchor,left,right,closer,farther,design,response_ms,asked_at,answered_at,options,choices
//
// Times are RFC 3339 UTC with microseconds; empty cells are unknown values.
// Readers accept any version up to BundleVersion and ignore unknown files and
// JSON fields, so later versions only add. Version 2 writes its CSV cells
// through csvsafe.Cell (a formula-like label or external id gets a leading
// single quote, so the files are safe to open in a spreadsheet); readers
// undo it with csvsafe.Unescape for version 2 and later only, so a quote
// that a version 1 bundle holds stays as it was. Version 3 adds the arms
// and the held-out share to study.json and the participant's arm to
// participants.csv (a last column, read when present): an app that reads
// only up to version 2 refuses such a bundle rather than import a study
// of several designs as one. Version 4 adds the items' kind and a text
// item's text to items.csv (two last columns, read when present; absent:
// an image) and mixed_kinds to study.json (issue 29); and the study's
// question format to study.json ("format", absent: triplet) and a trial's
// items and choices to answers.csv (the last two columns, options and
// choices: item indices separated by spaces, the items shown in display
// order and those chosen in order; empty for a triplet). An odd-one-out or
// rank trial's row keeps its question's key in anchor, left and right and
// its first derived triplet's closer and farther (issue 27): an app that
// reads only up to version 3 refuses such a bundle rather than import text
// items as images or each trial as one triplet.
const (
	BundleFormat  = "closer-study-bundle"
	BundleVersion = 4
)

// bundleEscapedFrom is the first bundle version whose CSV cells are
// neutralised with csvsafe.Cell.
const bundleEscapedFrom = 2

// Bundle CSV columns, in order.
var (
	BundleItemColumns = []string{"index", "label", "file_name", "content_type", "sha256", "width", "height", "image"}
	// BundleItemKindColumns follow BundleItemColumns from version 4 on:
	// the item's kind (study.ItemKind) and a text item's text.
	BundleItemKindColumns    = []string{"kind", "text"}
	BundleParticipantColumns = []string{"participant", "external_id", "completion_code", "created_at", "completed_at", "excluded_at"}
	// BundleParticipantArmColumn follows BundleParticipantColumns from
	// version 3 on: the participant's arm (0 in a study without arms).
	BundleParticipantArmColumn = "arm"
	BundleAnswerColumns        = []string{"question_id", "participant", "anchor", "left", "right", "closer", "farther", "design", "response_ms", "asked_at", "answered_at"}
	// BundleAnswerTrialColumns follow BundleAnswerColumns from version 4
	// on: a trial's options and choices (empty for a triplet).
	BundleAnswerTrialColumns = []string{"options", "choices"}
)

// BundleManifest is manifest.json.
type BundleManifest struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	ExportedAt time.Time      `json:"exported_at"`
	Counts     map[string]int `json:"counts"`
}

// BundleStudy is study.json.
type BundleStudy struct {
	Slug                    string `json:"slug"`
	Title                   string `json:"title"`
	Instructions            string `json:"instructions"`
	Debrief                 string `json:"debrief"`
	Consent                 string `json:"consent,omitempty"`
	QuestionsPerParticipant int    `json:"questions_per_participant"`
	Status                  string `json:"status"`
	Design                  string `json:"design"`
	// Format is the study's question format: "odd-one-out" or "rank:N:K"
	// (absent: triplet; from version 4 on).
	Format string `json:"format,omitempty"`
	// DesignConfig is the design's settings as stored (studies.design_config).
	DesignConfig json.RawMessage `json:"design_config,omitempty"`
	// Arms are the designs the study runs side by side (absent: one,
	// Design; with arms, Design and DesignConfig are the first arm's).
	Arms []study.Arm `json:"arms,omitempty"`
	// HeldoutShare is the share of questions held out (absent: none).
	HeldoutShare float64 `json:"heldout_share,omitempty"`
	// Platform is the recruiting platform's settings (absent: none).
	Platform        *study.Platform `json:"platform,omitempty"`
	MaxParticipants int             `json:"max_participants,omitempty"`
	IdleMinutes     int             `json:"idle_minutes,omitempty"`
	MinViewMS       int             `json:"min_view_ms,omitempty"`
	Layout          string          `json:"layout,omitempty"`      // study.LayoutAbove or LayoutBeside (absent, in older bundles: above)
	MixedKinds      bool            `json:"mixed_kinds,omitempty"` // items of more than one kind allowed (version 4)
	PlayToEnd       bool            `json:"play_to_end,omitempty"` // every sound played to its end before answering (absent: no)
	// SoundMaxSeconds is the longest a sound item may last (absent: the
	// default, 30 s); the bundle's own sounds are checked against it.
	SoundMaxSeconds int                   `json:"sound_max_seconds,omitempty"`
	Exclusion       *study.ExclusionRules `json:"exclusion,omitempty"`
	// Quality is the quality control's settings (absent: none).
	Quality *study.QualityControl `json:"quality,omitempty"`
	// Language is the participant pages' language (absent: English),
	// TextOverrides the researcher's texts for single keys (absent: none).
	Language      string            `json:"language,omitempty"`
	TextOverrides map[string]string `json:"text_overrides,omitempty"`
	Recompute     BundleSettings    `json:"recompute"`
}

// BundleSettings are the dashboard settings in study.json.
type BundleSettings struct {
	MinNewAnswers int    `json:"min_new_answers"`
	MaxAgeSeconds int    `json:"max_age_seconds"`
	Method        string `json:"method"`
	Dim           int    `json:"dim"`
	Clusters      int    `json:"clusters"`
	// Trust: the dimension choice, bootstrap and projection bounds
	// (absent in bundles written before them: the defaults).
	Trust *BundleTrust `json:"trust,omitempty"`
}

// BundleTrust is study.TrustSettings in study.json.
type BundleTrust struct {
	MaxDim      int     `json:"max_dim"`
	Folds       int     `json:"folds"`
	Bootstrap   int     `json:"bootstrap_reps"`
	Project     bool    `json:"project"`
	TargetError float64 `json:"target_error"`
}

const bundleTime = "2006-01-02T15:04:05.999999Z07:00"

func fmtTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(bundleTime)
}

// ExportBundle writes the study's bundle (a zip) to w, read from one
// snapshot of the store; an odd-one-out or rank study's with its format
// and each trial's options and choices.
func ExportBundle(ctx context.Context, db Store, studyID int64, w io.Writer) error {
	err := db.ExportSnapshot(ctx, studyID, func(sn study.SnapshotReader) error {
		st := sn.Study()
		rs, err := sn.Settings()
		if err != nil {
			return err
		}
		zw := &bundleWriter{Writer: zip.NewWriter(w), modified: time.Now()}
		counts := map[string]int{}
		writeCSV := func(name string, header []string, rows func(cw *csvsafe.Writer) (int, error)) error {
			f, err := zw.create(name, zip.Deflate)
			if err != nil {
				return err
			}
			cw := csvsafe.NewWriter(f)
			if err := cw.Write(header); err != nil {
				return err
			}
			n, err := rows(cw)
			if err != nil {
				return err
			}
			counts[strings.TrimSuffix(name, ".csv")] = n
			cw.Flush()
			return cw.Error()
		}
		bs := BundleStudy{Slug: st.Slug, Title: st.Title, Instructions: st.Instructions, Debrief: st.Debrief, Consent: st.Consent,
			QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design,
			Arms: st.Arms, HeldoutShare: st.HeldoutShare, Language: st.Language, TextOverrides: st.TextOverrides,
			Recompute: BundleSettings{rs.MinNewAnswers, int(rs.MaxAge / time.Second), rs.Method, rs.Dim, rs.Clusters,
				&BundleTrust{rs.Trust.MaxDim, rs.Trust.Folds, rs.Trust.Bootstrap, rs.Trust.Project, rs.Trust.TargetError}}}
		if bs.DesignConfig, err = sn.DesignConfig(); err != nil {
			return err
		}
		if st.Platform.Kind != study.PlatformNone {
			bs.Platform = &st.Platform
		}
		bs.MaxParticipants, bs.IdleMinutes, bs.MinViewMS = st.Quota.MaxParticipants, st.Quota.IdleMinutes, st.MinViewMS
		bs.Layout, bs.MixedKinds, bs.PlayToEnd, bs.SoundMaxSeconds = st.Layout, st.MixedKinds, st.PlayToEnd, st.SoundMaxSeconds
		if f := study.MustStudyFormat(st.Format); f.Format != study.FormatTriplet {
			bs.Format = f.String()
		}
		if st.Exclusion != (study.ExclusionRules{}) {
			bs.Exclusion = &st.Exclusion
		}
		if st.Quality.Active() {
			bs.Quality = &st.Quality
		}
		if err := writeJSONFile(zw, "study.json", bs); err != nil {
			return err
		}

		// Items, with their images stored (not deflated: they are compressed already).
		type img struct {
			name string
			data []byte
		}
		var imgs []img
		err = writeCSV("items.csv", append(append([]string{}, BundleItemColumns...), BundleItemKindColumns...), func(cw *csvsafe.Writer) (int, error) {
			n := 0
			err := sn.Items(func(it study.SnapshotItem) error {
				name := ""
				if it.Data != nil {
					name = fmt.Sprintf("images/%d-%s", it.Index, path.Base(strings.ReplaceAll(it.FileName, "\\", "/")))
					imgs = append(imgs, img{name, it.Data})
				}
				n++
				kind := it.Kind
				if kind == "" {
					kind = study.ItemImage
				}
				return cw.Write([]string{strconv.Itoa(it.Index), it.Label, it.FileName, it.ContentType, it.SHA256,
					strconv.Itoa(it.Width), strconv.Itoa(it.Height), name, string(kind), it.Text})
			})
			return n, err
		})
		if err != nil {
			return err
		}
		for _, im := range imgs {
			f, err := zw.create(im.name, zip.Store) // images are compressed already
			if err != nil {
				return err
			}
			if _, err := f.Write(im.data); err != nil {
				return err
			}
		}

		participantColumns := append(append([]string{}, BundleParticipantColumns...), BundleParticipantArmColumn)
		err = writeCSV("participants.csv", participantColumns, func(cw *csvsafe.Writer) (int, error) {
			n := 0
			err := sn.Participants(func(p study.SnapshotParticipant) error {
				n++
				return cw.Write([]string{p.PublicID, p.ExternalID, p.CompletionCode,
					fmtTime(&p.CreatedAt), fmtTime(p.CompletedAt), fmtTime(p.ExcludedAt), strconv.Itoa(p.Arm)})
			})
			return n, err
		})
		if err != nil {
			return err
		}

		answerColumns := append(append([]string{}, BundleAnswerColumns...), BundleAnswerTrialColumns...)
		err = writeCSV("answers.csv", answerColumns, func(cw *csvsafe.Writer) (int, error) {
			n := 0
			itoa := strconv.Itoa
			err := sn.Answers(func(a study.SnapshotAnswer) error {
				n++
				m := ""
				if a.ResponseMS != nil {
					m = itoa(*a.ResponseMS)
				}
				// anchor is the question's: a trial's key with left and
				// right (its answer's anchor is derived again on import).
				return cw.Write([]string{a.QuestionID, a.Participant, itoa(a.QuestionAnchor), itoa(a.Left), itoa(a.Right),
					itoa(a.Closer), itoa(a.Farther), a.Design, m, fmtTime(&a.AskedAt), fmtTime(&a.AnsweredAt),
					joinInts(a.Options), joinInts(a.Choices)})
			})
			return n, err
		})
		if err != nil {
			return err
		}
		if err := writeJSONFile(zw, "manifest.json", BundleManifest{Format: BundleFormat, Version: BundleVersion,
			ExportedAt: time.Now().UTC(), Counts: counts}); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("export bundle: %w", err)
	}
	return nil
}

// joinInts writes a trial's item indices as one cell, separated by
// spaces ("" for none: a triplet's).
func joinInts(xs []int) string {
	b := make([]byte, 0, 2*len(xs))
	for i, x := range xs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(b)
}

// bundleWriter writes a bundle's entries, each dated the time of the export
// (zip.Writer.Create leaves the date zero, which unzip tools show as
// 1980-00-00, an invalid date).
type bundleWriter struct {
	*zip.Writer
	modified time.Time
}

func (zw *bundleWriter) create(name string, method uint16) (io.Writer, error) {
	return zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: zw.modified})
}

func writeJSONFile(zw *bundleWriter, name string, v any) error {
	f, err := zw.create(name, zip.Deflate)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// BundleNames are what the researcher calls a study imported from a
// bundle; an empty field takes the bundle's own (see ImportBundle).
type BundleNames struct {
	Slug, Title string
}

// copySuffix marks the title of an imported study whose own slug was
// taken (a copy of a study that is already here, most likely).
const copySuffix = " (copy)"

// maxCopies bounds the slugs tried for a copy: slug-copy, slug-copy-2, …
const maxCopies = 100

// ImportBundle creates a new study in store from a bundle (r holds size
// bytes) with the slug and title of names. An empty slug keeps the
// bundle's, or, when a study here has it, takes the first free one of
// slug-copy, slug-copy-2, … (a slug given and taken is refused). An empty
// title keeps the bundle's, with " (copy)" when the slug was changed so.
// Participants
// and questions get new ids (ids are unique across the database); items,
// answers, response times and times are restored as they were. An open
// study is restored as paused, so it collects nothing until the researcher
// opens it.
//
// The bundle is read as streams within lim (bundleReader): every image is
// checked like an upload and must be what items.csv says, every row is
// checked, and each CSV must have the rows manifest.json counts. Rows go to
// the store as they are read, in one transaction (store.Store.ImportStudy):
// a refused bundle stores nothing.
func ImportBundle(ctx context.Context, db Store, r io.ReaderAt, size int64, names BundleNames, lim BundleLimits) (study.Study, Report, error) {
	fail := func(err error) (study.Study, Report, error) {
		return study.Study{}, Report{}, fmt.Errorf("import bundle: %w", err)
	}
	br, err := openBundle(r, size, lim)
	if err != nil {
		return fail(err)
	}
	bs := br.study
	slug, title := strings.TrimSpace(names.Slug), strings.TrimSpace(names.Title)
	if slug != "" {
		bs.Slug = slug
	}
	if bs.Status == study.StatusOpen {
		bs.Status = study.StatusPaused
	}
	var st study.Study
	var rep Report
	err = db.ImportStudy(ctx, func(imp study.ImportWriter) error {
		copied := false
		if slug == "" {
			if bs.Slug, copied, err = freeSlug(imp, bs.Slug); err != nil {
				return err
			}
		}
		if title == "" {
			title = bs.Title
			if copied {
				title = truncate(title, maxTitleBytes-len(copySuffix)) + copySuffix
			}
		}
		in := study.StudyInput{Slug: bs.Slug, Title: title, Instructions: bs.Instructions, Debrief: bs.Debrief, Consent: bs.Consent,
			QuestionsPerParticipant: bs.QuestionsPerParticipant, Status: bs.Status, Design: bs.Design, Format: bs.Format, HeldoutShare: bs.HeldoutShare,
			Language: bs.Language, TextOverrides: bs.TextOverrides}
		if bs.Platform != nil {
			in.Platform = *bs.Platform
		}
		in.Quota = study.Quota{MaxParticipants: bs.MaxParticipants, IdleMinutes: bs.IdleMinutes}
		in.MinViewMS = bs.MinViewMS
		in.Layout, in.MixedKinds, in.PlayToEnd, in.SoundMaxSeconds = bs.Layout, bs.MixedKinds, bs.PlayToEnd, bs.SoundMaxSeconds
		if bs.Exclusion != nil {
			in.Exclusion = *bs.Exclusion
		}
		if bs.Quality != nil {
			in.Quality = *bs.Quality
		}
		st, err = imp.CreateStudy(in)
		if err != nil {
			return err
		}
		rs := study.RecomputeSettings{MinNewAnswers: bs.Recompute.MinNewAnswers, MaxAge: time.Duration(bs.Recompute.MaxAgeSeconds) * time.Second,
			Method: bs.Recompute.Method, Dim: bs.Recompute.Dim, Clusters: bs.Recompute.Clusters, Trust: study.DefaultTrustSettings()}
		if t := bs.Recompute.Trust; t != nil {
			rs.Trust = study.TrustSettings{MaxDim: t.MaxDim, Folds: t.Folds, Bootstrap: t.Bootstrap, Project: t.Project, TargetError: t.TargetError}
		}
		if rs.Method == "" {
			rs = study.DefaultRecomputeSettings()
		}
		if err := imp.SetRecomputeSettings(rs); err != nil {
			return err
		}
		if len(bs.DesignConfig) > 0 {
			var dc study.DesignConfig
			if err := json.Unmarshal(bs.DesignConfig, &dc); err != nil {
				return invalidBundle("study.json: design_config: %v", err)
			}
			if err := imp.SetDesignConfig(bs.DesignConfig); err != nil {
				return err
			}
		}

		items, err := br.items()
		if err != nil {
			return err
		}
		defer items.Close()
		if rep.Items, err = imp.CopyItems(items); err != nil {
			if isRepeated(err) {
				return invalidBundle("items.csv repeats an index or an image")
			}
			return err
		}
		if err := imp.SetArms(bs.Arms); err != nil {
			if e := (*study.Error)(nil); errors.As(err, &e) && e.Kind == study.KindInvalid {
				return invalidBundle("study.json: %s", e.Msg)
			}
			return err
		}
		st = imp.Study()

		parts, err := br.participants()
		if err != nil {
			return err
		}
		defer parts.Close()
		if rep.Participants, err = imp.CopyParticipants(parts); err != nil {
			var re *study.RepeatedRowError
			if errors.As(err, &re) {
				return invalidBundle("participants.csv names a participant twice (%s)", re.Detail)
			}
			return err
		}

		ans, err := br.answers(rep.Items)
		if err != nil {
			return err
		}
		defer ans.Close()
		rep.Answers, err = imp.CopyAnswers(ans)
		return answersErr("answers.csv", err)
	})
	if err != nil {
		return fail(err)
	}
	return st, rep, nil
}

// isRepeated reports whether the store refused a row as repeating another.
func isRepeated(err error) bool {
	var re *study.RepeatedRowError
	return errors.As(err, &re)
}

// answersErr words the store's refusals of answers for file.
func answersErr(file string, err error) error {
	var unknown *study.UnknownParticipantError
	if errors.As(err, &unknown) {
		return invalid("%s line %d: unknown participant %q", file, unknown.Line, unknown.Key)
	}
	if isRepeated(err) {
		return invalid("%s repeats a comparison for one participant", file)
	}
	return err
}

// maxTitleBytes is the store's bound on a study's title.
const maxTitleBytes = 200

// freeSlug returns slug when no study has it, else the first free one of
// slug-copy, slug-copy-2, … (copied set), each within the slug's 64
// characters.
func freeSlug(imp study.ImportWriter, slug string) (_ string, copied bool, err error) {
	taken, err := imp.SlugTaken(slug)
	if err != nil || !taken {
		return slug, false, err
	}
	for i := 1; i <= maxCopies; i++ {
		suffix := "-copy"
		if i > 1 {
			suffix += "-" + strconv.Itoa(i)
		}
		next := strings.TrimRight(truncate(slug, maxSlugBytes-len(suffix)), "-") + suffix
		if taken, err = imp.SlugTaken(next); err != nil || !taken {
			return next, true, err
		}
	}
	return "", false, study.Errorf(study.KindConflict, "the URL slug %q and its first %d copies are taken; give the study a slug of its own", slug, maxCopies)
}

// maxSlugBytes is the store's bound on a study's slug.
const maxSlugBytes = 64

// truncate cuts s to at most n bytes, at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
