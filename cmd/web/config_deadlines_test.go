package main

import (
	"strings"
	"testing"
	"time"
)

// The request deadlines: defaults, explicit values, and refusals.
func TestConfigDeadlines(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BodyReadTimeout != 10*time.Second || c.TransferWindow != 30*time.Second || c.TransferMinBytes != 64<<10 {
		t.Errorf("defaults: %v %v %d", c.BodyReadTimeout, c.TransferWindow, c.TransferMinBytes)
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"BODY_READ_TIMEOUT": "3s", "TRANSFER_WINDOW": "45s", "TRANSFER_MIN_BYTES": "8192"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BodyReadTimeout != 3*time.Second || c.TransferWindow != 45*time.Second || c.TransferMinBytes != 8192 {
		t.Errorf("explicit: %v %v %d", c.BodyReadTimeout, c.TransferWindow, c.TransferMinBytes)
	}
	_, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"BODY_READ_TIMEOUT": "never", "TRANSFER_WINDOW": "2h", "TRANSFER_MIN_BYTES": "12"}))
	if err == nil {
		t.Fatal("bad deadline settings accepted")
	}
	for _, want := range []string{"BODY_READ_TIMEOUT", "TRANSFER_WINDOW", "TRANSFER_MIN_BYTES"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}
