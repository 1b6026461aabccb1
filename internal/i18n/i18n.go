// Package i18n is the message catalog of the participant pages: every
// text a participant reads (buttons, progress, notices, refusals) in each
// language a study can speak, built with golang.org/x/text's catalog (with
// CLDR plural rules), and a study's overrides of single texts. The admin
// pages stay in English and do not use it.
package i18n

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// Default is the language of a study that chose none.
const Default = "en"

// Language is one language a study can speak.
type Language struct {
	Code string // the BCP 47 tag, as stored and as <html lang>
	Name string // the language's own name for itself
	// RTL: the language is written right to left (<html dir="rtl">).
	RTL  bool
	msgs map[Key]msg
}

// languages lists the catalog's languages in the order the study form
// offers them.
var languages = []Language{
	{Code: "en", Name: "English", msgs: english},
	{Code: "de", Name: "Deutsch", msgs: german},
	{Code: "fr", Name: "Français", msgs: french},
	{Code: "es", Name: "Español", msgs: spanish},
	{Code: "zh-Hans", Name: "简体中文", msgs: chinese},
	{Code: "ja", Name: "日本語", msgs: japanese},
	{Code: "ar", Name: "العربية", RTL: true, msgs: arabic},
}

// Languages returns the catalog's languages, English first.
func Languages() []Language { return slices.Clone(languages) }

// Known reports whether code is one of the catalog's languages.
func Known(code string) bool {
	return slices.ContainsFunc(languages, func(l Language) bool { return l.Code == code })
}

// msg is a text in one language: other, and for a key with a count the
// other plural forms the language uses ("zero", "one", "two", "few",
// "many", CLDR's names; other is the form for every number not named).
type msg struct {
	other string
	forms map[string]string
}

// t is a text without plural forms.
func t(s string) msg { return msg{other: s} }

// p is a text with plural forms: pairs of a form's name and its text,
// "other" among them.
func p(pairs ...string) msg {
	m := msg{forms: map[string]string{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] == "other" {
			m.other = pairs[i+1]
			continue
		}
		m.forms[pairs[i]] = pairs[i+1]
	}
	return m
}

// pluralForms is the order in which a message's forms are tried.
var pluralForms = []string{"zero", "one", "two", "few", "many"}

// Catalog holds every language's texts. Build it once (New) and share it.
type Catalog struct {
	cat catalog.Catalog
}

// New builds the catalog.
func New() (*Catalog, error) {
	b := catalog.NewBuilder(catalog.Fallback(language.English))
	for _, l := range languages {
		tag := language.MustParse(l.Code)
		for k, m := range l.msgs {
			d, ok := defs[k]
			if !ok {
				return nil, fmt.Errorf("i18n.New: %s has the unknown key %q", l.Code, k)
			}
			var err error
			if d.count == 0 || len(m.forms) == 0 {
				err = b.SetString(tag, string(k), m.other)
			} else {
				var cases []any
				for _, f := range pluralForms {
					if s, ok := m.forms[f]; ok {
						cases = append(cases, f, s)
					}
				}
				cases = append(cases, "other", m.other)
				err = b.Set(tag, string(k), plural.Selectf(d.count, "%d", cases...))
			}
			if err != nil {
				return nil, fmt.Errorf("i18n.New: %s %q: %w", l.Code, k, err)
			}
		}
	}
	return &Catalog{cat: b}, nil
}

// Texts are one study's texts: its language and its overrides. The zero
// Texts are English without overrides.
type Texts struct {
	lang      Language
	printer   *message.Printer
	overrides map[string]string
}

// Texts returns the texts of a study speaking lang (Default when lang is
// not in the catalog) with its overrides (key → text).
func (c *Catalog) Texts(lang string, overrides map[string]string) Texts {
	l := languages[0]
	for _, x := range languages {
		if x.Code == lang {
			l = x
		}
	}
	return Texts{lang: l, printer: message.NewPrinter(language.MustParse(l.Code), message.Catalog(c.cat)), overrides: overrides}
}

// Lang is the texts' language tag, for <html lang>.
func (tx Texts) Lang() string {
	if tx.printer == nil {
		return Default
	}
	return tx.lang.Code
}

// Dir is the texts' writing direction, for <html dir>: "rtl" or "ltr".
func (tx Texts) Dir() string {
	if tx.lang.RTL {
		return "rtl"
	}
	return "ltr"
}

