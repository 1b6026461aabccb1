//go:build !linux

package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
)

// errNoNice: a thread's priority and a child that dies with its parent
// are Linux's (worker_child_linux.go).
var errNoNice = errors.New("WORKER_NICE needs Linux: set WORKER_NICE=0 to run the background jobs in the serving process")

type workerChild struct{}

func newWorkerChild(config, io.Writer, *slog.Logger) (*workerChild, error) { return nil, errNoNice }
func (*workerChild) Start() error                                          { return errNoNice }
func (*workerChild) PID() int                                              { return 0 }
func (*workerChild) Stop(context.Context) error                            { return nil }
func lowerPriority(int) error                                              { return errNoNice }
