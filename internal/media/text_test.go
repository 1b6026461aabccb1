package media

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// Every rule of a text item refuses the input whole with the line that
// broke it and the reason; a test here fails when a check is removed.
func TestReadTextLinesRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		line     int
		reason   string
	}{
		{"control character", "dog\ncat\x07s\n", 2, "a control character (U+0007) at character 4"},
		{"NUL", "dog\ncat\n\x00\n", 3, "a NUL character at character 1"},
		{"bidi override", "dog\nevil\u202Egnp.exe\n", 2, "a bidirectional override character (U+202E) at character 5"},
		{"bidi isolate", "\u2066dog\n", 1, "a bidirectional override character (U+2066) at character 1"},
		{"too long", "dog\n" + strings.Repeat("é", MaxTextChars+1) + "\n", 2, "501 characters, the limit is 500 characters"},
		{"a line far too long", strings.Repeat("x", 1<<20), 1, "longer than 500 characters"},
		{"bad UTF-8", "dog\ncat\nbad\xff\n", 3, "not valid UTF-8"},
		{"empty line between items", "dog\n\ncat\n", 2, "empty (an item has 1 to 500 characters; remove the blank line)"},
		{"only spaces between items", "dog\n   \ncat\n", 2, "empty"},
		{"a tab inside", "hot\tdog\n", 1, "a control character (U+0009) at character 4"},
		{"carriage return inside", "a\rb\n", 1, "a control character (U+000D) at character 2"},
		{"the same text twice", "dog\ncat\ndog\n", 3, "the same text as line 1"},
		{"nothing", "\n\n", 0, "no items"},
	}
	for _, c := range cases {
		items, err := ReadTextLines(strings.NewReader(c.in))
		var te *TextError
		if !errors.As(err, &te) || te.Line != c.line || !strings.Contains(te.Reason, c.reason) || items != nil {
			t.Errorf("%s: %d items, %v; want a refusal at line %d: %q", c.name, len(items), err, c.line, c.reason)
		}
	}
}

func TestReadTextLinesBounds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range MaxTextItems + 1 {
		b.WriteString("word")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	many := b.String()
	if _, err := ReadTextLines(strings.NewReader(many)); err == nil || !strings.Contains(err.Error(), "more than 5000 items") {
		t.Errorf("5,001 items: %v", err)
	}
	// Past the byte bound the reading stops there, whatever follows.
	huge := strings.Repeat(strings.Repeat("y", 400)+"\n", MaxTextUploadBytes/401+10)
	if _, err := ReadTextLines(strings.NewReader(huge)); err == nil {
		t.Error("an upload past the byte bound was read")
	}
}

// A typed list: surrounding spaces, a Windows line end, a byte-order mark
// and blank lines at the end are tolerated; the label is the text, a long
// one cut.
func TestReadTextLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 300)
	items, err := ReadTextLines(strings.NewReader("\uFEFF  dog \r\nchat noir\n<script>alert(1)</script>\n" + long + "\nשלום\n\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dog", "chat noir", "<script>alert(1)</script>", long, "שלום"}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, w := range want {
		if items[i].Text != w || items[i].Line != i+1 {
			t.Errorf("item %d: %+v, want %q at line %d", i, items[i], w, i+1)
		}
	}
	if l := []rune(items[3].Label); len(l) != MaxLabelChars || l[len(l)-1] != '…' {
		t.Errorf("a 300-character text's label has %d characters", len(l))
	}
	if items[0].SHA256() != TextSHA256("dog") || len(items[0].SHA256()) != 64 {
		t.Errorf("sha256 %q", items[0].SHA256())
	}
}

func TestReadTextCSV(t *testing.T) {
	t.Parallel()
	items, err := ReadTextCSV(strings.NewReader("label,text\nd,dog\n,cat\n\"q\",\"a, quoted \"\"text\"\"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[0].Label != "d" || items[1].Label != "cat" || items[2].Text != `a, quoted "text"` || items[2].Line != 4 {
		t.Fatalf("%+v", items)
	}
	cases := []struct {
		name, in string
		line     int
		reason   string
	}{
		{"one field", "label,text\ndog\n", 2, "1 fields, expected 2 (label,text)"},
		{"control character", "a,dog\nb,c\x01t\n", 2, "text: a control character (U+0001)"},
		{"bidi override in the label", "\u202Da,dog\n", 1, "label: a bidirectional override character (U+202D)"},
		{"bad UTF-8", "a,dog\nb,\xfe\n", 2, "text: not valid UTF-8"},
		{"empty text", "a,dog\nb,\n", 2, "text: empty"},
		{"too long", "a," + strings.Repeat("z", 501) + "\n", 1, "text: 501 characters"},
		{"the same text twice", "a,dog\nb,dog\n", 2, "the same text as line 1"},
		{"a line break in a quoted text", "a,\"two\nlines\"\n", 1, "text: a control character (U+000A)"},
	}
	for _, c := range cases {
		items, err := ReadTextCSV(strings.NewReader(c.in))
		var te *TextError
		if !errors.As(err, &te) || te.Line != c.line || !strings.Contains(te.Reason, c.reason) || items != nil {
			t.Errorf("%s: %d items, %v; want a refusal at line %d: %q", c.name, len(items), err, c.line, c.reason)
		}
	}
}

func FuzzReadTextLines(f *testing.F) {
	f.Add("dog\ncat\n")
	f.Add("\uFEFFa\r\nb\u202E\n")
	f.Fuzz(func(t *testing.T, in string) {
		items, err := ReadTextLines(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, it := range items {
			if cerr := CheckText(it.Text); cerr != nil {
				t.Fatalf("accepted %q: %v", it.Text, cerr)
			}
		}
	})
}
