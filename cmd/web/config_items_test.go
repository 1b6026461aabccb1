package main

import (
	"strings"
	"testing"
)

// The item byte bounds and the image cache: defaults, sizes with units,
// zero for no cache, and refusals.
func TestConfigItemBounds(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.UploadMaxStoredBytes != 256<<20 || c.StudyMaxImageBytes != 4<<30 || c.ImageCacheBytes != 64<<20 {
		t.Errorf("defaults: %d %d %d", c.UploadMaxStoredBytes, c.StudyMaxImageBytes, c.ImageCacheBytes)
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"UPLOAD_MAX_STORED_BYTES": "100MiB", "STUDY_MAX_IMAGE_BYTES": "2 GiB", "IMAGE_CACHE_BYTES": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.UploadMaxStoredBytes != 100<<20 || c.StudyMaxImageBytes != 2<<30 || c.ImageCacheBytes != 0 {
		t.Errorf("explicit: %d %d %d", c.UploadMaxStoredBytes, c.StudyMaxImageBytes, c.ImageCacheBytes)
	}
	_, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"UPLOAD_MAX_STORED_BYTES": "12", "STUDY_MAX_IMAGE_BYTES": "lots", "IMAGE_CACHE_BYTES": "-1"}))
	if err == nil {
		t.Fatal("bad item bounds accepted")
	}
	for _, want := range []string{"UPLOAD_MAX_STORED_BYTES", "STUDY_MAX_IMAGE_BYTES", "IMAGE_CACHE_BYTES"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}
