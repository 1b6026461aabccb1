package demo

import (
	"strings"

	"github.com/closer-lab/closer/internal/media"
)

// The text demo (issue 29): 20 words of four semantic categories, so that
// a newcomer sees a study of a second kind, and that its embedding, with
// enough answers, groups the words by category.
var wordCategories = [][]string{
	{"dog", "cat", "horse", "rabbit", "sparrow"},
	{"apple", "banana", "cherry", "grape", "lemon"},
	{"hammer", "saw", "screwdriver", "wrench", "drill"},
	{"car", "bicycle", "train", "boat", "aeroplane"},
}

// wordCategoryNames name wordCategories, in order.
var wordCategoryNames = []string{"animal", "fruit", "tool", "vehicle"}

// Words returns the demo's text items, one per word in category order,
// read as a typed list is (media.ReadTextLines), so that they pass the
// checks every text item passes.
func Words() []media.TextItem {
	var b strings.Builder
	for _, ws := range wordCategories {
		for _, w := range ws {
			b.WriteString(w)
			b.WriteByte('\n')
		}
	}
	items, err := media.ReadTextLines(strings.NewReader(b.String()))
	if err != nil {
		panic("demo: a word refused: " + err.Error()) // a bug in the list
	}
	return items
}

// WordCategories returns each word's category (animal, fruit, tool,
// vehicle), in the order of Words.
func WordCategories() []string {
	var out []string
	for i, ws := range wordCategories {
		for range ws {
			out = append(out, wordCategoryNames[i])
		}
	}
	return out
}
