package main

import (
	"strings"
	"testing"
	"time"
)

// The load-shedding knobs: defaults, explicit values, and refusals.
func TestConfigLoadShedding(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DBMaxRequests != 0 || c.DBQueueWait != time.Second || c.DBAcquireTimeout != 2*time.Second {
		t.Errorf("defaults: %d %v %v", c.DBMaxRequests, c.DBQueueWait, c.DBAcquireTimeout)
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"DB_MAX_REQUESTS": "40", "DB_QUEUE_WAIT": "250ms", "DB_ACQUIRE_TIMEOUT": "3s"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DBMaxRequests != 40 || c.DBQueueWait != 250*time.Millisecond || c.DBAcquireTimeout != 3*time.Second {
		t.Errorf("explicit: %d %v %v", c.DBMaxRequests, c.DBQueueWait, c.DBAcquireTimeout)
	}
	_, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"DB_MAX_REQUESTS": "0", "DB_QUEUE_WAIT": "forever", "DB_ACQUIRE_TIMEOUT": "5m"}))
	if err == nil {
		t.Fatal("bad load-shedding settings accepted")
	}
	for _, want := range []string{"DB_MAX_REQUESTS", "DB_QUEUE_WAIT", "DB_ACQUIRE_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}
