package i18n

// Key names one participant-facing text. The constants are the catalog's
// keys; a researcher's override names the same key (the string value).
type Key string

// The texts of the participant pages, by page.
const (
	// Landing page.
	WelcomeBack     Key = "landing.welcome_back"
	AnsweredSoFar   Key = "landing.answered_so_far"
	StudySize       Key = "landing.size"
	QuestionCount   Key = "landing.questions"
	AboutAMinute    Key = "landing.about_a_minute"
	AboutMinutes    Key = "landing.about_minutes"
	ConsentHeading  Key = "landing.consent"
	AgreeButton     Key = "landing.agree"
	DeclineButton   Key = "landing.decline"
	StartButton     Key = "landing.start"
	ContinueButton  Key = "landing.continue"
	DeclinedTitle   Key = "declined.title"
	DeclinedText    Key = "declined.text"
	DeclinedShort   Key = "declined.generic"
	DeclinedProl    Key = "declined.prolific"
	DeclinedMTurk   Key = "declined.mturk"
	BackToSite      Key = "link.back_to_site"
	BackToProlific  Key = "link.back_to_prolific"
	MissingProlT    Key = "missing_id.prolific.title"
	MissingProl     Key = "missing_id.prolific.text"
	MissingMTurkT   Key = "missing_id.mturk.title"
	MissingMTurk    Key = "missing_id.mturk.text"
	MissingGenericT Key = "missing_id.generic.title"
	MissingGeneric  Key = "missing_id.generic.text"

	// Question page.
	Progress     Key = "question.progress"
	Prompt       Key = "question.prompt"
	Instructions Key = "question.instructions"
	AnchorAlt    Key = "question.anchor_alt"
	// PromptBeside and AnchorAltBeside name the anchor of a study whose
	// layout puts it beside the options (study.LayoutBeside).
	PromptBeside    Key = "question.prompt_beside"
	AnchorAltBeside Key = "question.anchor_alt_beside"
	LeftAlt         Key = "question.left_alt"
	RightAlt        Key = "question.right_alt"
	LeftKey         Key = "question.left_key"
	RightKey        Key = "question.right_key"
	CantDecide      Key = "question.cant_decide"
	SkipKey         Key = "question.skip_key"
	// OddPrompt, OddAlt and OddSkipKey are an odd-one-out question's
	// (issue 27): three items, the one that does not belong chosen by
	// click or by the keys 1 to 3; "can't decide" by ↓ or 0.
	OddPrompt  Key = "question.odd_prompt"
	OddAlt     Key = "question.odd_alt"
	OddSkipKey Key = "question.odd_skip_key"
	// RankPrompt to RankSubmit are a rank question's (issue 27): the
	// framed query and N numbered references, K of them chosen in order
	// in K selects (a click or the number keys fill the next one with
	// JavaScript; Undo empties the last).
	RankPrompt   Key = "question.rank_prompt"
	RankQueryAlt Key = "question.rank_query_alt"
	RankChoice   Key = "question.rank_choice"
	RankNone     Key = "question.rank_none"
	RankUndo     Key = "question.rank_undo"
	RankSubmit   Key = "question.rank_submit"
	TooSoon      Key = "question.too_soon"
	AlreadyT     Key = "answered.title"
	Already      Key = "answered.text"
	// PromptText, PromptBesideText and RankPromptText are Prompt,
	// PromptBeside and RankPrompt for a question of text items (issue
	// 29): the words or sentences are no images.
	PromptText       Key = "question.prompt_text"
	PromptBesideText Key = "question.prompt_beside_text"
	RankPromptText   Key = "question.rank_prompt_text"
	// PromptSound, RankPromptSound and TooSoonSound are Prompt,
	// RankPrompt and TooSoon for a question of sounds (issue 29): the
	// first sound (played by A) is the one compared with, and sounds are
	// listened to, not looked at.
	PromptSound     Key = "question.prompt_sound"
	RankPromptSound Key = "question.rank_prompt_sound"
	TooSoonSound    Key = "question.too_soon_sound"

	// Done page.
	DoneTitle     Key = "done.title"
	DoneAnswered  Key = "done.answered"
	DoneCode      Key = "done.code"
	DoneMTurkNote Key = "done.mturk_note"
	DoneMTurkSend Key = "done.mturk_submit"
	DoneReturn    Key = "done.return_note"
	DoneBack      Key = "done.return_link"
	StudySite     Key = "done.study_site"

	// MTurk's preview of a HIT.
	PreviewTitle Key = "preview.title"
	PreviewNote  Key = "preview.note"
	ExampleTitle Key = "preview.example_title"
	ExampleText  Key = "preview.example_text"
	// ExampleTextBeside is ExampleText for a study laid out beside.
	ExampleTextBeside Key = "preview.example_text_beside"
	OpenAgainTitle    Key = "mturk.open_again.title"
	OpenAgain         Key = "mturk.open_again.text"
	CompletedT        Key = "mturk.completed_other.title"
	Completed         Key = "mturk.completed_other.text"

	// Studies that take nobody (now).
	PausedTitle    Key = "notice.paused.title"
	Paused         Key = "notice.paused.text"
	ClosedTitle    Key = "notice.closed.title"
	Closed         Key = "notice.closed.text"
	NotOpenTitle   Key = "notice.not_open.title"
	NotOpen        Key = "notice.not_open.text"
	FullTitle      Key = "notice.full.title"
	Full           Key = "notice.full.text"
	FullProlific   Key = "notice.full.prolific"
	FullMTurk      Key = "notice.full.mturk"
	TookPartTitle  Key = "notice.took_part.title"
	TookPart       Key = "notice.took_part.text"
	TookPartProl   Key = "notice.took_part.prolific"
	TookPartMTurk  Key = "notice.took_part.mturk"
	ErrorTitle     Key = "error.title"
	ErrorGeneric   Key = "error.generic"
	ErrorServer    Key = "error.server"
	ErrorBusy      Key = "error.busy"
	NeedConsent    Key = "error.need_consent"
	MTurkBadID     Key = "error.mturk_bad_id"
	MTurkIsPreview Key = "error.mturk_preview"
	MTurkSubmitTo  Key = "error.mturk_submit_to"
	TooManyJoins   Key = "error.too_many_joins"
)

