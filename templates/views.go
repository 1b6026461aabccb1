// Package templates holds closer's HTML pages as templ components (the
// generated *_templ.go files are committed; run `go tool templ generate`)
// and the small view models the handlers fill for them.
package templates

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
)

// Image is an item as a page shows it: an image at URL, or (Kind
// study.ItemText) its Text.
type Image struct {
	Index int
	Label string
	URL   string
	Kind  study.ItemKind
	Text  string
}

// IsText reports whether the item shows as text.
func (im Image) IsText() bool { return im.Kind == study.ItemText }

// IsSound reports whether the item is a sound, played rather than shown.
func (im Image) IsSound() bool { return im.Kind == study.ItemAudio }

// IsVideo reports whether the item is a video, shown muted and played on
// demand.
func (im Image) IsVideo() bool { return im.Kind == study.ItemVideo }

// IsPlayed reports whether the item is played by a play button: a sound
// or a video.
func (im Image) IsPlayed() bool { return im.IsSound() || im.IsVideo() }

// anySound reports whether one of items is played (a sound or a video).
func anySound(items []Image) bool {
	for _, it := range items {
		if it.IsPlayed() {
			return true
		}
	}
	return false
}

// playKeys are the keys that play a question's options, in order (A
// plays the anchor): the home row, which no answer key uses (app.js).
const playKeys = "sdfghjkl"

// playKey is the key that plays option i ("" past the eighth).
func playKey(i int) string {
	if i < 0 || i >= len(playKeys) {
		return ""
	}
	return playKeys[i : i+1]
}

// upper is s in capitals, as a key is printed.
func upper(s string) string { return strings.ToUpper(s) }

// TextFitClass is the class that sizes a page's text items (style.css,
// .text-fit-*) for a study whose longest text item has chars characters
// (0: none, no class): a font size clamped between a floor that stays
// readable and a ceiling, scaled with the screen's width in between, and
// smaller the longer the longest item, so that the longest fits its box
// on a 320 px phone. The one study-wide size keeps the texts of every
// question at one size: a larger text would draw the eye.
func TextFitClass(chars int) string {
	switch {
	case chars <= 0:
		return ""
	case chars <= 12:
		return "text-fit-word"
	case chars <= 40:
		return "text-fit-phrase"
	case chars <= 150:
		return "text-fit-sentence"
	default:
		return "text-fit-paragraph"
	}
}

// Question is the annotator's question page.
type Question struct {
	Slug       string
	Title      string
	QuestionID string
	Anchor     Image
	Left       Image
	Right      Image
	Answered   int
	Total      int
	// Instructions are the study's, one click away on every question.
	Instructions templ.Component
	// MinViewMS is how long the images are shown before the buttons take
	// a click (app.js).
	MinViewMS int
	// PlayToEnd: the answer buttons wait until every sound of the question
	// was played to its end (Study.PlayToEnd; app.js).
	PlayToEnd bool
	// Ahead are the image URLs of the next question, already issued: the
	// page asks the browser to fetch them while this question is shown.
	Ahead []string
	// ParticipantToken, on an MTurk study, is sent with the answer: the
	// page does not rely on a cookie inside MTurk's iframe.
	ParticipantToken string
	// CantDecide shows the third button, "can't decide" (closer=skip).
	CantDecide bool
	// Preview: the participant is the researcher's preview session; the
	// page says so (PreviewBanner).
	Preview bool
	// L are the study's texts (its language and overrides).
	L i18n.Texts
	// Layout is the study's question layout (study.LayoutAbove or
	// LayoutBeside; "": above).
	Layout string
	// Format is the question's format (study.Format; "": a triplet of
	// Anchor, Left and Right). An odd-one-out question shows Items, the
	// three in display order.
	Format study.Format
	Items  []Image
	// Choose is how many of Items a rank question chooses, in order (its
	// query is Anchor, its references Items).
	Choose int
	// TextChars is the length of the study's longest text item (0: none),
	// which sizes the page's texts (TextFitClass).
	TextChars int
}

// MTurkPreview is an MTurk study's page while a worker previews the HIT:
// the instructions and an example question that takes no answer.
type MTurkPreview struct {
	Study        study.Study
	Instructions templ.Component
	// Example is the study's first three items as a question, nil when
	// the study has fewer.
	Example *ExampleQuestion
	L       i18n.Texts
}

