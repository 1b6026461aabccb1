// Package static holds closer's CSS and JavaScript, embedded in the binary.
package static

import "embed"

// FS holds style.css and app.js, and the dashboard's dashboard.css and dashboard.js.
//
//go:embed style.css app.js dashboard.css dashboard.js
var FS embed.FS