// T is the text of k with args (as defs names them): the study's
// override when it has one, else the catalog's in the study's language.
func (tx Texts) T(k Key, args ...any) string {
	if tx.printer == nil {
		return plainEnglish(k, args)
	}
	if o, ok := tx.overrides[string(k)]; ok {
		names := defs[k].args
		return placeholderRE.ReplaceAllStringFunc(o, func(ph string) string {
			i := slices.Index(names, ph[1:len(ph)-1])
			if i < 0 || i >= len(args) {
				return ph // CheckOverrides refuses it; shown as typed
			}
			return tx.printer.Sprint(args[i])
		})
	}
	return tx.printer.Sprintf(string(k), args...)
}

// plainEnglish is k's English text with args, formatted without the
// catalog: the zero Texts' (a page built without its study's texts shows
// English, as the pages did before languages, rather than failing).
func plainEnglish(k Key, args []any) string {
	m := english[k]
	text := m.other
	if d := defs[k]; d.count > 0 && d.count <= len(args) {
		if n, ok := args[d.count-1].(int); ok && n == 1 && m.forms["one"] != "" {
			text = m.forms["one"]
		}
	}
	return fmt.Sprintf(text, args...)
}

// placeholderRE is a placeholder of an override: {name}.
var placeholderRE = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_]*\}`)

// MaxOverrideBytes bounds one override's text.
const MaxOverrideBytes = 2000

// CheckOverrides returns an error naming the first override of a study
// that names no known key, uses a placeholder its key does not have, or
// is empty or too long.
func CheckOverrides(overrides map[string]string) error {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d, ok := defs[Key(k)]
		if !ok {
			return fmt.Errorf("there is no participant text %q to override (the study form lists the keys)", k)
		}
		text := overrides[k]
		if strings.TrimSpace(text) == "" {
			return fmt.Errorf("the text of %q is empty; remove the line to keep the language's own", k)
		}
		if len(text) > MaxOverrideBytes {
			return fmt.Errorf("the text of %q is %d bytes long; at most %d are allowed", k, len(text), MaxOverrideBytes)
		}
		for _, ph := range placeholderRE.FindAllString(text, -1) {
			if !slices.Contains(d.args, ph[1:len(ph)-1]) {
				return fmt.Errorf("the text of %q uses the placeholder %s, which it does not have (%s)", k, ph, Placeholders(Key(k)))
			}
		}
	}
	return nil
}

// Placeholders says which placeholders k's text may use: "{a}, {b}" or
// "no placeholders".
func Placeholders(k Key) string {
	d := defs[k]
	if len(d.args) == 0 {
		return "no placeholders"
	}
	ps := make([]string, len(d.args))
	for i, a := range d.args {
		ps[i] = "{" + a + "}"
	}
	return strings.Join(ps, ", ")
}

// KeyInfo is one key as the study form lists it.
type KeyInfo struct {
	Key          Key
	English      string // the English text, its arguments as placeholders
	Placeholders string
}

// Keys lists every key, sorted, with its English text.
func Keys() []KeyInfo {
	out := make([]KeyInfo, 0, len(defs))
	for k, d := range defs {
		en := english[k].other
		for i, a := range d.args {
			en = verbRE.ReplaceAllStringFunc(en, func(v string) string {
				if v == fmt.Sprintf("%%[%d]d", i+1) || v == fmt.Sprintf("%%[%d]s", i+1) {
					return "{" + a + "}"
				}
				return v
			})
		}
		out = append(out, KeyInfo{Key: k, English: en, Placeholders: Placeholders(k)})
	}
	slices.SortFunc(out, func(a, b KeyInfo) int { return strings.Compare(string(a.Key), string(b.Key)) })
	return out
}

// verbRE is a formatting verb of a catalog text: %[n]d or %[n]s (the
// catalog's texts use only these, indexed so a translation may reorder
// them), or a literal %%.
var verbRE = regexp.MustCompile(`%(\[[0-9]+\][ds]|%)`)

// ParseOverrides reads overrides typed one a line as "key = text" (blank
// lines and lines starting with # are skipped); a line without " = " or a
// key given twice is an error naming the line. The keys and texts are not
// checked here (CheckOverrides).
func ParseOverrides(text string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d of the text overrides is not \"key = text\"", i+1)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("line %d of the text overrides gives %q a second time", i+1, k)
		}
		out[k] = v
	}
	return out, nil
}

// FormatOverrides writes overrides as ParseOverrides reads them, sorted by
// key.
func FormatOverrides(overrides map[string]string) string {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + " = " + overrides[k] + "\n")
	}
	return b.String()
}