// ExampleQuestion is a question shown only as an example, in the study's
// format: a triplet's Anchor, Left and Right; an odd-one-out's three Items;
// a rank trial's Anchor (the query) and its Items, Choose of them to pick.
type ExampleQuestion struct {
	Format              study.Format
	Anchor, Left, Right Image
	Items               []Image
	Choose              int
	TextChars           int // the study's longest text item (TextFitClass)
}

// Landing is a study's start page.
type Landing struct {
	Study        study.Study
	Instructions templ.Component
	ExternalID   string
	Params       []Param // the platform's link parameters, carried to the start
	Resume       bool    // the browser already has a participant in progress
	// Back, for a participant who comes back with their platform id, is
	// how far they got.
	Back *study.Returning
	// Consent, when the study asks for it and the browser has no
	// participant yet, is the text to agree to before starting.
	Consent templ.Component
	// ConsentTitled: the consent text begins with a heading of its own,
	// so the page adds none (two headings in a row read as a mistake).
	ConsentTitled bool
	L             i18n.Texts
}

// Param is one named value carried in a form.
type Param struct{ Name, Value string }

// Done is the page after the last question.
type Done struct {
	Study          study.Study
	Debrief        templ.Component
	CompletionCode string
	Answered       int
	// ReturnURL, when set, is where the participant goes back to with
	// their code (the page also sends them there after a few seconds);
	// ReturnTo names it ("Prolific").
	ReturnURL string
	ReturnTo  string
	// MTurkSubmitURL, on MTurk, is where the page's form submits the
	// assignment AssignmentID with the completion code.
	MTurkSubmitURL string
	AssignmentID   string
	// Preview: a researcher's preview session ended; the page says so and
	// leads back to the study's page (no platform, no submission).
	Preview bool
	L       i18n.Texts
}

// Notice is a friendly page with a title and a message (paused or closed
// study, errors).
type Notice struct {
	Title    string
	Message  string
	Status   int
	LinkURL  string
	LinkText string
	// Lang and Dir are the page's language and writing direction (a
	// participant page in its study's language); empty: English.
	Lang, Dir string
}

// StudyForm is the create/edit form of a study.
type StudyForm struct {
	New    bool
	Action string
	Input  study.StudyInput
	// LandmarkPicks is the landmark_picks field: the picked landmarks'
	// labels, or the text typed in when the form is shown again.
	LandmarkPicks string
	// ExcludeStudies is the exclude_studies field: the slugs of the
	// studies whose participants this one refuses.
	ExcludeStudies string
	// CatchAt and RepeatAt are the catch_at and repeat_at fields: the
	// question numbers of the trials, as typed.
	CatchAt, RepeatAt string
	// Arms is the arms field (one arm a line), HeldoutPct the held-out
	// share in percent, as stored or as typed; Frozen says that questions
	// were issued, so the design, its settings, the arms and the held-out
	// share no longer change.
	Arms, HeldoutPct string
	Frozen           bool
	// TextOverrides is the text_overrides field: the study's overrides
	// of participant texts as "key = text" lines, stored or as typed.
	TextOverrides string
	// ArmRows are the arms table's rows (the arms as stored or as typed);
	// ArmsShown is the arms field's text of the arms the form showed
	// (arms_shown), against which the server tells which of the two
	// inputs was edited.
	ArmRows   []ArmInput
	ArmsShown string
	Designs   []string
	Statuses  []string
	Error     string
}

// ArmInput is one row of the study form's arms table, as stored or as
// typed: an arm's name, design, share and settings (setting=value
// separated by spaces).
type ArmInput struct{ Name, Design, Share, Settings string }

// StudyPage is the researcher's page of one study.
type StudyPage struct {
	Study study.Study
	Stats study.Stats
	// Participants are the most recent ones (at most ParticipantsShown).
	Participants []study.ParticipantRow
	Items        []Image
	PublicURL    string
	// Recruit are the texts to paste into the study's platform.
	Recruit []study.RecruitLink
	Upload  *study.UploadReport // the upload that redirected here
	// Message says what the researcher's last action did ("Changes saved.").
	Message string
	// Designs are the design's settings and progress, with arms every
	// arm's, in arm order.
	Designs []study.DesignStatus
	Error   string
	// GoldTriplets counts the researcher's gold triplets (catch trials).
	GoldTriplets int
	// Previews counts the study's preview sessions (the delete button's).
	Previews int
	Estimate *EstimateView // the "How many answers" section (nil: none)
	// Can says which actions the viewer's role allows (the buttons and
	// forms shown).
	Can Can
}

