package store

import (
	"encoding/json"

	"github.com/closer-lab/closer/internal/study"
)

// ParseQuality reads studies.quality as the hot path scans it (raw, so that
// a study without settings costs no decoding).
func ParseQuality(raw []byte) (study.QualityControl, error) {
	var q study.QualityControl
	if len(raw) <= 2 { // '{}'
		return q, nil
	}
	err := json.Unmarshal(raw, &q)
	return q, err
}
