package store

// Queries are the store's statements by name (the constant without its
// SQL suffix), so that the plan test (internal/collect's TestHotQueryPlans)
// explains these very strings on a large study alongside the engine's.
func Queries() map[string]string {
	return map[string]string{
		"armAnswers":          armAnswersSQL,
		"countPreviews":       countPreviewsSQL,
		"dashboardVersion":    dashboardVersionSQL,
		"deletePreviews":      deletePreviewsSQL,
		"dueStudies":          dueStudiesSQL,
		"excludedWithAnswers": excludedWithAnswersSQL,
		"exportAnswers":       exportAnswersSQL,
		"itemImageChunk":      itemImageChunkSQL,
		"itemImage":           itemImageSQL,
		"itemImageSize":       itemImageSizeSQL,
		"itemLabels":          itemLabelsSQL,
		"itemsStored":         itemsStoredSQL,
		"listStudies":         listStudiesSQL,
		"measuredPace":        measuredPaceSQL,
		"lockArmCounts":       lockArmCountsSQL,
		"lockStudyForItems":   lockStudyForItemsSQL,
		"markStudyDeleted":    markStudyDeletedSQL,
		"questionsIssued":     questionsIssuedSQL,
		"runAnswers":          runAnswersSQL,
		"setExcluded":         setExcludedSQL,
		"studyStats":          studyStatsSQL,
		"tallyAnswers":        tallyAnswersSQL,
		"tallyCheck":          tallyCheckSQL,
		"tallyNewAnswers":     tallyNewAnswersSQL,
		"tallyParticipants":   tallyParticipantsSQL,
		"tallyPeople":         tallyPeopleSQL,
		"tallyTouchedVotes":   tallyTouchedVotesSQL,
		"tallyVotes":          tallyVotesSQL,
		"trialCounts":         trialCountsSQL,
	}
}

// ResponseBinCap is the cap the dashboard's response-time bins use
// (tallyAnswers' second argument).
const ResponseBinCap = responseBinCap

// PurgeBatches are the purge's batch statements of a study, one per table
// (PurgeStudyBatch), by table name, for the plan test.
func PurgeBatches() map[string]string {
	m := map[string]string{}
	for _, t := range purgeTables {
		m[t.name] = purgeBatchSQL(t)
	}
	return m
}
