// Package study is closer's domain vocabulary: a study and what it is made
// of (items, arms and their design settings, quality control, platforms,
// recompute settings), its participants and runs, the researchers'
// accounts, the shape of a question and of an answer, and the rules each
// must keep (the Check functions and the limits). It holds no SQL and no
// HTTP: the store (internal/store) and the collection engine
// (internal/collect) keep these in PostgreSQL, the web front shows them,
// the study files read and write them, and the errors a user can act on
// are its Error kinds.
package study