// Account is the admin's account page.
type Account struct {
	Can      Can // the site administrator's sections
	Admin    study.Admin
	Tokens   []study.APIToken
	Sessions []study.Session
	Admins   []study.Admin // every admin, oldest first
	NewToken string
	// AddedAdmin is the e-mail of the admin just added; AdminEmail what was
	// typed into the add-admin form when it was refused.
	AddedAdmin, AdminEmail string
	Error                  string
}

func itoa(n int) string { return fmt.Sprint(n) }

// elementText is s as an element's content: &, < and > escaped, quotes
// left as written (they need no escaping outside attributes), so that a
// text such as "Can't decide" reads in the page's source as the literal
// it replaced did.
func elementText(s string) templ.Component { return templ.Raw(elementEscaper.Replace(s)) }

var elementEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// languages are the languages the study form offers; textKeys the keys
// a study may override, with their English texts.
func languages() []i18n.Language { return i18n.Languages() }

func textKeys() []i18n.KeyInfo { return i18n.Keys() }

// FormFormats are the question formats the study form offers: those
// whose question page works (issue 27).
var FormFormats = []study.Format{study.FormatTriplet, study.FormatOddOneOut, study.FormatRank}

// formatOf reads a study's stored or typed format (a triplet when it
// cannot be read).
func formatOf(format string) study.StudyFormat { return study.MustStudyFormat(format) }

// rankOf is a format's rank size, psiz's 8-choose-2 when it is no rank
// format (the form's starting values).
func rankOf(format string) study.RankSpec {
	if f := formatOf(format); f.Format == study.FormatRank {
		return f.Rank
	}
	return study.RankSpec{N: 8, K: 2}
}

