package landmark

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// state is the serialised form of a Design. The answer counts are stored
// run-length encoded (pairs of count byte and uvarint run length over the
// comparison index space), compressed with DEFLATE and base64-encoded,
// since they are mostly equal: a fresh or fully covered design with
// millions of comparisons takes a few dozen bytes; the worst case, answers
// scattered over the index space, takes about two bits per comparison
// (1.18 MB for 4.35 million comparisons with 1 million answered, see
// BenchmarkMarshalState). A store that would rather not write that much per
// answer can rebuild the design by recording the stored answers again.
type state struct {
	Kind      string `json:"kind"`
	Version   int    `json:"version"`
	N         int    `json:"n"`
	Variant   string `json:"variant"`
	Landmarks []int  `json:"landmarks"`
	Repeats   int    `json:"repeats"`
	Seed      uint64 `json:"seed"`
	Answered  int    `json:"answered"`
	Counts    string `json:"counts"`
}

const stateKind = "landmark"

// MarshalState serialises the design (JSON). Restore reads it back.
func (d *Design) MarshalState() ([]byte, error) {
	return json.Marshal(state{
		Kind:      stateKind,
		Version:   1,
		N:         d.n,
		Variant:   d.variant.String(),
		Landmarks: d.lm,
		Repeats:   d.repeats,
		Seed:      d.seed,
		Answered:  d.answered,
		Counts:    base64.StdEncoding.EncodeToString(deflate(encodeRuns(d.counts))),
	})
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		panic(err) // only for an invalid level
	}
	_, _ = w.Write(b) // writes to a bytes.Buffer do not fail
	w.Close()
	return buf.Bytes()
}

// Restore rebuilds a design from MarshalState's output. The restored design
// behaves exactly as the one that was saved.
func Restore(data []byte) (*Design, error) {
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("landmark: restore: %w", err)
	}
	if s.Kind != stateKind || s.Version != 1 {
		return nil, fmt.Errorf("landmark: restore: state of kind %q version %d, want %q version 1", s.Kind, s.Version, stateKind)
	}
	v, err := ParseVariant(s.Variant)
	if err != nil {
		return nil, fmt.Errorf("landmark: restore: %w", err)
	}
	d, err := newEmpty(s.N, Config{Variant: v, Landmarks: s.Landmarks, Repeats: s.Repeats, Seed: s.Seed})
	if err != nil {
		return nil, fmt.Errorf("landmark: restore: %w", err)
	}
	packed, err := base64.StdEncoding.DecodeString(s.Counts)
	if err != nil {
		return nil, fmt.Errorf("landmark: restore: counts: %w", err)
	}
	// A run takes at least two bytes and covers at least one index.
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(packed)), 2*int64(len(d.counts))+1))
	if err != nil {
		return nil, fmt.Errorf("landmark: restore: counts: %w", err)
	}
	if err := decodeRuns(d.counts, raw); err != nil {
		return nil, fmt.Errorf("landmark: restore: counts: %w", err)
	}
	for i, c := range d.counts {
		if c == 0 {
			continue
		}
		if int(c) > d.repeats {
			return nil, fmt.Errorf("landmark: restore: comparison %d has %d answers, more than repeats %d", i, c, d.repeats)
		}
		if _, ok := d.keyAt(i); !ok {
			return nil, fmt.Errorf("landmark: restore: unused index %d has answers", i)
		}
		d.hist[c]++
		d.answered += int(c)
	}
	d.hist[0] = d.size - sum(d.hist[1:])
	if d.answered != s.Answered {
		return nil, fmt.Errorf("landmark: restore: counts add up to %d answers, state says %d", d.answered, s.Answered)
	}
	d.resetLevel()
	return d, nil
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// encodeRuns writes counts as (value byte, uvarint run length) pairs.
func encodeRuns(counts []uint8) []byte {
	var out []byte
	for i := 0; i < len(counts); {
		j := i + 1
		for j < len(counts) && counts[j] == counts[i] {
			j++
		}
		out = append(out, counts[i])
		out = binary.AppendUvarint(out, uint64(j-i))
		i = j
	}
	return out
}

// decodeRuns fills dst from encodeRuns's output, which must cover it exactly.
func decodeRuns(dst []uint8, raw []byte) error {
	pos := 0
	for len(raw) > 0 {
		v := raw[0]
		run, k := binary.Uvarint(raw[1:])
		if k <= 0 {
			return errors.New("truncated run length")
		}
		raw = raw[1+k:]
		if run == 0 || run > uint64(len(dst)-pos) {
			return fmt.Errorf("run of %d at index %d overflows %d comparisons", run, pos, len(dst))
		}
		for i := range int(run) {
			dst[pos+i] = v
		}
		pos += int(run)
	}
	if pos != len(dst) {
		return fmt.Errorf("runs cover %d of %d indices", pos, len(dst))
	}
	return nil
}
