package triplet

import "testing"

// QuestionKey names the question whatever the order of its options, and
// KeyOf of either answer to it is that key.
func TestQuestionKeyIsUnordered(t *testing.T) {
	t.Parallel()
	want := Key{Anchor: 4, J: 1, K: 7}
	for _, got := range []Key{QuestionKey(4, 1, 7), QuestionKey(4, 7, 1), KeyOf(Triplet{4, 1, 7}), KeyOf(Triplet{4, 7, 1})} {
		if got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
}
