package main

import (
	"context"
	"fmt"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

const demoSlug = "demo"

// demoWordsSlug is the text demo's slug (issue 29): a second kind of
// item, made after the image demo.
const demoWordsSlug = "demo-words"

const demoWordsInstructions = `Each question shows one **word on top** and two below.
Pick the one of the two words whose meaning is **closer to the top word**: click it, or press
the left/right arrow key (or 1/2). There are no wrong answers; go with your first impression.`

const demoWordsDebrief = `Thank you for trying closer! The 20 words are animals, fruits, tools
and vehicles; with enough answers, an ordinal embedding of the triplets groups them by category.`

const demoInstructions = `Each question shows one **coloured disk on top** and two below.
Pick the one of the two that is **more similar to the top disk**: click it, or press
the left/right arrow key (or 1/2). There are no wrong answers; go with your first impression.`

const demoDebrief = `Thank you for trying closer! The disks differ in **hue** and in **size**;
with enough answers, an ordinal embedding of the triplets recovers those two dimensions.`

// ensureDemo creates the demo study (slug demo, open, random design, 50
// questions per participant, the 40 generated disks) and then the text
// demo (slug demo-words, 30 questions about 20 words) when the database
// has no study yet, that is on first start. It reports whether it did.
func ensureDemo(ctx context.Context, store *collect.Store) (bool, error) {
	n, err := store.CountStudies(ctx)
	if err != nil || n > 0 {
		return false, err
	}
	st, err := store.CreateStudy(ctx, study.StudyInput{
		Slug: demoSlug, Title: "Demo: coloured disks", Instructions: demoInstructions, Debrief: demoDebrief,
		QuestionsPerParticipant: 50, Status: study.StatusOpen, Design: study.DesignRandom,
	})
	if collect.KindOf(err) == study.KindConflict {
		return false, nil // another replica created it at the same moment
	}
	if err != nil {
		return false, fmt.Errorf("demo study: %w", err)
	}
	if _, rej, err := store.AddItems(ctx, st.ID, demo.Items()); err != nil {
		return false, fmt.Errorf("demo study: %w", err)
	} else if len(rej) > 0 {
		return false, fmt.Errorf("demo study: items rejected: %v", rej)
	}
	words, err := store.CreateStudy(ctx, study.StudyInput{
		Slug: demoWordsSlug, Title: "Demo: words", Instructions: demoWordsInstructions, Debrief: demoWordsDebrief,
		QuestionsPerParticipant: 30, Status: study.StatusOpen, Design: study.DesignRandom,
	})
	if err != nil {
		return false, fmt.Errorf("text demo study: %w", err)
	}
	if _, err := store.AddTextItems(ctx, words.ID, demo.Words(), "demo", 0); err != nil {
		return false, fmt.Errorf("text demo study: %w", err)
	}
	return true, nil
}
