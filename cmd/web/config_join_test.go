package main

import (
	"strings"
	"testing"
)

// The join limit: defaults, explicit values (0 turns it off), refusals.
func TestConfigJoinLimit(t *testing.T) {
	t.Parallel()
	db := "postgres://u@localhost/db"
	c, err := loadConfig(env(map[string]string{"DATABASE_URL": db}))
	if err != nil || c.JoinRate != defaultJoinRate || c.JoinBurst != defaultJoinBurst {
		t.Fatalf("defaults: %v %d %v", c.JoinRate, c.JoinBurst, err)
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": db, "JOIN_RATE": "0.5", "JOIN_BURST": "7"}))
	if err != nil || c.JoinRate != 0.5 || c.JoinBurst != 7 {
		t.Fatalf("explicit: %v %d %v", c.JoinRate, c.JoinBurst, err)
	}
	if c, err = loadConfig(env(map[string]string{"DATABASE_URL": db, "JOIN_RATE": "0"})); err != nil || c.JoinRate != 0 {
		t.Fatalf("off: %v %v", c.JoinRate, err)
	}
	_, err = loadConfig(env(map[string]string{"DATABASE_URL": db, "JOIN_RATE": "-1", "JOIN_BURST": "0"}))
	for _, want := range []string{"JOIN_RATE", "JOIN_BURST"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}
