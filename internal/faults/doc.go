// Package faults is closer's fault harness. It is a test that runs only
// when asked:
//
//	go test ./internal/faults -faults -v
//
// It starts a private PostgreSQL cluster (initdb and pg_ctl under a
// temporary directory, never the system server), builds and starts the real
// server binary (cmd/web) on it with the demo study, drives the demo study
// with closer's load generator (internal/loadgen, the engine of `closer
// load`) and injects one fault at a time: the server killed with SIGKILL and
// restarted, PostgreSQL restarted, PostgreSQL refusing connections for 10 s,
// and the app's connection pool filled by queries blocked on a lock for
// 10 s. For each it counts the acknowledged answers lost or duplicated, the
// responses with a 5xx other than 503, and the seconds until the first
// answer is acknowledged after the fault ends, and prints a table. The
// results are in docs/reliability.md.
//
// The package also holds the hostile-client harness (Hostile, hostile.go):
// raw TCP clients that stall a body, leave a response unread, trickle an
// upload, send bodies over any limit or thousands of multipart fields. The
// tests of internal/web use it against an httptest server (TestHostile*),
// and TestHostile here against the real binary:
//
//	go test ./internal/faults -hostile -v -timeout 10m
package faults
