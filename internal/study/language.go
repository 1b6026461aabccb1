package study

import "github.com/closer-lab/closer/internal/i18n"

// CheckLanguage checks the language a study's participant pages speak
// (empty: i18n.Default) and the researcher's overrides of single texts,
// which must name catalog keys and use only their placeholders.
func CheckLanguage(in *StudyInput) error {
	if in.Language == "" {
		in.Language = i18n.Default
	}
	if !i18n.Known(in.Language) {
		codes := ""
		for i, l := range i18n.Languages() {
			if i > 0 {
				codes += ", "
			}
			codes += l.Code
		}
		return Errorf(KindInvalid, "unknown language %q (known: %s)", in.Language, codes)
	}
	if len(in.TextOverrides) == 0 {
		in.TextOverrides = nil
		return nil
	}
	if err := i18n.CheckOverrides(in.TextOverrides); err != nil {
		return &Error{Kind: KindInvalid, Msg: err.Error()}
	}
	return nil
}
