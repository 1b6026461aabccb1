package secret

import (
	"encoding/hex"
	"testing"
)

func TestNewTokenIsLongAndFresh(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		tok := NewToken()
		if len(tok) != 43 {
			t.Fatalf("len(%q) = %d, want 43", tok, len(tok))
		}
		if seen[tok] {
			t.Fatalf("%q drawn twice", tok)
		}
		seen[tok] = true
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	// sha256("abc") from FIPS 180-2, appendix B.1.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := hex.EncodeToString(Hash("abc")); got != want {
		t.Errorf("Hash(abc) = %s, want %s", got, want)
	}
}
