// Package secret makes the random secrets closer hands out (participant,
// session, API and device tokens) and the form they are stored in.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"strings"
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns 128 random bits in lower-case base32 (26 characters): the
// public id of a question or a participant.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToLower(b32.EncodeToString(b[:]))
}

// NewToken returns 256 random bits, URL-safe base64 without padding (43
// characters).
func NewToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Hash is how a secret is stored: its SHA-256. The tokens are random and
// long, so a plain hash is enough; only the holder can present one.
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
