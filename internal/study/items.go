package study

import "github.com/closer-lab/closer/internal/media"

// ItemKind is what an item is (issue 29): an image, a text, a sound or a
// video. The algorithms see only an item's index; the pages, the
// dashboard and the files show each kind its own way.
type ItemKind string

// The item kinds. Audio and video are allowed by the schema for the
// parsers that follow; only images and texts are stored today.
const (
	ItemImage ItemKind = "image"
	ItemText  ItemKind = "text"
	ItemAudio ItemKind = "audio"
	ItemVideo ItemKind = "video"
)

// ParseItemKind reads a stored or imported kind ("" is an image: rows and
// bundles from before kinds).
func ParseItemKind(s string) (ItemKind, bool) {
	switch k := ItemKind(s); k {
	case "":
		return ItemImage, true
	case ItemImage, ItemText, ItemAudio, ItemVideo:
		return k, true
	}
	return "", false
}

// MaxTextChars bounds a text item in characters (media.CheckText).
const MaxTextChars = media.MaxTextChars

// Item is one item of a study. Index is its position 0..n-1 used by the
// algorithms. An image keeps its file's name, type and size; a text item
// its Text (its SHA256 that of the text, FileName where it came from).
type Item struct {
	ID          int64
	StudyID     int64
	Index       int
	Kind        ItemKind
	Label       string
	FileName    string
	ContentType string
	SHA256      string
	Width       int
	Height      int
	Text        string
}

// ItemRef is what a question shows of an item.
type ItemRef struct {
	Index  int
	Label  string
	SHA256 string
	Kind   ItemKind // "" in a ref built without its item: an image
	Text   string   // a text item's text
}

// IsText reports whether the item is shown as its text.
func (r ItemRef) IsText() bool { return r.Kind == ItemText }