// def is what a key takes: the names of its arguments, in order (a
// researcher's override writes them {name}), and which of them, counted
// from 1, picks the plural form (0: none).
type def struct {
	args  []string
	count int
}

// defs lists every key. A key missing here, or a language missing a key,
// fails the package's tests.
var defs = map[Key]def{
	WelcomeBack: {}, AnsweredSoFar: {args: []string{"answered", "total"}, count: 2},
	StudySize: {args: []string{"questions", "duration"}}, QuestionCount: {args: []string{"n"}, count: 1},
	AboutAMinute: {}, AboutMinutes: {args: []string{"n"}, count: 1},
	ConsentHeading: {}, AgreeButton: {}, DeclineButton: {}, StartButton: {}, ContinueButton: {},
	DeclinedTitle: {}, DeclinedText: {}, DeclinedShort: {}, DeclinedProl: {}, DeclinedMTurk: {},
	BackToSite: {}, BackToProlific: {},
	MissingProlT: {}, MissingProl: {args: []string{"param", "example"}},
	MissingMTurkT: {}, MissingMTurk: {},
	MissingGenericT: {}, MissingGeneric: {args: []string{"param", "example"}},

	Progress: {args: []string{"answered", "total"}}, Prompt: {}, Instructions: {},
	PromptBeside: {}, AnchorAltBeside: {args: []string{"label"}},
	AnchorAlt: {args: []string{"label"}}, LeftAlt: {args: []string{"label"}}, RightAlt: {args: []string{"label"}},
	LeftKey: {}, RightKey: {}, CantDecide: {}, SkipKey: {},
	OddPrompt: {}, OddAlt: {args: []string{"n", "label"}}, OddSkipKey: {},
	PromptText: {}, PromptBesideText: {}, RankPromptText: {args: []string{"k"}},
	PromptSound: {}, RankPromptSound: {args: []string{"k"}}, TooSoonSound: {},
	RankPrompt: {args: []string{"k"}}, RankQueryAlt: {args: []string{"label"}}, RankChoice: {args: []string{"r"}},
	RankNone: {}, RankUndo: {}, RankSubmit: {}, TooSoon: {}, AlreadyT: {}, Already: {},

	DoneTitle: {}, DoneAnswered: {args: []string{"n"}, count: 1}, DoneCode: {}, DoneMTurkNote: {}, DoneMTurkSend: {},
	DoneReturn: {args: []string{"place"}}, DoneBack: {args: []string{"place"}}, StudySite: {},

	PreviewTitle: {}, PreviewNote: {}, ExampleTitle: {}, ExampleText: {}, ExampleTextBeside: {},
	OpenAgainTitle: {}, OpenAgain: {}, CompletedT: {}, Completed: {},

	PausedTitle: {args: []string{"title"}}, Paused: {}, ClosedTitle: {args: []string{"title"}}, Closed: {},
	NotOpenTitle: {}, NotOpen: {}, FullTitle: {args: []string{"title"}}, Full: {}, FullProlific: {}, FullMTurk: {},
	TookPartTitle: {}, TookPart: {}, TookPartProl: {}, TookPartMTurk: {},
	ErrorTitle: {}, ErrorGeneric: {}, ErrorServer: {}, ErrorBusy: {}, NeedConsent: {},
	MTurkBadID: {args: []string{"field"}}, MTurkIsPreview: {}, MTurkSubmitTo: {args: []string{"origins"}},
	TooManyJoins: {args: []string{"seconds"}, count: 1},
}
