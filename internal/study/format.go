package study

import "fmt"

// StudyFormat is the format a study asks its questions in, with a rank
// study's size. Its text form, as stored in studies.format and posted by
// the study form, is "triplet", "odd-one-out" or "rank:N:K".
type StudyFormat struct {
	Format Format
	Rank   RankSpec // a rank study's N references and K choices
}

// TripletFormat is the format of every study that names none.
var TripletFormat = StudyFormat{Format: FormatTriplet}

// String is f's text form.
func (f StudyFormat) String() string {
	if f.Format == FormatRank {
		return f.Rank.String()
	}
	return string(f.Format)
}

// Options is the number of items a question of f offers to choose from
// (a triplet: 2; odd-one-out: 3; rank: N).
func (f StudyFormat) Options() int {
	switch f.Format {
	case FormatOddOneOut:
		return 3
	case FormatRank:
		return f.Rank.N
	}
	return 2
}

// Choices is the number of items an answer of f chooses.
func (f StudyFormat) Choices() int {
	if f.Format == FormatRank {
		return f.Rank.K
	}
	return 1
}

// ParseStudyFormat reads a format's text form ("" is the triplet).
func ParseStudyFormat(text string) (StudyFormat, error) {
	switch Format(text) {
	case "", FormatTriplet:
		return TripletFormat, nil
	case FormatOddOneOut:
		return StudyFormat{Format: FormatOddOneOut}, nil
	}
	spec, err := ParseRankSpec(text)
	if err != nil {
		return StudyFormat{}, Errorf(KindInvalid, "unknown question format %q (triplet, odd-one-out or rank:N:K with 2 ≤ K < N ≤ %d): %v",
			text, MaxRankOptions, err)
	}
	return StudyFormat{Format: FormatRank, Rank: spec}, nil
}

// MustStudyFormat is ParseStudyFormat of a format read back from the
// store (checked when it was stored); an unreadable one is the triplet.
func MustStudyFormat(text string) StudyFormat {
	f, err := ParseStudyFormat(text)
	if err != nil {
		return TripletFormat
	}
	return f
}

// CheckFormat normalises in.Format to its text form and refuses what a
// format other than the triplet does not take yet: a design other than
// random and active (landmark and basis are triplet designs), arms of
// such a design, the active design's triplet-only settings (the
// information-gain score and the CKL model: such a study's trials are
// scored by the entropy of their answer under t-STE's kernel,
// internal/trialactive). Repeat trials show a participant's own earlier
// trial again, its items in a fresh order.
func CheckFormat(in *StudyInput) error {
	f, err := ParseStudyFormat(in.Format)
	if err != nil {
		return err
	}
	in.Format = f.String()
	if f.Format == FormatTriplet {
		return nil
	}
	type named struct {
		design string
		config DesignConfig
	}
	designs := []named{{in.Design, in.DesignConfig}}
	for _, a := range in.Arms {
		designs = append(designs, named{a.Design, a.Config})
	}
	for _, d := range designs {
		switch {
		case d.design != DesignRandom && d.design != DesignActive:
			return Errorf(KindInvalid, "the %s design asks triplets only: %s studies use the random or the active design", d.design, f.Format)
		case d.design != DesignActive:
		case d.config.Score != "" && d.config.Score != DefaultActiveScore:
			return Errorf(KindInvalid, "the %s score is triplet-only: the active design scores %s trials by how unsure the fit is of their answer (uncertainty)", d.config.Score, f.Format)
		case d.config.Model != "" && d.config.Model != DefaultActiveModel:
			return Errorf(KindInvalid, "the %s answer model is triplet-only: the active design scores %s trials under t-STE's kernel (tste)", d.config.Model, f.Format)
		}
	}
	return nil
}

// FormatLabel is a format's name in the study form and the studies list.
func FormatLabel(f StudyFormat) string {
	switch f.Format {
	case FormatOddOneOut:
		return "odd-one-out (three items; which does not belong?)"
	case FormatRank:
		return fmt.Sprintf("rank %d-choose-%d (a query and %d references; the %d most similar in order)", f.Rank.N, f.Rank.K, f.Rank.N, f.Rank.K)
	}
	return "triplet (an anchor and two options; which is closer?)"
}
