package study

// Item is one image of a study. Index is its position 0..n-1 used by the
// algorithms.
type Item struct {
	ID          int64
	StudyID     int64
	Index       int
	Label       string
	FileName    string
	ContentType string
	SHA256      string
	Width       int
	Height      int
}

// ItemRef is what a question shows of an item.
type ItemRef struct {
	Index  int
	Label  string
	SHA256 string
}
