package i18n

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryLanguageHasEveryKey: a new text cannot ship without its
// translations, and no language keeps a text no page uses.
func TestEveryLanguageHasEveryKey(t *testing.T) {
	t.Parallel()
	for _, l := range languages {
		for k := range defs {
			if _, ok := l.msgs[k]; !ok {
				t.Errorf("%s has no text for %q", l.Code, k)
			}
		}
		for k := range l.msgs {
			if _, ok := defs[k]; !ok {
				t.Errorf("%s has a text for %q, which is not a key", l.Code, k)
			}
		}
	}
}

// anyVerbRE is any formatting verb, indexed or not.
var anyVerbRE = regexp.MustCompile(`%(\[[0-9]+\])?[-+# 0-9.]*[a-zA-Z%]`)

// TestPlaceholders: every text formats only its key's arguments, each
// with the verb the English text uses; the text for "other" (and a text
// without plural forms) uses every argument; plural forms are CLDR's
// names and appear only on a key that counts.
func TestPlaceholders(t *testing.T) {
	t.Parallel()
	verbs := func(s string) (map[int]byte, error) {
		out := map[int]byte{}
		for _, v := range anyVerbRE.FindAllString(s, -1) {
			if v == "%%" {
				continue
			}
			var n int
			var verb byte
			if _, err := fmt.Sscanf(v, "%%[%d]%c", &n, &verb); err != nil || (verb != 'd' && verb != 's') {
				return nil, fmt.Errorf("verb %q is not %%[n]d or %%[n]s", v)
			}
			out[n] = verb
		}
		return out, nil
	}
	for k, d := range defs {
		want, err := verbs(english[k].other)
		if err != nil {
			t.Fatalf("en %q: %v", k, err)
		}
		for _, l := range languages {
			m := l.msgs[k]
			if m.other == "" {
				t.Errorf("%s %q: empty", l.Code, k)
			}
			if len(m.forms) > 0 && d.count == 0 {
				t.Errorf("%s %q: plural forms on a key that counts nothing", l.Code, k)
			}
			texts := map[string]string{"other": m.other}
			for f, s := range m.forms {
				if !slices.Contains(pluralForms, f) {
					t.Errorf("%s %q: unknown plural form %q", l.Code, k, f)
				}
				texts[f] = s
			}
			for f, s := range texts {
				got, err := verbs(s)
				if err != nil {
					t.Errorf("%s %q (%s): %v", l.Code, k, f, err)
					continue
				}
				for n, v := range got {
					if n < 1 || n > len(d.args) {
						t.Errorf("%s %q (%s): argument %d of %d", l.Code, k, f, n, len(d.args))
					} else if want[n] != v {
						t.Errorf("%s %q (%s): argument %d as %%%c, English %%%c", l.Code, k, f, n, v, want[n])
					}
				}
				if f == "other" && len(got) != len(d.args) {
					t.Errorf("%s %q: %q uses %d of its %d arguments", l.Code, k, s, len(got), len(d.args))
				}
			}
		}
	}
}

func newCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTexts renders texts in several languages, with the plural forms
// CLDR picks and numbers as each language writes them.
func TestTexts(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	for _, tc := range []struct {
		lang string
		key  Key
		args []any
		want string
	}{
		{"en", DoneAnswered, []any{1}, "You answered 1 question."},
		{"en", DoneAnswered, []any{60}, "You answered 60 questions."},
		{"en", Progress, []any{15, 60}, "15 of 60"},
		{"de", DoneAnswered, []any{1}, "Sie haben 1 Frage beantwortet."},
		{"de", DoneAnswered, []any{1500}, "Sie haben 1.500 Fragen beantwortet."},
		{"de", StartButton, nil, "Starten"},
		{"fr", QuestionCount, []any{0}, "0 question"},
		{"fr", QuestionCount, []any{2}, "2 questions"},
		{"es", Progress, []any{15, 60}, "15 de 60"},
		{"ja", AnsweredSoFar, []any{15, 60}, "60 問中 15 問に回答済みです。前回の続きから再開してください。"},
		{"zh-Hans", DoneAnswered, []any{3}, "您回答了 3 个问题。"},
		{"ar", DoneAnswered, []any{1}, "أجبت عن سؤال واحد."},
		{"ar", DoneAnswered, []any{2}, "أجبت عن سؤالين."},
		{"ar", StartButton, nil, "ابدأ"},
		{"xx", StartButton, nil, "Start"}, // not in the catalog: English
	} {
		if got := c.Texts(tc.lang, nil).T(tc.key, tc.args...); got != tc.want {
			t.Errorf("%s %q %v: %q, want %q", tc.lang, tc.key, tc.args, got, tc.want)
		}
	}
	// Arabic's few, many and other forms differ from each other.
	ar := c.Texts("ar", nil)
	few, many, other := ar.T(DoneAnswered, 3), ar.T(DoneAnswered, 11), ar.T(DoneAnswered, 100)
	if !strings.Contains(few, "أسئلة") || !strings.Contains(many, "سؤالًا") || strings.Contains(other, "سؤالًا") || strings.Contains(other, "أسئلة") {
		t.Errorf("Arabic plural forms: 3 %q, 11 %q, 100 %q", few, many, other)
	}
	if ar.Dir() != "rtl" || ar.Lang() != "ar" || c.Texts("de", nil).Dir() != "ltr" {
		t.Errorf("direction: ar %s %s, de %s", ar.Lang(), ar.Dir(), c.Texts("de", nil).Dir())
	}
}

