package web

import (
	"net/url"
	"reflect"
	"strings"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// The study form's arms table (issue 26): one row an arm, its name
// (arm_name), design (arm_design), share (arm_share) and settings
// (arm_settings, setting=value separated by spaces, as on a line of the
// arms field). A row left empty is no arm. The arms field (arms_form.go)
// stays on the form for pasting; both read into the same arms.

// maxArmRows bounds the rows of the arms table a form may post (the rows
// shown are the arms and a few empty ones; a study runs at most
// study.MaxArms arms).
const maxArmRows = 4 * study.MaxArms

// armRows reads the arms table's rows as typed; given is false when the
// form has no table (a script's post, which sends the arms field alone).
func armRows(f url.Values) (rows []templates.ArmInput, given bool, err error) {
	names, designs, shares, settings := f["arm_name"], f["arm_design"], f["arm_share"], f["arm_settings"]
	n := max(len(names), len(designs), len(shares), len(settings))
	if n == 0 {
		return nil, false, nil
	}
	if n > maxArmRows {
		return nil, true, armsErr(0, "the table has %d rows; a study runs at most %d arms", n, study.MaxArms)
	}
	at := func(vs []string, i int) string {
		if i < len(vs) {
			return strings.TrimSpace(vs[i])
		}
		return ""
	}
	for i := range n {
		rows = append(rows, templates.ArmInput{Name: at(names, i), Design: at(designs, i), Share: at(shares, i), Settings: at(settings, i)})
	}
	return rows, true, nil
}

// parseArmRows reads the arms table's rows as parseArms reads the arms
// field's lines, with the same checks; its refusals name the row.
func parseArmRows(rows []templates.ArmInput) (armsForm, error) {
	f := armsForm{table: true}
	seen := map[string]int{}
	for i, r := range rows {
		if r == (templates.ArmInput{}) {
			continue
		}
		if len(r.Settings) > maxArmsText {
			return f, f.errAt(i+1, "the settings are too long")
		}
		var missing []string
		for _, m := range []struct{ what, v string }{{"a name", r.Name}, {"a design", r.Design}, {"a share", r.Share}} {
			if m.v == "" {
				missing = append(missing, m.what)
			}
		}
		if len(missing) > 0 {
			return f, f.errAt(i+1, "give the arm %s (or empty the row to leave it out)", strings.Join(missing, " and "))
		}
		if err := f.add(i+1, r.Name, r.Design, r.Share, strings.Fields(r.Settings), seen); err != nil {
			return f, err
		}
	}
	return f, nil
}

// rowsOf is the arms table of stored arms, one row an arm.
func rowsOf(arms []study.Arm) []templates.ArmInput {
	rows := make([]templates.ArmInput, len(arms))
	for i, a := range arms {
		rows[i] = templates.ArmInput{Name: a.Name, Design: a.Design, Share: shareText(a.Share), Settings: armSettingsText(a)}
	}
	return rows
}

// chooseArms decides which of the form's two ways of giving the arms
// counts. The form shows the same arms in both, the table and the arms
// field, and says which arms it showed (arms_shown, the field's text of
// them): an input left as shown gives nothing new, so the one that was
// edited counts. When both were edited they must say the same arms, or the
// form is refused: the researcher decides which one holds.
func chooseArms(d designForm) (armsForm, error) {
	table, terr := parseArmRows(d.rows)
	if !d.armsGiven {
		return table, terr
	}
	text, xerr := parseArms(d.arms)
	if !d.rowsGiven {
		return text, xerr
	}
	shown, serr := parseArms(d.armsShown)
	textEdited := normalizeArmsText(d.arms) != normalizeArmsText(d.armsShown)
	if !textEdited {
		return table, terr
	}
	if terr == nil && serr == nil && reflect.DeepEqual(table.arms, shown.arms) {
		return text, xerr // the table as shown, the text edited (pasted)
	}
	if terr != nil {
		return table, terr
	}
	if xerr != nil {
		return text, xerr
	}
	if reflect.DeepEqual(table.arms, text.arms) {
		return table, nil
	}
	return table, invalidForm("Arms: the arms table says %s but the pasted text says %s; empty the text (under \"Paste the arms as text\") or the table, and save again",
		armsSaid(table.arms), armsSaid(text.arms))
}

// normalizeArmsText is the arms field's text as far as it says arms:
// without the line ends a browser changes (CR LF) and the spaces around.
func normalizeArmsText(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// armsSaid says which arms a refusal compares ("no arms", or each
// arm's line).
func armsSaid(arms []study.Arm) string {
	if len(arms) == 0 {
		return "no arms"
	}
	return "\"" + strings.ReplaceAll(strings.TrimSpace(armsText(arms)), "\n", "; ") + "\""
}
