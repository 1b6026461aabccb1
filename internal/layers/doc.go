// Package layers holds no code: its test checks that every package of the
// module imports only what docs/architecture.md allows it, so the document
// and the import graph cannot drift apart.
package layers
