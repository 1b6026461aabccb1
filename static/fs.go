// Package static holds closer's CSS and JavaScript, embedded in the binary.
package static

import "embed"

// FS holds style.css and app.js.
//
//go:embed style.css app.js
var FS embed.FS
