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

func TestNewID(t *testing.T) {
	t.Parallel()
	a, b := NewID(), NewID()
	if len(a) != 26 || a == b {
		t.Fatalf("NewID: %q, %q; want two different 26-character ids", a, b)
	}
	for _, r := range a {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			t.Fatalf("NewID %q has %q, not lower-case base32", a, r)
		}
	}
}