// positions are 1..k, a rank question's choice positions.
func positions(k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// layoutOf is the question layout to draw ("" is a study's default,
// above): the question page's class layout-above or layout-beside.
func layoutOf(layout string) string {
	if layout == study.LayoutBeside {
		return study.LayoutBeside
	}
	return study.LayoutAbove
}

// promptKey and anchorAltKey are the texts that name the anchor: by its
// place, which with its frame is what marks it (never its size).
func promptKey(layout string) i18n.Key {
	if layoutOf(layout) == study.LayoutBeside {
		return i18n.PromptBeside
	}
	return i18n.Prompt
}

// exampleTextKey is the MTurk preview's example text of a study laid out
// as layout.
func exampleTextKey(layout string) i18n.Key {
	if layoutOf(layout) == study.LayoutBeside {
		return i18n.ExampleTextBeside
	}
	return i18n.ExampleText
}

// questionPrompt is the question page's heading in the study's language:
// the format's question, and a triplet's names its anchor by the layout.
func questionPrompt(v Question) string {
	text, sound := v.allText(), v.allSound()
	switch {
	case v.Format == study.FormatOddOneOut:
		return v.L.T(i18n.OddPrompt)
	case v.Format == study.FormatRank && sound:
		return v.L.T(i18n.RankPromptSound, v.Choose)
	case v.Format == study.FormatRank && text:
		return v.L.T(i18n.RankPromptText, v.Choose)
	case v.Format == study.FormatRank:
		return v.L.T(i18n.RankPrompt, v.Choose)
	case sound:
		return v.L.T(i18n.PromptSound)
	case text && layoutOf(v.Layout) == study.LayoutBeside:
		return v.L.T(i18n.PromptBesideText)
	case text:
		return v.L.T(i18n.PromptText)
	}
	return v.L.T(promptKey(v.Layout))
}

// allText reports whether every item the question shows is a text item
// (issue 29): its prompt then speaks of texts, not images.
func (v Question) allText() bool { return v.allOf(study.ItemText) }

// allSound reports whether every item the question shows is a sound
// (issue 29): its prompt then speaks of sounds, compared with the first.
func (v Question) allSound() bool { return v.allOf(study.ItemAudio) }

// allOf reports whether every item the question shows (a triplet's
// anchor and options, a rank trial's query and references, an
// odd-one-out's three) is of kind k.
func (v Question) allOf(k study.ItemKind) bool {
	items := v.Items
	if v.Format != study.FormatOddOneOut && v.Format != study.FormatRank {
		items = []Image{v.Left, v.Right}
	}
	if v.Format != study.FormatOddOneOut && v.Anchor.Kind != k {
		return false
	}
	for _, it := range items {
		if it.Kind != k {
			return false
		}
	}
	return len(items) > 0
}

// tooSoon is the message of an answer given before the study's minimum
// viewing time: sounds are listened to.
func tooSoon(v Question) string {
	if v.allSound() {
		return v.L.T(i18n.TooSoonSound)
	}
	return v.L.T(i18n.TooSoon)
}

func anchorAltKey(layout string) i18n.Key {
	if layoutOf(layout) == study.LayoutBeside {
		return i18n.AnchorAltBeside
	}
	return i18n.AnchorAlt
}

func when(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// platformSummary says how the study recruits, for the study page's
// summary line ("" without a platform).
func platformSummary(p study.Platform) string {
	var b strings.Builder
	switch p.Kind {
	case study.PlatformNone:
		return ""
	case study.PlatformProlific:
		b.WriteString(" · recruits on Prolific")
	case study.PlatformMTurk:
		b.WriteString(" · recruits on MTurk (ExternalQuestion)")
	default:
		b.WriteString(" · recruits by the link parameter " + p.IDParam)
	}
	if p.CompletionCode != "" {
		b.WriteString(" · completion code " + p.CompletionCode)
	}
	if p.ScreenedOutCode != "" {
		b.WriteString(" · screened-out code " + p.ScreenedOutCode)
	}
	return b.String()
}

// paramsText lists a participant's kept link parameters, sorted by name.
func paramsText(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+" "+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, " · ")
}

// secondsPerQuestion is the answer time the landing page's estimate
// assumes. In the strange-fruit crowd data (../shared/data, 20,086
// answers) the median response time is 1.7 s and the mean, with times
// capped at 60 s, 2.9 s; 3 s errs on the long side.
const secondsPerQuestion = 3

// studySize says how many questions a study asks and how long they take,
// rounded up to whole minutes, in the study's language.
func studySize(l i18n.Texts, n int) string {
	duration := l.T(i18n.AboutAMinute)
	if min := (n*secondsPerQuestion + 59) / 60; min > 1 {
		duration = l.T(i18n.AboutMinutes, min)
	}
	return l.T(i18n.StudySize, l.T(i18n.QuestionCount, n), duration)
}

// noticeLang and noticeDir are a notice page's <html lang> and dir.
func noticeLang(n Notice) string {
	if n.Lang == "" {
		return i18n.Default
	}
	return n.Lang
}

func noticeDir(n Notice) string {
	if n.Dir == "" {
		return "ltr"
	}
	return n.Dir
}

// statusActions are the status changes the study page offers from status,
// each as (status, button text).
func statusActions(status string) [][2]string {
	var out [][2]string
	if status != study.StatusOpen {
		out = append(out, [2]string{study.StatusOpen, "Open"})
	}
	if status == study.StatusOpen {
		out = append(out, [2]string{study.StatusPaused, "Pause"})
	}
	if status != study.StatusClosed && status != study.StatusDraft {
		out = append(out, [2]string{study.StatusClosed, "Close"})
	}
	return out
}

// quotaSummary states the study's participant limit ("" without one).
func quotaSummary(q study.Quota) string {
	if q.MaxParticipants == 0 {
		return ""
	}
	s := " · at most " + itoa(q.MaxParticipants) + " participants"
	if q.IdleMinutes > 0 {
		s += " (idle after " + itoa(q.IdleMinutes) + " min)"
	}
	return s
}

// reasonText is ": reason", or "" when a researcher excluded by hand.
func reasonText(r string) string {
	if r == "" {
		return " by a researcher"
	}
	return " automatically: " + r
}

// Can says whether the page's viewer may use a route, named as in
// internal/web's role table ("POST /admin/studies/{slug}/delete"; issue
// 30). internal/web builds it from that table, the one the router checks,
// so a page shows a button, form or link only when its click is allowed;
// a nil Can allows nothing.
type Can func(route string) bool

// Do reports whether the viewer may use route.
func (c Can) Do(route string) bool { return c != nil && c(route) }

// soundMaxSeconds is the study form's longest sound: a new study's (0)
// shows the default it will take.
func soundMaxSeconds(n int) int {
	if n == 0 {
		return study.DefaultSoundMaxSeconds
	}
	return n
}

// hasSound reports whether a question shows a sound: its form then carries
// listen_ms, the time app.js measured its sounds playing (issue 29).
func hasSound(v Question) bool {
	return v.Anchor.IsSound() || v.Left.IsSound() || v.Right.IsSound() || anySound(v.Items)
}
