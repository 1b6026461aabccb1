package study

// Layouts of a question (issue 26): where the anchor stands against the
// two options. Every item is drawn at the same size in either layout; the
// anchor is marked by its frame and its place, never by its size.
const (
	// LayoutAbove puts the anchor above the two options (the layout of
	// studies made before the setting existed).
	LayoutAbove = "above"
	// LayoutBeside puts the anchor first, on the left, and the two
	// options to its right, the three in one row on every screen.
	LayoutBeside = "beside"
)

// Layouts lists the layouts in the order the study form offers them.
var Layouts = []string{LayoutAbove, LayoutBeside}

// CheckLayout normalises *layout ("" is LayoutAbove) and refuses a layout
// that is not one of Layouts.
func CheckLayout(layout *string) error {
	if *layout == "" {
		*layout = LayoutAbove
	}
	for _, l := range Layouts {
		if *layout == l {
			return nil
		}
	}
	return Errorf(KindInvalid, "unknown question layout %q (above or beside)", *layout)
}