// TestOverrides: an override replaces a text in any language, its
// placeholders filled by name.
func TestOverrides(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	o := map[string]string{string(Progress): "Frage {answered} / {total}", string(StartButton): "Los geht's"}
	if err := CheckOverrides(o); err != nil {
		t.Fatal(err)
	}
	tx := c.Texts("de", o)
	if got := tx.T(Progress, 3, 1200); got != "Frage 3 / 1.200" {
		t.Errorf("progress: %q", got)
	}
	if got := tx.T(StartButton); got != "Los geht's" {
		t.Errorf("start: %q", got)
	}
	if got := tx.T(ContinueButton); got != "Weiter" {
		t.Errorf("not overridden: %q", got)
	}
}

func TestCheckOverrides(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    map[string]string
		want string // in the error; "" for none
	}{
		{map[string]string{"landing.start": "Go"}, ""},
		{map[string]string{"done.answered": "{n} done {not a placeholder"}, ""},
		{map[string]string{"landing.strat": "Go"}, `no participant text "landing.strat"`},
		{map[string]string{"landing.start": "Go {n}"}, "uses the placeholder {n}, which it does not have (no placeholders)"},
		{map[string]string{"question.progress": "{answered} of {count}"}, "{count}, which it does not have ({answered}, {total})"},
		{map[string]string{"landing.start": "  "}, "is empty"},
		{map[string]string{"landing.start": strings.Repeat("x", MaxOverrideBytes+1)}, "bytes long"},
	} {
		err := CheckOverrides(tc.o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.o, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one with %q", tc.o, err, tc.want)
		}
	}
}

func TestParseOverrides(t *testing.T) {
	t.Parallel()
	in := "# my texts\nlanding.start = Go = now\r\n\n  question.progress={answered}/{total}  \n"
	got, err := ParseOverrides(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"landing.start": "Go = now", "question.progress": "{answered}/{total}"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if back, _ := ParseOverrides(FormatOverrides(got)); fmt.Sprint(back) != fmt.Sprint(want) {
		t.Errorf("round trip: %v", back)
	}
	for _, bad := range []string{"landing.start Go", "= Go", "landing.start = a\nlanding.start = b"} {
		if _, err := ParseOverrides(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestKeysListEnglish: the form's list shows placeholders by name.
func TestKeysListEnglish(t *testing.T) {
	t.Parallel()
	ks := Keys()
	if len(ks) != len(defs) {
		t.Fatalf("%d keys listed, %d defined", len(ks), len(defs))
	}
	for _, k := range ks {
		if k.Key == Progress && k.English != "{answered} of {total}" {
			t.Errorf("progress listed as %q", k.English)
		}
		if strings.Contains(k.English, "%[") {
			t.Errorf("%q listed with a verb: %q", k.Key, k.English)
		}
	}
}

// TestZeroTextsAreEnglish: the zero Texts (a page built without its
// study's) speak the catalog's English.
func TestZeroTextsAreEnglish(t *testing.T) {
	t.Parallel()
	en := newCatalog(t).Texts("en", nil)
	var zero Texts
	for _, c := range []struct {
		k    Key
		args []any
	}{{StartButton, nil}, {DoneAnswered, []any{1}}, {DoneAnswered, []any{7}}, {Progress, []any{3, 9}}, {AnchorAlt, []any{"a cat"}}} {
		if got, want := zero.T(c.k, c.args...), en.T(c.k, c.args...); got != want {
			t.Errorf("%q %v: zero Texts %q, catalog %q", c.k, c.args, got, want)
		}
	}
	if zero.Lang() != "en" || zero.Dir() != "ltr" {
		t.Errorf("zero Texts: %s %s", zero.Lang(), zero.Dir())
	}
}
