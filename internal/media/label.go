package media

import (
	"fmt"
	"unicode/utf8"
)

// MaxLabelChars bounds an item's label in characters. A label is shown
// under an image, in exports, in the dashboard's figures and in the
// settings that pick landmarks by label: a name, not a text. Uploads take
// it from the file name (Label), bundles and triplet files from a column;
// each refuses a longer one with the file or line that holds it.
const MaxLabelChars = 200

// MaxFileNameBytes bounds the file name an item keeps (a zip entry's path
// with its folders): it is shown in upload reports and exports.
const MaxFileNameBytes = 1024

// CheckLabel refuses a label longer than MaxLabelChars; the error's text is
// the reason.
func CheckLabel(label string) error {
	if n := utf8.RuneCountInString(label); n > MaxLabelChars {
		return fmt.Errorf("a label of %s, the limit is %s", plural(int64(n), "character"), plural(MaxLabelChars, "character"))
	}
	return nil
}

// CheckFileName refuses a file name longer than MaxFileNameBytes, or one
// whose label (Label) is longer than MaxLabelChars; the error's text is the
// reason, fit to show next to the (shortened) name.
func CheckFileName(name string) error {
	if n := utf8.RuneCountInString(Label(name)); n > MaxLabelChars {
		return fmt.Errorf("the file name makes a label of %s, the limit is %s: rename the file",
			plural(int64(n), "character"), plural(MaxLabelChars, "character"))
	}
	if len(name) > MaxFileNameBytes {
		return fmt.Errorf("a file name of %s, the limit is %s: rename it (or its folders in the zip)",
			plural(int64(len(name)), "byte"), plural(MaxFileNameBytes, "byte"))
	}
	return nil
}

// shortNameBytes is how much of a long name a report keeps.
const shortNameBytes = 120

// ShortName is name cut to about shortNameBytes (on a character boundary,
// with an ellipsis), so that a report naming a refused file stays small
// whatever the name.
func ShortName(name string) string {
	if len(name) <= shortNameBytes {
		return name
	}
	cut := shortNameBytes
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}
