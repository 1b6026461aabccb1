package study

// MaxGoldTriplets bounds a study's gold triplets.
const MaxGoldTriplets = 10_000

// GoldTriplet is a researcher's known answer, asked as a catch trial: the
// right answer is Closer. Items by index; Line is its line in the file.
type GoldTriplet struct {
	Line                    int
	Anchor, Closer, Farther int
}
